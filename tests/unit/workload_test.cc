// Workload streams: coverage, order, determinism and shares, without any I/O.
#include "feedbench/io/workload.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <thread>

#include "feedbench/base/error.h"

namespace feedbench {
namespace {

FileSet make_files(const std::vector<std::uint64_t>& sizes) {
  FileSet files("/data");
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "f%05zu.bin", i);
    files.add(name, sizes[i], 0);
  }
  files.sort();
  return files;
}

std::vector<WorkItem> drain(Workload& workload, unsigned worker) {
  std::vector<WorkItem> items;
  WorkItem item;
  while (workload.next(worker, item)) items.push_back(item);
  return items;
}

// Checks that the items of each file run start to end in block_size steps, flagged first and
// last, each file exactly once. RETURNS: the files in the order their first read came.
std::vector<std::uint32_t> check_whole_files(const FileSet& files, const std::vector<WorkItem>& items,
                                             std::uint64_t bs) {
  std::vector<std::uint32_t> order;
  std::map<std::uint32_t, std::uint64_t> next_offset;
  std::set<std::uint32_t> finished;
  for (const WorkItem& it : items) {
    EXPECT_EQ(it.length, bs);
    EXPECT_FALSE(finished.count(it.file)) << "file " << it.file << " read after its last block";
    if (it.first_of_file) {
      EXPECT_EQ(it.offset, 0u);
      EXPECT_FALSE(next_offset.count(it.file)) << "file " << it.file << " started twice";
      order.push_back(it.file);
      next_offset[it.file] = 0;
    }
    if (!next_offset.count(it.file)) {
      ADD_FAILURE() << "read of file " << it.file << " before first_of_file";
      continue;
    }
    EXPECT_EQ(it.offset, next_offset[it.file]);
    next_offset[it.file] += bs;
    const bool last = it.offset + bs >= files.file_size(it.file);
    EXPECT_EQ(it.last_of_file, last) << "file " << it.file << " offset " << it.offset;
    if (last) finished.insert(it.file);
  }
  EXPECT_EQ(finished.size(), files.size());
  EXPECT_EQ(order.size(), files.size());
  return order;
}

TEST(WorkloadTest, PatternNamesRoundTrip) {
  for (Pattern p : {Pattern::sequential, Pattern::random, Pattern::shuffled_files})
    EXPECT_EQ(parse_pattern(pattern_name(p)), p);
  EXPECT_THROW(parse_pattern("strided"), InputError);
}

TEST(WorkloadTest, SequentialReadsEachFileOnceStartToEndInSortedOrder) {
  FileSet files = make_files({0, 1, 4096, 10000, 65536, 100, 4097});
  WorkloadSpec spec;
  spec.pattern = Pattern::sequential;
  spec.block_size = 4096;
  Workload workload(files, spec);
  EXPECT_EQ(workload.planned_bytes(), files.total_bytes());
  auto items = drain(workload, 0);
  auto order = check_whole_files(files, items, 4096);
  for (std::uint32_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], i);
  // 0 and 1 bytes: one read each; 4096: 1; 10000: 3; 65536: 16; 100: 1; 4097: 2.
  EXPECT_EQ(items.size(), 1u + 1 + 1 + 3 + 16 + 1 + 2);
  WorkItem item;
  EXPECT_FALSE(workload.next(0, item)) << "stays finished";
}

TEST(WorkloadTest, SequentialHandsWholeFilesToWhicheverWorkerAsks) {
  std::vector<std::uint64_t> sizes;
  for (int i = 0; i < 40; ++i) sizes.push_back(std::uint64_t(i) * 3000 + 1);
  FileSet files = make_files(sizes);
  WorkloadSpec spec;
  spec.pattern = Pattern::sequential;
  spec.block_size = 8192;
  spec.workers = 4;
  Workload workload(files, spec);
  std::vector<std::vector<WorkItem>> per_worker(4);
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < 4; ++w) threads.emplace_back([&, w] { per_worker[w] = drain(workload, w); });
  for (auto& t : threads) t.join();
  // Each worker's stream is whole files; together they cover every file exactly once.
  std::vector<WorkItem> all;
  std::set<std::uint32_t> seen;
  for (const auto& items : per_worker) {
    for (const WorkItem& it : items) {
      if (it.first_of_file) {
        EXPECT_TRUE(seen.insert(it.file).second);
      }
      all.push_back(it);
    }
  }
  EXPECT_EQ(seen.size(), files.size());
  for (const auto& items : per_worker) {
    // Within a worker, a file's reads are contiguous and complete.
    std::uint32_t current = UINT32_MAX;
    for (const auto& it : items) {
      if (it.first_of_file) current = it.file;
      EXPECT_EQ(it.file, current);
    }
  }
}

TEST(WorkloadTest, ShuffledCoversEachFileOnceInASeededStableOrder) {
  std::vector<std::uint64_t> sizes(60, 5000);
  FileSet files = make_files(sizes);
  auto order_of = [&](std::uint64_t seed, std::uint64_t round) {
    WorkloadSpec spec;
    spec.pattern = Pattern::shuffled_files;
    spec.block_size = 4096;
    spec.seed = seed;
    spec.round = round;
    Workload workload(files, spec);
    EXPECT_EQ(workload.planned_bytes(), files.total_bytes());
    return check_whole_files(files, drain(workload, 0), 4096);
  };
  const auto a = order_of(42, 0);
  EXPECT_EQ(a, order_of(42, 0)) << "stable for a seed";
  std::vector<std::uint32_t> sorted(a.size());
  for (std::uint32_t i = 0; i < sorted.size(); ++i) sorted[i] = i;
  EXPECT_NE(a, sorted) << "actually shuffled";
  EXPECT_NE(a, order_of(43, 0)) << "depends on the seed";
  EXPECT_NE(a, order_of(42, 1)) << "each round is its own epoch";
}

TEST(WorkloadTest, RandomReadsAlignedBlocksInsideFilesOnePassWorth) {
  // An empty file must never be chosen; a big file gets most of the reads.
  FileSet files = make_files({0, 4096 * 100, 5000, 4096 * 3});
  const std::uint64_t bs = 4096;
  WorkloadSpec spec;
  spec.pattern = Pattern::random;
  spec.block_size = bs;
  spec.workers = 3;
  spec.seed = 7;
  Workload workload(files, spec);
  const std::uint64_t expected = (files.total_bytes() + bs - 1) / bs;
  EXPECT_EQ(workload.planned_bytes(), expected * bs);
  std::uint64_t total = 0;
  std::vector<std::uint64_t> shares;
  std::map<std::uint32_t, std::uint64_t> per_file;
  for (unsigned w = 0; w < 3; ++w) {
    auto items = drain(workload, w);
    shares.push_back(items.size());
    total += items.size();
    for (const WorkItem& it : items) {
      ASSERT_LT(it.file, files.size());
      EXPECT_EQ(it.offset % bs, 0u);
      EXPECT_LT(it.offset, files.file_size(it.file));
      EXPECT_EQ(it.length, bs);
      EXPECT_FALSE(it.first_of_file);
      EXPECT_FALSE(it.last_of_file);
      ++per_file[it.file];
    }
  }
  EXPECT_EQ(total, expected);
  EXPECT_LE(*std::max_element(shares.begin(), shares.end()) - *std::min_element(shares.begin(), shares.end()),
            1u);
  EXPECT_EQ(per_file.count(0), 0u) << "empty file chosen";
  EXPECT_GT(per_file[1], expected / 2) << "reads not weighted by size";
}

TEST(WorkloadTest, RandomIsDeterministicPerSeedAndDistinctPerWorker) {
  FileSet files = make_files({1 << 20, 1 << 19, 12345});
  auto stream = [&](std::uint64_t seed, unsigned worker, std::uint64_t round) {
    WorkloadSpec spec;
    spec.pattern = Pattern::random;
    spec.block_size = 4096;
    spec.workers = 2;
    spec.seed = seed;
    spec.round = round;
    Workload workload(files, spec);
    std::vector<std::pair<std::uint32_t, std::uint64_t>> out;
    for (const auto& it : drain(workload, worker)) out.emplace_back(it.file, it.offset);
    return out;
  };
  EXPECT_EQ(stream(1, 0, 0), stream(1, 0, 0));
  EXPECT_NE(stream(1, 0, 0), stream(1, 1, 0));
  EXPECT_NE(stream(1, 0, 0), stream(2, 0, 0));
  EXPECT_NE(stream(1, 0, 0), stream(1, 0, 1));
}

TEST(WorkloadTest, EmptySelectionYieldsNothing) {
  FileSet files = make_files({0, 0});
  for (Pattern p : {Pattern::random, Pattern::sequential}) {
    WorkloadSpec spec;
    spec.pattern = p;
    Workload workload(files, spec);
    auto items = drain(workload, 0);
    EXPECT_EQ(items.size(), p == Pattern::random ? 0u : 2u);  // whole-file: one empty read each
  }
}

}  // namespace
}  // namespace feedbench

namespace feedbench {
namespace {

// max_bytes: whole-file patterns read a prefix of their order (the last file cut at a block
// boundary at or past the cap); random makes the cap's worth of reads. planned_bytes() says so,
// full_pass_bytes() keeps what a whole round asks for.
TEST(WorkloadTest, MaxBytesReadsAPrefixOfTheOrderRoundedUpToABlock) {
  FileSet files = make_files({10000, 10000, 10000, 10000});
  for (Pattern pattern : {Pattern::sequential, Pattern::shuffled_files}) {
    WorkloadSpec spec;
    spec.pattern = pattern;
    spec.block_size = 4096;
    spec.max_bytes = 15000;  // file 1 of the order, and 5000 bytes (two blocks) of the second
    Workload w(files, spec);
    EXPECT_EQ(w.full_pass_bytes(), 40000u);
    auto items = drain(w, 0);
    std::map<std::uint32_t, std::uint64_t> per_file;
    for (const WorkItem& it : items)
      per_file[it.file] += std::min<std::uint64_t>(it.length, 10000 - it.offset);
    ASSERT_EQ(per_file.size(), 2u) << pattern_name(pattern);
    std::uint64_t total = 0;
    for (auto& [f, b] : per_file) total += b;
    EXPECT_EQ(total, 10000u + 8192u) << pattern_name(pattern);
    EXPECT_EQ(w.planned_bytes(), total) << pattern_name(pattern);
    EXPECT_TRUE(items.back().last_of_file);
  }
  WorkloadSpec spec;
  spec.pattern = Pattern::random;
  spec.block_size = 4096;
  spec.workers = 3;
  spec.max_bytes = 9000;
  Workload w(files, spec);
  std::size_t reads = 0;
  for (unsigned k = 0; k < 3; ++k) reads += drain(w, k).size();
  EXPECT_EQ(reads, 3u);  // ceil(9000 / 4096)
  EXPECT_EQ(w.planned_bytes(), 3u * 4096);
  EXPECT_EQ(w.full_pass_bytes(), 10u * 4096);
  // A cap past the selection changes nothing.
  WorkloadSpec big;
  big.max_bytes = 1 << 30;
  Workload all(files, big);
  EXPECT_EQ(all.planned_bytes(), all.full_pass_bytes());
  EXPECT_EQ(drain(all, 0).size(), 4u);  // one 1 MiB read per file
}

}  // namespace
}  // namespace feedbench
