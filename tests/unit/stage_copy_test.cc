// The copying phase of a stage on its own: removals after the journal, copies under their names
// with their hashes, no temporary left behind, a source that moved since the plan refused.
#include "stage_copy.h"

#include <gtest/gtest.h>

#include <filesystem>

#include <sys/stat.h>

#include "feedbench/base/sha256.h"
#include "feedbench/cache/manifest.h"
#include "stage_fixture.h"
#include "stage_io.h"
#include "test_util.h"

namespace feedbench {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::StageFixture;
using testing::write_file;

// RETURNS: the names in `root` ending in .fbtmp but the journal's.
std::vector<std::string> temporaries_in(const std::string& root) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    if (name != kStageJournalName && name.size() > 6 && name.substr(name.size() - 6) == ".fbtmp")
      out.push_back(e.path().string());
  }
  return out;
}

TEST(StageCopyTest, CopiesThePlannedFilesWithTheirHashesAndJournalsEach) {
  StageFixture f;
  const StagePlan plan = plan_stage(f.options());
  std::vector<std::string> hashes = plan.hashes;
  StageResult result;
  ASSERT_TRUE(begin_changes(plan, result));
  copy_files(f.options(), plan, hashes, result);
  ASSERT_TRUE(result.errors.empty()) << result.errors.front();
  EXPECT_EQ(result.files_copied, 3u);
  EXPECT_EQ(result.bytes_copied, 300000u + 3u + 3u);
  for (std::size_t i = 0; i < plan.selection.size(); ++i) {
    const std::string rel(plan.selection.relative_path(i));
    const std::string content = read_file(f.src + "/" + rel);
    EXPECT_EQ(read_file(f.cache + "/" + rel), content) << rel;
    EXPECT_EQ(hashes[i], sha256_hex(content)) << rel;
    struct stat a {
    }, b{};
    ASSERT_EQ(::stat((f.src + "/" + rel).c_str(), &a), 0);
    ASSERT_EQ(::stat((f.cache + "/" + rel).c_str(), &b), 0);
    EXPECT_EQ(a.st_mtim.tv_nsec, b.st_mtim.tv_nsec) << rel;
  }
  EXPECT_TRUE(temporaries_in(f.cache).empty());
  // The journal proves each copy ours until a manifest does.
  const std::string journal = read_file(f.cache + "/" + kStageJournalName);
  EXPECT_NE(journal.find(sha256_hex("bee") + "  val/sub/b.bin"), std::string::npos) << journal;
  EXPECT_NE(journal.find("train/c.bin"), std::string::npos) << journal;
  EXPECT_FALSE(read_manifest(f.cache)) << "the manifest is the record phase's";
}

TEST(StageCopyTest, ASourceChangedSinceThePlanIsAnErrorAndLeavesNoTemporary) {
  StageFixture f;
  const StagePlan plan = plan_stage(f.options());
  write_file(f.src + "/val/sub/b.bin", "bee, grown since the scan");
  std::vector<std::string> hashes = plan.hashes;
  StageResult result;
  ASSERT_TRUE(begin_changes(plan, result));
  copy_files(f.options(), plan, hashes, result);
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_NE(result.errors[0].find("val/sub/b.bin changed since it was scanned"), std::string::npos)
      << result.errors[0];
  EXPECT_EQ(result.files_copied, 2u);
  EXPECT_FALSE(fs::exists(f.cache + "/val/sub/b.bin"));
  EXPECT_TRUE(temporaries_in(f.cache).empty());
}

TEST(StageCopyTest, BeginChangesJournalsOurFilesThenRemovesWhatLeftTheSelection) {
  StageFixture f;
  ASSERT_EQ(stage(f.options()).exit_code(), 0);
  fs::remove(f.src + "/train/c.bin");
  StageOptions o = f.options();
  o.prune = true;
  const StagePlan plan = plan_stage(o);
  StageResult result;
  ASSERT_TRUE(begin_changes(plan, result));
  EXPECT_EQ(result.removed, std::vector<std::string>{"train/c.bin"});
  EXPECT_EQ(result.files_removed, 1u);
  EXPECT_FALSE(fs::exists(f.cache + "/train")) << "an emptied folder goes too";
  EXPECT_FALSE(read_manifest(f.cache)) << "from here on the cache is not a cache";
  // The journal still lists the removed file: it proves what was ours.
  const std::string journal = read_file(f.cache + "/" + kStageJournalName);
  EXPECT_NE(journal.find(sha256_hex("sea") + "  train/c.bin"), std::string::npos) << journal;
  EXPECT_NE(journal.find("val/a.bin"), std::string::npos) << journal;
}

TEST(StageCopyTest, RemovesOnlyThePlansStaleTemporaries) {
  StageFixture f;
  ASSERT_EQ(stage(f.options()).exit_code(), 0);
  const std::string ours = f.cache + "/" + stage_temporary_path("val/a.bin");
  const std::string theirs = f.cache + "/val/.fb-0123456789abcdef.fbtmp";
  write_file(ours, "half");
  write_file(theirs, "not ours");
  const StagePlan plan = plan_stage(f.options());
  EXPECT_EQ(remove_stale_temporaries(plan), 1u);
  EXPECT_FALSE(fs::exists(ours));
  EXPECT_TRUE(fs::exists(theirs));
}

}  // namespace
}  // namespace feedbench
