// What makes two runs measure different things while looking like a speed change: diff names
// each such change in its own line, not only as a differing config hash.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "feedbench/results/comparison.h"

namespace feedbench {
namespace {

using nlohmann::json;

ResultDocument document() {
  ResultDocument d;
  d.config = {{"sha256", "aaaa"},
              {"resolved", {{"name", "x"}, {"dataset", {{"source", "/s"}}}, {"defaults", {{"seed", 42}}}}}};
  d.dataset = {{"source",
                {{"root", "/s"},
                 {"files", 100},
                 {"bytes", 100 * 65536},
                 {"fingerprint", "1111111111111111aaaa"},
                 {"file_size", {{"min", 65536}, {"p50", 65536}, {"p90", 65536}, {"max", 65536}}}}},
               {"cache",
                {{"root", "/c"},
                 {"files", 100},
                 {"bytes", 100 * 65536},
                 {"fingerprint", "1111111111111111aaaa"},
                 {"manifest", {{"label", "imagenet-v1"}, {"include", json::array()}}}}}};
  d.config["selection"] = {{"include", json::array()}, {"from", "config"}};
  return d;
}

bool has_line(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l == text; });
}

std::string all(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

TEST(ComparabilityTest, IdenticalRunsHaveNoWarnings) {
  EXPECT_TRUE(comparability_warnings(document(), document()).empty());
}

// Two watched jobs whose data came from different folders (the store, then a cache of it).
TEST(ComparabilityTest, AWatchedJobsDataPathChangeNamesBothFolders) {
  ResultDocument base, next;
  base.environment["paths"]["data"] = {
      {"resolved", "/mnt/store/set"}, {"fs_type", "ext4"}, {"device", "vda"}};
  next.environment["paths"]["data"] = {
      {"resolved", "/local/cache/set"}, {"fs_type", "ext4"}, {"device", "vda"}};
  auto w = comparability_warnings(base, next);
  EXPECT_TRUE(has_line(w, "data path changed: /mnt/store/set BASE, /local/cache/set NEW")) << all(w);
  EXPECT_TRUE(comparability_warnings(base, base).empty()) << all(comparability_warnings(base, base));
  // Where one side records no data path (a result of an older watch), no change is claimed.
  for (const std::string& line : comparability_warnings(ResultDocument{}, next))
    EXPECT_EQ(line.find("path changed"), std::string::npos) << line;
}

TEST(ComparabilityTest, ShuffleSeedIsNamed) {
  ResultDocument base = document(), next = document();
  next.config["sha256"] = "bbbb";
  next.config["resolved"]["defaults"]["seed"] = 43;
  auto w = comparability_warnings(base, next);
  EXPECT_TRUE(has_line(w, "shuffle seed differs: 42 → 43: access order changed")) << all(w);
  // A config without a seed ran with the default, 42: no change when the other says 42.
  ResultDocument implicit = document();
  implicit.config["resolved"]["defaults"].erase("seed");
  auto same = comparability_warnings(base, implicit);
  EXPECT_EQ(std::count_if(same.begin(), same.end(),
                          [](const std::string& l) { return l.rfind("shuffle seed", 0) == 0; }),
            0)
      << all(same);
}

TEST(ComparabilityTest, FingerprintLabelSizesAndSelectionAreNamedOneLineEach) {
  ResultDocument base = document(), next = document();
  next.dataset["source"]["fingerprint"] = "2222222222222222bbbb";
  next.dataset["cache"]["manifest"]["label"] = "imagenet-v2";
  next.dataset["source"]["files"] = 120;
  next.dataset["source"]["bytes"] = 120 * 131072;
  next.dataset["source"]["file_size"] = {{"min", 131072}, {"p50", 131072}, {"p90", 131072}, {"max", 131072}};
  next.config["selection"]["include"] = {"val/**"};
  auto w = comparability_warnings(base, next);
  EXPECT_TRUE(has_line(w,
                       "source data set fingerprint differs: 111111111111 → 222222222222: "
                       "different files were read (names, sizes or mtimes)"))
      << all(w);
  EXPECT_TRUE(has_line(w,
                       "manifest label differs: \"imagenet-v1\" → \"imagenet-v2\": the cache "
                       "holds another data version"))
      << all(w);
  EXPECT_TRUE(has_line(w, "source file count differs: 100 → 120: a different amount of data was read"))
      << all(w);
  EXPECT_TRUE(
      has_line(w, "source total bytes differ: 6.25 MiB → 15 MiB: a different amount of data was read"))
      << all(w);
  EXPECT_TRUE(has_line(w,
                       "source file sizes differ: p50 64 KiB → 128 KiB, p90 64 KiB → 128 KiB: "
                       "reads per file changed"))
      << all(w);
  EXPECT_TRUE(has_line(w,
                       "selection differs: every file → include 'val/**': another part of the "
                       "data set was read"))
      << all(w);
}

TEST(ComparabilityTest, SelectionFallsBackToTheConfigsInclude) {
  ResultDocument base = document(), next = document();
  base.config.erase("selection");
  next.config.erase("selection");
  next.config["resolved"]["dataset"]["include"] = {"train/*.jpg"};
  auto w = comparability_warnings(base, next);
  EXPECT_TRUE(has_line(w,
                       "selection differs: every file → include 'train/*.jpg': another part of "
                       "the data set was read"))
      << all(w);
}

}  // namespace
}  // namespace feedbench

namespace feedbench {
namespace {

// A throttle simulates another storage speed: a change of it is named, not read as speed.
TEST(ComparabilityTest, AThrottleChangeIsNamed) {
  ResultDocument base = document(), next = document();
  next.dataset["source"]["throttle_bytes_per_second"] = 32 << 20;
  auto w = comparability_warnings(base, next);
  EXPECT_TRUE(has_line(w,
                       "source throttle differs: none → 32 MiB/s: a simulated storage speed "
                       "changed, not the storage"))
      << all(w);
  base.dataset["source"]["throttle_bytes_per_second"] = 32 << 20;
  EXPECT_TRUE(comparability_warnings(base, next).empty()) << all(comparability_warnings(base, next));
}

}  // namespace
}  // namespace feedbench
