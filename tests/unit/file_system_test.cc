// One file-system table for every message: the engines' O_DIRECT refusal and the page cache's
// O_DIRECT probe name a file system alike.
#include "feedbench/base/file_system.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "feedbench/base/error.h"
#include "feedbench/base/unique_fd.h"
#include "test_util.h"

namespace feedbench {
namespace {

std::string write_text(const std::string& path, const std::string& text, AtomicFile::Existing existing) {
  AtomicFile out(path, existing);
  out.write(text);
  out.commit();
  return out.path();
}

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

TEST(AtomicFileTest, WritesWholeThroughATemporaryAndLeavesNoneBehind) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/out.json";
  {
    AtomicFile out(path);
    out.write("half");
    EXPECT_FALSE(::access(path.c_str(), F_OK) == 0);  // nothing there before the commit
    out.write(" and whole");
    out.commit();
    EXPECT_EQ(out.path(), path);
  }
  EXPECT_EQ(testing::read_file(path), "half and whole");
  { AtomicFile abandoned(path); }  // not committed: the old file stays, no temporary left
  EXPECT_EQ(testing::read_file(path), "half and whole");
  EXPECT_NE(::access((path + ".tmp." + std::to_string(::getpid())).c_str(), F_OK), 0);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

// What another user can plant at the temporary's name in a shared folder: a file of theirs
// (which would own our output), a link (which would carry it elsewhere), a FIFO (whose open
// blocks). Each is left as it was, never opened, and the result is written all the same.
TEST(AtomicFileTest, NeverOpensAFileALinkOrAFifoPlantedAtItsTemporaryName) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/out.json";
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const std::string victim = dir.path() + "/victim";
  testing::write_file(victim, "keep");
  for (const std::string kind : {"file", "symlink", "fifo"}) {
    SCOPED_TRACE(kind);
    if (kind == "file") {
      testing::write_file(tmp, "planted");
    } else if (kind == "symlink") {
      ASSERT_EQ(::symlink(victim.c_str(), tmp.c_str()), 0);
    } else {
      ASSERT_EQ(::mkfifo(tmp.c_str(), 0666), 0);
    }
    {
      AtomicFile out(path);  // a FIFO opened would block here forever (the test would time out)
      out.write(kind);
      out.commit();
    }
    EXPECT_EQ(testing::read_file(path), kind);
    EXPECT_EQ(testing::read_file(victim), "keep");
    struct stat st {};
    ASSERT_EQ(::lstat(tmp.c_str(), &st), 0);  // still there, untouched
    if (kind == "file") {
      EXPECT_EQ(testing::read_file(tmp), "planted");
    } else if (kind == "symlink") {
      EXPECT_TRUE(S_ISLNK(st.st_mode));
    } else {
      EXPECT_TRUE(S_ISFIFO(st.st_mode));
    }
    ASSERT_EQ(::unlink(tmp.c_str()), 0);
  }
  // Its own temporary is a file of its own, mode 0644 less the umask, never one planted.
  AtomicFile out(path);
  struct stat st {};
  ASSERT_EQ(::lstat(tmp.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_uid, ::geteuid());
  EXPECT_EQ(st.st_nlink, 1u);
}

TEST(AtomicFileTest, ANameThatMustNotReplaceTakesTheNextFreeNumberEvenInOneSecond) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/host-20260101T000000Z.json";
  std::vector<std::string> written;
  for (int i = 0; i < 5; ++i)
    written.push_back(write_text(path, "run " + std::to_string(i), AtomicFile::Existing::kNeverReplace));
  ASSERT_EQ(written.size(), 5u);
  EXPECT_EQ(written[0], path);
  EXPECT_EQ(written[1], dir.path() + "/host-20260101T000000Z-2.json");
  EXPECT_EQ(written[4], dir.path() + "/host-20260101T000000Z-5.json");
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(testing::read_file(written[std::size_t(i)]), "run " + std::to_string(i));
  // A link planted at the next name is taken as taken: not replaced, not followed.
  const std::string victim = dir.path() + "/victim";
  testing::write_file(victim, "keep");
  ASSERT_EQ(::symlink(victim.c_str(), (dir.path() + "/host-20260101T000000Z-6.json").c_str()), 0);
  EXPECT_EQ(write_text(path, "run 5", AtomicFile::Existing::kNeverReplace),
            dir.path() + "/host-20260101T000000Z-7.json");
  EXPECT_EQ(testing::read_file(victim), "keep");
  // Replacing (an explicit --out) still replaces, atomically.
  EXPECT_EQ(write_text(path, "again", AtomicFile::Existing::kReplace), path);
  EXPECT_EQ(testing::read_file(path), "again");
  // No temporary left behind by any of them.
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
}

TEST(CreateTemporaryTest, RemovesOurOwnLeftoverButRefusesWhatIsNotAFileOfOurs) {
  testing::TempDir dir;
  const std::string tmp = dir.path() + "/x.fbtmp";
  testing::write_file(tmp, "left by an interrupted run of ours");
  {
    UniqueFd fd(create_temporary(AT_FDCWD, tmp, 0600));
    ASSERT_TRUE(fd);
    struct stat st {};
    ASSERT_EQ(::fstat(fd.get(), &st), 0);
    EXPECT_EQ(st.st_size, 0);  // a new file, not the old one truncated
    EXPECT_EQ(st.st_mode & 0777, 0600u);
  }
  ASSERT_EQ(::unlink(tmp.c_str()), 0);
  ASSERT_EQ(::mkfifo(tmp.c_str(), 0666), 0);
  EXPECT_EQ(create_temporary(AT_FDCWD, tmp, 0644), -1);  // no block, no open
  EXPECT_EQ(errno, EEXIST);
  EXPECT_NE(temporary_refusal(tmp, EEXIST).find("remove it"), std::string::npos);
  ASSERT_EQ(::unlink(tmp.c_str()), 0);
  const std::string victim = dir.path() + "/victim";
  testing::write_file(victim, "keep");
  ASSERT_EQ(::symlink(victim.c_str(), tmp.c_str()), 0);
  EXPECT_EQ(create_temporary(AT_FDCWD, tmp, 0644), -1);
  EXPECT_EQ(testing::read_file(victim), "keep");
}

}  // namespace
}  // namespace feedbench
