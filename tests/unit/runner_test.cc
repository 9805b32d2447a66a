// run_round end to end on real files: every engine, pattern and worker count reads the whole
// data set once; counters, latency and errors are as documented.
#include "feedbench/io/runner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>

#include <sys/stat.h>
#include <unistd.h>

#include "feedbench/base/error.h"
#include "feedbench/io/throttle.h"
#include "test_util.h"

#if defined(__SANITIZE_ADDRESS__)
// From <sanitizer/allocator_interface.h> (not always installed): ASan calls the hooks on every
// allocation, from any thread.
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*,
                                                                             std::size_t),
                                                         void (*free_hook)(const volatile void*));
#define FEEDBENCH_COUNT_ALLOCATIONS 1
#endif

namespace feedbench {
namespace {

using testing::TempDir;

constexpr std::uint64_t kBlock = 16384;

// A small data set on disk (O_DIRECT needs a disk-backed file system: TempDir is under /var/tmp).
struct DataSet {
  TempDir dir;
  FileSet files{dir.path()};
  std::uint64_t whole_file_reads = 0;  // reads a whole-file pattern makes

  explicit DataSet(const std::vector<std::uint64_t>& sizes) {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const std::string rel = "class_" + std::to_string(i % 3) + "/f" + std::to_string(i) + ".bin";
      testing::write_file(dir / rel, std::string(sizes[i], char('a' + i % 26)));
      files.add(rel, sizes[i], 0);
      whole_file_reads += std::max<std::uint64_t>(1, (sizes[i] + kBlock - 1) / kBlock);
    }
    files.sort();
  }
};

const std::vector<std::uint64_t> kSizes = {0, 1, 4095, 4096, 70000, 131072, 200003, 50000, 9};

struct EngineSetup {
  const char* engine;
  bool direct;
  unsigned queue_depth;
};

// RETURNS: the round's stats, or nullopt when the system refuses the engine (io_uring in a
// sandbox, O_DIRECT here), after printing why.
std::optional<RoundStats> run(const FileSet& files, Pattern pattern, const EngineSetup& e, unsigned workers,
                              bool record_latency = true, unsigned max_open = 256) {
  WorkloadSpec spec;
  spec.pattern = pattern;
  spec.block_size = kBlock;
  spec.workers = workers;
  Workload workload(files, spec);
  RoundOptions options;
  options.engine = e.engine;
  options.engine_options.direct = e.direct;
  options.engine_options.queue_depth = e.queue_depth;
  options.engine_options.block_size = kBlock;
  options.workers = workers;
  options.record_latency = record_latency;
  options.max_open_files = max_open;
  RoundStats stats = run_round(files, workload, options);
  if (!stats.error.empty() && (stats.error.find("io_uring refused") != std::string::npos ||
                               stats.error.find("O_DIRECT not supported") != std::string::npos)) {
    std::printf("skipping %s: %s\n", e.engine, stats.error.c_str());
    return std::nullopt;
  }
  return stats;
}

class RunnerEngines : public ::testing::TestWithParam<EngineSetup> {};

TEST_P(RunnerEngines, WholeFilePatternsReadEveryByteOnce) {
  DataSet data(kSizes);
  for (Pattern pattern : {Pattern::sequential, Pattern::shuffled_files}) {
    for (unsigned workers : {1u, 2u, 4u}) {
      auto stats = run(data.files, pattern, GetParam(), workers);
      if (!stats) GTEST_SKIP() << GetParam().engine << " refused here";
      SCOPED_TRACE(std::string(pattern_name(pattern)) + " workers " + std::to_string(workers));
      EXPECT_EQ(stats->error, "");
      EXPECT_EQ(stats->bytes, data.files.total_bytes());
      EXPECT_EQ(stats->bytes_planned, data.files.total_bytes());
      EXPECT_TRUE(stats->complete()) << stats->incomplete;
      EXPECT_EQ(stats->noatime_opens, stats->files);  // the owner may always use O_NOATIME
      EXPECT_EQ(stats->files, data.files.size());
      EXPECT_EQ(stats->reads, data.whole_file_reads);
      EXPECT_EQ(stats->latency.count(), stats->reads);
      EXPECT_GT(stats->elapsed_ns, 0);
      EXPECT_GE(stats->cpu_util, 0.0);
      EXPECT_LE(stats->cpu_util, 1.5);  // rusage granularity can overshoot a tiny round
    }
  }
}

TEST_P(RunnerEngines, RandomMakesOnePassWorthOfReads) {
  DataSet data(kSizes);
  const std::uint64_t expected = (data.files.total_bytes() + kBlock - 1) / kBlock;
  for (unsigned workers : {1u, 3u}) {
    // max_open_files 2 forces evictions from the open-file cache.
    auto stats = run(data.files, Pattern::random, GetParam(), workers, true, 2);
    if (!stats) GTEST_SKIP() << GetParam().engine << " refused here";
    EXPECT_EQ(stats->error, "");
    EXPECT_EQ(stats->reads, expected);
    EXPECT_EQ(stats->latency.count(), expected);
    EXPECT_GT(stats->bytes, 0u);
    EXPECT_LE(stats->bytes, expected * kBlock);
    // Reads near a file's end are short by design: planned counts what each read can return.
    EXPECT_EQ(stats->bytes_planned, stats->bytes);
    EXPECT_TRUE(stats->complete()) << stats->incomplete;
    EXPECT_GE(stats->files, 1u);
    EXPECT_LE(stats->files, stats->reads);
  }
}

// Files that shrink or vanish after the scan: the round still ends without an error, but it
// read less than it planned and says so, naming a file, so the repetition is not a figure.
TEST_P(RunnerEngines, ShrunkAndVanishedFilesMakeTheRoundIncomplete) {
  for (Pattern pattern : {Pattern::sequential, Pattern::random, Pattern::shuffled_files}) {
    DataSet data(kSizes);
    // The scan saw every file whole; now one shrinks and one goes.
    ASSERT_EQ(::truncate((data.dir / "class_1/f4.bin").c_str(), 5000), 0);
    ASSERT_EQ(::unlink((data.dir / "class_2/f5.bin").c_str()), 0);
    SCOPED_TRACE(std::string(pattern_name(pattern)));
    auto stats = run(data.files, pattern, GetParam(), 2);
    if (!stats) GTEST_SKIP() << GetParam().engine << " refused here";
    EXPECT_EQ(stats->error, "");
    EXPECT_FALSE(stats->complete());
    EXPECT_LT(stats->bytes, stats->bytes_planned);
    if (pattern != Pattern::random) {
      EXPECT_EQ(stats->bytes_planned, data.files.total_bytes());
      EXPECT_EQ(stats->bytes, data.files.total_bytes() - (70000 - 5000) - 131072);
      EXPECT_EQ(stats->files_vanished, 1u);
      EXPECT_GE(stats->short_reads, 1u);
    }
    EXPECT_TRUE(stats->incomplete.find("f4.bin") != std::string::npos ||
                stats->incomplete.find("f5.bin") != std::string::npos)
        << stats->incomplete;
  }
}

INSTANTIATE_TEST_SUITE_P(AllEngines, RunnerEngines,
                         ::testing::Values(EngineSetup{"psync", false, 1}, EngineSetup{"psync", true, 1},
                                           EngineSetup{"mmap", false, 1}, EngineSetup{"libaio", true, 8},
                                           EngineSetup{"io_uring", false, 8},
                                           EngineSetup{"io_uring", true, 4}),
                         [](const auto& info) {
                           return std::string(info.param.engine) +
                                  (info.param.direct ? "_direct" : "_buffered");
                         });

TEST(RunnerTest, LatencyOffGivesAnEmptyHistogram) {
  DataSet data(kSizes);
  auto stats = run(data.files, Pattern::sequential, {"psync", false, 1}, 2, false);
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->bytes, data.files.total_bytes());
  EXPECT_EQ(stats->latency.count(), 0u);
}

// Latency is recorded in nanoseconds of the round's own clock, whichever latency clock stamps
// the reads (latency_clock.h): at queue depth 1 with one worker the reads' spans are disjoint
// parts of the round, so their sum cannot exceed its elapsed time. Raw counter ticks (2-4 per
// ns) or a rate measured wrong would break that bound; a throttle makes the reads most of it.
TEST(RunnerTest, LatenciesAddUpToNoMoreThanTheRound) {
  DataSet data(std::vector<std::uint64_t>(12, kBlock));
  WorkloadSpec spec;
  spec.pattern = Pattern::sequential;
  spec.block_size = kBlock;
  spec.workers = 1;
  Workload workload(data.files, spec);
  RoundOptions options;
  options.engine = "psync";
  options.engine_options.queue_depth = 1;
  options.engine_options.block_size = kBlock;
  options.engine_options.throttle = std::make_shared<Throttle>(kBlock * 200);  // 5 ms a read
  options.workers = 1;
  RoundStats stats = run_round(data.files, workload, options);
  ASSERT_EQ(stats.error, "");
  ASSERT_EQ(stats.latency.count(), 12u);
  const double sum_ns = stats.latency.mean() * double(stats.latency.count());
  const double elapsed = double(stats.elapsed_ns);
  EXPECT_LE(sum_ns, elapsed * 1.02) << "histogram bins are within 1%";
  EXPECT_GE(sum_ns, elapsed * 0.5) << "the throttled reads are most of the round";
  EXPECT_GE(stats.latency.max(), 1'000'000u) << "each read waited for the throttle (5 ms)";
}

TEST(RunnerTest, MissingFileMakesTheRoundIncompleteNamingIt) {
  DataSet data(kSizes);
  FileSet files(data.dir.path());
  for (std::size_t i = 0; i < data.files.size(); ++i)
    files.add(data.files.relative_path(i), data.files.file_size(i), 0);
  files.add("class_9/gone.bin", 100000, 0);
  files.sort();
  for (Pattern pattern : {Pattern::sequential, Pattern::random}) {
    for (EngineSetup e : {EngineSetup{"psync", false, 1}, EngineSetup{"libaio", true, 4}}) {
      // random picks files by size: gone.bin holds a third of the data, so it is hit.
      auto stats = run(files, pattern, e, 2);
      if (!stats) continue;
      EXPECT_EQ(stats->error, "");
      EXPECT_FALSE(stats->complete());
      // Whole-file patterns try a file once; random reads try it at each read that lands on it.
      if (pattern == Pattern::sequential) EXPECT_EQ(stats->files_vanished, 1u);
      else EXPECT_GE(stats->files_vanished, 1u);
      EXPECT_NE(stats->incomplete.find("gone.bin"), std::string::npos) << stats->incomplete;
    }
  }
}

TEST(RunnerTest, OptionsAnEngineCannotTakeAreInputErrors) {
  DataSet data({4096});
  WorkloadSpec spec;
  Workload workload(data.files, spec);
  RoundOptions options;
  options.engine = "psync";
  options.engine_options.queue_depth = 4;
  EXPECT_THROW(run_round(data.files, workload, options), InputError);
  options.engine = "nosuch";
  EXPECT_THROW(run_round(data.files, workload, options), InputError);
}

TEST(RunnerTest, ReadErrorEndsTheRoundWithTheFileAndErrno) {
  // A directory where the scan saw a file: refused at open, before any read.
  DataSet data({4096});
  FileSet files(data.dir.path());
  files.add("class_0", 4096, 0);
  auto stats = run(files, Pattern::sequential, {"psync", false, 1}, 1);
  ASSERT_TRUE(stats);
  EXPECT_NE(stats->error.find("class_0"), std::string::npos) << stats->error;
  EXPECT_NE(stats->error.find("is a directory, not a regular file"), std::string::npos) << stats->error;
  EXPECT_EQ(stats->reads, 0u);
}

// Small files (one block at most) changed after the scan are reported the same whether io_uring
// reads each whole in one open -> read -> close chain, opens then reads it, or psync reads it:
// a chain that does not read its file whole hands the file back to open-then-read.
enum class Change { none, shrunk, grown, vanished, fifo };

TEST(RunnerTest, ChangedSmallFilesReportTheSameWithAndWithoutWholeFileChains) {
  const std::vector<std::uint64_t> sizes = {1, 100, 4095, 4096, 9, kBlock, 3000, 12000};
  struct Way {
    const char* name;
    const char* engine;
    unsigned qd;
    bool chain;
  };
  const Way ways[] = {{"io_uring chain", "io_uring", 8, true},
                      {"io_uring open-then-read", "io_uring", 8, false},
                      {"psync", "psync", 1, false}};
  for (Change change : {Change::none, Change::shrunk, Change::grown, Change::vanished, Change::fifo}) {
    for (Pattern pattern : {Pattern::sequential, Pattern::shuffled_files}) {
      DataSet data(sizes);
      const std::string f2 = data.dir / "class_2/f2.bin";  // 4095 bytes at the scan
      int rc = 0;
      if (change == Change::shrunk) rc = ::truncate(f2.c_str(), 1000);
      if (change == Change::grown) rc = ::truncate(f2.c_str(), 9000);
      if (change == Change::vanished || change == Change::fifo) rc = ::unlink(f2.c_str());
      if (change == Change::fifo && rc == 0) rc = ::mkfifo(f2.c_str(), 0600);
      ASSERT_EQ(rc, 0);
      SCOPED_TRACE("change " + std::to_string(int(change)) + " " + std::string(pattern_name(pattern)));
      std::vector<RoundStats> got;
      for (const Way& way : ways) {
        WorkloadSpec spec;
        spec.pattern = pattern;
        spec.block_size = kBlock;
        Workload workload(data.files, spec);
        RoundOptions options;
        options.engine = way.engine;
        options.engine_options.queue_depth = way.qd;
        options.engine_options.block_size = kBlock;
        options.engine_options.whole_file_chain = way.chain;
        got.push_back(run_round(data.files, workload, options));
        if (got.back().error.find("io_uring refused") != std::string::npos) GTEST_SKIP() << got.back().error;
      }
      const RoundStats& chain = got[0];
      for (std::size_t i = 1; i < got.size(); ++i) {
        SCOPED_TRACE(std::string(ways[0].name) + " vs " + ways[i].name);
        EXPECT_EQ(chain.error, got[i].error);
        if (change == Change::fifo) continue;  // failed: figures of a failed round are not reported
        EXPECT_EQ(chain.bytes, got[i].bytes);
        EXPECT_EQ(chain.bytes_planned, got[i].bytes_planned);
        EXPECT_EQ(chain.reads, got[i].reads);
        EXPECT_EQ(chain.files, got[i].files);
        EXPECT_EQ(chain.files_opened, got[i].files_opened);
        EXPECT_EQ(chain.noatime_opens, got[i].noatime_opens);
        EXPECT_EQ(chain.short_reads, got[i].short_reads);
        EXPECT_EQ(chain.files_vanished, got[i].files_vanished);
        EXPECT_EQ(chain.incomplete, got[i].incomplete);
        EXPECT_EQ(chain.complete(), got[i].complete());
        EXPECT_EQ(chain.latency.count(), got[i].latency.count());
      }
      const std::uint64_t total = data.files.total_bytes();
      switch (change) {
        case Change::none:
          EXPECT_EQ(chain.error, "");
          if (chain.whole_file_reads == 0) {
            std::printf("note: no whole-file chains here (kernel < 5.15?)\n");
          } else {
            EXPECT_EQ(chain.whole_file_reads, 8u);  // every file fits one block
          }
          EXPECT_EQ(got[1].whole_file_reads, 0u);
          EXPECT_EQ(chain.bytes, total);
          EXPECT_TRUE(chain.complete());
          break;
        case Change::shrunk:
          EXPECT_EQ(chain.bytes, total - 3095);
          EXPECT_EQ(chain.short_reads, 1u);
          EXPECT_NE(chain.incomplete.find("f2.bin: read 1000 of 4095 bytes"), std::string::npos)
              << chain.incomplete;
          break;
        case Change::grown:  // one read of a block: more than planned, as before
          EXPECT_EQ(chain.bytes, total - 4095 + 9000);
          EXPECT_TRUE(chain.complete());
          break;
        case Change::vanished:
          EXPECT_EQ(chain.files_vanished, 1u);
          EXPECT_NE(chain.incomplete.find("f2.bin: removed since the scan"), std::string::npos)
              << chain.incomplete;
          break;
        case Change::fifo:
          EXPECT_NE(chain.error.find("f2.bin is a FIFO, not a regular file"), std::string::npos)
              << chain.error;
          break;
      }
    }
  }
}

#ifdef FEEDBENCH_COUNT_ALLOCATIONS
std::atomic<bool> g_counting{false};
std::atomic<std::uint64_t> g_allocations{0};
void on_malloc(const volatile void*, std::size_t) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
}
void on_free(const volatile void*) {}

// RETURNS: heap allocations (all threads) made by one run_round.
std::uint64_t allocations_of_round(const FileSet& files, Pattern pattern, std::uint64_t bs,
                                   const char* engine) {
  WorkloadSpec spec;
  spec.pattern = pattern;
  spec.block_size = bs;
  // One worker: with two, which worker takes the files is a race, and a worker that opens no
  // file skips its one-time set-up (a first open), which would be counted as a difference.
  spec.workers = 1;
  Workload workload(files, spec);
  RoundOptions options;
  options.engine = engine;
  options.engine_options.block_size = bs;
  options.workers = 1;
  g_allocations = 0;
  g_counting = true;
  RoundStats stats = run_round(files, workload, options);
  g_counting = false;
  EXPECT_EQ(stats.error, "");
  EXPECT_EQ(stats.latency.count(), stats.reads);
  return g_allocations.load();
}
#endif

// The hot path allocates nothing: a round's allocations (threads, engines, histograms: all
// set-up) do not grow with the number of reads or of files.
TEST(RunnerTest, AllocationsDoNotGrowWithReadsOrFiles) {
#ifndef FEEDBENCH_COUNT_ALLOCATIONS
  GTEST_SKIP() << "allocation hooks need the ASan build";
#else
  static bool installed = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free) != 0;
  ASSERT_TRUE(installed);
  DataSet one({1 << 20});
  std::vector<std::uint64_t> many_sizes(40, 20000);
  DataSet many(many_sizes);
  DataSet two({20000, 20000});
  DataSet many_small(std::vector<std::uint64_t>(40, 3000));
  DataSet two_small({3000, 3000});
  for (const char* engine : {"psync", "mmap", "io_uring"}) {
    if (!run(one.files, Pattern::random, {engine, false, 1}, 1)) continue;  // refused here
    allocations_of_round(one.files, Pattern::random, 4096, engine);         // warm-up: lazy one-time set-up
    const auto few_reads = allocations_of_round(one.files, Pattern::random, 4096, engine);
    const auto more_reads = allocations_of_round(one.files, Pattern::random, 512, engine);
    EXPECT_GT(few_reads, 0u) << "the hooks see the set-up allocations";
    EXPECT_EQ(few_reads, more_reads) << engine << ": 256 vs 2048 random reads";
    const auto few_files = allocations_of_round(two.files, Pattern::sequential, 4096, engine);
    const auto more_files = allocations_of_round(many.files, Pattern::shuffled_files, 4096, engine);
    EXPECT_EQ(few_files, more_files) << engine << ": 2 vs 40 files";
    // Files of one block: io_uring reads each whole in one chain.
    const auto few_small = allocations_of_round(two_small.files, Pattern::sequential, 4096, engine);
    const auto more_small = allocations_of_round(many_small.files, Pattern::shuffled_files, 4096, engine);
    EXPECT_EQ(few_small, more_small) << engine << ": 2 vs 40 files of one block";
  }
#endif
}

}  // namespace
}  // namespace feedbench

namespace feedbench {
namespace {

// A file that would take minutes to read: sparse, so it costs no disk and its holes read as
// zeros from memory. A time-based round over it must stop at its runtime.
struct LongFile {
  TempDir dir;
  FileSet files{dir.path()};
  static constexpr std::uint64_t kSize = std::uint64_t(64) << 30;
  LongFile() {
    testing::write_file(dir / "big.bin", "");
    std::filesystem::resize_file(dir / "big.bin", kSize);
    files.add("big.bin", kSize, 0);
    files.sort();
  }
};

RoundStats timed_round(const FileSet& files, std::int64_t runtime_ns, std::int64_t ramp_ns,
                       std::optional<SteadyStateSpec> ss = std::nullopt, unsigned workers = 2) {
  WorkloadSpec spec;
  spec.block_size = 4096;
  spec.workers = workers;
  Workload workload(files, spec);
  RoundOptions options;
  options.engine_options.block_size = 4096;
  options.workers = workers;
  options.runtime_ns = runtime_ns;
  options.ramp_ns = ramp_ns;
  options.steady_state = ss;
  return run_round(files, workload, options);
}

constexpr std::int64_t kMs = 1'000'000;

// The round stops at the current block once runtime passed: what completed is counted, bytes
// and time alike, and the round is complete (not a short round).
TEST(RunnerTimeTest, RuntimeStopsTheRoundAtTheCurrentBlock) {
  LongFile big;
  RoundStats s = timed_round(big.files, 300 * kMs, 0);
  ASSERT_EQ(s.error, "");
  EXPECT_EQ(s.stopped_by, kStoppedByRuntime);
  EXPECT_GE(s.elapsed_ns, 300 * kMs);
  EXPECT_LT(s.elapsed_ns, 20'000 * kMs) << "wide margin: a loaded machine";
  EXPECT_GT(s.bytes, 0u);
  EXPECT_LT(s.bytes, LongFile::kSize);
  EXPECT_EQ(s.bytes % 4096, 0u) << "whole blocks";
  EXPECT_EQ(s.bytes, s.reads * 4096);
  EXPECT_EQ(s.latency.count(), s.reads);
  EXPECT_TRUE(s.complete()) << "a time-based round read what it asked for";
  EXPECT_EQ(s.ramp_bytes, 0u);
}

// ramp_time is read and then excluded: its bytes are counted apart, the figures' time starts
// after it, and runtime runs after it.
TEST(RunnerTimeTest, RampIsReadThenExcludedFromTheFigures) {
  LongFile big;
  RoundStats s = timed_round(big.files, 300 * kMs, 300 * kMs);
  ASSERT_EQ(s.error, "");
  EXPECT_EQ(s.stopped_by, kStoppedByRuntime);
  EXPECT_GE(s.ramp_elapsed_ns, 300 * kMs);
  EXPECT_GT(s.ramp_bytes, 0u);
  EXPECT_GE(s.elapsed_ns, 300 * kMs) << "runtime counts from the end of ramp";
  EXPECT_LT(s.elapsed_ns, 20'000 * kMs);
  EXPECT_GT(s.bytes, 0u);
  EXPECT_EQ(s.bytes, s.reads * 4096);
  EXPECT_EQ(s.latency.count(), s.reads) << "the ramp's reads left the histogram";
  EXPECT_EQ(s.files_opened, 1u) << "opened during the ramp, counted for the round";
  EXPECT_LT(s.ramp_bytes + s.bytes, LongFile::kSize);
  EXPECT_TRUE(s.complete());
}

// A runtime longer than the selection takes: the round ends with the selection (the monitor
// does not wait out the deadline), stopped_by empty.
TEST(RunnerTimeTest, SelectionEndingFirstEndsTheRound) {
  DataSet data(kSizes);
  const auto t0 = std::chrono::steady_clock::now();
  RoundStats s = timed_round(data.files, 600'000 * kMs, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(60));
  ASSERT_EQ(s.error, "");
  EXPECT_EQ(s.stopped_by, "");
  EXPECT_EQ(s.bytes, data.files.total_bytes());
  EXPECT_TRUE(s.complete());
}

TEST(RunnerTimeTest, SelectionEndingWithinRampMeasuredNothing) {
  DataSet data(kSizes);
  RoundStats s = timed_round(data.files, 1000 * kMs, 120'000 * kMs);
  EXPECT_NE(s.error.find("within ramp_time 2min: nothing was measured"), std::string::npos) << s.error;
}

// A criterion every window meets (spread at most 1000%: ten non-negative samples never lie
// further than 900% from their mean) ends the round after the first full window.
TEST(RunnerTimeTest, SteadyStateReachedEndsTheRoundEarly) {
  LongFile big;
  SteadyStateSpec ss{SteadyStateSpec::Metric::bw, SteadyStateSpec::Mode::spread, 1000, 200 * kMs};
  RoundStats s = timed_round(big.files, 600'000 * kMs, 100 * kMs, ss);
  ASSERT_EQ(s.error, "");
  EXPECT_EQ(s.stopped_by, kStoppedBySteadyState);
  ASSERT_TRUE(s.steady_state);
  EXPECT_TRUE(s.steady_state->reached);
  EXPECT_GE(s.steady_state->reached_after_s, 0.19);
  EXPECT_LT(s.steady_state->reached_after_s, 60);
  EXPECT_GE(s.steady_state->samples, 10u);
  EXPECT_LE(s.steady_state->value_percent, 1000);
  EXPECT_GT(s.bytes, 0u);
}

// An impossible criterion runs to runtime and says it was not reached.
TEST(RunnerTimeTest, SteadyStateNotReachedRunsToRuntime) {
  LongFile big;
  SteadyStateSpec ss{SteadyStateSpec::Metric::iops, SteadyStateSpec::Mode::slope, 1e-9, 100 * kMs};
  RoundStats s = timed_round(big.files, 400 * kMs, 0, ss);
  ASSERT_EQ(s.error, "");
  EXPECT_EQ(s.stopped_by, kStoppedByRuntime);
  ASSERT_TRUE(s.steady_state);
  EXPECT_FALSE(s.steady_state->reached);
  EXPECT_GE(s.steady_state->samples, 3u);
}

TEST(SteadyStateDetectorTest, SpreadAndSlopeAgainstReferenceValues) {
  // 10 samples per 1s window, 100ms apart.
  SteadyStateSpec spread{SteadyStateSpec::Metric::bw, SteadyStateSpec::Mode::spread, 5, 1000 * kMs};
  SteadyStateDetector d(spread, 100 * kMs);
  for (int i = 0; i < 9; ++i) EXPECT_FALSE(d.add(i % 2 ? 104 : 96)) << "no full window yet";
  EXPECT_TRUE(std::isnan(d.last_value()));
  EXPECT_TRUE(d.add(104));  // mean 100, farthest 4%
  EXPECT_NEAR(d.last_value(), 4.0, 1e-9);

  SteadyStateDetector tight({SteadyStateSpec::Metric::bw, SteadyStateSpec::Mode::spread, 3, 1000 * kMs},
                            100 * kMs);
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(tight.add(i % 2 ? 104 : 96));
  for (int i = 0; i < 10; ++i) tight.add(100);  // the window slides past the spread
  EXPECT_TRUE(tight.reached());

  // A rising rate: 100, 101, ... 109 per 100ms = 10 units per second on a mean of 104.5.
  SteadyStateSpec slope{SteadyStateSpec::Metric::bw, SteadyStateSpec::Mode::slope, 9, 1000 * kMs};
  SteadyStateDetector s(slope, 100 * kMs);
  for (int i = 0; i < 10; ++i) s.add(100 + i);
  EXPECT_NEAR(s.last_value(), 100.0 * 10 / 104.5, 1e-9);
  EXPECT_FALSE(s.reached());
  SteadyStateDetector flat(slope, 100 * kMs);
  for (int i = 0; i < 10; ++i) flat.add(i % 2 ? 90 : 110);  // noisy, but no trend to speak of
  EXPECT_TRUE(flat.reached()) << flat.last_value();
  EXPECT_NEAR(flat.last_mean(), 100.0, 1e-9) << "the window's mean rate";
  // A burst, then the steady rate: the window is steady only once the burst is out of it, and
  // its mean is the steady rate (what the estimator's probe prices a run at).
  SteadyStateDetector burst(slope, 100 * kMs);
  EXPECT_EQ(burst.last_mean(), 0.0);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(burst.add(800));
  int taken = 3;
  while (!burst.add(40)) ++taken;
  EXPECT_GE(taken, 12);
  EXPECT_NEAR(burst.last_mean(), 40.0, 1e-9);
  // Nothing read: never steady.
  SteadyStateDetector idle(spread, 100 * kMs);
  for (int i = 0; i < 20; ++i) EXPECT_FALSE(idle.add(0));
}

}  // namespace
}  // namespace feedbench
