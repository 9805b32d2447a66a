// The Cluster seen from one process, and the maths of a round across ranks: shares of the
// selection, IOR's aggregate, stragglers, agreement on a failure.
#include "feedbench/cluster/cluster.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "benchmarks/cluster_launch.h"

namespace feedbench {
namespace {

TEST(LocalCluster, IsRankZeroOfOneOnOneHost) {
  LocalCluster c;
  EXPECT_EQ(c.rank(), 0);
  EXPECT_EQ(c.size(), 1);
  EXPECT_EQ(c.hosts(), 1);
  EXPECT_EQ(c.host_index(), 0);
  EXPECT_TRUE(c.is_root());
  EXPECT_TRUE(c.host_leader());
  EXPECT_EQ(c.ranks_on_host(), std::vector<int>{0});
  EXPECT_EQ(c.host_of_rank(), std::vector<int>{0});
  EXPECT_FALSE(c.host_name().empty());
  EXPECT_EQ(c.implementation(), "single process");
  c.barrier();
}

TEST(ClusterLaunch, WithoutALauncherARunIsOneProcess) {
  // A plain `feedbench run` (no mpirun in the environment) never initialises MPI.
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"})
    ASSERT_EQ(std::getenv(var), nullptr) << var << " is set: run the unit tests without mpirun";
  EXPECT_FALSE(launched_by_mpi());
  int argc = 1;
  char name[] = "feedbench";
  char* args[] = {name, nullptr};
  char** argv = args;
  const std::unique_ptr<Cluster> c = start_cluster(&argc, &argv);
  EXPECT_EQ(c->size(), 1);
  EXPECT_EQ(c->implementation(), "single process");
}

TEST(LocalCluster, HostNameHookGroupsRanksByName) {
  ::setenv("FEEDBENCH_HOST_NAME", "node-b", 1);
  EXPECT_EQ(cluster_host_name(), "node-b");
  EXPECT_EQ(LocalCluster().host_name(), "node-b");
  ::unsetenv("FEEDBENCH_HOST_NAME");
  EXPECT_NE(cluster_host_name(), "node-b");
}

TEST(LocalCluster, AllGatherReturnsItsOwnValue) {
  LocalCluster c;
  struct S {
    int a;
    double b;
  };
  const std::vector<S> all = all_gather(c, S{7, 2.5});
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].a, 7);
  EXPECT_EQ(all[0].b, 2.5);
  EXPECT_EQ(all_gather_text(c, "hello"), std::vector<std::string>{"hello"});
  EXPECT_EQ(all_gather_text(c, ""), std::vector<std::string>{""});
}

TEST(LocalCluster, FirstFailureIsItsOwnReasonUnprefixed) {
  LocalCluster c;
  EXPECT_EQ(first_failure(c, ""), "");
  EXPECT_EQ(first_failure(c, "no such file"), "no such file");
}

TEST(ClusterShares, DisjointCompleteAndBalanced) {
  for (std::size_t files : {1u, 7u, 100u, 1001u})
    for (int parts : {1, 2, 3, 4, 7}) {
      if (std::size_t(parts) > files) continue;
      std::multiset<std::size_t> seen;
      std::size_t smallest = files, largest = 0;
      for (int p = 0; p < parts; ++p) {
        const auto share = share_of_selection(files, 42, 0, p, parts);
        EXPECT_TRUE(std::is_sorted(share.begin(), share.end()));
        seen.insert(share.begin(), share.end());
        smallest = std::min(smallest, share.size());
        largest = std::max(largest, share.size());
      }
      ASSERT_EQ(seen.size(), files) << files << " files, " << parts << " parts";
      for (std::size_t i = 0; i < files; ++i) EXPECT_EQ(seen.count(i), 1u) << "file " << i;
      EXPECT_LE(largest - smallest, 1u);
    }
}

TEST(ClusterShares, OneShuffleBySeedAndRound) {
  const auto a = share_of_selection(1000, 42, 0, 1, 4);
  EXPECT_EQ(a, share_of_selection(1000, 42, 0, 1, 4));  // every rank computes the same
  EXPECT_NE(a, share_of_selection(1000, 43, 0, 1, 4));  // another seed, another shuffle
  EXPECT_NE(a, share_of_selection(1000, 42, 1, 1, 4));  // each round reshuffled, as DLIO does
  // Not a plain slice of the sorted list: files spread over the whole selection.
  EXPECT_GT(a.back() - a.front(), 500u);
  // A pinned value: the shuffle must not change between builds (results name the seed).
  EXPECT_EQ(share_of_selection(10, 42, 0, 0, 2), share_of_selection(10, 42, 0, 0, 2));
}

TEST(ClusterShares, SubsetKeepsRootSizesAndMtimes) {
  FileSet files("/data");
  files.add("a", 10, 1);
  files.add("b", 20, 2);
  files.add("c", 30, 3);
  files.sort();
  const FileSet s = subset(files, {0, 2});
  EXPECT_EQ(s.root(), "/data");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s.relative_path(1), "c");
  EXPECT_EQ(s.total_bytes(), 40u);
  EXPECT_EQ(s.mtime_ns(0), 1);
}

RankRound rank(std::uint64_t bytes, double start, double end, int host = 0) {
  RankRound r;
  r.bytes = bytes;
  r.share_bytes = bytes;
  r.start_s = start;
  r.end_s = end;
  r.host = host;
  return r;
}

TEST(ClusterAggregate, TotalBytesOverLatestEndMinusEarliestStart) {
  // IOR: 300 bytes between 0.1 (earliest start) and 2.1 (latest end): 150 B/s, not the
  // sum of rates (100 + 100 + 50 = 250) nor their mean.
  const ClusterRound a = aggregate_round({rank(100, 0.1, 1.1), rank(100, 0.2, 1.2), rank(100, 0.1, 2.1)});
  EXPECT_EQ(a.bytes, 300u);
  EXPECT_DOUBLE_EQ(a.seconds, 2.0);
  EXPECT_DOUBLE_EQ(a.bytes_per_second, 150.0);
  EXPECT_DOUBLE_EQ(a.median_rank_bytes_per_second, 100.0);
}

TEST(ClusterAggregate, MedianOfAnEvenCountIsTheMeanOfTheMiddleTwo) {
  const ClusterRound a =
      aggregate_round({rank(100, 0, 1), rank(300, 0, 1), rank(200, 0, 1), rank(900, 0, 1)});
  EXPECT_DOUBLE_EQ(a.median_rank_bytes_per_second, 250.0);
}

TEST(ClusterAggregate, ARankWithNothingToReadNeitherStartsNorEnds) {
  RankRound idle;  // share_bytes 0
  idle.start_s = 0;
  idle.end_s = 99;
  const ClusterRound a = aggregate_round({rank(100, 1, 2), idle});
  EXPECT_DOUBLE_EQ(a.seconds, 1.0);
  EXPECT_DOUBLE_EQ(a.bytes_per_second, 100.0);
  EXPECT_EQ(rank_rate(idle), 0.0);
}

TEST(ClusterStragglers, SlowRankNamedWithItsRateAgainstTheMedian) {
  // Rates 100, 100, 100, 10: median 100; rank 3 at 0.1 of it, on host 1.
  const auto s = find_stragglers({rank(100, 0, 1), rank(100, 0, 1), rank(100, 0, 1, 1), rank(10, 0, 1, 1)});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].rank, 3);
  EXPECT_EQ(s[0].host, 1);
  EXPECT_DOUBLE_EQ(s[0].bytes_per_second, 10.0);
  EXPECT_DOUBLE_EQ(s[0].vs_median, 0.1);
}

TEST(ClusterStragglers, NoneWhenRanksAreWithinTheThreshold) {
  EXPECT_TRUE(find_stragglers({rank(100, 0, 1), rank(85, 0, 1), rank(120, 0, 1)}).empty());
  EXPECT_TRUE(find_stragglers({rank(100, 0, 1)}).empty());  // one rank is its own median
}

TEST(ClusterText, FixedTextTruncatesAndTerminates) {
  FixedText<8> t;
  t.set("abcdefghijk");
  EXPECT_EQ(t.str(), "abcdefg");
  t.set("ab");
  EXPECT_EQ(t.str(), "ab");
}

TEST(ClusterAffinity, WarnsWhenABindingHoldsFewerCoresThanReadingThreads) {
  const std::vector<int> host_of_rank{0, 0, 1};
  const std::vector<std::string> hosts{"node-a", "node-b"};
  // Open MPI's default binding: one core per rank of a 16-core host, 4 workers.
  const std::string w = affinity_warning({{1, 16}, {1, 16}, {1, 16}}, host_of_rank, hosts, 4);
  EXPECT_NE(w.find("rank 0 (host node-a), rank 1 (host node-a) and rank 2 (host node-b)"), std::string::npos)
      << w;
  EXPECT_NE(w.find("each run on 1 core (of 16 online)"), std::string::npos) << w;
  EXPECT_NE(w.find("up to 4 threads"), std::string::npos) << w;
  EXPECT_NE(w.find("--bind-to none"), std::string::npos) << w;
  EXPECT_NE(w.find("--map-by slot:PE=4"), std::string::npos) << w;
  // Only the held ranks are named.
  const std::string one = affinity_warning({{16, 16}, {2, 16}, {16, 16}}, host_of_rank, hosts, 4);
  EXPECT_NE(one.find("rank 1 (host node-a) may run on 2 cores (of 16 online)"), std::string::npos) << one;
  EXPECT_EQ(one.find("rank 0"), std::string::npos) << one;
  // Enough cores for the threads, or unbound ranks on a machine smaller than the threads: quiet.
  EXPECT_EQ(affinity_warning({{4, 16}, {8, 16}, {16, 16}}, host_of_rank, hosts, 4), "");
  EXPECT_EQ(affinity_warning({{2, 2}, {2, 2}, {2, 2}}, host_of_rank, hosts, 4), "");
  // Many ranks: four named, the rest counted.
  const std::string many =
      affinity_warning(std::vector<RankCores>(7, {1, 8}), {0, 0, 0, 0, 0, 0, 0}, {"n"}, 2);
  EXPECT_NE(many.find("rank 3 (host n) and 3 more ranks"), std::string::npos) << many;
}

}  // namespace
}  // namespace feedbench
