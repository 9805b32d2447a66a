// One file-system table for every message: the engines' O_DIRECT refusal and the page cache's
// O_DIRECT probe name a file system alike.
#include "feedbench/base/file_system.h"

#include <gtest/gtest.h>

#include <string>

#include <fcntl.h>
#include <unistd.h>

#include "feedbench/base/error.h"
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

TEST(AtomicFileTest, WritesWholeThroughATemporaryAndNeverThroughALinkPlantedThere) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/out.json";
  {
    AtomicFile out(path);
    out.write("half");
    EXPECT_FALSE(::access(path.c_str(), F_OK) == 0);  // nothing there before the commit
    out.write(" and whole");
    out.commit();
  }
  EXPECT_EQ(testing::read_file(path), "half and whole");
  { AtomicFile abandoned(path); }  // not committed: the old file stays, no temporary left
  EXPECT_EQ(testing::read_file(path), "half and whole");
  EXPECT_NE(::access((path + ".tmp." + std::to_string(::getpid())).c_str(), F_OK), 0);
  // A link at the temporary name (another user's, in a shared folder) is refused, its target kept.
  const std::string victim = dir.path() + "/victim";
  testing::write_file(victim, "keep");
  ASSERT_EQ(::symlink(victim.c_str(), (path + ".tmp." + std::to_string(::getpid())).c_str()), 0);
  EXPECT_THROW(AtomicFile{path}, RunError);
  EXPECT_EQ(testing::read_file(victim), "keep");
}

}  // namespace
}  // namespace feedbench
