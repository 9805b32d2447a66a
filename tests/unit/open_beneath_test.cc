// Opening a path beneath a folder: the text check, then the same answers from openat2(2) and
// from the component walk that stands in for it (each method tested on its own, and the
// FEEDBENCH_OPEN_BENEATH switch that forces the walk).
#include "feedbench/base/open_beneath.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "feedbench/base/unique_fd.h"
#include "test_util.h"

namespace feedbench {
namespace {

using testing::ScopedVariable;
using testing::TempDir;
using testing::write_file;

TEST(BeneathPathTest, NamesWhatLeadsOutOrIsNotAPath) {
  for (const char* fine : {"a", "a/b/c.bin", "a b/.hidden", "..a/b..", "a/...", "name\nwith\rbreaks", "\\x"})
    EXPECT_EQ(beneath_path_problem(fine), "") << fine;
  EXPECT_EQ(beneath_path_problem(""), "is empty");
  EXPECT_EQ(beneath_path_problem(std::string("a\0b", 3)), "holds a NUL byte");
  EXPECT_EQ(beneath_path_problem("/etc/passwd"), "is absolute");
  EXPECT_EQ(beneath_path_problem("//x"), "is absolute");
  for (const char* up : {"..", "../outside.txt", "a/../../x", "a/..", "a/b/../c"})
    EXPECT_EQ(beneath_path_problem(up), "has a '..' component") << up;
  for (const char* dot : {".", "./a", "a/./b", "a/."})
    EXPECT_EQ(beneath_path_problem(dot), "has a '.' component") << dot;
  for (const char* empty : {"a//b", "a/", "a/b/"})
    EXPECT_EQ(beneath_path_problem(empty), "has an empty component") << empty;
}

// A folder to open beneath: root/{f, a/b/g}, and beside it outside/{secret, dir/secret}.
struct Tree {
  TempDir dir;
  UniqueFd root;
  Tree() {
    write_file(dir / "root/f", "f");
    write_file(dir / "root/a/b/g", "g");
    write_file(dir / "outside/secret", "s");
    write_file(dir / "outside/dir/secret", "s");
    root = UniqueFd(::open((dir / "root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  }
  void link(const std::string& target, const std::string& name) {
    ASSERT_EQ(::symlink(target.c_str(), (dir / ("root/" + name)).c_str()), 0) << name;
  }
};

// RETURNS: the errno of a refused open (0 when it opened; the descriptor is closed).
int refusal(int root, const std::string& path, int flags, BeneathMethod method) {
  errno = 0;
  const int fd = open_beneath(root, path, flags, method);
  if (fd >= 0) {
    ::close(fd);
    return 0;
  }
  return errno;
}

class OpenBeneathTest : public ::testing::TestWithParam<BeneathMethod> {
 protected:
  void SetUp() override {
    if (GetParam() == BeneathMethod::kOpenat2 && !openat2_available())
      GTEST_SKIP() << "no openat2 here (Linux < 5.6 or a seccomp filter): the walk is all there is";
  }
};

TEST_P(OpenBeneathTest, OpensFilesAndFoldersBeneathTheRoot) {
  Tree t;
  const BeneathMethod m = GetParam();
  for (const char* path : {"f", "a/b/g"}) {
    UniqueFd fd(open_beneath(t.root.get(), path, O_RDONLY | O_CLOEXEC, m));
    ASSERT_TRUE(fd) << path << ": " << errno;
    char c = 0;
    EXPECT_EQ(::read(fd.get(), &c, 1), 1);
    EXPECT_EQ(c, path[0] == 'f' ? 'f' : 'g');
  }
  EXPECT_EQ(refusal(t.root.get(), "a/b", O_RDONLY | O_DIRECTORY | O_CLOEXEC, m), 0);
  EXPECT_EQ(refusal(t.root.get(), "a", O_PATH | O_CLOEXEC, m), 0);
  // Relative to the working folder too.
  const UniqueFd was(::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  ASSERT_EQ(::fchdir(t.root.get()), 0);
  EXPECT_EQ(refusal(AT_FDCWD, "a/b/g", O_RDONLY | O_CLOEXEC, m), 0);
  EXPECT_EQ(refusal(AT_FDCWD, "../outside/secret", O_RDONLY | O_CLOEXEC, m), EXDEV);
  EXPECT_EQ(::fchdir(was.get()), 0);
}

TEST_P(OpenBeneathTest, RefusesPathsOutOfTheRootBeforeOpening) {
  Tree t;
  const BeneathMethod m = GetParam();
  for (const std::string path : {"../outside/secret", "a/../../outside/secret", "a/../f", "./f", "a//b/g"})
    EXPECT_EQ(refusal(t.root.get(), path, O_RDONLY | O_CLOEXEC, m), EXDEV) << path;
  EXPECT_EQ(refusal(t.root.get(), t.dir / "outside/secret", O_RDONLY | O_CLOEXEC, m), EXDEV);
  EXPECT_EQ(refusal(t.root.get(), "", O_RDONLY | O_CLOEXEC, m), EXDEV);
}

TEST_P(OpenBeneathTest, FollowsNoSymbolicLinkOutOrIn) {
  Tree t;
  const BeneathMethod m = GetParam();
  t.link(t.dir / "outside/dir", "out_dir");  // a folder out of the root
  t.link("../outside/dir", "up_dir");        // the same, relative
  t.link("a", "in_dir");                     // a folder inside: still a link
  t.link(t.dir / "outside/secret", "out_file");
  t.link("f", "in_file");
  t.link("/proc/self/root", "proc_root");  // a magic link's way in
  for (const char* path : {"out_dir/secret", "up_dir/secret", "in_dir/b/g", "out_file", "in_file",
                           "proc_root/etc", "a/../out_dir/secret"}) {
    const int want = std::string(path).find("..") != std::string::npos ? EXDEV : ELOOP;
    EXPECT_EQ(refusal(t.root.get(), path, O_RDONLY | O_CLOEXEC, m), want) << path;
  }
  // A link at the end is refused even for O_PATH, which would otherwise open the link itself.
  EXPECT_EQ(refusal(t.root.get(), "in_file", O_PATH | O_CLOEXEC, m), ELOOP);
  // With O_DIRECTORY a link at the end is "not a folder", from both, as from open(2).
  EXPECT_EQ(refusal(t.root.get(), "in_dir", O_RDONLY | O_DIRECTORY | O_CLOEXEC, m), ENOTDIR);
}

TEST_P(OpenBeneathTest, AnswersOpensOwnErrorsOtherwise) {
  Tree t;
  const BeneathMethod m = GetParam();
  EXPECT_EQ(refusal(t.root.get(), "missing", O_RDONLY | O_CLOEXEC, m), ENOENT);
  EXPECT_EQ(refusal(t.root.get(), "a/missing/g", O_RDONLY | O_CLOEXEC, m), ENOENT);
  EXPECT_EQ(refusal(t.root.get(), "f/g", O_RDONLY | O_CLOEXEC, m), ENOTDIR);
  EXPECT_EQ(refusal(t.root.get(), "f", O_RDONLY | O_DIRECTORY | O_CLOEXEC, m), ENOTDIR);
  // A FIFO opens without waiting when asked (O_NONBLOCK), as open(2) would.
  ASSERT_EQ(::mkfifo((t.dir / "root/a/pipe").c_str(), 0600), 0);
  EXPECT_EQ(refusal(t.root.get(), "a/pipe", O_RDONLY | O_NONBLOCK | O_CLOEXEC, m), 0);
}

INSTANTIATE_TEST_SUITE_P(Methods, OpenBeneathTest,
                         ::testing::Values(BeneathMethod::kOpenat2, BeneathMethod::kWalk),
                         [](const auto& info) {
                           return info.param == BeneathMethod::kWalk ? "Walk" : "Openat2";
                         });

TEST(OpenBeneathSettingTest, EitherMethodRefusesTheSame) {
  Tree t;
  t.link(t.dir / "outside/dir", "out_dir");
  for (const char* value : {static_cast<const char*>(nullptr), "auto", "openat2", "walk"}) {
    ScopedVariable v("FEEDBENCH_OPEN_BENEATH", value);
    EXPECT_EQ(refusal(t.root.get(), "a/b/g", O_RDONLY | O_CLOEXEC, BeneathMethod::kSetting), 0);
    EXPECT_EQ(refusal(t.root.get(), "out_dir/secret", O_RDONLY | O_CLOEXEC, BeneathMethod::kSetting), ELOOP);
    EXPECT_EQ(refusal(t.root.get(), "../outside/secret", O_RDONLY | O_CLOEXEC, BeneathMethod::kSetting),
              EXDEV);
  }
}

}  // namespace
}  // namespace feedbench
