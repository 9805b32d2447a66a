// Bounded input: integers past their range are refused, not cut; deep, long or huge JSON is
// refused while parsing, before anything recursive sees it; sweeps and `gen` are counted before
// any work. Every refusal is an InputError naming the file (or option) and the JSON pointer.
#include <sys/statvfs.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "feedbench/base/error.h"
#include "feedbench/base/json_limits.h"
#include "feedbench/cache/manifest.h"
#include "feedbench/dataset/generator.h"
#include "feedbench/plan/config.h"
#include "feedbench/plan/plan.h"
#include "feedbench/results/result.h"
#include "test_util.h"

namespace feedbench {
namespace {

using json = nlohmann::json;
using testing::input_error_of;
using testing::TempDir;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// `levels` arrays nested inside each other: "[[[...]]]".
std::string nested(std::size_t levels) { return std::string(levels, '[') + std::string(levels, ']'); }

class LimitsTest : public ::testing::Test {
 protected:
  TempDir dir;
  std::string source = dir / "source";
  void SetUp() override { std::filesystem::create_directories(source); }

  // Config text around `families` (and `extra` top-level keys).
  std::string text(const json& families, const json& extra = json::object()) {
    json doc = {{"name", "t"}, {"dataset", {{"source", source}}}, {"families", families}};
    for (const auto& [k, v] : extra.items()) doc[k] = v;
    return doc.dump();
  }
  std::string config_error(const std::string& config_text, const ConfigOverrides& o = {}) {
    return input_error_of([&] { parse_config(config_text, "c.json", o); });
  }
  std::string plan_error(const std::string& config_text, const ConfigOverrides& o = {}) {
    return input_error_of([&] { expand_plan(parse_config(config_text, "c.json", o)); });
  }
};

// ---- Integers: a range in the schema and in the code, never cut ---------------------------

TEST_F(LimitsTest, IntegersPastTheirRangeAreRefusedNotCut) {
  EXPECT_EQ(
      config_error(text({{{"family", "loader"}, {"batch_size", 4294967297}}})),
      "c.json: /families/0/batch_size: expected an integer from 1 to 65536, or a non-empty list of them "
      "(a sweep), got 4294967297");
  EXPECT_EQ(config_error(text({{{"family", "file_read"}}}, {{"defaults", {{"repetitions", 2147483648}}}})),
            "c.json: /defaults/repetitions: expected an integer from 1 to 1000, got 2147483648");
  EXPECT_EQ(config_error(text({{{"family", "loader"}, {"epochs", {1, 4294967297}}}})),
            "c.json: /families/0/epochs/1: expected an integer from 1 to 10000, got 4294967297");
  EXPECT_EQ(
      config_error(text({{{"family", "loader"}, {"accelerators", 1025}}})),
      "c.json: /families/0/accelerators: expected an integer from 1 to 1024, or a non-empty list of them "
      "(a sweep), got 1025");
  EXPECT_EQ(config_error(text({{{"family", "stage"}, {"workers", 18446744073709551615ull}}})),
            "c.json: /families/0/workers: expected an integer from 1 to 1024, or a non-empty list of them "
            "(a sweep), got 18446744073709551615");
  EXPECT_TRUE(contains(config_error(text({{{"family", "file_read"}, {"block_size", 1099511627776}}})),
                       "c.json: /families/0/block_size: expected a size"));
  EXPECT_EQ(
      config_error(text({{{"family", "file_read"}}}, {{"defaults", {{"seed", 9223372036854775807ll}}}})), "");
  EXPECT_EQ(
      config_error(text({{{"family", "file_read"}}}, {{"defaults", {{"seed", 9223372036854775808ull}}}})),
      "c.json: /defaults/seed: expected an integer from 0 to 9223372036854775807, got 9223372036854775808");
  // A size written with a unit meets the same bound, in the code that parses it.
  EXPECT_EQ(plan_error(text({{{"family", "file_read"}, {"block_size", "2GiB"}}})),
            "c.json: /families/0/block_size: expected a size of at most 1 GiB, got \"2GiB\"");
}

TEST_F(LimitsTest, IntegersPastTheirRangeThroughSetAreRefused) {
  ConfigOverrides o;
  o.set = {{"repetitions", 2147483648}};
  EXPECT_EQ(config_error(text({{{"family", "file_read"}}}), o),
            "c.json: /families/0/repetitions: expected an integer from 1 to 1000, got 2147483648 (from --set "
            "repetitions)");
  o.set = parse_sets({"batch_size=[8,4294967297]"});
  EXPECT_EQ(config_error(text({{{"family", "loader"}}}), o),
            "c.json: /families/0/batch_size/1: expected an integer from 1 to 65536, got 4294967297 (from "
            "--set batch_size)");
}

// The code's ranges are the schema's: each integer parameter at the schema's maximum plans, one
// past it is refused by the plan itself (a config that bypassed the schema check).
TEST(PlanRangeTest, CodeAndSchemaAgreeOnEveryIntegerRange) {
  TempDir dir;
  const json& defs = experiment_schema().at("definitions");
  int checked = 0;
  for (const char* family : {"file_read", "loader", "stage"}) {
    for (const auto& [key, prop] : defs.at(family).at("properties").items()) {
      if (!prop.contains("anyOf") || prop.at("anyOf")[0].value("type", "") != "integer") continue;
      const json& scalar = prop.at("anyOf")[0];
      ASSERT_TRUE(scalar.contains("maximum")) << family << "." << key << " has no maximum";
      EXPECT_EQ(defs.at("defaults").at("properties").at(key).at("anyOf")[0].at("maximum"),
                scalar.at("maximum"))
          << key << ": defaults and " << family << " disagree";
      for (const auto& [value, ok] : {std::pair{scalar.at("maximum"), true},
                                      std::pair{json(scalar.at("maximum").get<std::int64_t>() + 1), false},
                                      std::pair{json(scalar.at("minimum").get<std::int64_t>() - 1), false}}) {
        Config c;
        c.file = "c.json";
        c.defaults = json::object();
        c.families = json::array({{{"family", family}, {key, value}}});
        // file_read engines other than io_uring/libaio cannot take queue_depth above 1.
        if (key == "queue_depth") c.families[0]["engine"] = "io_uring";
        // shuffle_buffer applies to TFRecord samples only.
        if (key == "shuffle_buffer") c.families[0]["samples"] = "tfrecord";
        const std::string msg = input_error_of([&] { expand_plan(c); });
        if (ok) {
          EXPECT_EQ(msg, "") << family << "." << key << "=" << value;
        } else {
          EXPECT_EQ(msg, "c.json: /families/0/" + key + ": expected an integer from " +
                             scalar.at("minimum").dump() + " to " + scalar.at("maximum").dump() + ", got " +
                             value.dump());
        }
        ++checked;
      }
    }
    const json& reps = defs.at(family).at("properties").at("repetitions");
    EXPECT_EQ(reps.at("maximum"), kMaxRepetitions) << family;
  }
  EXPECT_GE(checked, 30);
  EXPECT_EQ(defs.at("defaults").at("properties").at("repetitions").at("maximum"), kMaxRepetitions);
}

TEST_F(LimitsTest, NumberNoDoubleHoldsNamesFileAndPointer) {
  const std::string config = R"({"name": "t", "dataset": {"source": ")" + source +
                             R"("}, "families": [{"family": "loader", "target_au": [0.5, 1e999]}]})";
  EXPECT_EQ(config_error(config),
            "c.json: /families/0/target_au/1: expected a number between -1.7e308 and 1.7e308, got 1e999");
  EXPECT_EQ(config_error(R"({"defaults": {"seed": -1e400}})"),
            "c.json: /defaults/seed: expected a number between -1.7e308 and 1.7e308, got -1e400");
  EXPECT_EQ(input_error_of([] { parse_sets({"target_au=1e999"}); }),
            "--set target_au: expected a number between -1.7e308 and 1.7e308, got 1e999");
}

// ---- Deep or long JSON: refused while parsing ------------------------------------------------

TEST_F(LimitsTest, DeepConfigIsRefusedBeforeExpansionAndSchemaCheck) {
  // ${VAR} expansion and the schema check recurse once per level: 30,000 overflowed the stack.
  const std::string deep = R"({"name": "t", "dataset": {"source": "${HOME}"}, "x": )" + nested(30000) + "}";
  std::string pointer = "/x";
  for (int i = 0; i < 63; ++i) pointer += "/0";  // the 64th array is the one refused
  EXPECT_EQ(config_error(deep), "c.json: " + pointer +
                                    ": expected arrays and objects nested at most 64 levels "
                                    "deep (the limit for a config), got deeper");
  // 64 levels in all (the top-level object is one) still parse, and reach the schema check.
  const std::string at_limit =
      R"({"name": "t", "dataset": {"source": ")" + source + R"("}, "x": )" + nested(63) + "}";
  EXPECT_TRUE(
      contains(config_error(at_limit), "c.json: /x: expected one of the keys allowed at the top level"))
      << config_error(at_limit);
}

TEST_F(LimitsTest, LongStringInAPatternFieldIsRefusedBeforeTheRegex) {
  // valijson matches "pattern" with std::regex, which recurses once per character.
  const std::string long_name(30 * 1024, 'a');
  EXPECT_EQ(
      config_error(text({{{"family", "file_read"}}}, {{"name", long_name}})),
      "c.json: /name: expected a string of at most 4096 bytes (the limit for a config), got 30720 bytes");
  EXPECT_EQ(
      config_error(text({{{"family", "file_read"}, {"block_size", std::string(30 * 1024, '4')}}})),
      "c.json: /families/0/block_size: expected a string of at most 4096 bytes (the limit for a config), "
      "got 30720 bytes");
  // At the limit the schema check still runs and answers.
  EXPECT_EQ(config_error(text({{{"family", "file_read"}}}, {{"name", std::string(4096, 'a')}})), "");
  EXPECT_TRUE(
      contains(config_error(text({{{"family", "file_read"}, {"block_size", std::string(4095, '4') + "X"}}})),
               "c.json: /families/0/block_size: expected a size"));
  // The longest pattern (alternatives, groups) on the longest string it may meet.
  EXPECT_TRUE(contains(
      config_error(text({{{"family", "loader"}, {"step_time", "normal:" + std::string(4086, '1') + "x"}}})),
      "c.json: /families/0/step_time: expected a step time"));
}

TEST_F(LimitsTest, LongOrDeepValuesThroughSetAreRefused) {
  ConfigOverrides o;
  o.set = parse_sets({"block_size=" + std::string(30 * 1024, 'a')});  // not JSON: a string
  EXPECT_EQ(
      config_error(text({{{"family", "file_read"}}}), o),
      "c.json: /defaults/block_size: expected a string of at most 4096 bytes (the limit for a config), got "
      "30720 bytes (from --set block_size)");
  // As deep as a command-line argument allows (128 KiB).
  EXPECT_TRUE(contains(input_error_of([] { parse_sets({"workers=" + nested(65000)}); }),
                       "--set workers: expected a --set value of at most 65536 bytes, got 130000 bytes"));
  EXPECT_TRUE(contains(input_error_of([] { parse_sets({"workers=" + nested(1000)}); }),
                       "nested at most 64 levels deep (the limit for a --set value), got deeper"));
  o.set = {{"workers", json::parse(nested(70))}};  // built in memory, past the parser
  EXPECT_TRUE(
      contains(config_error(text({{{"family", "file_read"}}}), o),
               "nested at most 64 levels deep (the limit for a config), got deeper (from --set workers)"));
}

TEST_F(LimitsTest, LongStringFromVariableExpansionIsRefused) {
  ::setenv("FEEDBENCH_LIMITS_TEST_LONG", std::string(5000, 'x').c_str(), 1);
  EXPECT_EQ(config_error(text({{{"family", "file_read"}}}, {{"name", "${FEEDBENCH_LIMITS_TEST_LONG}"}})),
            "c.json: /name: expected a string of at most 4096 bytes (the limit for a config) after ${VAR} "
            "expansion, "
            "got 5000 bytes");
  ::unsetenv("FEEDBENCH_LIMITS_TEST_LONG");
}

TEST_F(LimitsTest, OversizedConfigFileIsRefusedBeforeReading) {
  const std::string path = dir / "big.json";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_TRUE(f);
    std::fclose(f);
  }
  std::filesystem::resize_file(path, (std::uint64_t{1} << 20) + 1);  // sparse: nothing to read
  EXPECT_EQ(input_error_of([&] { load_config(path); }),
            path + ": expected a config of at most 1048576 bytes, got 1048577 bytes");
}

// ---- Result files and manifests ----------------------------------------------------------------

std::string result_text(const std::string& context, const std::string& entry_fields = "") {
  return R"({"schema": "feedbench-result/1", "context": )" + context +
         R"(, "benchmarks": [{"name": "a", "run_name": "a", "run_type": "iteration", "real_time": 1)" +
         entry_fields + "}]}";
}

TEST(ResultLimitsTest, DeepResultIsRefusedWhileParsing) {
  // diff and report copy the document recursively: 100,000 levels overflowed the stack.
  const std::string deep = result_text(R"({"x": )" + nested(100000) + "}");
  const std::string msg = input_error_of([&] { ResultDocument::parse(deep, "r.json"); });
  EXPECT_TRUE(contains(msg, "r.json: /context/x/0/0/0")) << msg;
  EXPECT_TRUE(contains(msg,
                       ": expected arrays and objects nested at most 128 levels deep (the limit for a result "
                       "file), got deeper"))
      << msg;
  EXPECT_EQ(
      input_error_of([&] { ResultDocument::parse(result_text(R"({"x": )" + nested(100) + "}"), "r.json"); }),
      "");
}

TEST(ResultLimitsTest, NumbersNoTypeHoldsNameFileAndPointer) {
  EXPECT_EQ(
      input_error_of([] { ResultDocument::parse(result_text("{}", R"(, "cpu_time": 1e999)"), "r.json"); }),
      "r.json: /benchmarks/0/cpu_time: expected a number between -1.7e308 and 1.7e308, got 1e999");
  EXPECT_EQ(
      input_error_of([] {
        ResultDocument::parse(result_text("{}", R"(, "repetitions": 18446744073709551615)"), "r.json");
      }),
      "r.json: /benchmarks/0/repetitions: expected an integer of at most 9223372036854775807, got number "
      "18446744073709551615");
}

TEST(ResultLimitsTest, OversizedResultFileIsRefusedBeforeReading) {
  TempDir dir;
  const std::string path = dir / "big.json";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_TRUE(f);
    std::fclose(f);
  }
  std::filesystem::resize_file(path, (std::uint64_t{256} << 20) + 1);  // sparse
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(input_error_of([&] { ResultDocument::load(path); }),
            path + ": expected a result file of at most 268435456 bytes, got 268435457 bytes");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2)) << "read before refusing";
}

TEST(ManifestLimitsTest, DeepManifestIsNotAManifest) {
  TempDir dir;
  testing::write_file(dir / "feedbench-manifest.json",
                      R"({"schema": "feedbench-manifest/1", "x": )" + nested(100000) + "}");
  testing::write_file(dir / "MANIFEST.sha256", "");
  std::string why;
  EXPECT_FALSE(read_manifest(dir.path(), &why).has_value());
  EXPECT_TRUE(contains(why, "feedbench-manifest.json: /x/0/0")) << why;
  EXPECT_TRUE(contains(why, "nested at most 64 levels deep (the limit for a manifest)")) << why;
}

// ---- Unbounded work: counted before it is done -------------------------------------------------

TEST_F(LimitsTest, SweepIsCountedBeforeCasesAreBuilt) {
  // 100 values on each of four axes: 10^8 cases from a config of a few hundred bytes.
  json hundred = json::array();
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  json family = {{"family", "loader"},
                 {"batch_size", hundred},
                 {"prefetch", hundred},
                 {"epochs", hundred},
                 {"steps", hundred}};
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(
      plan_error(text(json::array({family, {{"family", "stage"}}}))),
      "c.json: /families: expected at most 10000 cases (raise the limit with --max-cases N), got 100000001 "
      "from the sweeps (/families/0 loader: 100000000, /families/1 stage: 1); sweep fewer values");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // The limit is the caller's to raise.
  family["steps"] = {0};
  family["epochs"] = {1};
  Config c = parse_config(text(json::array({family})), "c.json");
  EXPECT_EQ(expand_plan(c).cases.size(), 10000u);
  EXPECT_TRUE(contains(input_error_of([&] { expand_plan(c, 9999); }), "expected at most 9999 cases"));
}

TEST_F(LimitsTest, SweepCountSaturatesInsteadOfOverflowing) {
  json big = json::array();
  for (int i = 1; i <= 1024; ++i) big.push_back(i);
  json family = {{"family", "loader"}, {"batch_size", big},   {"workers", big},      {"prefetch", big},
                 {"epochs", big},      {"accelerators", big}, {"warmup_steps", big}, {"steps", big}};
  EXPECT_TRUE(
      contains(plan_error(text(json::array({family}))), "got more than 18446744073709551615 from the sweeps"))
      << plan_error(text(json::array({family})));
}

TEST_F(LimitsTest, LoaderThreadsPastTheLimitAreDroppedWithTheReason) {
  Plan plan = expand_plan(
      parse_config(text({{{"family", "loader"}, {"accelerators", {1, 64}}, {"workers", 128}}}), "c.json"));
  ASSERT_EQ(plan.cases.size(), 1u);
  ASSERT_EQ(plan.dropped.size(), 1u);
  EXPECT_TRUE(
      contains(plan.dropped[0], "accelerators x workers = 8192 reader threads, more than the limit of 4096"))
      << plan.dropped[0];
}

TEST(GenLimitsTest, TooManyFilesAreRefusedBeforeAnyWork) {
  TempDir dir;
  GenOptions o;
  o.out = dir / "d";
  o.files = 99999999999999;
  o.min_size = o.max_size = 1;
  o.layout = GenLayout::kFlat;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(
      input_error_of([&] { generate_dataset(o); }),
      "--files: expected at most 10000000 files (raise the limit with --max-files N), got 99999999999999");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_FALSE(std::filesystem::exists(o.out));
  o.layout = GenLayout::kShards;
  o.files = 100;
  o.shards = 20;
  o.max_files = 10;
  EXPECT_EQ(input_error_of([&] { generate_dataset(o); }),
            "--shards: expected at most 10 files (raise the limit with --max-files N), got 20");
}

TEST(GenLimitsTest, MoreBytesThanFreeSpaceAreRefusedBeforeAnyWork) {
  TempDir dir;
  struct statvfs fs {};
  ASSERT_EQ(::statvfs(dir.path().c_str(), &fs), 0);
  const std::uint64_t free_bytes = std::uint64_t(fs.f_bavail) * fs.f_frsize;
  GenOptions o;
  o.out = dir / "missing/parent/d";
  o.files = 1000;
  o.min_size = o.max_size = free_bytes / 999 + (std::uint64_t{1} << 20);  // 1000 of them exceed what is free
  o.layout = GenLayout::kFlat;
  const std::string msg = input_error_of([&] { generate_dataset(o); });
  EXPECT_TRUE(contains(
      msg, "--files/--file-size: the data set needs " + std::to_string(1000 * o.min_size) + " bytes"))
      << msg;
  EXPECT_TRUE(contains(msg, "free on the file system at '" + dir.path() + "'")) << msg;
  EXPECT_FALSE(std::filesystem::exists(dir / "missing"));
  // Past 64 bits: said so, not wrapped.
  o.min_size = o.max_size = std::uint64_t{1} << 62;
  EXPECT_TRUE(
      contains(input_error_of([&] { generate_dataset(o); }), "needs more than 18446744073709551615 bytes"));
}

}  // namespace
}  // namespace feedbench
