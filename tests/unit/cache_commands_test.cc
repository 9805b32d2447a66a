// The commands feedbench prints for a user to run: quoted so a shell reads back the very words,
// the label of a data version kept, and "from-cache" as a config's selection.
#include <gtest/gtest.h>

#include "feedbench/base/error.h"
#include "feedbench/base/text.h"
#include "feedbench/cache/stager.h"
#include "feedbench/plan/config.h"

namespace feedbench {
namespace {

TEST(CacheCommandsTest, ShellQuoteLeavesPlainWordsAndQuotesTheRest) {
  EXPECT_EQ(shell_quote("/var/tmp/cache"), "/var/tmp/cache");
  EXPECT_EQ(shell_quote("class_00[0-4]/**"), "'class_00[0-4]/**'");
  EXPECT_EQ(shell_quote("it's here"), "'it'\\''s here'");
  EXPECT_EQ(shell_quote(""), "''");
}

TEST(CacheCommandsTest, StageCommandKeepsAChosenLabelAndDropsTheDefaultOne) {
  EXPECT_EQ(stage_command("/s", "/c", {"val/**"}, "imagenet-v2"),
            "feedbench stage --from /s --to /c --include 'val/**' --label imagenet-v2");
  EXPECT_EQ(stage_command("/s", "/c", {}, "fp-0123456789ab", true),
            "feedbench stage --from /s --to /c --prune");
}

const char* kFromCache =
    R"({"name": "x", "dataset": {"source": "/tmp", "cache": "/tmp", "include": "from-cache"},
  "families": [{"family": "file_read", "path": "source"}]})";

TEST(CacheCommandsTest, LongSelectionsAreSummarisedAndAHotSetIsItsSpec) {
  EXPECT_EQ(selection_text({}), "every file");
  EXPECT_EQ(selection_text({"a", "b", "c", "d"}), "include 'a', 'b', 'c', 'd'")
      << "one more is shown, not counted";
  EXPECT_EQ(selection_text({"a", "b", "c", "d", "e"}), "include 'a', 'b', 'c' and 2 more");
  Manifest m;
  m.label = "hot-v1";
  for (int i = 0; i < 60; ++i) m.include.push_back("f" + std::to_string(i));
  EXPECT_EQ(m.selection_text(), "include 'f0', 'f1', 'f2' and 57 more");
  m.hot_set = HotSetSpec{"10%", 7, {"train/**"}};
  EXPECT_EQ(m.selection_text(), "hot set 10% (seed 7) of 'train/**', 60 files");
  EXPECT_EQ(restage_command("/s", "/c", m),
            "feedbench stage --from /s --to /c --include 'train/**' --label hot-v1 --hot-set 10% --seed 7");
  EXPECT_EQ(manifest_selection_text(nlohmann::json(m.to_json())), m.selection_text())
      << "as a result records it";
}

TEST(CacheCommandsTest, IncludeFromCacheIsAConfigsSelection) {
  Config c = parse_config(kFromCache, "x.json");
  EXPECT_TRUE(c.include_from_cache);
  EXPECT_TRUE(c.include.empty());
  std::string no_cache = R"({"name": "x", "dataset": {"source": "/tmp", "include": "from-cache"},
    "families": [{"family": "file_read", "path": "source"}]})";
  try {
    parse_config(no_cache, "x.json");
    FAIL() << "from-cache without dataset.cache was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("x.json: /dataset/include: \"from-cache\""), std::string::npos)
        << e.what();
  }
  std::string other = R"({"name": "x", "dataset": {"source": "/tmp", "cache": "/tmp", "include": "val/**"},
    "families": [{"family": "file_read", "path": "source"}]})";
  EXPECT_THROW(parse_config(other, "x.json"), InputError);
}

}  // namespace
}  // namespace feedbench
