// FileSet, glob_match and scan_dataset on real folders.
#include "feedbench/dataset/dataset.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "feedbench/base/error.h"
#include "feedbench/base/sha256.h"
#include "test_util.h"

namespace feedbench {
namespace {

using testing::input_error_of;
using testing::TempDir;
using testing::write_file;

std::vector<std::string> paths(const FileSet& files) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < files.size(); ++i) out.emplace_back(files.relative_path(i));
  return out;
}

TEST(DatasetGlobTest, StarAndQuestionStayInOneFolder) {
  EXPECT_TRUE(glob_match("*.bin", "a.bin"));
  EXPECT_FALSE(glob_match("*.bin", "d/a.bin"));
  EXPECT_TRUE(glob_match("class_00?/*", "class_003/img_1.bin"));
  EXPECT_FALSE(glob_match("class_00?/*", "class_0031/img_1.bin"));
  EXPECT_FALSE(glob_match("class_00?/*", "class_003/sub/img_1.bin"));
  EXPECT_TRUE(glob_match("a*b*c", "aXXbYYc"));
  EXPECT_FALSE(glob_match("a*b*c", "aXXbYY"));
  EXPECT_TRUE(glob_match("img_*", "img_"));
  EXPECT_FALSE(glob_match("?", ""));
}

// Within a folder a glob means what fnmatch(3) says: classes, ranges, negation, escapes.
TEST(DatasetGlobTest, ClassesRangesNegationAndEscapesAreFnmatchs) {
  EXPECT_TRUE(glob_match("class_00[0-4]/*", "class_003/a.bin"));
  EXPECT_FALSE(glob_match("class_00[0-4]/*", "class_007/a.bin"));
  EXPECT_TRUE(glob_match("class_00[!0-4]/*", "class_007/a.bin"));
  EXPECT_TRUE(glob_match("class_00[^0-4]/*", "class_007/a.bin"));
  EXPECT_FALSE(glob_match("class_00[!0-4]/*", "class_003/a.bin"));
  EXPECT_TRUE(glob_match("a\\*b", "a*b"));
  EXPECT_FALSE(glob_match("a\\*b", "aXb"));
  EXPECT_TRUE(glob_match("[]]x", "]x"));
  EXPECT_TRUE(glob_match("*.[jJ][pP][gG]", "IMG_1.JPG"));
  EXPECT_TRUE(glob_match("*", ".hidden"));  // no special case for a leading dot
}

TEST(DatasetGlobTest, DoubleStarSpansFolders) {
  EXPECT_TRUE(glob_match("validation/**", "validation/a.bin"));
  EXPECT_TRUE(glob_match("validation/**", "validation/x/y/a.bin"));
  EXPECT_FALSE(glob_match("validation/**", "validation"));  // the folder, not its contents
  EXPECT_FALSE(glob_match("validation/**", "train/a.bin"));
  EXPECT_TRUE(glob_match("**/*.bin", "a.bin"));
  EXPECT_TRUE(glob_match("**/*.bin", "x/y/z/a.bin"));
  EXPECT_FALSE(glob_match("**/*.bin", "x/y/z/a.jpg"));
  EXPECT_TRUE(glob_match("a/**/b", "a/b"));
  EXPECT_TRUE(glob_match("a/**/b", "a/x/y/b"));
  EXPECT_FALSE(glob_match("a/**/b", "a/x/y/c"));
}

TEST(DatasetGlobTest, CharacterClasses) {
  EXPECT_TRUE(glob_match("class_00[0-4]/*", "class_003/i.bin"));
  EXPECT_FALSE(glob_match("class_00[0-4]/*", "class_005/i.bin"));
  EXPECT_TRUE(glob_match("class_00[!0-4]/*", "class_007/i.bin"));
  EXPECT_FALSE(glob_match("class_00[!0-4]/*", "class_001/i.bin"));
  EXPECT_TRUE(glob_match("[ab]x", "bx"));
  EXPECT_TRUE(glob_match("\\*", "*"));
  EXPECT_FALSE(glob_match("\\*", "a"));
}

TEST(DatasetFileSetTest, ArenaPathsSortAndTotals) {
  FileSet set("/data");
  set.add("b/2.bin", 20, 2);
  set.add("a.b/1.bin", 10, 1);
  set.add("a/1.bin", 5, 3);
  set.sort();
  EXPECT_EQ(paths(set), (std::vector<std::string>{"a.b/1.bin", "a/1.bin", "b/2.bin"}));  // bytes
  EXPECT_EQ(set.total_bytes(), 35u);
  EXPECT_EQ(set.file_size(1), 5u);
  EXPECT_EQ(set.mtime_ns(1), 3);
  EXPECT_EQ(set.absolute_path(2), "/data/b/2.bin");
  FileSet at_root("/");
  at_root.add("a.bin", 1, 1);
  EXPECT_EQ(at_root.absolute_path(0), "/a.bin");
}

TEST(DatasetPodArrayTest, GrowsCopiesMovesAndShrinks) {
  PodArray<std::uint64_t> a;
  EXPECT_TRUE(a.empty());
  for (std::uint64_t i = 0; i < 1000; ++i) a.push_back(i * 3);
  const std::uint64_t more[3] = {7, 8, 9};
  a.append(more, 3);
  ASSERT_EQ(a.size(), 1003u);
  EXPECT_EQ(a[999], 2997u);
  EXPECT_EQ(a[1002], 9u);
  PodArray<std::uint64_t> copy = a;
  copy[0] = 42;
  EXPECT_EQ(a[0], 0u) << "a copy owns its own block";
  a.truncate(10);
  a.shrink_to_fit();
  EXPECT_EQ(a.size(), 10u);
  EXPECT_EQ(a[9], 27u);
  PodArray<std::uint64_t> moved = std::move(copy);
  EXPECT_EQ(moved.size(), 1003u);
  EXPECT_EQ(moved[0], 42u);
  EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  moved = a;
  EXPECT_EQ(moved.size(), 10u);
  moved.clear();
  moved.shrink_to_fit();
  EXPECT_EQ(moved.data(), nullptr);
}

TEST(DatasetFileSetTest, PrefixAndNameMakeOnePathAndCopiesAreIndependent) {
  FileSet set("/data");
  set.add("class_1/", "img_2.bin", 7, 70);
  set.add("", "top.bin", 1, 10);
  set.add("class_1/", "img_1.bin", 5, 50);
  set.sort();
  EXPECT_EQ(paths(set), (std::vector<std::string>{"class_1/img_1.bin", "class_1/img_2.bin", "top.bin"}));
  EXPECT_EQ(set.file_size(0), 5u);
  EXPECT_EQ(set.mtime_ns(0), 50);
  EXPECT_EQ(set.file_size(2), 1u);
  FileSet copy = set;
  copy.add("z.bin", 100, 1);
  EXPECT_EQ(set.size(), 3u);
  EXPECT_EQ(copy.size(), 4u);
  EXPECT_EQ(copy.relative_path(1), "class_1/img_2.bin");
  EXPECT_EQ(set.total_bytes(), 13u);
  EXPECT_EQ(copy.total_bytes(), 113u);
  FileSet moved = std::move(copy);
  EXPECT_EQ(moved.relative_path(3), "z.bin");
}

TEST(DatasetFileSetTest, LimitsAreInputErrorsNamingTheRootAndWhatToDo) {
  FileSet few("/data", FileSetLimits{2, 1000});
  few.add("a", 1, 1);
  few.add("b", 1, 1);
  EXPECT_EQ(input_error_of([&] { few.add("c", 1, 1); }),
            "dataset '/data': more than 2 files selected, the most one run indexes; select a part of it with "
            "include globs (/dataset/include)");
  EXPECT_EQ(few.size(), 2u) << "a refused file is not half-added";

  FileSet short_paths("/data", FileSetLimits{100, 10});
  short_paths.add("abcde", 1, 1);
  short_paths.add("fghij", 1, 1);  // exactly 10 bytes of paths: allowed
  EXPECT_EQ(
      input_error_of([&] { short_paths.add("k", 1, 1); }),
      "dataset '/data': the selected files' relative paths take more than 10 bytes together, the most one "
      "file set holds; select a part of it with include globs (/dataset/include)");
  EXPECT_EQ(paths(short_paths), (std::vector<std::string>{"abcde", "fghij"}));

  const std::string huge(FileSet::kMaxPathLength + 1, 'x');
  FileSet one("/data");
  EXPECT_NE(input_error_of([&] { one.add("", huge, 1, 1); }).find("a relative path of 16777216 bytes"),
            std::string::npos);
  EXPECT_TRUE(one.empty());

  // The defaults are what a run can index: 32-bit file numbers, 40-bit path offsets.
  EXPECT_EQ(FileSetLimits{}.max_files, 4294967295u);
  EXPECT_EQ(FileSetLimits{}.max_path_bytes, (std::uint64_t{1} << 40) - 1);
}

TEST(DatasetScanTest, ScanLimitsAreTheSameErrorWithAnyNumberOfThreads) {
  TempDir dir;
  for (int c = 0; c < 6; ++c)
    for (int f = 0; f < 4; ++f) write_file(dir / ("c" + std::to_string(c) + "/f" + std::to_string(f)), "x");
  const std::string root = std::filesystem::canonical(dir.path()).string();
  for (unsigned threads : {1u, 2u, 4u}) {
    ScanOptions options;
    options.threads = threads;
    options.limits.max_files = 10;
    EXPECT_EQ(
        input_error_of([&] { scan_dataset(dir.path(), {}, options); }),
        "dataset '" + root +
            "': more than 10 files selected, the most one run indexes; select a part of it with include "
            "globs (/dataset/include)")
        << threads << " threads";
    options.limits = {};
    options.limits.max_path_bytes = 20;
    EXPECT_NE(input_error_of([&] {
                scan_dataset(dir.path(), {}, options);
              }).find("relative paths take more than 20 bytes together"),
              std::string::npos)
        << threads << " threads";
    options.limits.max_files = 24;
    options.limits.max_path_bytes = 24 * 5;
    EXPECT_EQ(scan_dataset(dir.path(), {}, options).size(), 24u) << "at the limits exactly";
  }
}

// A tree whose byte order is not the folders' walk order ("a.b" sorts before "a/", "a0" after
// it), with hidden files, empty folders, links and a FIFO: every thread count gives the same
// sorted set, sizes, mtimes and left-out entries, equal to a plain sort of every path.
TEST(DatasetScanTest, ParallelScanGivesTheSerialSortedResult) {
  TempDir dir;
  std::vector<std::string> expected;
  auto file = [&](const std::string& rel, std::size_t size) {
    write_file(dir / rel, std::string(size, 'q'));
    expected.push_back(rel);
  };
  for (const char* folder :
       {"a", "a.b", "a0", "a-", "b", "B", ".hidden_dir", "a/a", "a/a.b", "a/deep/er/est"})
    for (int i = 0; i < 7; ++i)
      file(std::string(folder) + "/f" + std::to_string(i * 13 % 7) + ".bin", std::size_t(i));
  for (int i = 0; i < 300; ++i) file("wide/img_" + std::to_string(i) + ".bin", std::size_t(i % 5));
  file("a.txt", 3);
  file("a0.txt", 4);
  file(".hidden", 1);
  file("a/x", 2);
  std::filesystem::create_directories(dir / "empty/inner");
  ASSERT_EQ(::symlink("a", (dir / "link_to_a").c_str()), 0);
  ASSERT_EQ(::symlink("a.txt", (dir / "a/link.txt").c_str()), 0);
  ASSERT_EQ(::mkfifo((dir / "b/pipe").c_str(), 0600), 0);
  std::sort(expected.begin(), expected.end());

  auto left_out = [](const FileSet& set) {
    std::vector<std::string> out;
    for (const FileSet::LeftOut& l : set.left_out()) out.push_back(l.path + " " + l.kind);
    return out;
  };
  ScanOptions serial;
  serial.threads = 1;
  const FileSet one = scan_dataset(dir.path(), {}, serial);
  EXPECT_EQ(paths(one), expected);
  EXPECT_EQ(left_out(one),
            (std::vector<std::string>{"a/link.txt symlink", "b/pipe FIFO", "link_to_a symlink"}));
  for (unsigned threads : {2u, 3u, 8u})
    for (int round = 0; round < 5; ++round) {
      ScanOptions options;
      options.threads = threads;
      const FileSet many = scan_dataset(dir.path(), {}, options);
      ASSERT_EQ(paths(many), expected) << threads << " threads";
      EXPECT_EQ(many.fingerprint(), one.fingerprint()) << "sizes and mtimes too";
      EXPECT_EQ(left_out(many), left_out(one));
      EXPECT_EQ(many.total_bytes(), one.total_bytes());
    }
  // With include globs the same.
  ScanOptions options;
  options.threads = 4;
  EXPECT_EQ(paths(scan_dataset(dir.path(), {"a*/**"}, options)),
            paths(scan_dataset(dir.path(), {"a*/**"}, serial)));
}

// RETURNS: the InputError's message when `scan` runs without the capabilities that let root
// read any folder (in a child process: the test process keeps its own), "" when none.
std::string scan_error_without_capabilities(const std::string& root, unsigned threads) {
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2] = {};
    if (::syscall(SYS_capset, &header, data) != 0) ::_exit(3);
    ScanOptions options;
    options.threads = threads;
    std::string message = input_error_of([&] { scan_dataset(root, {}, options); });
    if (::write(fds[1], message.data(), message.size()) < 0) ::_exit(4);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string message;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) message.append(buffer, std::size_t(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "child failed: " + std::to_string(status);
  return message;
}

// An unreadable folder is the same InputError, naming it, with any number of threads; of two,
// the one first in path order.
TEST(DatasetScanTest, UnreadableFolderIsTheSameErrorWithAnyNumberOfThreads) {
  TempDir dir;
  for (const char* rel : {"a/1.bin", "b/locked/2.bin", "c/3.bin", "d/locked/4.bin", "e/5.bin"})
    write_file(dir / rel, "x");
  ASSERT_EQ(::chmod((dir / "b/locked").c_str(), 0), 0);
  ASSERT_EQ(::chmod((dir / "d/locked").c_str(), 0), 0);
  const std::string root = std::filesystem::canonical(dir.path()).string();
  const std::string expected = "dataset: cannot open folder '" + root + "/b/locked': Permission denied";
  for (unsigned threads : {1u, 2u, 4u})
    for (int round = 0; round < (threads == 1 ? 1 : 5); ++round)
      EXPECT_EQ(scan_error_without_capabilities(dir.path(), threads), expected) << threads << " threads";
  ASSERT_EQ(::chmod((dir / "b/locked").c_str(), 0755), 0);
  const std::string second = scan_error_without_capabilities(dir.path(), 4);
  EXPECT_EQ(second, "dataset: cannot open folder '" + root + "/d/locked': Permission denied");
  ASSERT_EQ(::chmod((dir / "d/locked").c_str(), 0755), 0);
  EXPECT_EQ(scan_error_without_capabilities(dir.path(), 4), "");
}

TEST(DatasetScanTest, SortedRegularFilesWithSizes) {
  TempDir dir;
  write_file(dir / "b/z.bin", "12345");
  write_file(dir / "b/a.bin", "1");
  write_file(dir / "a/c/d.bin", "123");
  write_file(dir / "top.bin", "");
  FileSet set = scan_dataset(dir.path());
  EXPECT_EQ(paths(set), (std::vector<std::string>{"a/c/d.bin", "b/a.bin", "b/z.bin", "top.bin"}));
  EXPECT_EQ(set.total_bytes(), 9u);
  EXPECT_EQ(set.file_size(2), 5u);
  EXPECT_EQ(set.root(), std::filesystem::canonical(dir.path()).string());
  EXPECT_GT(set.mtime_ns(0), 0);
}

TEST(DatasetScanTest, SymlinksAreNotFollowed) {
  TempDir dir, outside;
  write_file(dir / "data/real.bin", "x");
  write_file(outside / "secret/leak.bin", "yy");
  ASSERT_EQ(::symlink(outside.path().c_str(), (dir / "data/link_dir").c_str()), 0);
  ASSERT_EQ(::symlink((dir / "data/real.bin").c_str(), (dir / "data/link_file.bin").c_str()), 0);
  FileSet set = scan_dataset(dir / "data");
  EXPECT_EQ(paths(set), (std::vector<std::string>{"real.bin"}));
}

TEST(DatasetScanTest, RootSymlinkIsResolved) {
  TempDir dir;
  write_file(dir / "data/a.bin", "x");
  ASSERT_EQ(::symlink((dir / "data").c_str(), (dir / "alias").c_str()), 0);
  FileSet set = scan_dataset(dir / "alias");
  EXPECT_EQ(set.size(), 1u);
  EXPECT_EQ(set.root(), std::filesystem::canonical(dir / "data").string());
}

TEST(DatasetScanTest, SkipsFeedbenchMetadataAndTemporaries) {
  TempDir dir;
  write_file(dir / "MANIFEST.sha256", "m");
  write_file(dir / "feedbench-manifest.json", "{}");
  write_file(dir / "a.bin.fbtmp", "half");
  write_file(dir / "sub/b.bin.fbtmp", "half");
  write_file(dir / "sub/MANIFEST.sha256", "data, not ours");  // only the root's is metadata
  write_file(dir / "a.bin", "data");
  FileSet set = scan_dataset(dir.path());
  EXPECT_EQ(paths(set), (std::vector<std::string>{"a.bin", "sub/MANIFEST.sha256"}));
}

TEST(DatasetScanTest, IncludeGlobsSelectAndPrune) {
  TempDir dir;
  write_file(dir / "train/a.bin", "1");
  write_file(dir / "train/b.jpg", "1");
  write_file(dir / "validation/x/c.bin", "1");
  write_file(dir / "validation/d.txt", "1");
  EXPECT_EQ(paths(scan_dataset(dir.path(), {"validation/**"})),
            (std::vector<std::string>{"validation/d.txt", "validation/x/c.bin"}));
  EXPECT_EQ(paths(scan_dataset(dir.path(), {"**/*.bin"})),
            (std::vector<std::string>{"train/a.bin", "validation/x/c.bin"}));
  EXPECT_EQ(paths(scan_dataset(dir.path(), {"train/*.jpg", "validation/*.txt"})),
            (std::vector<std::string>{"train/b.jpg", "validation/d.txt"}));
  EXPECT_TRUE(scan_dataset(dir.path(), {"nothing/**"}).empty());
}

TEST(DatasetScanTest, MissingOrNonFolderRootIsInputError) {
  TempDir dir;
  write_file(dir / "file.bin", "x");
  EXPECT_THROW(scan_dataset(dir / "missing"), InputError);
  EXPECT_THROW(scan_dataset(dir / "file.bin"), InputError);
  try {
    scan_dataset(dir / "missing");
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(dir / "missing"), std::string::npos) << e.what();
  }
}

TEST(DatasetFingerprintTest, StableUnlessSizeMtimeOrNamesChange) {
  TempDir dir;
  write_file(dir / "a/1.bin", "hello");
  write_file(dir / "b/2.bin", "world");
  const std::string first = scan_dataset(dir.path()).fingerprint();
  EXPECT_EQ(first.size(), 64u);
  EXPECT_EQ(scan_dataset(dir.path()).fingerprint(), first);

  // Touched: same size, new mtime.
  struct timespec times[2] = {{1000, 0}, {1000, 5}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (dir / "a/1.bin").c_str(), times, 0), 0);
  const std::string touched = scan_dataset(dir.path()).fingerprint();
  EXPECT_NE(touched, first);

  // Resized, mtime put back: only the size differs.
  write_file(dir / "a/1.bin", "hello!");
  ASSERT_EQ(::utimensat(AT_FDCWD, (dir / "a/1.bin").c_str(), times, 0), 0);
  EXPECT_NE(scan_dataset(dir.path()).fingerprint(), touched);

  // Renamed.
  write_file(dir / "a/1.bin", "hello");
  ASSERT_EQ(::utimensat(AT_FDCWD, (dir / "a/1.bin").c_str(), times, 0), 0);
  EXPECT_EQ(scan_dataset(dir.path()).fingerprint(), touched);
  std::filesystem::rename(dir / "b/2.bin", dir / "b/3.bin");
  EXPECT_NE(scan_dataset(dir.path()).fingerprint(), touched);
}

TEST(DatasetFingerprintTest, FollowsTheDocumentedFormat) {
  FileSet set("/x");
  set.add("a", 1, 2);
  EXPECT_EQ(set.fingerprint(), sha256_hex(std::string_view("a\0"
                                                           "1\0"
                                                           "2\n",
                                                           6)));
}

// The metadata fingerprint cannot see an edit that keeps the size and the mtime (a restore
// from a backup, `touch -r`); the content fingerprint reads samples of every file and does.
TEST(DatasetFingerprintTest, ContentFingerprintSeesEditsTheMetadataOneMisses) {
  TempDir dir;
  std::string big(100000, 'x');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = char('a' + i * 7 % 26);
  write_file(dir / "a/big.bin", big);
  write_file(dir / "a/small.bin", "hello");
  struct timespec times[2] = {{1000, 0}, {2000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (dir / "a/big.bin").c_str(), times, 0), 0);
  const FileSet before = scan_dataset(dir.path());
  const std::string content = content_fingerprint(before);
  EXPECT_EQ(content.size(), 64u);
  EXPECT_NE(content, before.fingerprint());
  EXPECT_EQ(content_fingerprint(scan_dataset(dir.path())), content);

  // One byte in each sampled block (first, middle, last 4 KiB), size and mtime put back.
  for (std::size_t at : {std::size_t(10), std::size_t(50000 - 50000 % 4096 + 100), big.size() - 1}) {
    std::string edited = big;
    edited[at] = edited[at] == 'Z' ? 'Y' : 'Z';
    write_file(dir / "a/big.bin", edited);
    ASSERT_EQ(::utimensat(AT_FDCWD, (dir / "a/big.bin").c_str(), times, 0), 0);
    const FileSet after = scan_dataset(dir.path());
    EXPECT_EQ(after.fingerprint(), before.fingerprint()) << "metadata sees nothing at " << at;
    EXPECT_NE(content_fingerprint(after), content) << "content misses the edit at " << at;
  }
  // A small file is read whole.
  write_file(dir / "a/big.bin", big);
  ASSERT_EQ(::utimensat(AT_FDCWD, (dir / "a/big.bin").c_str(), times, 0), 0);
  write_file(dir / "a/small.bin", "jello");
  EXPECT_NE(content_fingerprint(scan_dataset(dir.path())), content);
}

// Content, not metadata: a copy with other mtimes has the same content fingerprint. Reading
// for it leaves the data and its access times as they were.
TEST(DatasetFingerprintTest, ContentFingerprintIgnoresMtimesAndChangesNothing) {
  TempDir dir;
  write_file(dir / "src/x.bin", std::string(20000, 'q'));
  write_file(dir / "copy/x.bin", std::string(20000, 'q'));
  struct timespec old_atime[2] = {{1000, 0}, {UTIME_OMIT, UTIME_OMIT}};
  old_atime[1].tv_nsec = UTIME_OMIT;
  ASSERT_EQ(::utimensat(AT_FDCWD, (dir / "src/x.bin").c_str(), old_atime, 0), 0);
  struct stat st_before {};
  ASSERT_EQ(::stat((dir / "src/x.bin").c_str(), &st_before), 0);
  struct timespec other_mtime[2] = {{UTIME_OMIT, UTIME_OMIT}, {12345, 0}};
  other_mtime[0].tv_nsec = UTIME_OMIT;
  ASSERT_EQ(::utimensat(AT_FDCWD, (dir / "copy/x.bin").c_str(), other_mtime, 0), 0);

  const FileSet src = scan_dataset(dir / "src");
  const FileSet copy = scan_dataset(dir / "copy");
  EXPECT_NE(src.fingerprint(), copy.fingerprint());
  EXPECT_EQ(content_fingerprint(src), content_fingerprint(copy));

  struct stat st_after {};
  ASSERT_EQ(::stat((dir / "src/x.bin").c_str(), &st_after), 0);
  EXPECT_EQ(st_after.st_atim.tv_sec, st_before.st_atim.tv_sec) << "the access time changed";
  EXPECT_EQ(st_after.st_mtim.tv_sec, st_before.st_mtim.tv_sec);
  EXPECT_EQ(testing::read_file(dir / "src/x.bin"), std::string(20000, 'q'));
}

TEST(DatasetFingerprintTest, ContentFingerprintOfAVanishedFileIsRunErrorNamingIt) {
  TempDir dir;
  write_file(dir / "gone.bin", "x");
  const FileSet files = scan_dataset(dir.path());
  ASSERT_EQ(::unlink((dir / "gone.bin").c_str()), 0);
  try {
    content_fingerprint(files);
    FAIL() << "no error for a vanished file";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("gone.bin"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace feedbench
