// run_round end to end on real files: every engine, pattern and worker count reads the whole
// data set once; counters, latency and errors are as documented.
#include "feedbench/runner.h"

#include <gtest/gtest.h>

#include <atomic>

#include <unistd.h>

#include "feedbench/error.h"
#include "test_util.h"

#if defined(__SANITIZE_ADDRESS__)
// From <sanitizer/allocator_interface.h> (not always installed): ASan calls the hooks on every
// allocation, from any thread.
extern "C" int __sanitizer_install_malloc_and_free_hooks(
    void (*malloc_hook)(const volatile void*, std::size_t), void (*free_hook)(const volatile void*));
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
std::optional<RoundStats> run(const FileSet& files, Pattern pattern, const EngineSetup& e,
                              unsigned workers, bool record_latency = true, unsigned max_open = 256) {
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
  for (const char* engine : {"psync", "mmap", "io_uring"}) {
    if (!run(one.files, Pattern::random, {engine, false, 1}, 1)) continue;  // refused here
    allocations_of_round(one.files, Pattern::random, 4096, engine);  // warm-up: lazy one-time set-up
    const auto few_reads = allocations_of_round(one.files, Pattern::random, 4096, engine);
    const auto more_reads = allocations_of_round(one.files, Pattern::random, 512, engine);
    EXPECT_GT(few_reads, 0u) << "the hooks see the set-up allocations";
    EXPECT_EQ(few_reads, more_reads) << engine << ": 256 vs 2048 random reads";
    const auto few_files = allocations_of_round(two.files, Pattern::sequential, 4096, engine);
    const auto more_files = allocations_of_round(many.files, Pattern::shuffled_files, 4096, engine);
    EXPECT_EQ(few_files, more_files) << engine << ": 2 vs 40 files";
  }
#endif
}

}  // namespace
}  // namespace feedbench
