// The replay's reading of a watched job's trace (trace_reader.h) and the job it builds from it
// (recorded_job.h): samples, batches, steps, CPU and idle time, the hand-over, what-ifs, and the
// files found under another root; each refusal's words.
#include <gtest/gtest.h>

#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "feedbench/base/error.h"
#include "feedbench/io/page_cache.h"
#include "feedbench/loader/loader.h"
#include "feedbench/replay/recorded_job.h"
#include "feedbench/replay/trace_reader.h"
#include "test_util.h"

namespace feedbench {
namespace {

using testing::input_error_of;
using testing::TempDir;
using testing::write_file;

// A trace as watch writes it: one pass of two workers, batch 0 from worker 0 (files a, b), batch
// 1 from worker 1 (file c read in two calls, then a 0-byte read), an index read outside every
// fetch; batch 0 has a step of 5 ms after it, batch 1 (the pass's last) none.
std::string small_trace(int version = 1) {
  return R"({"otherData": {"format": "feedbench-watch-trace", "version": )" + std::to_string(version) +
         R"(, "name": "train", "origin_ns": 1, "command": ["python3", "t.py"],
  "passes": [{"pass": 1, "batch_size": 2, "num_workers": 2, "prefetch_factor": 3, "persistent_workers": false, "pid": 10, "workers": [11, 12]}]},
"displayTimeUnit": "ms",
"traceEvents": [
{"args": {"name": "trainer"}, "name": "process_name", "ph": "M", "pid": 10, "tid": 10},
{"args": {"batch": 0, "pass": 1}, "cat": "batch", "dur": 3000, "name": "wait", "ph": "X", "pid": 10, "tid": 10, "ts": 1000},
{"args": {"batch": 0, "pass": 1}, "cat": "batch", "dur": 5000, "name": "step", "ph": "X", "pid": 10, "tid": 10, "ts": 4000},
{"args": {"batch": 1, "pass": 1}, "cat": "batch", "dur": 1000, "name": "wait", "ph": "X", "pid": 10, "tid": 10, "ts": 9000},
{"args": {"batch": 0, "cpu_ms": 1.0, "runqueue_ms": 0.5, "pass": 1, "samples": 2, "worker": 0}, "cat": "fetch", "dur": 2500, "name": "fetch", "ph": "X", "pid": 11, "tid": 11, "ts": 1200},
{"args": {"batch": 1, "cpu_ms": 0.5, "pass": 1, "samples": 1, "worker": 1}, "cat": "fetch", "dur": 2000, "name": "fetch", "ph": "X", "pid": 12, "tid": 12, "ts": 1300},
{"args": {"file": 1, "path": "/data/set/idx.txt", "size": 10}, "cat": "open", "name": "open", "ph": "i", "pid": 10, "s": "t", "tid": 10, "ts": 10},
{"args": {"bytes": 10, "file": 1, "offset": 0, "pass": null, "batch": null}, "cat": "read", "dur": 1, "name": "read", "ph": "X", "pid": 10, "tid": 10, "ts": 11},
{"args": {"file": 1, "path": "/data/set/x/a.bin", "size": 100}, "cat": "open", "name": "open", "ph": "i", "pid": 11, "s": "t", "tid": 11, "ts": 1210},
{"args": {"bytes": 100, "file": 1, "offset": 0, "pass": 1, "batch": 0}, "cat": "read", "dur": 400, "name": "read", "ph": "X", "pid": 11, "tid": 11, "ts": 1220},
{"args": {"file": 2, "path": "/data/set/y/b.bin", "size": 200}, "cat": "open", "name": "open", "ph": "i", "pid": 11, "s": "t", "tid": 11, "ts": 1700},
{"args": {"bytes": 200, "file": 2, "offset": 0, "pass": 1, "batch": 0}, "cat": "read", "dur": 600, "name": "read", "ph": "X", "pid": 11, "tid": 11, "ts": 1710},
{"args": {"file": 1, "path": "/data/set/x/c.bin", "size": 300}, "cat": "open", "name": "open", "ph": "i", "pid": 12, "s": "t", "tid": 12, "ts": 1310},
{"args": {"bytes": 150, "file": 1, "offset": 0, "pass": 1, "batch": 1}, "cat": "read", "dur": 10, "name": "read", "ph": "X", "pid": 12, "tid": 12, "ts": 1320},
{"args": {"bytes": 150, "file": 1, "offset": 150, "pass": 1, "batch": 1}, "cat": "read", "dur": 10, "name": "read", "ph": "X", "pid": 12, "tid": 12, "ts": 1340},
{"args": {"bytes": 0, "file": 1, "offset": 300, "pass": 1, "batch": 1}, "cat": "read", "dur": 1, "name": "read", "ph": "X", "pid": 12, "tid": 12, "ts": 1360}
 ]}
)";
}

RecordedJob job_of(const std::string& text) {
  TempDir dir;
  write_file(dir / "t.json", text);
  return load_recorded_job(dir / "t.json");
}

TEST(ReplayTraceTest, ReadsEveryEventInOrderAndTheHeader) {
  std::istringstream in(small_trace());
  TraceVisitor v;
  TraceHeader header;
  int batches = 0, fetches = 0, opens = 0, reads = 0;
  v.header = [&](const TraceHeader& h) { header = h; };
  v.batch = [&](const TraceBatch&) { ++batches; };
  v.fetch = [&](const TraceFetch&) { ++fetches; };
  v.open = [&](const TraceOpen&) { ++opens; };
  v.read = [&](const TraceRead&) { ++reads; };
  read_trace(in, "t.json", v);
  EXPECT_EQ(header.name, "train");
  ASSERT_EQ(header.passes.size(), 1u);
  EXPECT_EQ(header.passes[0].num_workers, 2);
  EXPECT_EQ(header.passes[0].prefetch_factor, 3);
  EXPECT_EQ(batches, 3);
  EXPECT_EQ(fetches, 2);
  EXPECT_EQ(opens, 4);
  EXPECT_EQ(reads, 6);
}

TEST(ReplayTraceTest, RefusesWhatItCannotReadWithOneMessage) {
  auto error = [](const std::string& text) {
    std::istringstream in(text);
    TraceVisitor v;
    v.read = [](const TraceRead&) {};
    return input_error_of([&] { read_trace(in, "t.json", v); });
  };
  EXPECT_NE(error(small_trace().substr(0, 900)).find("t.json: cut short at byte"), std::string::npos);
  EXPECT_NE(error(small_trace(3)).find("t.json: version 3 is newer than this feedbench reads (2)"),
            std::string::npos);
  std::string other = small_trace();
  other.replace(other.find("feedbench-watch-trace"), 21, "chrome");
  EXPECT_NE(error(other).find("not a feedbench-watch-trace"), std::string::npos);
  std::string field = small_trace();
  field.replace(field.find("\"bytes\": 100"), 12, "\"bytes\": -4");
  EXPECT_NE(error(field).find("t.json: /traceEvents/9/args/bytes: expected an integer of at least 0 and at "
                              "most 4294967295, got -4"),
            std::string::npos)
      << error(field);
  EXPECT_NE(error("[1, 2]").find("expected a trace object"), std::string::npos) << error("[1, 2]");
  EXPECT_NE(error(R"({"traceEvents": []})").find("expected otherData"), std::string::npos);
  EXPECT_NE(error("{\"otherData\": {\"format\": \"feedbench-watch-trace\", \"version\": 1, \"passes\": []}}")
                .find("/traceEvents: expected an array of events, got nothing"),
            std::string::npos);
}

// Version 2 carries names %XX-encoded: a name that is no UTF-8 comes back byte for byte, two
// names differing in such a byte stay two; version 1's paths are read as they were written.
TEST(ReplayTraceTest, DecodesVersion2PathsAndReadsVersion1AsWritten) {
  auto with_paths = [](int version, const std::string& a, const std::string& b) {
    std::string t = small_trace(version);
    t.replace(t.find("/data/set/x/a.bin"), 17, a);
    t.replace(t.find("/data/set/y/b.bin"), 17, b);
    return job_of(t);
  };
  const RecordedJob v2 = with_paths(2, "/data/set/x/lat%E9", "/data/set/x/lat%E8");
  ASSERT_EQ(v2.files.size(), 3u);
  EXPECT_EQ(v2.files[0].path, "lat\xe9");
  EXPECT_EQ(v2.files[1].path, "lat\xe8");
  EXPECT_EQ(v2.data_root, "/data/set/x");
  const RecordedJob v1 = with_paths(1, "/data/set/x/100%41", "/data/set/x/b");
  EXPECT_EQ(v1.files[0].path, "100%41");
  std::string bad = small_trace(2);
  bad.replace(bad.find("/data/set/x/a.bin"), 17, "/data/set/x/a%zz");
  EXPECT_NE(input_error_of([&] { job_of(bad); }).find("/args/path: expected a path whose every '%' starts"),
            std::string::npos)
      << input_error_of([&] { job_of(bad); });
}

// otherData.paths "relative": the paths are beneath a data folder the trace does not name;
// one climbing out of it, or an absolute one, is refused.
TEST(ReplayTraceTest, ReadsATraceOfRelativePaths) {
  auto relative = [](std::string t) {
    t.replace(t.find("\"origin_ns\""), 0, "\"paths\": \"relative\", ");
    for (std::string::size_type at; (at = t.find("\"/data/set/")) != std::string::npos;) t.erase(at + 1, 10);
    return t;
  };
  const RecordedJob job = job_of(relative(small_trace(2)));
  EXPECT_EQ(job.data_root, "");
  ASSERT_EQ(job.files.size(), 3u);
  EXPECT_EQ(job.files[0].path, "x/a.bin");
  EXPECT_EQ(job.files[2].path, "x/c.bin");
  std::string climbing = relative(small_trace(2));
  climbing.replace(climbing.find("\"x/a.bin\""), 9, "\"../a.bin\"");
  EXPECT_NE(input_error_of([&] {
              job_of(climbing);
            }).find("expected a path relative to the job's data folder (otherData/paths is \"relative\")"),
            std::string::npos);
  std::string absolute = relative(small_trace(2));
  absolute.replace(absolute.find("\"x/a.bin\""), 9, "\"/etc/shadow\"");
  EXPECT_NE(input_error_of([&] { job_of(absolute); }).find("expected a path relative"), std::string::npos);
  EXPECT_NE(input_error_of([&] { job_of(relative(small_trace(1))); }).find("/otherData/paths: expected"),
            std::string::npos);
}

TEST(RecordedJobTest, GroupsReadsIntoSamplesAndBatchesAsTheTrainerTookThem) {
  const RecordedJob job = job_of(small_trace());
  EXPECT_EQ(job.name, "train");
  EXPECT_EQ(job.data_root, "/data/set");
  ASSERT_EQ(job.files.size(), 3u);
  EXPECT_EQ(job.files[0].path, "x/a.bin");
  EXPECT_EQ(job.files[1].path, "y/b.bin");
  EXPECT_EQ(job.files[2].path, "x/c.bin");
  ASSERT_EQ(job.reads.size(), 4u);  // the index read and the 0-byte read left out
  EXPECT_EQ(job.reads_outside, 1u);
  EXPECT_EQ(job.reads_empty, 1u);
  EXPECT_EQ(job.bytes(), 600u);
  ASSERT_EQ(job.samples.size(), 3u);  // a, b, then c's two reads as one sample
  EXPECT_EQ(job.samples[2].count, 2u);
  ASSERT_EQ(job.passes.size(), 1u);
  const RecordedPass& p = job.passes[0];
  EXPECT_EQ(p.workers, 2);
  EXPECT_EQ(p.prefetch, 3);
  EXPECT_EQ(p.start_ns, 200'000);  // first ask at 1000 µs, first fetch at 1200
  ASSERT_EQ(p.batches.size(), 2u);
  EXPECT_EQ(p.batches[0].count, 2u);
  EXPECT_EQ(p.batches[0].worker, 0);
  EXPECT_EQ(p.batches[0].cpu_ns, 1'000'000);
  EXPECT_EQ(p.batches[0].step_ns, 5'000'000);
  // 2.5 ms of fetch: 1 ms on the CPU, 0.5 ms waiting for a core, 1 ms reading: nothing idle.
  EXPECT_EQ(p.batches[0].idle_ns, 0);
  EXPECT_EQ(p.batches[1].step_ns, -1);
  // 2 ms of fetch: 0.5 ms on the CPU, 21 µs reading (the 0-byte read's too): the rest asleep.
  EXPECT_EQ(p.batches[1].idle_ns, 1'479'000);
  // Hand-over: batch 0 got at 4000 µs, its fetch ended at 3700: 300 µs; batch 1 got at 10000, its
  // fetch ended at 3300, before the ask at 9000: 1000 µs. The median of two is the larger.
  EXPECT_EQ(job.handover_ns, 1'000'000);
  EXPECT_DOUBLE_EQ(job.au, 5000.0 / 8000.0);
  EXPECT_GT(job.bytes_per_read(), 0);
}

TEST(RecordedJobTest, WhatIfsRegroupScaleAndRepeat) {
  const RecordedJob job = job_of(small_trace());
  ReplayKnobs k;
  k.step_scale = 0.5;
  k.epochs = 3;
  k.workers = 1;
  const RecordedLoading as_is = replay_loading(job, k);
  ASSERT_EQ(as_is.epochs, 3);  // the one pass three times, built once
  ASSERT_EQ(as_is.passes.size(), 1u);
  EXPECT_EQ(as_is.passes[0].workers, 1);
  EXPECT_EQ(as_is.passes[0].batches[0].step_ns, 2'500'000);
  EXPECT_EQ(as_is.passes[0].batches[0].worker, -1);  // round robin over the new workers
  EXPECT_EQ(as_is.rereads(0).rereads, 0u);
  EXPECT_EQ(as_is.rereads(1).rereads, 3u);  // every file read again
  EXPECT_EQ(as_is.rereads(2).reads, 3u);
  ReplayKnobs one;
  one.batch_size = 1;  // a sample a batch: 3 batches, the last with no step
  const RecordedLoading regrouped = replay_loading(job, one);
  const auto& b = regrouped.passes[0].batches;
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].count, 1u);
  EXPECT_EQ(b[0].cpu_ns, 500'000);     // half of batch 0's CPU
  EXPECT_EQ(b[1].step_ns, 2'500'000);  // half of batch 0's step
  EXPECT_EQ(b[2].step_ns, -1);
  EXPECT_EQ(b[2].cpu_ns, 500'000);
  EXPECT_EQ(b[2].idle_ns, 1'479'000);
}

TEST(RecordedJobTest, CpuScaleDividesEveryRecordedCpuTimeAndNoWall) {
  const RecordedJob job = job_of(small_trace());
  ReplayKnobs k;
  const RecordedLoading as_is = replay_loading(job, k);
  k.cpu_scale = 2;  // cores twice as fast
  const RecordedLoading fast = replay_loading(job, k);
  const RecordedLoading::Epoch &a = as_is.passes.at(0), &f = fast.passes.at(0);
  EXPECT_EQ(f.startup_cpu_ns, a.startup_cpu_ns / 2);
  ASSERT_EQ(f.batches.size(), a.batches.size());
  for (std::size_t i = 0; i < a.batches.size(); ++i) {
    EXPECT_EQ(f.batches[i].cpu_ns, a.batches[i].cpu_ns / 2) << i;
    EXPECT_EQ(f.batches[i].take_cpu_ns, a.batches[i].take_cpu_ns / 2) << i;
    EXPECT_EQ(f.batches[i].after_cpu_ns, a.batches[i].after_cpu_ns / 2) << i;
    EXPECT_EQ(f.batches[i].step_cpu_ns, a.batches[i].step_cpu_ns / 2) << i;
    // The waits and the accelerator's step are no CPU of the host's.
    EXPECT_EQ(f.batches[i].step_ns, a.batches[i].step_ns) << i;
    EXPECT_EQ(f.batches[i].idle_ns, a.batches[i].idle_ns) << i;
  }
  EXPECT_EQ(a.batches[0].cpu_ns, 1'000'000);  // as recorded: the check above is not of zeros
  EXPECT_EQ(f.batches[0].cpu_ns, 500'000);
}

// RETURNS: `text` with `from` (once) replaced by `to`.
std::string with(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

// An open may carry a JPEG's dimensions (watch reads them from its header after the job): the
// job's file has them; a trace without them (written before them) reads as before, 0 × 0; a
// bad one, or one side alone, is refused naming the field.
TEST(ReplayTraceTest, CarriesEachJpegsDimensionsAndRefusesBadOnesByTheirField) {
  const std::string a = R"("path": "/data/set/x/a.bin", "size": 100)";
  const RecordedJob job = job_of(with(small_trace(2), a, a + R"(, "width": 640, "height": 480)"));
  ASSERT_EQ(job.files.size(), 3u);
  EXPECT_EQ(job.files[0].path, "x/a.bin");
  EXPECT_EQ(job.files[0].width, 640);
  EXPECT_EQ(job.files[0].height, 480);
  EXPECT_EQ(job.files[1].width, 0);  // b.bin: none carried
  EXPECT_EQ(job.files[1].height, 0);
  const RecordedJob old = job_of(small_trace(1));
  for (const RecordedFile& f : old.files) EXPECT_EQ(f.width + f.height, 0) << f.path;

  const auto error = [&](const std::string& dims) {
    return input_error_of([&] { job_of(with(small_trace(2), a, a + dims)); });
  };
  EXPECT_NE(error(R"(, "width": 0, "height": 480)")
                .find("t.json: /traceEvents/8/args/width: expected an integer of at least 1 and at most "
                      "65535, got 0"),
            std::string::npos)
      << error(R"(, "width": 0, "height": 480)");
  EXPECT_NE(
      error(R"(, "width": 640, "height": "480")").find("/traceEvents/8/args/height: expected an integer"),
      std::string::npos);
  EXPECT_NE(error(R"(, "width": 640, "height": 65536)").find("/args/height: expected an integer"),
            std::string::npos);
  EXPECT_NE(error(R"(, "width": 640)").find("/traceEvents/8/args/height: expected a value, got \"nothing\""),
            std::string::npos)
      << error(R"(, "width": 640)");
}

TEST(RecordedJobTest, CarriesTheCpuSpentOutsideFetchesIntoTheReplay) {
  // The trainer took batch 0 on 0.2 ms of CPU and stepped on 1 ms; worker 0 started on 40 ms of
  // CPU and spent 0.3 ms handing batch 0 over, worker 1 on 20 ms and none.
  std::string t = with(small_trace(), R"("batch": 0, "pass": 1}, "cat": "batch", "dur": 3000)",
                       R"("batch": 0, "pass": 1, "cpu_ms": 0.2}, "cat": "batch", "dur": 3000)");
  t = with(t, R"("batch": 0, "pass": 1}, "cat": "batch", "dur": 5000)",
           R"("batch": 0, "pass": 1, "cpu_ms": 1.0}, "cat": "batch", "dur": 5000)");
  t = with(t, R"("cpu_ms": 1.0, "runqueue_ms": 0.5,)",
           R"("cpu_ms": 1.0, "after_cpu_ms": 0.3, "startup_cpu_ms": 40, "runqueue_ms": 0.5,)");
  t = with(t, R"("cpu_ms": 0.5, "pass": 1,)", R"("cpu_ms": 0.5, "startup_cpu_ms": 20, "pass": 1,)");
  const RecordedJob job = job_of(t);
  const RecordedPass& p = job.passes[0];
  // Of their start-up, only what fits between the first ask (1000 µs) and each one's first fetch
  // (1200, 1300 µs) is the pass's: iter() started them before the trainer asked.
  EXPECT_EQ(p.startup_cpu_ns, 250'000);  // the mean of 0.2 and 0.3 ms
  EXPECT_EQ(p.batches[0].take_cpu_ns, 200'000);
  EXPECT_EQ(p.batches[0].step_cpu_ns, 1'000'000);
  EXPECT_EQ(p.batches[0].after_cpu_ns, 300'000);
  EXPECT_EQ(p.batches[1].after_cpu_ns, 0);
  ReplayKnobs half;
  half.step_scale = 0.5;
  const RecordedLoading r = replay_loading(job, half);
  EXPECT_EQ(r.passes[0].startup_cpu_ns, 250'000);
  EXPECT_EQ(r.passes[0].batches[0].cpu_ns, 1'000'000);      // the fetch's
  EXPECT_EQ(r.passes[0].batches[0].after_cpu_ns, 300'000);  // the hand-over's, spent after it
  EXPECT_EQ(r.passes[0].batches[0].take_cpu_ns, 200'000);
  EXPECT_EQ(r.passes[0].batches[0].step_cpu_ns, 500'000);  // the step scaled, its CPU with it
  EXPECT_EQ(r.passes[0].batches[1].step_cpu_ns, 0);        // the pass's last: no step
  ReplayKnobs one;
  one.batch_size = 1;
  const RecordedLoading regrouped = replay_loading(job, one);
  const auto& b = regrouped.passes[0].batches;
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].cpu_ns, 500'000);  // half of batch 0's
  EXPECT_EQ(b[0].after_cpu_ns, 150'000);
  EXPECT_EQ(b[0].take_cpu_ns, 100'000);
  EXPECT_EQ(b[1].step_cpu_ns, 500'000);
  EXPECT_EQ(b[2].step_cpu_ns, 0);
  ReplayKnobs serial;
  serial.workers = 0;
  const RecordedLoading in_process = replay_loading(job, serial);
  EXPECT_EQ(in_process.passes[0].startup_cpu_ns, 0);  // no workers to start
  // ...nor a batch to pickle in a worker and unpickle in the trainer.
  EXPECT_EQ(in_process.passes[0].batches[0].after_cpu_ns, 0);
  EXPECT_EQ(in_process.passes[0].batches[0].take_cpu_ns, 0);
  EXPECT_EQ(in_process.passes[0].batches[0].cpu_ns, 1'000'000);
  // A worker fetching before the trainer's first ask (a forked one, fast) started up outside the
  // pass: none of its start-up is replayed.
  const RecordedJob early = job_of(with(t, R"("name": "fetch", "ph": "X", "pid": 11, "tid": 11, "ts": 1200)",
                                        R"("name": "fetch", "ph": "X", "pid": 11, "tid": 11, "ts": 900)"));
  EXPECT_EQ(early.passes[0].startup_cpu_ns, 150'000);  // (0 + 0.3 ms) / 2
}

// RETURNS: the loader's options for a replay of the one pass `e` over `epochs` epochs, on the
// pass's workers, every step measured.
LoaderOptions recorded_options(const RecordedLoading::Epoch& e, int epochs) {
  auto loading = std::make_shared<RecordedLoading>();
  loading->passes = {e};
  loading->epochs = epochs;
  LoaderOptions o;
  o.recorded = loading;
  o.epochs = epochs;
  o.workers = e.workers;
  o.warmup_steps = 0;
  return o;
}

TEST(RecordedJobTest, TheLoaderBurnsTheRecordedCpuOutsideFetches) {
  // One worker starting on 30 ms of CPU, two batches each taken on 10 ms of the trainer's CPU,
  // the first stepped on 15 ms of its 20 ms and pickled on 5 ms after its hand-over: a replay
  // spends at least those 70 ms on the CPU.
  TempDir dir;
  write_file(dir / "a.bin", std::string(4096, 'a'));
  write_file(dir / "b.bin", std::string(4096, 'b'));
  FileSet files(dir.path());
  files.add("a.bin", 4096, 0);
  files.add("b.bin", 4096, 0);
  const std::vector<RecordedRead> reads = {{0, 4096, 0}, {0, 4096, 1}};
  const std::vector<RecordedSample> samples = {{0, 1}, {1, 1}};
  RecordedLoading::Epoch e;
  e.workers = 1;
  e.startup_cpu_ns = 30'000'000;
  e.batches = {{0, 1, 0, 0, 20'000'000, 0, 1, 10'000'000, 15'000'000}, {1, 1, 0, 0, -1, 0, 1, 10'000'000, 0}};
  e.batches[0].after_cpu_ns = 5'000'000;  // its worker's pickling, after handing it over
  const LoaderOptions o = recorded_options(e, 1);
  const auto source = make_recorded_source(files, reads, samples, "psync");
  LoaderSim sim(o, *source);
  timespec t0{}, t1{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
  const LoaderResult r = sim.run();
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
  const double cpu_s = double(t1.tv_sec - t0.tv_sec) + double(t1.tv_nsec - t0.tv_nsec) / 1e9;
  EXPECT_GE(cpu_s, 0.070);
  EXPECT_EQ(r.steps, 1u);  // the pass's last batch is no step
  EXPECT_GE(r.compute_s, 0.020);
  // Too few steps to judge: a bigger data set would add none; smaller batches would.
  const LoaderSchedule schedule = loader_schedule(o, 2);
  EXPECT_FALSE(schedule.judged());
  EXPECT_EQ(schedule.not_judged_reason(),
            "not enough steps to judge: the replay's first pass takes 1 step, 10 needed; --set "
            "batch_size=K regroups the recorded samples into more, smaller batches");
}

TEST(RecordedJobTest, CountsWhatThePageCacheHeldOfEachReadBeforeReadingIt) {
  // Four files of 64 KiB, each a sample of two reads, replayed over two epochs from a cold cache:
  // the first finds none of them in memory (a sample's first read's read-ahead does not count its
  // second as memory's), the second finds all, whatever the device counted meanwhile.
  TempDir dir;
  FileSet files(dir.path());
  std::vector<RecordedRead> reads;
  std::vector<RecordedSample> samples;
  for (std::uint32_t i = 0; i < 4; ++i) {
    const std::string name = "f" + std::to_string(i) + ".bin";
    write_file(dir / name, std::string(64 << 10, char('a' + i)));
    files.add(name, 64 << 10, 0);
    samples.push_back({reads.size(), 2});
    reads.push_back({0, 32 << 10, i});
    reads.push_back({32 << 10, 32 << 10, i});
  }
  if (measure_residency(files).fraction() > 0.5 && evict(files).fraction() > 0.01)
    GTEST_SKIP() << "the page cache cannot be emptied here (tmpfs?)";
  const auto source = make_recorded_source(files, reads, samples, "psync");
  RecordedLoading::Epoch e;
  e.workers = 1;
  for (std::uint32_t i = 0; i < 4; ++i) e.batches.push_back({i, 1, 0, 0, i < 3 ? 1'000'000 : -1});
  const LoaderResult r = LoaderSim(recorded_options(e, 2), *source).run();
  ASSERT_EQ(r.epochs.size(), 2u);
  EXPECT_EQ(r.epochs[0].all_read_bytes(), 256u << 10);
  EXPECT_EQ(r.epochs[0].resident_bytes, std::optional<std::uint64_t>(0));
  EXPECT_EQ(r.epochs[1].resident_bytes, std::optional<std::uint64_t>(256 << 10));
  EXPECT_EQ(r.resident_bytes, std::optional<std::uint64_t>(256 << 10));
  EXPECT_EQ(source->resident_bytes_read(), std::optional<std::uint64_t>(256 << 10));
  // The loader's own sources do not ask.
  EXPECT_FALSE(make_file_source(files, "psync")->resident_bytes_read().has_value());
}

TEST(RecordedJobTest, FindsItsFilesUnderAnotherRootOrSaysWhichAreNot) {
  const RecordedJob job = job_of(small_trace());
  TempDir root;
  write_file(root / "x/a.bin", std::string(100, 'a'));
  write_file(root / "y/b.bin", std::string(200, 'b'));
  auto set_of = [&](bool allow) {
    const FileSet files = scan_dataset(root.path());
    return recorded_file_set(job, files, files, allow);
  };
  const std::string missing = input_error_of([&] { set_of(false); });
  EXPECT_NE(missing.find("1 of the 3 files the job read are missing under " + root.path() + " (x/c.bin;"),
            std::string::npos)
      << missing;
  write_file(root / "x/c.bin", std::string(30, 'c'));
  const std::string resized = input_error_of([&] { set_of(false); });
  EXPECT_NE(resized.find("1 of the 3 files the job read differ in size under " + root.path() +
                         " (x/c.bin (300 bytes recorded))"),
            std::string::npos)
      << resized;
  // In the recording's order, so that the job's reads index it as they are; c.bin as it is now.
  const FileSet set = set_of(true);
  ASSERT_EQ(set.size(), 3u);
  EXPECT_EQ(set.relative_path(0), "x/a.bin");
  EXPECT_EQ(set.relative_path(1), "y/b.bin");
  EXPECT_EQ(set.relative_path(2), "x/c.bin");
  EXPECT_EQ(set.file_size(2), 30u);
  const auto source = make_recorded_source(set, job.reads, job.samples, "psync");
  EXPECT_EQ(source->total_bytes(), 100u + 200u + 30u);  // c.bin's reads cut at its end
  EXPECT_EQ(source->make_reader()->read(2), 30u);
}

TEST(RecordedJobTest, RefusesATraceWithoutBatchesOrWithAReadOfNoOpen) {
  std::string none = small_trace();
  for (std::size_t at; (at = none.find("\"cat\": \"batch\"")) != std::string::npos;)
    none.replace(at, 14, "\"cat\": \"other\"");
  EXPECT_NE(input_error_of([&] { job_of(none); }).find("holds no batch the trainer took"), std::string::npos);
  std::string orphan = small_trace();
  const std::size_t at = orphan.find("{\"args\": {\"file\": 1, \"path\": \"/data/set/x/a.bin\"");
  orphan.erase(at, orphan.find('\n', at) - at + 1);
  EXPECT_NE(input_error_of([&] { job_of(orphan); }).find("comes before any open of it"), std::string::npos);
}

TEST(RecordedJobTest, RefusesValuesBeyondItsBoundsAndDataUnderNoFolder) {
  auto error_with = [](std::string text, const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
    return input_error_of([&] { job_of(text); });
  };
  const std::string workers = error_with(small_trace(), "\"num_workers\": 2", "\"num_workers\": 5000");
  EXPECT_NE(
      workers.find("/otherData/passes/0/num_workers: expected an integer of at least 0 and at most 1024"),
      std::string::npos)
      << workers;
  const std::string forever = error_with(small_trace(), "\"dur\": 5000", "\"dur\": 1e15");
  EXPECT_NE(forever.find("/traceEvents/2/dur: expected a number from 0 to 1e+11"), std::string::npos)
      << forever;
  const std::string apart = error_with(small_trace(), "/data/set/y/b.bin", "/other/y/b.bin");
  EXPECT_NE(apart.find("share none below /"), std::string::npos) << apart;
  std::string object = small_trace();
  object = object.substr(0, object.find("\"traceEvents\": [")) + "\"traceEvents\": {\"a\": 1}}";
  const std::string not_array = input_error_of([&] { job_of(object); });
  EXPECT_NE(not_array.find("/traceEvents: expected an array of events, got an object"), std::string::npos)
      << not_array;
}

// A trace of `passes` passes the header does not list, each of one batch of one read of one of
// `files` files under /data/set (a job without workers).
std::string passes_trace(int passes, const std::string& pass_of_first = "") {
  std::string t =
      R"({"otherData": {"format": "feedbench-watch-trace", "version": 1, "passes": []}, "traceEvents": [
{"args": {"file": 1, "path": "/data/set/a.bin", "size": 4096}, "cat": "open", "name": "open", "ph": "i", "pid": 1, "tid": 1, "ts": 1})";
  for (int p = 0; p < passes; ++p) {
    const std::string pass = p == 0 && !pass_of_first.empty() ? pass_of_first : std::to_string(p);
    const std::string at = std::to_string(10 + p * 10);
    t += ",\n{\"args\": {\"batch\": 0, \"pass\": " + pass +
         R"(}, "cat": "batch", "dur": 5, "name": "wait", "ph": "X", "pid": 1, "tid": 1, "ts": )" + at + "}";
    t +=
        ",\n{\"args\": {\"batch\": 0, \"pass\": " + pass +
        R"(, "cpu_ms": 0.001, "samples": 1, "worker": 0}, "cat": "fetch", "dur": 4, "name": "fetch", "ph": "X", "pid": 1, "tid": 1, "ts": )" +
        at + "}";
    t += ",\n{\"args\": {\"bytes\": 4096, \"file\": 1, \"offset\": 0, \"batch\": 0, \"pass\": " + pass +
         R"(}, "cat": "read", "dur": 1, "name": "read", "ph": "X", "pid": 1, "tid": 1, "ts": )" + at + "}";
  }
  return t + "\n]}\n";
}

TEST(ReplayBoundsTest, RefusesNumbersBeyondWhatTheReplayKeysByTheirPointer) {
  // Pass 1 + 2^32 was kept in 32 bits: it replayed pass 1's reads once more per alias.
  const std::string alias =
      with(small_trace(), "\"pass\": 1, \"batch_size\"", "\"pass\": 4294967297, \"batch_size\"");
  EXPECT_NE(
      input_error_of([&] { job_of(alias); })
          .find("t.json: /otherData/passes/0/pass: expected an integer of at least 0 and at most 2147483647, "
                "got 4294967297"),
      std::string::npos)
      << input_error_of([&] { job_of(alias); });
  const std::string event = with(small_trace(), R"({"batch": 0, "pass": 1}, "cat": "batch", "dur": 3000)",
                                 R"({"batch": 0, "pass": 4294967297}, "cat": "batch", "dur": 3000)");
  EXPECT_NE(input_error_of([&] {
              job_of(event);
            }).find("/traceEvents/1/args/pass: expected an integer of at least 0"),
            std::string::npos);
  const std::string negative = with(small_trace(), "\"offset\": 0, \"pass\": 1, \"batch\": 0}",
                                    "\"offset\": 0, \"pass\": -3, \"batch\": 0}");
  EXPECT_NE(input_error_of([&] {
              job_of(negative);
            }).find("/traceEvents/9/args/pass: expected an integer of at least 0"),
            std::string::npos);
  const std::string batch = with(small_trace(), R"({"batch": 1, "pass": 1}, "cat": "batch")",
                                 R"({"batch": 2147483648, "pass": 1}, "cat": "batch")");
  EXPECT_NE(input_error_of([&] { job_of(batch); }).find("/traceEvents/3/args/batch: expected an integer"),
            std::string::npos);
  const std::string bytes = with(small_trace(), "\"bytes\": 100,", "\"bytes\": 4294967296,");
  EXPECT_NE(input_error_of([&] {
              job_of(bytes);
            }).find("/traceEvents/9/args/bytes: expected an integer of at least 0 and at most 4294967295"),
            std::string::npos);
  const std::string offset = with(small_trace(), "\"offset\": 150,", "\"offset\": 9223372036854775807,");
  EXPECT_NE(input_error_of([&] { job_of(offset); }).find("/traceEvents/14/args/offset: expected an integer"),
            std::string::npos)
      << input_error_of([&] { job_of(offset); });
  const std::string size = with(small_trace(), "\"size\": 300}", "\"size\": 9223372036854775807}");
  EXPECT_NE(input_error_of([&] { job_of(size); }).find("/traceEvents/12/args/size: expected an integer"),
            std::string::npos);
}

TEST(ReplayBoundsTest, HoldsAndTakesWhatTheTraceHoldsWhateverItsPassNumbers) {
  // 2,000 passes the header does not list, the highest pass number a replay keys among them:
  // each read held once, each pass's workers from its fetches (counted in one walk of them).
  const RecordedJob job = job_of(passes_trace(2000, "2147483647"));
  EXPECT_EQ(job.passes.size(), 2000u);
  EXPECT_EQ(job.reads.size(), 2000u);  // not one more: no pass read twice
  EXPECT_EQ(job.passes.back().id, 2147483647);
  EXPECT_EQ(job.passes.back().workers, 1);  // from its fetch
  EXPECT_EQ(job.passes.front().workers, 1);
}

TEST(ReplayBoundsTest, EpochsGoOverThePassesWithoutCopyingThem) {
  const RecordedJob job = job_of(small_trace());
  ReplayKnobs k;
  k.epochs = 10000;
  const RecordedLoading l = replay_loading(job, k);
  EXPECT_EQ(l.epochs, 10000);
  ASSERT_EQ(l.passes.size(), 1u);  // one pass recorded, built once
  EXPECT_EQ(&l.epoch(9999), &l.passes[0]);
  EXPECT_EQ(l.rereads(0).rereads, 0u);
  EXPECT_EQ(l.rereads(9999).rereads, 3u);
  // Fewer epochs than passes build only those.
  const RecordedJob two = job_of(passes_trace(5));
  k.epochs = 2;
  EXPECT_EQ(replay_loading(two, k).passes.size(), 2u);
  LoaderOptions o;
  o.recorded = std::make_shared<RecordedLoading>(replay_loading(two, k));
  o.epochs = 2;
  EXPECT_EQ(
      loader_epoch_rereads(o, loader_schedule(o, two.samples.size()), two.samples.size(), nullptr).size(),
      2u);
}

TEST(ReplayBoundsTest, SaysBytesThatAreNotJsonAreNoTrace) {
  auto error = [](const std::string& text) {
    std::istringstream in(text);
    return input_error_of([&] { read_trace(in, "t.bin", TraceVisitor{}); });
  };
  const std::string png = error(std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16));
  EXPECT_NE(png.find("t.bin: not JSON, so not a trace (its first byte is 0x89"), std::string::npos) << png;
  EXPECT_EQ(png.find("cut short"), std::string::npos);
  const std::string inside = error(std::string("{\"otherData\": \x01\x02\x03 and more bytes after it"));
  EXPECT_NE(inside.find("not valid JSON at byte 15"), std::string::npos) << inside;
  EXPECT_NE(error("   ").find("holds no JSON"), std::string::npos);
  // A trace that ends early is still called cut short.
  EXPECT_NE(error(small_trace().substr(0, 900)).find("cut short at byte"), std::string::npos);
}

TEST(ReplayBoundsTest, RefusesPathsThatLeaveTheDataFolderAndSystemFolders) {
  const std::string climb = with(small_trace(), "/data/set/y/b.bin", "/data/set/y/../../../etc/shadow");
  const std::string error = input_error_of([&] { job_of(climb); });
  EXPECT_NE(
      error.find("the path '/data/set/y/../../../etc/shadow' of a file the job read has a '..' component"),
      std::string::npos)
      << error;
  EXPECT_NE(input_error_of([&] {
              job_of(with(small_trace(), "/data/set/y/b.bin", "/data/set/y//b.bin"));
            }).find("has an empty component"),
            std::string::npos);
  EXPECT_EQ(system_folder_holding("/etc"), "/etc");
  EXPECT_EQ(system_folder_holding("/etc/ssl/private"), "/etc");
  EXPECT_EQ(system_folder_holding("/var/lib/postgresql"), "/var/lib");
  EXPECT_EQ(system_folder_holding("/proc/1"), "/proc");
  EXPECT_EQ(system_folder_holding("/"), "/");
  EXPECT_EQ(system_folder_holding("/etcetera/data"), "");
  EXPECT_EQ(system_folder_holding("/data/imagenet"), "");
  EXPECT_EQ(system_folder_holding("/var/tmp/set"), "");
  EXPECT_EQ(system_folder_holding("/dev/shm/imagenet"), "");  // staged to be read fast
  EXPECT_EQ(system_folder_holding("/dev/shm"), "/dev");
}

TEST(ReplayBoundsTest, OpensEveryReplayedFileBeneathItsRootThroughNoLink) {
  TempDir dir;
  write_file(dir / "root/sub/a.bin", std::string(4096, 'a'));
  write_file(dir / "outside/a.bin", std::string(4096, 'o'));
  FileSet files(dir / "root");
  files.add("sub/a.bin", 4096, 0);
  const std::vector<RecordedRead> reads = {{0, 4096, 0}};
  const std::vector<RecordedSample> samples = {{0, 1}};
  const auto source = make_recorded_source(files, reads, samples, "psync");
  const auto reader = source->make_reader();
  EXPECT_EQ(reader->read(0), 4096u);
  // The folder swapped for a link to another: the next open refuses it, reading nothing there.
  std::filesystem::rename(dir / "root/sub", dir / "root/sub.real");
  std::filesystem::create_directory_symlink("../outside", dir / "root/sub");
  std::string error;
  try {
    reader->read(0);
  } catch (const RunError& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("sub/a.bin"), std::string::npos) << error;
  EXPECT_NE(error.find("symbolic links"), std::string::npos) << error;
}

}  // namespace
}  // namespace feedbench
