#include "feedbench/dataset/data_file.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "test_util.h"

namespace feedbench {
namespace {

TEST(DataFileTest, OpensARegularFileBlockingAgain) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/a.bin";
  { std::ofstream(path) << "hello"; }
  DataFile f = open_data_file(AT_FDCWD, path);
  ASSERT_TRUE(f.ok()) << f.reason(path);
  EXPECT_EQ(::fcntl(f.fd, F_GETFL) & O_NONBLOCK, 0);
  EXPECT_NE(::fcntl(f.fd, F_GETFD) & FD_CLOEXEC, 0);
  char buf[8];
  EXPECT_EQ(::read(f.fd, buf, sizeof buf), 5);
  ::close(f.fd);
}

// Without O_NONBLOCK this open would wait for a writer forever.
TEST(DataFileTest, RefusesAFifoWithoutBlocking) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/swapped.bin";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  DataFile f = open_data_file(AT_FDCWD, path);
  EXPECT_FALSE(f.ok());
  EXPECT_EQ(f.reason(path), path + " is a FIFO, not a regular file");
}

TEST(DataFileTest, RefusesADirectoryAndNamesAMissingFile) {
  testing::TempDir dir;
  DataFile d = open_data_file(AT_FDCWD, dir.path());
  EXPECT_FALSE(d.ok());
  EXPECT_STREQ(d.kind, "a directory");
  DataFile m = open_data_file(AT_FDCWD, dir.path() + "/gone");
  EXPECT_FALSE(m.ok());
  EXPECT_EQ(m.error, ENOENT);
  EXPECT_NE(m.reason(dir.path() + "/gone").find("cannot open " + dir.path() + "/gone: "), std::string::npos);
}

TEST(DataFileTest, OpensRelativeToADirectory) {
  testing::TempDir dir;
  { std::ofstream(dir.path() + "/b.bin") << "x"; }
  const int root = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(root, 0);
  DataFile f = open_data_file(root, "b.bin", {.direct = false, .noatime = false});
  EXPECT_TRUE(f.ok());
  EXPECT_FALSE(f.noatime);
  if (f.ok()) ::close(f.fd);
  ::close(root);
}

// A path another program wrote (a manifest's line) is opened beneath the folder: never out of
// it, never through a link, still refusing a FIFO without waiting.
TEST(DataFileTest, BeneathOpensOnlyTheFolderOwnFiles) {
  testing::TempDir dir;
  { std::ofstream(dir.path() + "/outside.bin") << "o"; }
  std::filesystem::create_directories(dir.path() + "/root/in");
  { std::ofstream(dir.path() + "/root/in/b.bin") << "x"; }
  ASSERT_EQ(::symlink("..", (dir.path() + "/root/up").c_str()), 0);
  ASSERT_EQ(::mkfifo((dir.path() + "/root/in/pipe").c_str(), 0600), 0);
  const int root = ::open((dir.path() + "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(root, 0);
  DataFile f = open_data_file(root, "in/b.bin", {.beneath = true});
  EXPECT_TRUE(f.ok()) << f.reason("in/b.bin");
  if (f.ok()) ::close(f.fd);
  EXPECT_EQ(open_data_file(root, "../outside.bin", {.beneath = true}).error, EXDEV);
  EXPECT_EQ(open_data_file(root, "up/outside.bin", {.beneath = true}).error, ELOOP);
  EXPECT_EQ(open_data_file(root, "in/pipe", {.beneath = true}).kind, std::string("a FIFO"));
  // Without `beneath` the same paths open as they always did.
  DataFile plain = open_data_file(root, "up/outside.bin");
  EXPECT_TRUE(plain.ok());
  if (plain.ok()) ::close(plain.fd);
  ::close(root);
}

}  // namespace
}  // namespace feedbench
