// The planning phase of a stage on its own: what it decides to copy, keep and remove, what it
// refuses, and that it changes nothing in the cache.
#include "stage_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "feedbench/base/error.h"
#include "feedbench/base/sha256.h"
#include "feedbench/base/units.h"
#include "stage_fixture.h"
#include "test_util.h"

namespace feedbench {
namespace {

namespace fs = std::filesystem;
using testing::StageFixture;
using testing::write_file;

// RETURNS: the selection index of `rel`.
std::size_t index_of(const StagePlan& plan, const std::string& rel) {
  for (std::size_t i = 0; i < plan.selection.size(); ++i)
    if (plan.selection.relative_path(i) == rel) return i;
  ADD_FAILURE() << rel << " is not in the selection";
  return plan.selection.size();
}

// RETURNS: the relative paths of selection `indexes`, sorted.
std::vector<std::string> relative_paths(const StagePlan& plan, const std::vector<std::size_t>& indexes) {
  std::vector<std::string> out;
  for (std::size_t i : indexes) out.emplace_back(plan.selection.relative_path(i));
  std::sort(out.begin(), out.end());
  return out;
}

TEST(StagePlanTest, ResumeDiffCopiesChangedAndAddedRemovesRemovedAndKeepsTheRest) {
  StageFixture f;
  ASSERT_EQ(f.stage_then_change_source(), 0);
  StageOptions o = f.options();
  o.prune = true;  // 1 of 3 files goes
  const StagePlan plan = plan_stage(o);

  EXPECT_EQ(relative_paths(plan, plan.to_copy), (std::vector<std::string>{"new.bin", "val/sub/b.bin"}));
  EXPECT_EQ(plan.bytes_to_copy, 3u + 12u);
  EXPECT_EQ(plan.to_remove, std::vector<std::string>{"train/c.bin"});
  EXPECT_EQ(plan.files_kept(), 1u);
  EXPECT_TRUE(plan.changes());
  ASSERT_EQ(plan.hashes.size(), 3u);
  EXPECT_EQ(plan.hashes[index_of(plan, "val/a.bin")], sha256_hex(std::string(300000, 'a')));
  EXPECT_EQ(plan.hashes[index_of(plan, "val/sub/b.bin")], "");
  EXPECT_EQ(plan.hashes[index_of(plan, "new.bin")], "");
  ASSERT_TRUE(plan.old_manifest);
  EXPECT_EQ(plan.old_manifest->files.size(), 3u);
  EXPECT_EQ(plan.source_fingerprint, scan_dataset(f.src).fingerprint());
  // Planning changes nothing: the removed file and the manifest are still there.
  EXPECT_TRUE(fs::exists(f.cache + "/train/c.bin"));
  EXPECT_TRUE(read_manifest(f.cache));
  EXPECT_FALSE(fs::exists(f.cache + "/" + kStageJournalName));
}

TEST(StagePlanTest, ACacheInPlaceNeedsNothingAndNoSpace) {
  StageFixture f;
  ASSERT_EQ(stage(f.options()).exit_code(), 0);
  const StagePlan plan = plan_stage(f.options());
  EXPECT_TRUE(plan.to_copy.empty());
  EXPECT_TRUE(plan.to_remove.empty());
  EXPECT_FALSE(plan.changes());
  EXPECT_EQ(plan.files_kept(), 3u);
  EXPECT_EQ(plan.bytes_to_copy, 0u);
  EXPECT_EQ(space_refusal(plan, CacheSpace{.free = 0, .size = 1 << 20, .block = 4096}), "");
}

TEST(StagePlanTest, AnEmptySelectionIsRefusedBeforeTheCacheIsMade) {
  StageFixture f;
  StageOptions o = f.options();
  o.include = {"test/**", "*.txt"};
  try {
    plan_stage(o);
    FAIL() << "an empty selection was planned";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--include 'test/**', '*.txt': no file of the source"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(f.cache));
}

TEST(StagePlanTest, ASpaceRefusalNamesTheBytesNeededAndFree) {
  StageFixture f;
  const StagePlan plan = plan_stage(f.options());
  ASSERT_EQ(plan.to_copy.size(), 3u);
  // Each file in whole 4 KiB blocks: 300000 -> 303104, 3 -> 4096, 3 -> 4096.
  const std::uint64_t alloc = 303104 + 4096 + 4096;
  const CacheSpace space{.free = 100000, .size = 1ull << 30, .block = 4096};
  const std::uint64_t margin = alloc / 50 + (1ull << 30) / 20;
  const std::string why = space_refusal(plan, space);
  EXPECT_NE(why.find("not enough space in " + plan.cache + ": 3 file(s) to copy need " +
                     format_size(double(alloc)) + " plus a margin of " + format_size(double(margin)) +
                     ", the file system has " + format_size(100000.0) + " free: short by " +
                     format_size(double(alloc + margin - 100000))),
            std::string::npos)
      << why;
  EXPECT_EQ(space_refusal(plan, CacheSpace{.free = alloc + margin, .size = 1ull << 30, .block = 4096}), "");
  EXPECT_NE(space_refusal(plan, CacheSpace{.free = alloc + margin - 1, .size = 1ull << 30, .block = 4096}),
            "");
  EXPECT_EQ(space_refusal(plan, CacheSpace{}), "") << "unknown room is not a refusal";
}

TEST(StagePlanTest, ThePlanHoldsTheCacheLock) {
  StageFixture f;
  {
    const StagePlan plan = plan_stage(f.options());
    try {
      plan_stage(f.options());
      FAIL() << "a second plan of a locked cache";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("another feedbench stage is writing"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_NO_THROW(plan_stage(f.options()));
}

TEST(StagePlanTest, NamesOnlyOurTemporariesAndRemovesNone) {
  StageFixture f;
  ASSERT_EQ(stage(f.options()).exit_code(), 0);
  const std::string ours = stage_temporary_path("val/sub/b.bin");
  const std::string theirs = "val/.fb-0123456789abcdef.fbtmp";
  write_file(f.cache + "/" + ours, "half a copy");
  write_file(f.cache + "/" + theirs, "someone else's");
  const StagePlan plan = plan_stage(f.options());
  EXPECT_EQ(plan.stale_temporaries, std::vector<std::string>{ours});
  EXPECT_TRUE(fs::exists(f.cache + "/" + ours));
  EXPECT_TRUE(fs::exists(f.cache + "/" + theirs));
}

TEST(StagePlanTest, AFileInTheWayWithTheSourcesBytesIsAdopted) {
  StageFixture f;
  StageOptions o = f.options();
  o.force = true;                                 // a folder that is not a cache yet
  write_file(f.cache + "/val/sub/b.bin", "bee");  // the very bytes and mtime: adopted and kept
  fs::last_write_time(f.cache + "/val/sub/b.bin", fs::last_write_time(f.src + "/val/sub/b.bin"));
  write_file(f.cache + "/notes.txt", "the user's");  // not selected, not ours: left alone
  const StagePlan plan = plan_stage(o);
  EXPECT_EQ(plan.owned.count("val/sub/b.bin"), 1u);
  EXPECT_EQ(plan.hashes[index_of(plan, "val/sub/b.bin")], sha256_hex("bee"));
  EXPECT_EQ(relative_paths(plan, plan.to_copy), (std::vector<std::string>{"train/c.bin", "val/a.bin"}));
  EXPECT_TRUE(plan.to_remove.empty());
  ASSERT_FALSE(plan.notes.empty());
  EXPECT_NE(plan.notes.back().find("left alone 1 file feedbench did not write"), std::string::npos)
      << plan.notes.back();
}

}  // namespace
}  // namespace feedbench
