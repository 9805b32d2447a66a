// Skewed access: the pattern texts, the path-hash ranking (stable across sets that share paths),
// and the measured histogram of a zipf or hot_set round against the distribution asked for.
#include "feedbench/io/skew.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "feedbench/base/error.h"
#include "feedbench/io/workload.h"
#include "feedbench/loader/loader.h"

namespace feedbench {
namespace {

FileSet make_files(std::size_t n, const std::string& root = "/data") {
  FileSet files(root);
  for (std::size_t i = 0; i < n; ++i) {
    char name[48];
    std::snprintf(name, sizeof name, "class_%03zu/img_%06zu.jpg", i % 7, i);
    files.add(name, 1000 + i, 0);
  }
  files.sort();
  return files;
}

// Per rank, how many of a round's reads fell on the file of that rank.
std::vector<std::uint64_t> rank_counts(const FileSet& files, const Workload& w, std::uint64_t seed) {
  const std::vector<std::uint32_t> ranking = hot_ranking(files, seed);
  std::vector<std::size_t> rank_of(files.size());
  for (std::size_t k = 0; k < ranking.size(); ++k) rank_of[ranking[k]] = k;
  std::vector<std::uint64_t> counts(files.size());
  for (std::uint32_t f : w.order()) ++counts[rank_of[f]];
  return counts;
}

TEST(SkewTest, ParsesAndFormatsPatterns) {
  Skew z = parse_skew("zipf:1.2");
  EXPECT_EQ(z.kind, Skew::Kind::zipf);
  EXPECT_DOUBLE_EQ(z.theta, 1.2);
  EXPECT_EQ(format_skew(z), "zipf:1.2");
  Skew h = parse_skew("hot_set:10%:90%");
  EXPECT_EQ(h.kind, Skew::Kind::hot_set);
  EXPECT_DOUBLE_EQ(h.hot_files, 0.10);
  EXPECT_DOUBLE_EQ(h.hot_reads, 0.90);
  EXPECT_EQ(format_skew(h), "hot_set:10%:90%");
  EXPECT_EQ(parse_pattern("zipf:0.8"), Pattern::skewed);
  for (const char* bad :
       {"zipf:", "zipf:0", "zipf:-1", "zipf:11", "zipf:1e1", "zipf:x", "hot_set:10%", "hot_set:10:90",
        "hot_set:0%:90%", "hot_set:100%:90%", "hot_set:10%:0%", "hot_set:10%:101%", "hot_set:%:%"})
    EXPECT_THROW(parse_skew(bad), InputError) << bad;
}

TEST(SkewTest, RankingDependsOnPathAndSeedOnly) {
  const FileSet all = make_files(200);
  // A subset (other root, every third file) ranks its files in the same relative order.
  FileSet part("/cache");
  for (std::size_t i = 0; i < all.size(); i += 3) part.add(all.relative_path(i), all.file_size(i), 0);
  part.sort();
  std::vector<std::string> all_order, part_order;
  for (std::uint32_t i : hot_ranking(all, 5)) all_order.emplace_back(all.relative_path(i));
  for (std::uint32_t i : hot_ranking(part, 5)) part_order.emplace_back(part.relative_path(i));
  std::vector<std::string> filtered;
  for (const std::string& p : all_order)
    if (std::find(part_order.begin(), part_order.end(), p) != part_order.end()) filtered.push_back(p);
  EXPECT_EQ(filtered, part_order);
  EXPECT_NE(hot_ranking(all, 5), hot_ranking(all, 6));
  EXPECT_EQ(hot_set_paths(all, 0.10, 5).size(), 20u);
  std::vector<std::string> top(all_order.begin(), all_order.begin() + 20);
  std::sort(top.begin(), top.end());
  EXPECT_EQ(hot_set_paths(all, 0.10, 5), top);
}

TEST(SkewTest, ZipfRoundMatchesThetaWithinTolerance) {
  // 2000 files, 50 rounds of 2000 draws: 100k reads. θ is estimated by least squares on
  // log(count) against log(rank) over the 50 hottest ranks (each read there thousands to
  // hundreds of times); it must be within 0.05 of what was asked, and the top rank's share
  // within 10% of its probability.
  const FileSet files = make_files(2000);
  for (double theta : {0.8, 1.2}) {
    WorkloadSpec spec;
    spec.pattern = Pattern::skewed;
    spec.skew = parse_skew("zipf:" + std::to_string(theta));
    spec.seed = 9;
    std::vector<std::uint64_t> counts(files.size());
    std::uint64_t total = 0;
    for (std::uint64_t round = 0; round < 50; ++round) {
      spec.round = round;
      Workload w(files, spec);
      const auto c = rank_counts(files, w, spec.seed);
      for (std::size_t k = 0; k < c.size(); ++k) counts[k] += c[k], total += c[k];
    }
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    const int n = 50;
    for (int k = 0; k < n; ++k) {
      const double x = std::log(double(k + 1)), y = std::log(double(counts[std::size_t(k)]));
      sx += x, sy += y, sxx += x * x, sxy += x * y;
    }
    const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    EXPECT_NEAR(-slope, theta, 0.05) << "theta " << theta;
    const SkewSampler sampler(spec.skew, hot_ranking(files, spec.seed));
    EXPECT_NEAR(double(counts[0]) / double(total), sampler.probability(0), 0.10 * sampler.probability(0));
  }
}

TEST(SkewTest, HotSetShareWithinTolerance) {
  // 1000 files, one round of 1000 draws per seed over 20 rounds: the hottest 10% take 90% of
  // reads within 2 points, and every read of the hot part falls on a hot file.
  const FileSet files = make_files(1000);
  WorkloadSpec spec;
  spec.pattern = Pattern::skewed;
  spec.skew = parse_skew("hot_set:10%:90%");
  spec.seed = 3;
  std::uint64_t hot = 0, total = 0;
  for (std::uint64_t round = 0; round < 20; ++round) {
    spec.round = round;
    Workload w(files, spec);
    EXPECT_EQ(w.order().size(), files.size());
    const auto c = rank_counts(files, w, spec.seed);
    for (std::size_t k = 0; k < c.size(); ++k) (k < 100 ? hot : total) += c[k];
  }
  total += hot;
  EXPECT_NEAR(double(hot) / double(total), 0.90, 0.02);
  // Deterministic: the same seed and round, the same draws.
  spec.round = 4;
  Workload a(files, spec), b(files, spec);
  EXPECT_EQ(a.order(), b.order());
  EXPECT_EQ(a.planned_bytes(), b.planned_bytes());
}

TEST(SkewTest, LoaderSamplingFollowsTheSkew) {
  // Unset: every sample once per epoch. hot_set:20%:80%: 20 epochs of 500 draws put 80% of
  // them (within 2 points) on the 100 hottest samples of the ranking given.
  const FileSet files = make_files(500);
  LoaderOptions o;
  o.seed = 4;
  std::vector<std::size_t> plain = loader_epoch_order(o, files.size(), 0);
  std::sort(plain.begin(), plain.end());
  for (std::size_t i = 0; i < plain.size(); ++i) ASSERT_EQ(plain[i], i);
  o.skew = parse_skew("hot_set:20%:80%");
  o.ranking = hot_ranking(files, o.seed);
  std::vector<bool> hot(files.size());
  for (std::size_t k = 0; k < 100; ++k) hot[o.ranking[k]] = true;
  std::uint64_t in_hot = 0, total = 0;
  for (int epoch = 0; epoch < 20; ++epoch) {
    const std::vector<std::size_t> order = loader_epoch_order(o, files.size(), epoch);
    ASSERT_EQ(order.size(), files.size());
    for (std::size_t i : order) in_hot += hot[i], ++total;
  }
  EXPECT_NEAR(double(in_hot) / double(total), 0.80, 0.02);
  EXPECT_EQ(loader_epoch_order(o, files.size(), 3), loader_epoch_order(o, files.size(), 3));
  EXPECT_NE(loader_epoch_order(o, files.size(), 3), loader_epoch_order(o, files.size(), 4));
}

// The reads a loader run makes, which its hit share counts: each trainer's share of every
// epoch's order, only as far as its steps take it.
TEST(SkewTest, LoaderSampleReadsCountWhatTheBatchesTake) {
  LoaderOptions o;
  o.seed = 4;
  o.batch_size = 4;
  o.accelerators = 2;
  o.epochs = 3;
  o.steps = 5;  // 2 trainers × 5 steps × 4 = 40 of 100 samples per epoch
  o.skew = parse_skew("hot_set:10%:90%");
  const LoaderSchedule schedule = loader_schedule(o, 100);
  ASSERT_TRUE(schedule.refused.empty()) << schedule.refused;
  const std::vector<std::uint64_t> reads = loader_sample_reads(o, schedule, 100);
  ASSERT_EQ(reads.size(), 100u);
  std::uint64_t total = 0;
  for (std::uint64_t r : reads) total += r;
  EXPECT_EQ(total, 3u * 2 * 5 * 4);
  // The same samples as the trainers' shares: trainer k takes every second draw from k.
  std::vector<std::uint64_t> want(100, 0);
  for (int epoch = 0; epoch < 3; ++epoch) {
    const std::vector<std::size_t> all = loader_epoch_order(o, 100, epoch);
    for (int k = 0; k < 2; ++k)
      for (std::size_t i = 0; i < 20; ++i) ++want[all[std::size_t(k) + 2 * i]];
  }
  EXPECT_EQ(reads, want);
  // Whole epochs without a skew: every sample once per epoch.
  LoaderOptions plain;
  plain.batch_size = 10;
  plain.epochs = 2;
  const std::vector<std::uint64_t> once = loader_sample_reads(plain, loader_schedule(plain, 50), 50);
  EXPECT_EQ(once, std::vector<std::uint64_t>(50, 2));
}

TEST(SkewTest, TieredFilesReadHeldFilesFromTheCache) {
  const FileSet source = make_files(10, "/src");
  FileSet cache("/cache");
  cache.add(source.relative_path(2), source.file_size(2), 0);
  cache.add(source.relative_path(7), source.file_size(7), 0);
  cache.sort();
  const FileSet tiered = tiered_files(source, cache);
  const std::vector<bool> held = held_by(source, cache);
  ASSERT_EQ(tiered.size(), source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    EXPECT_EQ(held[i], i == 2 || i == 7);
    EXPECT_EQ(tiered.absolute_path(i),
              (held[i] ? "/cache/" : "/src/") + std::string(source.relative_path(i)));
  }
}

}  // namespace
}  // namespace feedbench
