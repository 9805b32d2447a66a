// gen --like's shape of a real data set: the size sampler, the permutation behind its strata,
// the folder shape at a scale, and the generator writing it with its record.
#include "feedbench/dataset/shape.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <sys/stat.h>

#include "feedbench/base/statistics.h"
#include "feedbench/dataset/generator.h"
#include "test_util.h"

namespace feedbench {
namespace {

using testing::TempDir;

TEST(ShapeTest, SizeDistributionInterpolatesBetweenPoints) {
  const SizeDistribution d = size_distribution({30, 10, 20});
  EXPECT_EQ(d.points, (std::vector<std::uint64_t>{10, 20, 30}));
  EXPECT_EQ(d.at(0), 10u);
  EXPECT_EQ(d.at(0.25), 15u);
  EXPECT_EQ(d.at(0.5), 20u);
  EXPECT_EQ(d.at(0.875), 27u);  // rounded down
  EXPECT_EQ(d.at(1), 30u);
  EXPECT_EQ(size_distribution({7}).at(0.3), 7u);
}

TEST(ShapeTest, SizeDistributionKeepsQuantilesOfALargeSample) {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t v = 0; v < 10000; ++v) sizes.push_back(v);
  const SizeDistribution d = size_distribution(sizes, 11);
  ASSERT_EQ(d.points.size(), 11u);
  for (std::size_t k = 0; k <= 10; ++k) EXPECT_EQ(d.points[k], k * 9999 / 10) << k;
}

TEST(ShapeTest, SeededPermutationIsABijection) {
  for (std::uint64_t n : {1u, 2u, 3u, 7u, 100u, 1000u, 4097u}) {
    std::set<std::uint64_t> seen;
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t p = seeded_permutation(n, 5, i);
      ASSERT_LT(p, n);
      seen.insert(p);
    }
    EXPECT_EQ(seen.size(), n) << n;
  }
  int moved = 0;  // another seed, another order
  for (std::uint64_t i = 0; i < 100; ++i)
    moved += seeded_permutation(100, 5, i) != seeded_permutation(100, 6, i);
  EXPECT_GT(moved, 80);
}

// A skewed mix: many small files, some medium, a few large, in folders of unequal sizes and depths.
FileSet skewed_tree() {
  FileSet files("/real");
  std::uint64_t state = 99;
  auto next = [&] { return (state = state * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  for (int i = 0; i < 200; ++i) files.add("train/cats/s" + std::to_string(i), 100 + next() % 4000, 0);
  for (int i = 0; i < 70; ++i) files.add("train/dogs/m" + std::to_string(i), 50000 + next() % 200000, 0);
  for (int i = 0; i < 25; ++i) files.add("val/deep/er/l" + std::to_string(i), 4000000 + next() % 1000000, 0);
  for (int i = 0; i < 5; ++i) files.add("r" + std::to_string(i), 4096, 0);
  files.sort();
  return files;
}

std::vector<std::uint64_t> real_sizes(const FileSet& files) {
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < files.size(); ++i) out.push_back(files.file_size(i));
  return out;
}

// The stratified draw puts one file in each of n equal strata of probability: the written sizes
// are within 1/n of the interpolated distribution, which is within about 2/N of the real one.
TEST(ShapeTest, DrawnSizesAreWithinTheStatedKolmogorovSmirnovBound) {
  const FileSet real = skewed_tree();
  for (double scale : {1.0, 0.5, 0.1}) {
    const DataShape shape = data_shape(real, scale, "/real", "folder");
    std::vector<std::uint64_t> drawn;
    for (std::uint64_t i = 0; i < shape.files; ++i)
      drawn.push_back(shape_file_size(shape.sizes, shape.files, 7, i));
    const double bound = 1.0 / double(shape.files) + 3.0 / double(real.size());
    EXPECT_LE(ks_statistic(real_sizes(real), drawn), bound) << scale;
    // Deterministic per seed; another seed assigns sizes to other files.
    EXPECT_EQ(shape_file_size(shape.sizes, shape.files, 7, 3), drawn[3]);
  }
  const DataShape shape = data_shape(real, 1, "/real", "folder");
  int differ = 0;
  for (std::uint64_t i = 0; i < shape.files; ++i)
    differ +=
        shape_file_size(shape.sizes, shape.files, 7, i) != shape_file_size(shape.sizes, shape.files, 8, i);
  EXPECT_GT(differ, int(shape.files) / 2);
}

// (depth, files) of each folder holding files.
std::multiset<std::pair<std::size_t, std::uint64_t>> folder_shape(const DataShape& shape) {
  std::multiset<std::pair<std::size_t, std::uint64_t>> out;
  for (const ShapeFolder& f : shape.folders)
    out.insert({f.path.empty() ? 0 : std::count(f.path.begin(), f.path.end(), '/') + 1, f.files});
  return out;
}

TEST(ShapeTest, ScaleOneKeepsEveryFolderItsDepthAndItsFiles) {
  const FileSet real = skewed_tree();
  const DataShape shape = data_shape(real, 1, "/real", "folder");
  EXPECT_EQ(shape.files, 300u);
  const std::multiset<std::pair<std::size_t, std::uint64_t>> want{{0, 5}, {2, 200}, {2, 70}, {3, 25}};
  EXPECT_EQ(folder_shape(shape), want);
  // Parents first, names synthetic: train and val become dir_000 and dir_001.
  EXPECT_EQ(shape.dirs, (std::vector<std::string>{"dir_000", "dir_000/dir_000", "dir_000/dir_001", "dir_001",
                                                  "dir_001/dir_000", "dir_001/dir_000/dir_000"}));
  EXPECT_EQ(shape.origin["files"], 300);
  EXPECT_EQ(shape.origin["folders"], 4);
  EXPECT_EQ(shape.origin["max_depth"], 3);
  const std::vector<std::uint64_t> sizes = real_sizes(real);
  EXPECT_EQ(shape.origin["size_quantiles"]["min"], *std::min_element(sizes.begin(), sizes.end()));
  EXPECT_EQ(shape.origin["size_quantiles"]["max"], *std::max_element(sizes.begin(), sizes.end()));
  EXPECT_EQ(shape.origin["bytes"], real.total_bytes());
  EXPECT_EQ(shape.origin["scale"], 1.0);
}

TEST(ShapeTest, AScaleTakesThatShareOfFilesAndFolders) {
  const DataShape half = data_shape(skewed_tree(), 0.5, "/real", "folder");
  EXPECT_EQ(half.files, 150u);
  EXPECT_EQ(half.folders.size(), 2u);
  std::uint64_t next = 0;  // folders hold consecutive runs of files, in order
  for (const ShapeFolder& f : half.folders) {
    EXPECT_EQ(f.first, next);
    EXPECT_GT(f.files, 0u);
    next += f.files;
  }
  EXPECT_EQ(next, 150u);
  // More folders than files would leave some empty: one file each at most.
  const DataShape tiny = data_shape(skewed_tree(), 0.01, "/real", "folder");
  EXPECT_EQ(tiny.files, 3u);
  EXPECT_LE(tiny.folders.size(), 3u);
}

TEST(ShapeTest, GeneratorWritesTheShapeAndItsRecord) {
  TempDir dir;
  GenOptions o;
  o.out = dir / "out";
  o.layout = GenLayout::kLike;
  o.seed = 4;
  auto shape = std::make_shared<DataShape>(data_shape(skewed_tree(), 0.1, "/real", "folder"));
  o.like = shape;
  o.files = shape->files;
  const GenSummary s = generate_dataset(o);
  EXPECT_EQ(s.files, 30u);
  const FileSet written = scan_dataset(o.out);
  ASSERT_EQ(written.size(), 30u);
  std::map<std::string, std::uint64_t> sizes;
  for (std::size_t k = 0; k < written.size(); ++k)
    sizes[std::string(written.relative_path(k))] = written.file_size(k);
  for (std::uint64_t i = 0; i < o.files; ++i)
    EXPECT_EQ(sizes.at(gen_file_name(o, i)), gen_file_size(o, i)) << i;
  // The record is gen's, not data: left out of the scan, and read back as the origin.
  ASSERT_EQ(written.left_out().size(), 1u);
  EXPECT_EQ(written.left_out()[0].path, kGenRecordName);
  EXPECT_EQ(written.left_out()[0].kind, "feedbench metadata");
  const std::optional<nlohmann::json> like = read_gen_like(o.out);
  ASSERT_TRUE(like);
  EXPECT_EQ((*like)["path"], "/real");
  EXPECT_EQ((*like)["files"], 300);
  EXPECT_FALSE(read_gen_like(dir.path()));
}

// The record a result embeds is the data set's own: a link at its name (to a file out of the
// data set) is not read, nor a FIFO, whose open would wait for a writer.
TEST(ShapeTest, ReadsOnlyARecordThatIsARegularFileOfTheRoot) {
  TempDir dir;
  testing::write_file(dir / "elsewhere.json", R"({"schema": "feedbench-gen/1", "like": {"path": "/x"}})");
  testing::write_file(dir / "plain/feedbench-gen.json", testing::read_file(dir / "elsewhere.json"));
  EXPECT_TRUE(read_gen_like(dir / "plain"));
  std::filesystem::create_directories(dir / "linked");
  std::filesystem::create_symlink(dir / "elsewhere.json", dir / "linked/feedbench-gen.json");
  EXPECT_FALSE(read_gen_like(dir / "linked"));
  std::filesystem::create_directories(dir / "fifo");
  ASSERT_EQ(::mkfifo((dir / "fifo/feedbench-gen.json").c_str(), 0600), 0);
  EXPECT_FALSE(read_gen_like(dir / "fifo"));
}

}  // namespace
}  // namespace feedbench
