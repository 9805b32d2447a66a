// One file-system table for every message: the engines' O_DIRECT refusal and the page cache's
// O_DIRECT probe name a file system alike.
#include "feedbench/base/file_system.h"

#include <gtest/gtest.h>

#include <string>

#include <fcntl.h>
#include <unistd.h>

#include "feedbench/base/unique_fd.h"
#include "test_util.h"

namespace feedbench {
namespace {

TEST(FileSystemTest, NamesKnownTypesAndShowsUnknownOnesInHex) {
  EXPECT_EQ(file_system_name(0xEF53), "ext4");
  EXPECT_EQ(file_system_name(0x01021994), "tmpfs");
  EXPECT_EQ(file_system_name(0x0BD00BD0), "lustre");
  EXPECT_EQ(file_system_name(0x47504653), "gpfs");  // once only in the page cache's table
  EXPECT_EQ(file_system_name(0x00c36400), "ceph");  // once only in the engines' table
  EXPECT_EQ(file_system_name(0x1234), "fs type 0x1234");
}

TEST(FileSystemTest, APathItCannotStatIsAnUnknownFileSystem) {
  EXPECT_EQ(file_system_at("/no/such/path/at/all"), "an unknown file system");
  EXPECT_NE(file_system_at("/"), "an unknown file system");
}

TEST(FileSystemTest, ReadToEndReadsEveryByteFromTheOffset) {
  testing::TempDir dir;
  const std::string big(200 * 1024 + 3, 'z');  // more than one read
  testing::write_file(dir / "f", "ab" + big);
  UniqueFd fd(::open((dir / "f").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(fd);
  ASSERT_EQ(::lseek(fd.get(), 2, SEEK_SET), 2);
  std::string out = "old";
  EXPECT_EQ(read_to_end(fd.get(), &out), 0);
  EXPECT_EQ(out, big);
  UniqueFd folder(::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  EXPECT_EQ(read_to_end(folder.get(), &out), EISDIR);
}

}  // namespace
}  // namespace feedbench
