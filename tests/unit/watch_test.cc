// feedbench watch's reading of a job's records and its figures: AU the method's way over
// batches with a step after them, each pass's first batch apart, and the verdict's order.
#include <gtest/gtest.h>

#include "feedbench/base/error.h"
#include "feedbench/watch/job_figures.h"
#include "feedbench/watch/job_log.h"
#include "test_util.h"

namespace feedbench {
namespace {

constexpr std::int64_t kMs = 1'000'000;

void write(const std::string& path, const std::string& text) { testing::write_file(path, text); }

std::string epoch_line(int it, std::int64_t t) {
  return R"({"e":"epoch","it":)" + std::to_string(it) + R"(,"t":)" + std::to_string(t) +
         R"(,"loader":7,"batch_size":4,"num_workers":2,"prefetch_factor":2,"pin_memory":false,)"
         R"("persistent_workers":false,"start_method":"fork","pid":10})" +
         "\n";
}

std::string batch_line(int it, int k, std::int64_t ask, std::int64_t got) {
  return R"({"e":"batch","it":)" + std::to_string(it) + R"(,"k":)" + std::to_string(k) + R"(,"ask":)" +
         std::to_string(ask) + R"(,"got":)" + std::to_string(got) + R"(,"pid":10})" + "\n";
}

TEST(WatchTest, AuIsStepOverStepAndWaitWithTheFirstBatchApart) {
  testing::TempDir dir;
  // Pass 1: batch 0 waits 100 ms (start-up), then 10 ms steps with 5 ms waits; the last batch's
  // step is unknown (no ask after it) and is not counted.
  std::string text = epoch_line(1, 0);
  std::int64_t t = 0;
  for (int k = 0; k < 5; ++k) {
    const std::int64_t wait = k == 0 ? 100 * kMs : 5 * kMs;
    text += batch_line(1, k, t, t + wait);
    t += wait + 10 * kMs;
  }
  text += R"({"e":"end","it":1,"t":)" + std::to_string(t) + R"(,"pid":10})" + "\n";
  text += R"({"e":"fetch","worker":0,"t0":0,"t1":)" + std::to_string(4 * kMs) + R"(,"cpu":)" +
          std::to_string(1 * kMs) + R"(,"n":4,"pid":11})" + "\n";
  write(dir.path() + "/10.jsonl", text);
  write(dir.path() + "/11.jsonl", R"({"e":"fetch","worker":1,"t0":0,"t1":1)");  // torn: killed mid-write
  const JobLog log = read_job_log(dir.path());
  ASSERT_EQ(log.epochs.size(), 1u);
  EXPECT_EQ(log.epochs[0].batches.size(), 5u);
  EXPECT_EQ(log.epochs[0].start_method, "fork");
  EXPECT_EQ(log.processes, 2u);
  EXPECT_EQ(log.torn_lines, 1u);
  const JobFigures f = job_figures(log);
  EXPECT_EQ(f.steps, 4u);
  // Steps 4 x 10 ms; waits 100 + 3 x 5 ms.
  EXPECT_NEAR(f.au, 40.0 / (40.0 + 115.0), 1e-9);
  EXPECT_NEAR(f.au_after_first, 40.0 / 55.0, 1e-9);
  EXPECT_NEAR(f.first_wait_ms_max, 100, 1e-9);
  EXPECT_NEAR(*f.fetch_cpu_share, 0.25, 1e-9);
  EXPECT_TRUE(f.passes.at(0).ended);
  EXPECT_EQ(job_verdict(f, 0.9, 0.2, 2, 1).by, "startup");
}

TEST(WatchTest, TheVerdictNamesFedCpuOrStorage) {
  JobFigures f;
  f.steps = 10;
  f.step_s = 1;
  f.wait_s = 0.05;
  f.au = 1 / 1.05;
  EXPECT_EQ(job_verdict(f, 0.9, 0.5, 2, 1).by, "fed");
  f.wait_s = 1;
  f.au = 0.5;
  f.loop_s = 2;
  f.fetch_cpu_s = 0.2;
  f.fetch_cpu_share = f.fetch_cpu_wanted_share = 0.1;
  const std::uint64_t read = 1 << 20;
  EXPECT_EQ(job_verdict(f, 0.9, 0.3, 2, read).by, "storage");
  EXPECT_EQ(job_verdict(f, 0.9, 0.98, 2, read).by, "storage")
      << "cores busy with other programs: the workers still wait to read";
  // Blocked is not reading: without a read of data seen, or with the reads not recorded,
  // storage is never named.
  for (const std::optional<std::uint64_t> none :
       {std::optional<std::uint64_t>(0), std::optional<std::uint64_t>()}) {
    const JobVerdict v = job_verdict(f, 0.9, 0.3, 2, none);
    EXPECT_EQ(v.by, "blocked") << v.text;
    EXPECT_EQ(v.text.find("storage"), std::string::npos) << v.text;
  }
  f.fetch_cpu_wanted_share = 0.9;  // on CPU a tenth of the fetch, waiting for a core the rest
  EXPECT_EQ(job_verdict(f, 0.9, 0.98, 2, read).by, "cpu");
  f.fetch_cpu_s = 3.6;  // 1.8 of 2 cores, each worker on CPU half its fetch
  f.fetch_cpu_share = 0.5;
  f.fetch_cpu_wanted_share = 0.5;
  EXPECT_EQ(job_verdict(f, 0.9, std::nullopt, 2, read).by, "cpu");
  EXPECT_EQ(job_verdict(JobFigures{}, 0.9, std::nullopt, 2, read).by, "");
}

TEST(WatchTest, WorkersMostlyIdleMakeTheWaitTheTrainersHandOver) {
  // 2 workers over 1.2 s, fetching 0.1 s in all (batches ready long before the trainer asks),
  // on CPU while they fetch (page-cached reads); still each ask waits 2 ms against a 5 ms step.
  testing::TempDir dir;
  std::string text = epoch_line(1, 0);
  std::int64_t t = 0;
  for (int k = 0; k < 100; ++k) {
    text += batch_line(1, k, t, t + 2 * kMs);
    t += 7 * kMs;
  }
  for (std::int64_t k = 0; k < 100; ++k)
    text += R"({"e":"fetch","worker":)" + std::to_string(k % 2) + R"(,"t0":)" + std::to_string(k * 7 * kMs) +
            R"(,"t1":)" + std::to_string(k * 7 * kMs + kMs) + R"(,"cpu":)" + std::to_string(kMs) +
            R"(,"n":4,"pid":)" + std::to_string(11 + k % 2) + "}\n";
  write(dir.path() + "/10.jsonl", text);
  const JobFigures f = job_figures(read_job_log(dir.path()));
  ASSERT_TRUE(f.worker_busy_share);
  EXPECT_NEAR(*f.worker_busy_share, 0.1 / (2 * 0.695), 0.01);  // the pass: first ask to last got
  const JobVerdict v = job_verdict(f, 0.9, 0.5, 2, 1);
  EXPECT_EQ(v.by, "handover") << v.text;
  EXPECT_NE(v.text.find("not faster storage nor more workers"), std::string::npos) << v.text;
}

TEST(WatchTest, AMalformedRecordIsNamedByFileAndLine) {
  testing::TempDir dir;
  write(dir.path() + "/10.jsonl", epoch_line(1, 0) + "{not json\n");
  try {
    read_job_log(dir.path());
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("10.jsonl:2: malformed record"), std::string::npos) << e.what();
  }
  write(dir.path() + "/10.jsonl", R"({"e":"later","pid":1})"
                                  "\n");
  EXPECT_THROW(read_job_log(dir.path()), InputError);
  write(dir.path() + "/10.jsonl", batch_line(3, 0, 0, 1));  // a batch of a pass never begun
  EXPECT_THROW(read_job_log(dir.path()), InputError);
  // A field of the wrong type is bad input, not an escaped JSON exception (the fuzzer's find).
  std::string e = epoch_line(1, 0);
  write(dir.path() + "/10.jsonl", e.replace(e.find("\"pin_memory\":false"), 18, "\"pin_memory\":0"));
  EXPECT_THROW(read_job_log(dir.path()), InputError);
  // Times below 0 would let a difference overflow: refused.
  write(dir.path() + "/10.jsonl", epoch_line(1, 0) + batch_line(1, 0, INT64_MIN, INT64_MAX));
  EXPECT_THROW(read_job_log(dir.path()), InputError);
}

}  // namespace
}  // namespace feedbench
