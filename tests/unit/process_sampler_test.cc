// A watched job's processes over time: /proc's counts read, rates per interval per group,
// halving at the bound without losing a count, and the sampler on a real child that burns CPU
// and reads a file.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>

#include "feedbench/base/clock.h"
#include "feedbench/watch/job_figures.h"
#include "feedbench/watch/process_sampler.h"
#include "test_util.h"

namespace feedbench {
namespace {

constexpr std::int64_t kS = 1'000'000'000;

TEST(ProcessSamplerTest, ReadsCpuTicksAfterACommandNameWithParenthesesAndTheIoCounts) {
  const std::string stat = "42 (a) b (c)) S 1 42 42 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 1 0 9 0 0";
  const auto c = parse_process_counts(stat, "rchar: 1000\nwchar: 5\nsyscr: 3\nread_bytes: 400\n");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->cpu_ticks, 300u);
  EXPECT_EQ(c->rchar, 1000u);
  EXPECT_EQ(c->read_bytes, 400u);
  EXPECT_FALSE(parse_process_counts("not a stat line", ""));
  const auto no_io = parse_process_counts(stat, "");
  ASSERT_TRUE(no_io);
  EXPECT_EQ(no_io->rchar, 0u);
}

ProcessSamples two_processes() {
  // Samples a second apart. Process 1 (the trainer) runs throughout at a quarter core; process
  // 2 (a worker) starts before sample 1 and ends after sample 2, reading 10 MiB a second.
  ProcessSamples s;
  s.interval_ns = kS;
  s.ticks_per_second = 100;
  for (int k = 0; k < 5; ++k) {
    s.t_ns.push_back(100 * kS + k * kS);
    s.devices.push_back({{7, std::uint64_t(k) * 4096}, {8, 0}});
  }
  ProcessSeries trainer{1, {}, {}};
  for (std::uint32_t k = 0; k < 5; ++k) {
    trainer.at.push_back(k);
    trainer.counts.push_back({std::uint64_t{25} * k, 0, 0});
  }
  ProcessSeries worker{2, {1, 2}, {{100, 10u << 20, 5u << 20}, {200, 20u << 20, 10u << 20}}};
  s.processes = {trainer, worker};
  return s;
}

TEST(ProcessSamplerTest, ReadsEachDevicesSectorsFromDiskstats) {
  const auto d = parse_diskstats(
      "   7       0 loop0 120 0 2048 33 0 0 0 0 0 40 33\n"
      " 254       1 vda1 5 1 16 2 9 9 9 9 0 4 4\n"
      "garbage\n");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].dev, std::uint64_t(makedev(7, 0)));
  EXPECT_EQ(d[0].bytes, 2048u * 512);
  EXPECT_EQ(d[1].dev, std::uint64_t(makedev(254, 1)));
}

TEST(ProcessSamplerTest, RatesPerIntervalPerGroupCountingAProcessFromItsStart) {
  const ProcessSamples s = two_processes();
  const RateSeries t = rate_series(
      s, [](std::int64_t pid) { return pid == 1; }, 100 * kS);
  ASSERT_EQ(t.t_s.size(), 4u);
  EXPECT_DOUBLE_EQ(t.t_s[0], 1.0);
  for (const double c : t.cores) EXPECT_DOUBLE_EQ(c, 0.25);
  const RateSeries w = rate_series(
      s, [](std::int64_t pid) { return pid == 2; }, 100 * kS);
  EXPECT_DOUBLE_EQ(w.cores[0], 1.0);  // first seen at sample 1: its second since it started
  EXPECT_DOUBLE_EQ(w.cores[1], 1.0);
  EXPECT_DOUBLE_EQ(w.cores[2], 0.0);
  EXPECT_DOUBLE_EQ(w.read_bps[1], double(10 << 20));
  EXPECT_DOUBLE_EQ(w.storage_bytes, double(10 << 20));
  EXPECT_DOUBLE_EQ(w.cpu_s, 2.0);
  const std::vector<double> dev = device_rate_series(s, 7);
  ASSERT_EQ(dev.size(), 4u);
  EXPECT_DOUBLE_EQ(dev[3], 4096.0);
  EXPECT_DOUBLE_EQ(*device_bytes_read(s, 7), 4.0 * 4096);
  EXPECT_TRUE(device_rate_series(s, 9).empty());  // a device no sample holds
  EXPECT_FALSE(device_bytes_read(s, 9));
}

// A worker reaped by its trainer: the kernel adds the worker's read counts to the trainer's, so
// summing both series would count the worker's reads twice (a share from storage larger than
// the whole, a chart's spike at each pass end). Each read counts once: the trainer's jump less
// what the worker's own series counted is the worker's tail, read after it was last seen.
TEST(ProcessSamplerTest, AReapedChildsReadsCountOnce) {
  ProcessSamples s;
  s.interval_ns = kS;
  for (int k = 0; k < 5; ++k) s.t_ns.push_back(k * kS), s.devices.emplace_back();
  ProcessSeries trainer{1, {0, 1, 2, 3, 4}, {}};
  for (std::uint64_t k = 0; k < 5; ++k)  // 1 MiB a second of its own; from sample 3, the worker's 22 and 11
    trainer.counts.push_back({0, (k << 20) + (k >= 3 ? 22u << 20 : 0), k >= 3 ? 11u << 20 : 0, 0});
  ProcessSeries worker{2, {1, 2}, {{0, 10u << 20, 5u << 20, 1}, {0, 20u << 20, 10u << 20, 1}}};
  s.processes = {trainer, worker};
  const auto all = [](std::int64_t) { return true; };
  const RateSeries r = rate_series(s, all, 0);
  EXPECT_DOUBLE_EQ(r.read_bytes, double((4u << 20) + (22u << 20)));  // the trainer's 4, the worker's 22
  EXPECT_DOUBLE_EQ(r.storage_bytes, double(11u << 20));
  EXPECT_LE(r.storage_bytes, r.read_bytes);
  // Per interval: no spike where the worker was reaped (its last 2 MiB, after its last sample).
  EXPECT_DOUBLE_EQ(r.read_bps[2], double((1u << 20) + (2u << 20)));
  const RateSeries t = rate_series(
      s, [](std::int64_t pid) { return pid == 1; }, 0);
  EXPECT_DOUBLE_EQ(t.read_bytes, double((4u << 20) + (2u << 20)));
  // A child whose parent is not in the tree (reparented, reaped elsewhere) takes nothing away.
  s.processes[1].counts.back().ppid = 99;
  s.processes[0].counts = {};
  for (std::uint64_t k = 0; k < 5; ++k) s.processes[0].counts.push_back({0, k << 20, 0, 0});
  EXPECT_DOUBLE_EQ(rate_series(s, all, 0).read_bytes, double((4u << 20) + (20u << 20)));
}

TEST(ProcessSamplerTest, HalvingKeepsEveryCountAndDoublesTheInterval) {
  const ProcessSamples s = two_processes();
  const ProcessSamples h = halve_samples(s);
  EXPECT_EQ(h.interval_ns, 2 * kS);
  ASSERT_EQ(h.t_ns.size(), 3u);  // old 0, 2, 4
  const auto all = [](std::int64_t) { return true; };
  const RateSeries before = rate_series(s, all, 0), after = rate_series(h, all, 0);
  EXPECT_DOUBLE_EQ(after.cpu_s, before.cpu_s);
  EXPECT_DOUBLE_EQ(after.read_bytes, before.read_bytes);
  // An even count of samples: the odd last one is kept.
  ProcessSamples even = s;
  even.t_ns.pop_back();
  even.devices.pop_back();
  even.processes[0].at.pop_back();
  even.processes[0].counts.pop_back();
  const ProcessSamples he = halve_samples(even);
  ASSERT_EQ(he.t_ns.size(), 3u);  // old 0, 2, 3
  EXPECT_EQ(he.t_ns.back(), even.t_ns.back());
  EXPECT_DOUBLE_EQ(rate_series(he, all, 0).cpu_s, rate_series(even, all, 0).cpu_s);
}

// RETURNS: the path of a new 1 MiB file in `dir`.
std::string mib_file(const testing::TempDir& dir) {
  const std::string file = dir.path() + "/data";
  testing::write_file(file, std::string(1 << 20, 'x'));
  return file;
}

// Reads `file` to its end (in a forked child: no allocation).
void read_through(const std::string& file) {
  const int fd = ::open(file.c_str(), O_RDONLY);
  static char buf[1 << 16];
  while (fd >= 0 && ::read(fd, buf, sizeof buf) > 0) {
  }
}

// RETURNS: the samples of `pid`'s tree every `interval_ns` until it exits (the root reaped after).
ProcessSamples sample_until_exit(pid_t pid, std::int64_t interval_ns, std::size_t max_samples = 4096) {
  ProcessSampler sampler(pid, interval_ns, max_samples);
  EXPECT_EQ(sampler.start(), "");
  siginfo_t info{};
  EXPECT_EQ(::waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT), 0);
  ProcessSamples s = sampler.stop();
  int status = 0;
  ::waitpid(pid, &status, 0);
  return s;
}

TEST(ProcessSamplerTest, SamplesARealChildsCpuAndItsReads) {
  testing::TempDir dir;
  const std::string file = mib_file(dir);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Read the file, then burn 0.4 s of CPU in this process (no child to end unseen).
    read_through(file);
    timespec t{};
    do {
      ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    } while (t.tv_sec * 1'000'000'000LL + t.tv_nsec < 400'000'000LL);
    ::_exit(0);
  }
  const ProcessSamples s = sample_until_exit(pid, 50'000'000, 6);  // 6: halved at least once in 0.4 s
  EXPECT_GT(s.interval_ns, 50'000'000);                            // halved
  const RateSeries r = rate_series(
      s, [](std::int64_t) { return true; }, s.t_ns.front());
  EXPECT_NEAR(r.cpu_s, 0.4, 0.05);  // clock ticks: 10 ms each
  EXPECT_EQ(s.io_why, "");          // the exited child, not yet reaped, is no refusal
  EXPECT_GE(r.read_bytes, double(1 << 20));
  // Every block device counted at every sample (none in some containers).
  for (const auto& at : s.devices) EXPECT_EQ(at.size(), s.devices.front().size());
}

// The same on a real tree: a child forks a worker that reads 1 MiB and is reaped by the child.
TEST(ProcessSamplerTest, AReapedWorkersRealReadsCountOnce) {
  testing::TempDir dir;
  const std::string file = mib_file(dir);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const pid_t worker = ::fork();
    if (worker == 0) {
      read_through(file);
      ::usleep(300'000);  // seen by a few samples after its reads
      ::_exit(0);
    }
    int st = 0;
    ::waitpid(worker, &st, 0);
    ::usleep(300'000);  // sampled after the reap
    ::_exit(0);
  }
  const ProcessSamples s = sample_until_exit(pid, 50'000'000);
  const RateSeries r = rate_series(
      s, [](std::int64_t) { return true; }, s.t_ns.front());
  EXPECT_GE(r.read_bytes, double(1 << 20));
  EXPECT_LT(r.read_bytes, 1.25 * double(1 << 20)) << "the worker's reads counted twice";
}

TEST(ProcessSamplerTest, TimelineGroupsBatchesWithinAPassAtTheBound) {
  JobLog log;
  for (int p = 0; p < 2; ++p) {
    JobEpoch e;
    e.id = p + 1;
    for (int k = 0; k < 10; ++k) {
      const std::int64_t ask = (p * 100 + k * 10) * 1'000'000LL;
      e.batches.push_back({k, ask, ask + 2'000'000});
    }
    log.epochs.push_back(e);
  }
  const JobTimeline all = job_timeline(log, 0, 100);
  EXPECT_EQ(all.batches_per_point, 1u);
  ASSERT_EQ(all.t_s.size(), 20u);
  EXPECT_DOUBLE_EQ(all.wait_ms[0], 2.0);
  EXPECT_DOUBLE_EQ(*all.step_ms[0], 8.0);
  EXPECT_FALSE(all.step_ms[9]);  // a pass's last batch has no step
  const JobTimeline few = job_timeline(log, 0, 5);
  EXPECT_EQ(few.batches_per_point, 4u);
  ASSERT_EQ(few.t_s.size(), 6u);  // 4 + 4 + 2 per pass, never across passes
  EXPECT_EQ(few.pass[2], 1);
  EXPECT_EQ(few.pass[3], 2);
  EXPECT_DOUBLE_EQ(*few.step_ms[2], 8.0);  // the pass's last two: one step between them
}

}  // namespace
}  // namespace feedbench
