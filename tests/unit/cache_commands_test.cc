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
