// The synthetic data set writer: determinism, sizes, layouts, refusal of non-empty folders.
#include "feedbench/dataset/generator.h"

#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "feedbench/base/error.h"
#include "feedbench/dataset/dataset.h"
#include "test_util.h"

namespace feedbench {
namespace {

using testing::read_file;
using testing::TempDir;

GenOptions options(const std::string& out, std::uint64_t files, std::uint64_t min_size,
                   std::uint64_t max_size, GenLayout layout = GenLayout::kClasses) {
  GenOptions o;
  o.out = out;
  o.files = files;
  o.min_size = min_size;
  o.max_size = max_size;
  o.layout = layout;
  return o;
}

// relative path -> contents
std::map<std::string, std::string> tree(const std::string& root) {
  std::map<std::string, std::string> out;
  FileSet set = scan_dataset(root);
  for (std::size_t i = 0; i < set.size(); ++i)
    out[std::string(set.relative_path(i))] = read_file(set.absolute_path(i));
  return out;
}

TEST(GeneratorTest, SameSeedSameBytesOtherSeedDiffers) {
  TempDir dir;
  GenOptions a = options(dir / "a", 30, 100, 5000);
  a.seed = 42;
  GenOptions b = a;
  b.out = dir / "b";
  b.threads = 1;  // a different thread count must not change a byte
  GenOptions c = a;
  c.out = dir / "c";
  c.seed = 43;
  generate_dataset(a);
  generate_dataset(b);
  generate_dataset(c);
  auto ta = tree(a.out), tb = tree(b.out), tc = tree(c.out);
  ASSERT_EQ(ta.size(), 30u);
  EXPECT_EQ(ta, tb);
  EXPECT_NE(ta, tc);
  std::size_t same_files = 0;
  for (const auto& [name, bytes] : ta)
    if (tc.count(name) && tc[name] == bytes) ++same_files;
  EXPECT_EQ(same_files, 0u);
}

TEST(GeneratorTest, SizesStayInRangeAndVary) {
  TempDir dir;
  GenOptions o = options(dir / "d", 200, 1000, 3000, GenLayout::kFlat);
  o.seed = 9;
  GenSummary s = generate_dataset(o);
  FileSet set = scan_dataset(o.out);
  ASSERT_EQ(set.size(), 200u);
  std::set<std::uint64_t> sizes;
  for (std::size_t i = 0; i < set.size(); ++i) {
    EXPECT_GE(set.file_size(i), 1000u);
    EXPECT_LE(set.file_size(i), 3000u);
    EXPECT_EQ(set.file_size(i), gen_file_size(o, i));  // flat names sort by index
    sizes.insert(set.file_size(i));
  }
  EXPECT_GT(sizes.size(), 100u);
  EXPECT_EQ(s.bytes, set.total_bytes());
  EXPECT_EQ(s.files, 200u);
  EXPECT_EQ(s.folders, 1u);
}

TEST(GeneratorTest, ClassesLayoutSpreadsFilesEvenly) {
  TempDir dir;
  GenOptions o = options(dir / "d", 25, 64, 64);
  o.classes = 4;
  GenSummary s = generate_dataset(o);
  EXPECT_EQ(s.folders, 4u);
  FileSet set = scan_dataset(o.out);
  ASSERT_EQ(set.size(), 25u);
  std::map<std::string, int> per_class;
  for (std::size_t i = 0; i < set.size(); ++i) {
    std::string rel(set.relative_path(i));
    per_class[rel.substr(0, rel.find('/'))]++;
  }
  EXPECT_EQ(per_class.size(), 4u);
  for (const auto& [name, n] : per_class) {
    EXPECT_TRUE(n == 6 || n == 7) << name << ": " << n;
    EXPECT_EQ(name.rfind("class_00", 0), 0u) << name;
  }
  EXPECT_EQ(gen_file_name(o, 0), "class_000/img_000000.bin");
  EXPECT_EQ(gen_file_name(o, 24), "class_003/img_000024.bin");
  EXPECT_TRUE(std::filesystem::exists(dir / "d/class_003/img_000024.bin"));
}

TEST(GeneratorTest, ShardsHoldFixedSizeRecords) {
  TempDir dir;
  GenOptions o = options(dir / "d", 10, 512, 512, GenLayout::kShards);
  o.shards = 3;
  GenSummary s = generate_dataset(o);
  EXPECT_EQ(s.files, 3u);
  EXPECT_EQ(s.bytes, 10u * 512u);
  FileSet set = scan_dataset(o.out);
  ASSERT_EQ(set.size(), 3u);
  EXPECT_EQ(set.relative_path(0), "shard_00000.bin");
  std::uint64_t records = 0;
  for (std::size_t i = 0; i < set.size(); ++i) {
    EXPECT_EQ(set.file_size(i) % 512, 0u);
    records += set.file_size(i) / 512;
    EXPECT_GE(set.file_size(i) / 512, 3u);
    EXPECT_LE(set.file_size(i) / 512, 4u);
  }
  EXPECT_EQ(records, 10u);
  // A range makes no sense for fixed-size records.
  GenOptions bad = options(dir / "e", 10, 512, 1024, GenLayout::kShards);
  EXPECT_THROW(generate_dataset(bad), InputError);
}

TEST(GeneratorTest, BytesAreNotZeroAndNotRepetitive) {
  TempDir dir;
  GenOptions o = options(dir / "d", 1, 64 * 1024, 64 * 1024, GenLayout::kFlat);
  generate_dataset(o);
  std::string bytes = read_file(dir / "d/file_000000.bin");
  ASSERT_EQ(bytes.size(), 64u * 1024u);
  std::array<int, 256> counts{};
  for (unsigned char c : bytes) counts[c]++;
  for (int n : counts) {  // about 256 each; a broken generator is far off
    EXPECT_GT(n, 150);
    EXPECT_LT(n, 370);
  }
  EXPECT_NE(bytes.substr(0, 4096), bytes.substr(4096, 4096));
  // gen_fill is random access: the bytes at an offset do not depend on what came before.
  std::string tail(1000, '\0');
  gen_fill(o.seed, 0, 8000, tail.data(), tail.size());
  EXPECT_EQ(tail, bytes.substr(8000, 1000));
  // Tiny files are never all zero either.
  GenOptions tiny = options(dir / "t", 300, 1, 1, GenLayout::kFlat);
  generate_dataset(tiny);
  FileSet set = scan_dataset(tiny.out);
  for (std::size_t i = 0; i < set.size(); ++i)
    EXPECT_NE(read_file(set.absolute_path(i)), std::string(1, '\0')) << set.relative_path(i);
}

TEST(GeneratorTest, RefusesNonEmptyFolderUnlessForced) {
  TempDir dir;
  testing::write_file(dir / "d/keep.txt", "mine");
  GenOptions o = options(dir / "d", 5, 10, 10, GenLayout::kFlat);
  try {
    generate_dataset(o);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--force"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "d/file_000000.bin"));
  o.force = true;
  generate_dataset(o);
  EXPECT_TRUE(std::filesystem::exists(dir / "d/file_000004.bin"));
  EXPECT_EQ(read_file(dir / "d/keep.txt"), "mine");  // --force never deletes
  // --out naming a file is refused even with --force.
  GenOptions f = options(dir / "d/keep.txt", 5, 10, 10);
  f.force = true;
  EXPECT_THROW(generate_dataset(f), InputError);
}

TEST(GeneratorTest, NoTemporariesLeftAndMissingParentsCreated) {
  TempDir dir;
  GenOptions o = options(dir / "x/y/z", 20, 10, 20);
  o.classes = 2;
  generate_dataset(o);
  for (const auto& e : std::filesystem::recursive_directory_iterator(o.out))
    EXPECT_EQ(e.path().string().find(".fbtmp"), std::string::npos) << e.path();
  EXPECT_EQ(scan_dataset(o.out).size(), 20u);
}

// A kListed set of `files` ({path, size}), as gen --like TRACE makes one.
GenOptions listed(const std::string& out, std::vector<ListedFile> files, std::vector<std::string> dirs) {
  auto l = std::make_shared<GenListing>();
  l->files = std::move(files);
  l->dirs = std::move(dirs);
  l->folders = l->dirs.size() + 1;
  l->origin = {{"kind", "trace"}};
  GenOptions o;
  o.out = out;
  o.layout = GenLayout::kListed;
  o.files = l->files.size();
  o.listed = l;
  return o;
}

TEST(GeneratorTest, ListedFilesAreWrittenAtTheirPathsAndSizesJpegsAsImages) {
  TempDir dir;
  const GenOptions o = listed(dir / "d",
                              {{"top.bin", 10},
                               {"a/b/img_1.JPEG", 20'000},
                               {"a/b/tiny.jpg", 50},
                               {"a/c/empty.dat", 0},
                               {"a/c/photo.jpg", 70'001}},
                              {"a", "a/b", "a/c"});
  const GenSummary s = generate_dataset(o);
  EXPECT_EQ(s.files, 5u);
  EXPECT_EQ(s.images, 2u);
  EXPECT_EQ(s.images_as_bytes, 1u);  // tiny.jpg: no image fits 50 bytes
  const auto t = tree(o.out);
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t.at("top.bin").size(), 10u);
  EXPECT_EQ(t.at("a/b/img_1.JPEG").size(), 20'000u);
  EXPECT_EQ(t.at("a/b/tiny.jpg").size(), 50u);
  EXPECT_EQ(t.at("a/c/empty.dat").size(), 0u);
  EXPECT_EQ(t.at("a/c/photo.jpg").size(), 70'001u);
  EXPECT_EQ(t.at("a/c/photo.jpg").substr(0, 2), "\xFF\xD8");
  EXPECT_NE(t.at("a/b/tiny.jpg").substr(0, 2), "\xFF\xD8");
  const auto record = nlohmann::json::parse(read_file(dir / (std::string("d/") + kGenRecordName)));
  EXPECT_EQ(record["like"]["kind"], "trace");
  EXPECT_EQ(record["generated"]["images"]["jpeg"], 2);
}

// A listed JPEG with its original's dimensions is made at them and its size; one whose size no
// image of them fits is made at dimensions from its size, counted, and gen does not fail.
TEST(GeneratorTest, ListedJpegsAreMadeAtTheirOriginalsDimensions) {
  TempDir dir;
  const GenOptions o = listed(dir / "d",
                              {{"a.jpg", 110'000, 500, 375},
                               {"b.jpg", 60'000, 1024, 768},
                               {"c.jpg", 2'000, 4000, 3000},
                               {"d.jpg", 20'000}},
                              {});
  const GenSummary s = generate_dataset(o);
  EXPECT_EQ(s.images, 4u);
  EXPECT_EQ(s.images_at_dimensions, 2u);
  EXPECT_EQ(s.images_off_dimensions, 1u);  // c.jpg: 12 M pixels in 2,000 bytes
  const auto t = tree(o.out);
  JpegDecoder decoder;
  const auto dims = [&](const std::string& name) {
    const std::string& data = t.at(name);
    const DecodedImage img =
        decoder.decode({reinterpret_cast<const std::byte*>(data.data()), data.size()}, 0, name);
    EXPECT_TRUE(img.corrupt.empty()) << name;
    return std::to_string(img.width) + "x" + std::to_string(img.height);
  };
  EXPECT_EQ(dims("a.jpg"), "500x375");
  EXPECT_EQ(dims("b.jpg"), "1024x768");
  EXPECT_NE(dims("c.jpg"), "4000x3000");
  EXPECT_EQ(t.at("a.jpg").size(), 110'000u);
  EXPECT_EQ(t.at("b.jpg").size(), 60'000u);
  EXPECT_EQ(t.at("c.jpg").size(), 2'000u);
  EXPECT_EQ(t.at("d.jpg").size(), 20'000u);
  const auto record = nlohmann::json::parse(read_file(dir / (std::string("d/") + kGenRecordName)));
  EXPECT_EQ(record["generated"]["images"]["at_original_dimensions"], 2);
  EXPECT_EQ(record["generated"]["images"]["not_at_original_dimensions"], 1);
}

TEST(GeneratorTest, ListedPathsOutsideTheFolderOrThroughALinkAreRefused) {
  TempDir dir;
  for (const char* bad : {"../escape.bin", "/etc/passwd", "a/../../x", "a//b"}) {
    const GenOptions o = listed(dir / "d", {{bad, 5}}, {});
    EXPECT_THROW(validate_gen_options(o), InputError) << bad;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "escape.bin"));
  // A path both a file and a folder, and names of feedbench's own, before anything is written.
  EXPECT_THROW(validate_gen_options(listed(dir / "d", {{"a", 5}, {"a/b", 5}}, {"a"})), InputError);
  EXPECT_THROW(validate_gen_options(listed(dir / "d", {{"x.fbtmp", 5}}, {})), InputError);
  EXPECT_THROW(validate_gen_options(listed(dir / "d", {{kGenRecordName, 5}}, {})), InputError);
  EXPECT_NO_THROW(validate_gen_options(listed(dir / "d", {{"sub/feedbench-gen.json", 5}}, {"sub"})));
  // A name of 255 bytes, the most a folder entry takes, is written (its temporary's name is short).
  const std::string longest(251, 'n');
  const GenOptions long_name = listed(dir / "long", {{longest + ".bin", 3}}, {});
  generate_dataset(long_name);
  EXPECT_EQ(std::filesystem::file_size(dir / ("long/" + longest + ".bin")), 3u);
  // A folder of --force's out that is a link elsewhere is not followed, for a folder or a file.
  std::filesystem::create_directories(dir / "elsewhere");
  std::filesystem::create_directories(dir / "f");
  std::filesystem::create_directory_symlink(dir / "elsewhere", dir / "f/a");
  // Refused as bad input before anything is written, naming --out and the link.
  GenOptions o = listed(dir / "f", {{"top.bin", 5}, {"a/b/x.bin", 5}}, {"a", "a/b"});
  o.force = true;
  const std::string why = testing::input_error_of([&] { generate_dataset(o); });
  EXPECT_NE(why.find("--out '" + dir / "f" + "': '" + dir / "f/a" + "' is a symbolic link (to " +
                     dir / "elsewhere" + ")"),
            std::string::npos)
      << why;
  EXPECT_FALSE(std::filesystem::exists(dir / "f/top.bin"));
  GenOptions file = listed(dir / "f", {{"a/y.bin", 5}}, {"a"});
  file.force = true;
  EXPECT_THROW(generate_dataset(file), InputError);
  // Every layout: the classes' folder a link.
  GenOptions classes = options(dir / "f", 4, 10, 10);
  classes.classes = 2;
  std::filesystem::create_directory_symlink(dir / "elsewhere", dir / "f/class_001");
  classes.force = true;
  EXPECT_THROW(generate_dataset(classes), InputError);
  EXPECT_FALSE(std::filesystem::exists(dir / "f/class_000"));
  EXPECT_TRUE(std::filesystem::is_empty(dir / "elsewhere"));
}

// No file gen writes lands on a file it reads (the trace of --like TRACE), however it is
// spelled: compared by device and inode, a hard link included; refused before anything is written.
TEST(GeneratorTest, NoFileWrittenLandsOnAnInput) {
  TempDir dir;
  std::filesystem::create_directories(dir / "d");
  testing::write_file(dir / "d/job.trace.json", "{}");
  GenOptions o = listed(dir / "d", {{"a.bin", 5}, {"job.trace.json", 7}}, {});
  o.force = true;
  o.inputs = {{"--like", dir / "d/../d/./job.trace.json"}};
  const std::string why = testing::input_error_of([&] { generate_dataset(o); });
  EXPECT_NE(why.find("gen would write '" + dir / "d/job.trace.json" + "' over --like"), std::string::npos)
      << why;
  EXPECT_EQ(read_file(dir / "d/job.trace.json"), "{}");
  EXPECT_FALSE(std::filesystem::exists(dir / "d/a.bin"));
  // A hard link of the trace under another name, and the trace named as gen's own record.
  std::filesystem::create_hard_link(dir / "d/job.trace.json", dir / "d/other.bin");
  o = listed(dir / "d", {{"other.bin", 7}}, {});
  o.force = true;
  o.inputs = {{"--like", dir / "d/job.trace.json"}};
  EXPECT_THROW(generate_dataset(o), InputError);
  std::filesystem::create_hard_link(dir / "d/job.trace.json", dir / ("d/" + std::string(kGenRecordName)));
  o = listed(dir / "d", {{"b.bin", 7}}, {});
  o.force = true;
  o.inputs = {{"--like", dir / "d/job.trace.json"}};
  EXPECT_THROW(generate_dataset(o), InputError);
  EXPECT_EQ(read_file(dir / "d/job.trace.json"), "{}");
  // A file gen writes that is a folder there.
  std::filesystem::create_directories(dir / "e/x.bin");
  GenOptions folder = listed(dir / "e", {{"x.bin", 3}}, {});
  folder.force = true;
  EXPECT_NE(
      testing::input_error_of([&] { generate_dataset(folder); }).find("is a folder, where gen writes a file"),
      std::string::npos);
}

// A folder another gen is writing into is refused, not mixed into: every layout takes the lock.
TEST(GeneratorTest, ASecondGenIntoALockedFolderIsRefused) {
  TempDir dir;
  std::filesystem::create_directories(dir / "d");
  const int held = ::open((dir / "d").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX | LOCK_NB), 0);
  for (GenLayout layout : {GenLayout::kClasses, GenLayout::kFlat, GenLayout::kShards}) {
    GenOptions o = options(dir / "d", 4, 16, 16, layout);
    o.classes = 2;
    o.shards = 2;
    o.force = true;
    EXPECT_NE(testing::input_error_of([&] {
                generate_dataset(o);
              }).find("another feedbench gen is writing into this folder now"),
              std::string::npos);
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir / "d"));
  ::close(held);
  GenOptions o = options(dir / "d", 4, 16, 16, GenLayout::kFlat);
  EXPECT_NO_THROW(generate_dataset(o));
}

TEST(GeneratorTest, BadOptionsAreInputErrors) {
  TempDir dir;
  EXPECT_THROW(validate_gen_options(options(dir / "d", 0, 1, 1)), InputError);
  EXPECT_THROW(validate_gen_options(options(dir / "d", 1, 0, 0)), InputError);
  EXPECT_THROW(validate_gen_options(options(dir / "d", 1, 5, 4)), InputError);
  EXPECT_THROW(validate_gen_options(options("", 1, 1, 1)), InputError);
  GenOptions many_classes = options(dir / "d", 3, 1, 1);
  many_classes.classes = 4;
  EXPECT_THROW(validate_gen_options(many_classes), InputError);
  EXPECT_NO_THROW(validate_gen_options(options(dir / "d", 10, 1, 1)));
}

}  // namespace
}  // namespace feedbench
