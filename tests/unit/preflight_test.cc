#include "feedbench/plan/preflight.h"

#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "feedbench/base/error.h"
#include "feedbench/plan/config.h"
#include "test_util.h"

namespace feedbench {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::TempDir;
using testing::write_file;

// RETURNS: the names in `dir`, to prove a check left nothing behind.
std::vector<std::string> listing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(Preflight, AFileInAnExistingFolderIsWritableAndNothingIsLeft) {
  TempDir dir;
  write_file(dir / "keep", "x");
  EXPECT_EQ(why_file_not_writable(dir / "r.json"), "");
  EXPECT_EQ(listing(dir.path()), std::vector<std::string>{"keep"});
  // An existing file is replaced by a rename: writable too, and left as it was.
  EXPECT_EQ(why_file_not_writable(dir / "keep"), "");
  EXPECT_EQ(listing(dir.path()), std::vector<std::string>{"keep"});
}

TEST(Preflight, MissingFoldersAreCheckedAtTheDeepestExistingOneAndNotCreated) {
  TempDir dir;
  EXPECT_EQ(why_file_not_writable(dir / "a/b/c/r.json"), "");
  EXPECT_EQ(why_folder_not_writable(dir / "x/y"), "");
  EXPECT_TRUE(listing(dir.path()).empty());
}

TEST(Preflight, AFileWhereAFolderIsExpectedIsNamed) {
  TempDir dir;
  write_file(dir / "afile", "x");
  EXPECT_EQ(why_file_not_writable(dir / "afile/r.json"), dir / "afile" + " is not a folder");
  EXPECT_EQ(why_file_not_writable(dir / "afile/deeper/r.json"), dir / "afile" + " is not a folder");
  EXPECT_EQ(why_folder_not_writable(dir / "afile"), "it is a file, expected a folder");
  EXPECT_EQ(why_folder_not_writable(dir / "afile/sub"), dir / "afile" + " is not a folder");
  EXPECT_EQ(why_file_not_writable(dir.path()), "it is a folder, expected a file name");
  EXPECT_EQ(listing(dir.path()), std::vector<std::string>{"afile"});
}

TEST(Preflight, AFolderThatTakesNoFileIsRefusedWithTheReason) {
  // /proc takes no new file, not even from root (these tests may run as root, where mode bits
  // do not stop a write).
  const std::string why = why_file_not_writable("/proc/feedbench-unit/r.json");
  EXPECT_NE(why.find("cannot create a file in /proc"), std::string::npos) << why;
  EXPECT_NE(why_folder_not_writable("/proc/feedbench-unit"), "");
}

TEST(Preflight, RequireNamesTheOptionAndThePath) {
  TempDir dir;
  write_file(dir / "afile", "x");
  try {
    require_writable_file("--csv", dir / "afile/r.csv");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--csv: cannot write " + dir / "afile/r.csv" + ": " + dir / "afile" + " is not a folder");
  }
  try {
    require_writable_folder("--emit-fio", dir / "afile");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--emit-fio: cannot write into " + dir / "afile" + ": it is a file, expected a folder");
  }
  EXPECT_NO_THROW(require_writable_file("--out", dir / "new/r.json"));
  EXPECT_FALSE(fs::exists(dir / "new"));
}

TEST(Preflight, DirectAlignmentIsAPowerOfTwoAndSaysWhereItCameFrom) {
  TempDir dir;
  write_file(dir / "a.bin", std::string(8192, 'x'));
  for (const std::string& p : {dir / "a.bin", dir.path()}) {
    DirectAlignment a = direct_io_alignment(p);
    EXPECT_GE(a.bytes, 1u) << p;
    EXPECT_EQ(a.bytes & (a.bytes - 1), 0u) << p << ": " << a.bytes;
    EXPECT_FALSE(a.how.empty()) << p;
    if (a.assumed) {
      EXPECT_EQ(a.bytes, 512u);
      EXPECT_NE(a.how.find("assumed"), std::string::npos) << a.how;
    }
  }
  // Nothing to ask: assumed, and said so.
  DirectAlignment none = direct_io_alignment(dir / "no/such/file");
  EXPECT_TRUE(none.assumed);
  EXPECT_EQ(none.bytes, 512u);
  EXPECT_NE(none.how.find("512"), std::string::npos) << none.how;
}

class DirectBlockSizes : public ::testing::Test {
 protected:
  TempDir dir;
  std::map<std::string, int> asked;
  Plan plan_of(const json& families) {
    fs::create_directories(dir / "source");
    fs::create_directories(dir / "cache");
    json doc = {{"name", "t"},
                {"dataset", {{"source", dir / "source"}, {"cache", dir / "cache"}}},
                {"defaults", {{"engine", "psync"}}},
                {"families", families}};
    return expand_plan(parse_config(doc.dump(), "p.json"));
  }
  std::string error_of(const Plan& plan, std::uint64_t source_align, std::uint64_t cache_align) {
    try {
      check_direct_block_sizes(plan, "p.json", [&](const std::string& role) {
        ++asked[role];
        DirectAlignment a;
        a.bytes = role == "source" ? source_align : cache_align;
        a.how = "test alignment of " + role;
        return a;
      });
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(DirectBlockSizes, AMisalignedDirectCaseIsRefusedNamingPointerCaseAndAlignment) {
  Plan plan = plan_of(
      {{{"family", "file_read"}, {"pattern", "sequential"}, {"block_size", "16KiB"}, {"cache_state", "cold"}},
       {{"family", "file_read"},
        {"pattern", "sequential"},
        {"block_size", json::array({4096, 6144})},
        {"cache_state", "direct"},
        {"path", "cache"}}});
  EXPECT_EQ(error_of(plan, 512, 512), "");
  EXPECT_EQ(
      error_of(plan, 512, 4096),
      "p.json: /families/1/block_size/1: block_size 6144 of case "
      "file_read/pattern:sequential/bs:6144/engine:psync/qd:1/workers:1/state:direct/path:cache is not a "
      "multiple of 4096 bytes, the O_DIRECT alignment of cache (test alignment of cache); expected a "
      "multiple of 4096");
  // Only roles that a direct case reads are asked about, each once per check.
  EXPECT_EQ(asked.count("source"), 0u);
}

TEST_F(DirectBlockSizes, BufferedCasesAreNotChecked) {
  Plan plan = plan_of({{{"family", "file_read"}, {"block_size", 1000}, {"cache_state", "cold"}}});
  EXPECT_EQ(error_of(plan, 4096, 4096), "");
  EXPECT_TRUE(asked.empty());
}

TEST_F(DirectBlockSizes, ADefaultBlockSizeIsNamedWhereItWasSet) {
  fs::create_directories(dir / "source");
  json doc = {{"name", "t"},
              {"dataset", {{"source", dir / "source"}}},
              {"defaults", {{"engine", "io_uring"}, {"block_size", 1536}}},
              {"families", {{{"family", "file_read"}, {"cache_state", "direct"}}}}};
  Plan plan = expand_plan(parse_config(doc.dump(), "p.json"));
  const std::string e = error_of(plan, 1024, 1024);
  EXPECT_EQ(e.rfind("p.json: /defaults/block_size: block_size 1536 of case file_read/", 0), 0u) << e;
}

TEST(Preflight, ReadsDirect) {
  Case c = make_case("file_read", {{"engine", "psync"}, {"cache_state", "direct"}});
  EXPECT_TRUE(reads_direct(c));
  c.set("cache_state", "cold");
  EXPECT_FALSE(reads_direct(c));
  c.set("engine", "libaio");
  EXPECT_TRUE(reads_direct(c));
  Case loader = make_case("loader", {{"engine", "psync"}, {"cache_state", "cold"}});
  EXPECT_FALSE(reads_direct(loader));
}

// ---- Outputs apart from inputs ------------------------------------------------------------------

// RETURNS: check_outputs_apart's refusal, "" when it accepts.
std::string refusal(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs,
                    const std::vector<NamedPath>& roots) {
  try {
    check_outputs_apart(outputs, inputs, roots);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

constexpr const char* kSameInput =
    " (compared by device and inode): writing it would destroy what this command reads; choose another path";
constexpr const char* kInData =
    " (compared by device and inode, so symlinks and bind mounts count): feedbench never writes into the "
    "data; "
    "choose a path outside it";

TEST(OutputsApart, AnOutputThatIsAnInputIsRefusedNamingBothWhateverNamesIt) {
  TempDir dir;
  write_file(dir / "c.json", "{}");
  fs::create_symlink(dir / "c.json", dir / "link.json");
  fs::create_hard_link(dir / "c.json", dir / "hard.json");
  const std::vector<NamedPath> inputs{{"BASE", dir / "a.json"}, {"--config", dir / "c.json"}};
  EXPECT_EQ(refusal({{"--out", dir / "c.json"}}, inputs, {}),
            "--out " + dir / "c.json" + ": the same file as --config " + dir / "c.json" + kSameInput);
  EXPECT_EQ(refusal({{"--out", dir / "link.json"}}, inputs, {}),
            "--out " + dir / "link.json" + ": the same file as --config " + dir / "c.json" + kSameInput);
  EXPECT_EQ(refusal({{"--out", dir / "hard.json"}}, inputs, {}),
            "--out " + dir / "hard.json" + ": the same file as --config " + dir / "c.json" + kSameInput);
  // The input named through a symlink is the same file too; a missing input is its reader's.
  EXPECT_NE(refusal({{"--out", dir / "c.json"}}, {{"NEW", dir / "link.json"}}, {}), "");
  EXPECT_EQ(refusal({{"--out", dir / "r.json"}}, inputs, {}), "");
}

TEST(OutputsApart, AnOutputInADataFolderIsRefusedAlsoWhereItsFoldersAreStillToBeMade) {
  TempDir dir;
  write_file(dir / "data/class_0/img_0.bin", "x");
  fs::create_symlink(dir / "data/class_0", dir / "alias");
  const std::vector<NamedPath> roots{{"dataset.source", dir / "data"}, {"dataset.cache", dir / "missing"}};
  const std::string root = "dataset.source " + dir / "data";
  EXPECT_EQ(refusal({{"--out", dir / "data/class_0/img_0.bin"}}, {}, roots),
            "--out " + dir / "data/class_0/img_0.bin" + ": inside " + root + kInData);
  EXPECT_EQ(refusal({{"--csv", dir / "data/r.csv"}}, {}, roots),
            "--csv " + dir / "data/r.csv" + ": inside " + root + kInData);
  EXPECT_EQ(refusal({{"--csv", dir / "data/new/deeper/r.csv"}}, {}, roots),
            "--csv " + dir / "data/new/deeper/r.csv" + ": inside " + root + kInData);
  EXPECT_EQ(refusal({{"--out", dir / "alias/r.json"}}, {}, roots),
            "--out " + dir / "alias/r.json" + ": inside " + root + kInData);
  // A folder of outputs: the root itself, or a folder in it.
  EXPECT_EQ(refusal({{"--emit-fio", dir / "data", true}}, {}, roots),
            "--emit-fio " + dir / "data" + ": is " + root + kInData);
  EXPECT_EQ(refusal({{"--emit-fio", dir / "data/fio", true}}, {}, roots),
            "--emit-fio " + dir / "data/fio" + ": inside " + root + kInData);
  // Beside the data, or a folder that holds it: apart.
  EXPECT_EQ(refusal({{"--out", dir / "r.json"}, {"--emit-fio", dir / "fio", true}}, {}, roots), "");
  EXPECT_EQ(refusal({{"--out", dir / "new/r.json"}}, {}, roots), "");
  EXPECT_EQ(refusal({{"--emit-fio", dir.path(), true}}, {}, roots), "");
  EXPECT_EQ(refusal({{"--emit-fio", "/", true}, {"--out", "r.json"}}, {}, roots), "");
  // A trailing slash names the same folder.
  EXPECT_EQ(refusal({{"--emit-fio", dir / "data/", true}}, {}, roots),
            "--emit-fio " + dir / "data/" + ": is " + root + kInData);
}

TEST(OutputsApart, TwoOutputsThatAreOneFileAreRefusedAlsoBeforeEitherExists) {
  TempDir dir;
  write_file(dir / "r.json", "{}");
  fs::create_directories(dir / "sub");
  fs::create_symlink(dir / "sub", dir / "alias");
  EXPECT_EQ(refusal({{"--out", dir / "r.json"}, {"--markdown", dir / "r.json"}}, {}, {}),
            "--markdown " + dir / "r.json" + ": the same file as --out " + dir / "r.json" +
                " (compared by device and inode): each output needs a path of its own");
  EXPECT_NE(refusal({{"--out", dir / "new/r.json"}, {"--csv", dir / "new/./r.json"}}, {}, {}), "");
  EXPECT_NE(refusal({{"--out", dir / "sub/x/r.json"}, {"--csv", dir / "alias/x/r.json"}}, {}, {}), "");
  EXPECT_EQ(refusal({{"--out", dir / "new/r.json"}, {"--csv", dir / "new/r.csv"}}, {}, {}), "");
}

// A bind mount of a folder of the data elsewhere: its parents by ".." are the mount point's, so
// only the identity of the data's folders finds it. Tried in a child with its own mount
// namespace, where this machine lets a test mount (root).
TEST(OutputsApart, ABindMountOfADataFolderIsTheData) {
  TempDir dir;
  write_file(dir / "data/class_0/img_0.bin", "x");
  fs::create_directories(dir / "bound");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount((dir / "data/class_0").c_str(), (dir / "bound").c_str(), nullptr, MS_BIND, nullptr) != 0)
      ::_exit(77);
    const std::string why =
        refusal({{"--out", dir / "bound/r.json"}}, {}, {{"dataset.source", dir / "data"}});
    ::_exit(why == "--out " + dir / "bound/r.json" + ": inside dataset.source " + dir / "data" + kInData ? 0
                                                                                                         : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "cannot bind-mount here (needs root and a mount namespace)";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "a bind mount of a data folder was not refused";
}

}  // namespace
}  // namespace feedbench
