#include "feedbench/plan/plan.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>

#include <gtest/gtest.h>

#include "feedbench/base/error.h"
#include "feedbench/io/runner.h"
#include "test_util.h"

namespace feedbench {
namespace {

using json = nlohmann::json;
using testing::TempDir;

class PlanTest : public ::testing::Test {
 protected:
  TempDir dir;
  void SetUp() override {
    std::filesystem::create_directories(dir / "source");
    std::filesystem::create_directories(dir / "cache");
  }
  // RETURNS: the plan of a config with `families` (and `extra` top-level keys).
  Plan plan_of(const json& families, const json& extra = json::object(), const ConfigOverrides& o = {}) {
    json doc = {{"name", "t"},
                {"dataset", {{"source", dir / "source"}, {"cache", dir / "cache"}}},
                {"families", families}};
    for (const auto& [k, v] : extra.items()) doc[k] = v;
    return expand_plan(parse_config(doc.dump(), "p.json", o));
  }
  std::string error_of(const json& families, const json& extra = json::object()) {
    try {
      plan_of(families, extra);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
};

std::vector<std::string> names(const Plan& plan) {
  std::vector<std::string> out;
  for (const auto& c : plan.cases) out.push_back(c.name());
  return out;
}

TEST_F(PlanTest, BuiltInDefaultsGiveCanonicalNames) {
  Plan p = plan_of({{{"family", "file_read"}}, {{"family", "loader"}}, {{"family", "stage"}}});
  EXPECT_EQ(names(p),
            (std::vector<std::string>{
                "file_read/pattern:sequential/bs:1048576/engine:psync/qd:1/workers:1/state:cold/path:source",
                "loader/batch:32/workers:1/prefetch:2/step:10ms/transform:none/samples:files/epochs:1/"
                "steps:0/warmup:1/acc:1/target:0.9/engine:psync/state:cold/path:source",
                "stage/workers:4/state:cold/verify:true"}));
  EXPECT_TRUE(p.dropped.empty());
  for (const auto& c : p.cases) {
    EXPECT_EQ(c.repetitions, 3);
    EXPECT_EQ(c.seed, 42u);
  }
}

TEST_F(PlanTest, ParamsAreInCanonicalOrderWithResolvedValues) {
  // Keys written in a scrambled order come out in the canonical one.
  Plan p = plan_of({{{"path", "cache"},
                     {"cache_state", "direct"},
                     {"workers", 4},
                     {"queue_depth", 32},
                     {"engine", "libaio"},
                     {"block_size", "4KiB"},
                     {"pattern", "random"},
                     {"family", "file_read"}}});
  ASSERT_EQ(p.cases.size(), 1u);
  const Case& c = p.cases[0];
  EXPECT_EQ(c.name(),
            "file_read/pattern:random/bs:4096/engine:libaio/qd:32/workers:4/state:direct/path:cache");
  std::vector<std::string> keys;
  for (const auto& [k, _] : c.params.items()) keys.push_back(k);
  // Unset optional parameters (round limits) are absent, the rest in canonical order.
  auto all = family_parameters("file_read");
  EXPECT_EQ(keys, std::vector<std::string>(all.begin(), all.begin() + 7));
  EXPECT_EQ(keys, (std::vector<std::string>{"pattern", "block_size", "engine", "queue_depth", "workers",
                                            "cache_state", "path"}));
  // The typed fields hold the same values.
  const FileReadParameters& f = c.file_read();
  EXPECT_EQ(f.block_size, 4096u);
  EXPECT_EQ(f.queue_depth, 32);
  EXPECT_EQ(f.engine, "libaio");
  EXPECT_EQ(f.pattern.pattern, Pattern::random);
  EXPECT_EQ(f.cache_state, "direct");
  EXPECT_EQ(f.path, "cache");
  EXPECT_FALSE(f.runtime.has_value());
  EXPECT_FALSE(f.sink.has_value());

  Plan l = plan_of({{{"family", "loader"},
                     {"step_time", "normal:0.05s:5000us"},
                     {"transform", "0.2ms/sample"},
                     {"samples", "records:64KiB"},
                     {"target_au", 1},
                     {"batch_size", 256},
                     {"workers", 4}}});
  ASSERT_EQ(l.cases.size(), 1u);
  const Case& lc = l.cases[0];
  EXPECT_EQ(lc.name(),
            "loader/batch:256/workers:4/prefetch:2/step:normal:50ms:5ms/transform:200us/sample/"
            "samples:records:65536/"
            "epochs:1/steps:0/warmup:1/acc:1/target:1.0/engine:psync/state:cold/path:source");
  const LoaderParameters& lp = lc.loader();
  EXPECT_EQ(format_distribution(lp.step_time), "normal:50ms:5ms");
  EXPECT_EQ(lp.step_time.a_ns, 50'000'000);
  EXPECT_EQ(lp.transform.per, TransformCost::Per::sample);
  EXPECT_EQ(lp.transform.ns, 200'000);
  EXPECT_EQ(lp.samples.kind, SampleFormat::Kind::records);
  EXPECT_EQ(lp.samples.record_bytes, 65536u);
  EXPECT_DOUBLE_EQ(lp.target_au, 1.0);
  EXPECT_EQ(lp.batch_size, 256);
  EXPECT_EQ(lp.workers, 4);
  EXPECT_FALSE(lp.pattern.has_value());
  std::vector<std::string> keys2;
  for (const auto& [k, _] : lc.params.items()) keys2.push_back(k);
  // The optional sampling pattern, TFRecord options, accelerator, overlap, handover, the
  // trainer's next() cost, the framework and the collate, unset, are absent (last in canonical
  // order).
  auto loader_keys = family_parameters("loader");
  ASSERT_GE(loader_keys.size(), 10u);
  EXPECT_EQ(std::vector<std::string>(loader_keys.end() - 10, loader_keys.end()),
            (std::vector<std::string>{"pattern", "shuffle_buffer", "verify_crc", "accelerator", "overlap",
                                      "handover", "next_cost", "next_cost_per_mib", "framework", "collate"}));
  EXPECT_EQ(keys2, std::vector<std::string>(loader_keys.begin(), loader_keys.end() - 10));

  // A skewed sampling is named at the end; sequential is not a sampling; defaults.pattern
  // (file_read's read order) does not reach the loader.
  Plan z = plan_of({{{"family", "loader"}, {"pattern", "zipf:1.10"}}});
  EXPECT_TRUE(z.cases.at(0).name().ends_with("/path:source/pattern:zipf:1.1")) << z.cases.at(0).name();
  ASSERT_TRUE(z.cases.at(0).loader().pattern.has_value());
  EXPECT_EQ(z.cases.at(0).loader().pattern->kind, Skew::Kind::zipf);
  EXPECT_DOUBLE_EQ(z.cases.at(0).loader().pattern->theta, 1.1);
  EXPECT_THROW(plan_of({{{"family", "loader"}, {"pattern", "sequential"}}}), InputError);
  Plan d = plan_of({{{"family", "loader"}}}, {{"defaults", {{"pattern", "random"}}}});
  EXPECT_FALSE(d.cases.at(0).params.contains("pattern"));
  EXPECT_FALSE(d.cases.at(0).loader().pattern.has_value());

  Plan s = plan_of({{{"family", "stage"}, {"verify", false}}});
  EXPECT_EQ(s.cases.at(0).name(), "stage/workers:4/state:cold/verify:false");
  EXPECT_FALSE(s.cases.at(0).params.at("verify").get<bool>());
  EXPECT_FALSE(s.cases.at(0).stage().verify);
  EXPECT_EQ(s.cases.at(0).stage().workers, 4);
  EXPECT_EQ(s.cases.at(0).path(), nullptr) << "stage reads the source and writes the cache";
}

// Every optional parameter set: each reaches its own typed field (a row of the plan's table
// naming another field would leave one of these at its default).
TEST_F(PlanTest, EveryParameterFillsItsTypedField) {
  Plan f =
      plan_of({{{"family", "file_read"},
                {"pattern", "hot_set:10%:90%"},
                {"runtime", "2s"},
                {"max_bytes", "1GiB"},
                {"ramp_time", "500ms"},
                {"steady_state", {{"metric", "iops"}, {"mode", "spread"}, {"limit", "3%"}, {"window", "1s"}}},
                {"sink", "host"}}});
  const FileReadParameters& fp = f.cases.at(0).file_read();
  EXPECT_EQ(fp.pattern.pattern, Pattern::skewed);
  EXPECT_EQ(fp.pattern.skew.kind, Skew::Kind::hot_set);
  EXPECT_DOUBLE_EQ(fp.pattern.skew.hot_files, 0.1);
  EXPECT_EQ(fp.runtime, std::chrono::seconds(2));
  EXPECT_EQ(fp.max_bytes, std::uint64_t{1} << 30);
  EXPECT_EQ(fp.ramp_time, std::chrono::milliseconds(500));
  ASSERT_TRUE(fp.steady_state.has_value());
  EXPECT_EQ(fp.steady_state->metric, SteadyStateSpec::Metric::iops);
  EXPECT_EQ(fp.steady_state->window_ns, 1'000'000'000);
  EXPECT_EQ(fp.sink, "host");

  Plan l = plan_of({{{"family", "loader"},
                     {"samples", "tfrecord"},
                     {"shuffle_buffer", 1024},
                     {"verify_crc", false},
                     {"accelerator", "cpu"},
                     {"overlap", false},
                     {"handover", "process"},
                     {"next_cost", "1100us"},
                     {"next_cost_per_mib", "2ms"},
                     {"framework", "none"},
                     {"collate", "list"},
                     {"steps", 7},
                     {"warmup_steps", 3},
                     {"epochs", 2},
                     {"prefetch", 5},
                     {"accelerators", 6},
                     {"transform", "random_resized_crop:224"}}});
  const LoaderParameters& lp = l.cases.at(0).loader();
  EXPECT_EQ(lp.samples.kind, SampleFormat::Kind::tfrecord);
  EXPECT_EQ(lp.shuffle_buffer, 1024);
  EXPECT_EQ(lp.verify_crc, false);
  EXPECT_EQ(lp.accelerator, "cpu");
  EXPECT_EQ(lp.overlap, false);
  EXPECT_EQ(lp.handover, "process");
  EXPECT_EQ(lp.next_cost, std::chrono::microseconds(1100));
  EXPECT_EQ(lp.next_cost_per_mib, std::chrono::milliseconds(2));
  EXPECT_EQ(lp.framework, "none");
  EXPECT_EQ(lp.collate, "list");
  EXPECT_EQ(lp.steps, 7);
  EXPECT_EQ(lp.warmup_steps, 3);
  EXPECT_EQ(lp.epochs, 2);
  EXPECT_EQ(lp.prefetch, 5);
  EXPECT_EQ(lp.accelerators, 6);
  EXPECT_EQ(lp.transform.per, TransformCost::Per::decode);
  EXPECT_EQ(lp.transform.crop, TransformCost::Crop::random_resized);
  EXPECT_EQ(lp.transform.size, 224);
  EXPECT_EQ(l.cases.at(0).reader_threads(), 6);

  Plan r = plan_of({{{"family", "replay"},
                     {"trace", "t.json"},
                     {"job", "resnet"},
                     {"step_scale", 0.5},
                     {"workers", 0},
                     {"batch_size", 64},
                     {"epochs", 3},
                     {"target_au", 0.8},
                     {"allow_resized", true},
                     {"cpu_scale", 2.0}}});
  Case& rc = r.cases.at(0);
  EXPECT_EQ(rc.replay().trace, "t.json");
  EXPECT_EQ(rc.replay().job, "resnet");
  EXPECT_EQ(rc.replay().step_scale, 0.5);
  EXPECT_EQ(rc.replay().workers, 0);
  EXPECT_EQ(rc.replay().batch_size, 64);
  EXPECT_EQ(rc.replay().epochs, 3);
  EXPECT_EQ(rc.replay().target_au, 0.8);
  EXPECT_EQ(rc.replay().allow_resized, true);
  EXPECT_EQ(rc.replay().cpu_scale, 2.0);
  EXPECT_EQ(rc.cache_state(), "cold");
  EXPECT_EQ(*rc.path(), "source");
  // A value set after the plan reaches the name and the field alike.
  rc.set("job", "other");
  EXPECT_EQ(rc.replay().job, "other");
  EXPECT_TRUE(rc.name().starts_with("replay/job:other/")) << rc.name();
}

// make_case puts the parameters in the family's canonical order, as the plan would.
TEST(CaseTest, MadeCasesTakeTheCanonicalOrder) {
  Case c = make_case("file_read", {{"path", "cache"}, {"block_size", 4096}, {"pattern", "random"}});
  EXPECT_EQ(c.params.dump(), R"({"pattern":"random","block_size":4096,"path":"cache"})");
  EXPECT_EQ(c.file_read().block_size, 4096u);
  EXPECT_EQ(c.file_read().path, "cache");
  EXPECT_DEATH(make_case("file_read", {{"batch_size", 4}}), "no parameter batch_size");
}

TEST_F(PlanTest, CartesianProductOfSweeps) {
  Plan p = plan_of({{{"family", "file_read"},
                     {"pattern", {"sequential", "random", "shuffled_files"}},
                     {"workers", {1, 2, 4, 8}},
                     {"cache_state", {"cold", "warm"}},
                     {"path", {"source", "cache"}}}});
  EXPECT_EQ(p.cases.size(), 3u * 4 * 2 * 2);
  EXPECT_TRUE(p.dropped.empty());
  // The first parameter varies slowest, the last fastest.
  EXPECT_EQ(p.cases[0].name(),
            "file_read/pattern:sequential/bs:1048576/engine:psync/qd:1/workers:1/state:cold/path:source");
  EXPECT_EQ(p.cases[1].name(),
            "file_read/pattern:sequential/bs:1048576/engine:psync/qd:1/workers:1/state:cold/path:cache");
  EXPECT_EQ(p.cases.back().name(),
            "file_read/pattern:shuffled_files/bs:1048576/engine:psync/qd:1/workers:8/state:warm/path:cache");
  auto n = names(p);
  EXPECT_EQ(std::set<std::string>(n.begin(), n.end()).size(), n.size());
}

TEST_F(PlanTest, DropsCombinationsThatCannotRunWithReasons) {
  Plan p = plan_of({{{"family", "file_read"},
                     {"engine", {"psync", "mmap", "libaio", "io_uring"}},
                     {"queue_depth", {1, 16}},
                     {"cache_state", {"cold", "direct"}}}});
  // Runnable: psync qd1 cold/direct, mmap qd1 cold, libaio qd1/16 direct, io_uring all four.
  EXPECT_EQ(
      names(p),
      (std::vector<std::string>{
          "file_read/pattern:sequential/bs:1048576/engine:psync/qd:1/workers:1/state:cold/path:source",
          "file_read/pattern:sequential/bs:1048576/engine:psync/qd:1/workers:1/state:direct/path:source",
          "file_read/pattern:sequential/bs:1048576/engine:mmap/qd:1/workers:1/state:cold/path:source",
          "file_read/pattern:sequential/bs:1048576/engine:libaio/qd:1/workers:1/state:direct/path:source",
          "file_read/pattern:sequential/bs:1048576/engine:libaio/qd:16/workers:1/state:direct/path:source",
          "file_read/pattern:sequential/bs:1048576/engine:io_uring/qd:1/workers:1/state:cold/path:source",
          "file_read/pattern:sequential/bs:1048576/engine:io_uring/qd:1/workers:1/state:direct/path:source",
          "file_read/pattern:sequential/bs:1048576/engine:io_uring/qd:16/workers:1/state:cold/path:source",
          "file_read/pattern:sequential/bs:1048576/engine:io_uring/qd:16/workers:1/state:direct/"
          "path:source"}));
  ASSERT_EQ(p.dropped.size(), 16u - 9u);
  auto has = [&](const std::string& text) {
    return std::find(p.dropped.begin(), p.dropped.end(), text) != p.dropped.end();
  };
  EXPECT_TRUE(
      has("file_read/pattern:sequential/bs:1048576/engine:libaio/qd:1/workers:1/state:cold/path:source: "
          "libaio reads only with O_DIRECT: cache_state must be direct"));
  EXPECT_TRUE(
      has("file_read/pattern:sequential/bs:1048576/engine:psync/qd:16/workers:1/state:cold/path:source: "
          "psync has one read in flight per worker: queue_depth must be 1"));
  EXPECT_TRUE(
      has("file_read/pattern:sequential/bs:1048576/engine:mmap/qd:1/workers:1/state:direct/path:source: "
          "mmap cannot bypass the page cache: cache_state direct needs psync, libaio or io_uring"));
}

TEST_F(PlanTest, IdenticalCasesAreMeasuredOnce) {
  Plan p = plan_of({{{"family", "file_read"}, {"block_size", {"1MiB", 1048576, "1024KiB"}}},
                    {{"family", "file_read"}, {"workers", 1}}});
  EXPECT_EQ(p.cases.size(), 1u);
  ASSERT_EQ(p.dropped.size(), 3u);
  EXPECT_EQ(p.dropped[0],
            "file_read/pattern:sequential/bs:1048576/engine:psync/qd:1/workers:1/state:cold/path:source: "
            "same as an "
            "earlier case (/families/0), measured once");
  EXPECT_NE(p.dropped[2].find("(/families/1)"), std::string::npos) << p.dropped[2];
}

TEST_F(PlanTest, DefaultsPrecedence) {
  json extra = {
      {"defaults",
       {{"repetitions", 5}, {"seed", 7}, {"workers", {2, 4}}, {"block_size", "64KiB"}, {"verify", false}}}};
  Plan p = plan_of({{{"family", "file_read"}, {"workers", 8}, {"repetitions", 2}},  // own value wins
                    {{"family", "file_read"}, {"pattern", "random"}},               // takes the defaults
                    {{"family", "stage"}}},  // defaults it has, built-ins for the rest
                   extra);
  EXPECT_EQ(names(p),
            (std::vector<std::string>{
                "file_read/pattern:sequential/bs:65536/engine:psync/qd:1/workers:8/state:cold/path:source",
                "file_read/pattern:random/bs:65536/engine:psync/qd:1/workers:2/state:cold/path:source",
                "file_read/pattern:random/bs:65536/engine:psync/qd:1/workers:4/state:cold/path:source",
                "stage/workers:2/state:cold/verify:false", "stage/workers:4/state:cold/verify:false"}));
  EXPECT_EQ(p.cases[0].repetitions, 2);
  EXPECT_EQ(p.cases[1].repetitions, 5);
  EXPECT_EQ(p.cases[4].repetitions, 5);
  for (const auto& c : p.cases) EXPECT_EQ(c.seed, 7u);
}

TEST_F(PlanTest, SetOverrideBeatsFamilyAndDefaults) {
  ConfigOverrides o;
  o.set = {{"repetitions", 1}, {"workers", {1}}};
  Plan p = plan_of({{{"family", "file_read"}, {"workers", {1, 2, 4}}, {"repetitions", 5}},
                    {{"family", "stage"}, {"workers", 8}}},
                   {{"defaults", {{"repetitions", 4}}}}, o);
  EXPECT_EQ(names(p),
            (std::vector<std::string>{
                "file_read/pattern:sequential/bs:1048576/engine:psync/qd:1/workers:1/state:cold/path:source",
                "stage/workers:1/state:cold/verify:true"}));
  for (const auto& c : p.cases) EXPECT_EQ(c.repetitions, 1);
}

TEST_F(PlanTest, CachePathNeedsACacheRoot) {
  json doc = {
      {"name", "t"},
      {"dataset", {{"source", dir / "source"}}},
      {"families", {{{"family", "file_read"}}, {{"family", "loader"}, {"path", {"source", "cache"}}}}}};
  try {
    expand_plan(parse_config(doc.dump(), "p.json"));
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "p.json: /families/1/path/1: expected dataset.cache (or --cache) for path \"cache\" of the "
              "loader family "
              "at /families/1, got no cache root");
  }
}

TEST_F(PlanTest, BadValuesTheSchemaCannotSeeNameThePointer) {
  EXPECT_EQ(error_of({{{"family", "file_read"}, {"block_size", "0KiB"}}}),
            "p.json: /families/0/block_size: expected a size of at least 1 byte, got \"0KiB\"");
  EXPECT_EQ(
      error_of({{{"family", "file_read"}, {"block_size", {"4KiB", "0.3KiB"}}}}),
      "p.json: /families/0/block_size/1: expected a size such as 4KiB, 1MiB or 4096 (bytes), got \"0.3KiB\" "
      "(not a whole number of the smallest unit)");
  EXPECT_TRUE(
      error_of({{{"family", "loader"}, {"step_time", "uniform:60ms:40ms"}}}, {{"defaults", json::object()}})
          .starts_with("p.json: /families/0/step_time: expected a step time"));
  EXPECT_TRUE(error_of({{{"family", "loader"}}}, {{"defaults", {{"step_time", "uniform:60ms:40ms"}}}})
                  .starts_with("p.json: /defaults/step_time: expected a step time"));
}

TEST_F(PlanTest, EmptyPlanIsAnError) {
  EXPECT_EQ(
      error_of({{{"family", "file_read"}, {"engine", "libaio"}}}),
      "p.json: /families: expected at least one case that can run, got none "
      "(file_read/pattern:sequential/bs:1048576/engine:libaio/qd:1/workers:1/state:cold/path:source: libaio "
      "reads only with O_DIRECT: cache_state must be direct)");
}

TEST(PlanSchemaTest, SchemaAndPlanAgreeOnEachFamilysParameters) {
  const json& defs = experiment_schema().at("definitions");
  for (const char* family : {"file_read", "loader", "stage", "replay", "checkpoint"}) {
    std::set<std::string> in_schema;
    for (const auto& [k, v] : defs.at(family).at("properties").items()) {
      if (k == "family" || k == "repetitions") continue;
      in_schema.insert(k);
      EXPECT_TRUE(v.contains("description")) << family << "." << k;
      // A replay's trace is required, and its what-ifs its own: defaults hold its conditions only.
      if (std::string(family) == "replay" && k != "cache_state" && k != "path") continue;
      EXPECT_TRUE(v.contains("default")) << family << "." << k << " needs a built-in default";
      EXPECT_TRUE(defs.at("defaults").at("properties").contains(k)) << k << " missing from defaults";
    }
    auto keys = family_parameters(family);
    EXPECT_EQ(in_schema, std::set<std::string>(keys.begin(), keys.end())) << family;
  }
}

}  // namespace
}  // namespace feedbench

namespace feedbench {
namespace {

// ---- Round limits: runtime, max_bytes, ramp_time, steady_state ---------------------------------

// Unset limits leave a case's name as it always was (baselines keep matching); set ones join
// the name after path, canonicalised, so a time-based case never matches a whole-selection one.
TEST_F(PlanTest, RoundLimitsJoinTheNameOnlyWhenSet) {
  Plan p =
      plan_of({{{"family", "file_read"}},
               {{"family", "file_read"},
                {"pattern", "random"},
                {"runtime", "1.5s"},
                {"max_bytes", "1GiB"},
                {"ramp_time", "500ms"},
                {"steady_state", {{"metric", "bw"}, {"mode", "slope"}, {"limit", "2%"}, {"window", "1s"}}}}});
  ASSERT_EQ(p.cases.size(), 2u);
  EXPECT_EQ(p.cases[0].name(),
            "file_read/pattern:sequential/bs:1048576/engine:psync/qd:1/workers:1/state:cold/path:source");
  EXPECT_FALSE(p.cases[0].params.contains("runtime"));
  EXPECT_FALSE(p.cases[0].file_read().runtime.has_value());
  EXPECT_FALSE(p.cases[0].file_read().steady_state.has_value());
  EXPECT_EQ(p.cases[1].name(),
            "file_read/pattern:random/bs:1048576/engine:psync/qd:1/workers:1/state:cold/path:source/"
            "runtime:1500ms/max_bytes:1073741824/ramp:500ms/ss:bw_slope:2%:1s");
  EXPECT_EQ(p.cases[1].params.at("runtime"), "1500ms");
  EXPECT_EQ(p.cases[1].file_read().runtime, std::chrono::milliseconds(1500));
  EXPECT_EQ(p.cases[1].file_read().max_bytes, 1073741824u);
  EXPECT_EQ(p.cases[1].params.at("steady_state"), "bw_slope:2%:1s");
  EXPECT_EQ(format_steady_state(*p.cases[1].file_read().steady_state), "bw_slope:2%:1s");
  EXPECT_EQ(p.cases[1].origin.at("runtime"), "/families/1/runtime");
}

TEST_F(PlanTest, RoundLimitsSweepAndComeFromDefaults) {
  Plan p = plan_of({{{"family", "file_read"}, {"runtime", json::array({"1s", "2s"})}}},
                   {{"defaults", {{"ramp_time", "100ms"}}}});
  EXPECT_EQ(names(p),
            (std::vector<std::string>{
                "file_read/pattern:sequential/bs:1048576/engine:psync/qd:1/workers:1/state:cold/path:source/"
                "runtime:1s/ramp:100ms",
                "file_read/pattern:sequential/bs:1048576/engine:psync/qd:1/workers:1/state:cold/path:source/"
                "runtime:2s/ramp:100ms"}));
}

TEST_F(PlanTest, BadRoundLimitsNameTheirPointer) {
  EXPECT_EQ(error_of({{{"family", "file_read"}, {"runtime", "0s"}}}),
            "p.json: /families/0/runtime: expected a duration of at least 1ms, got \"0s\"");
  EXPECT_TRUE(error_of({{{"family", "file_read"}, {"runtime", "10"}}})
                  .starts_with("p.json: /families/0/runtime: expected"))
      << error_of({{{"family", "file_read"}, {"runtime", "10"}}});
  EXPECT_EQ(error_of({{{"family", "file_read"}, {"ramp_time", "1s"}}}),
            "p.json: /families/0/ramp_time: expected runtime as well (ramp_time is excluded from the figures "
            "of a time-based round), got ramp_time alone");
  EXPECT_EQ(error_of({{{"family", "file_read"},
                       {"steady_state",
                        {{"metric", "bw"}, {"mode", "spread"}, {"limit", "5%"}, {"window", "2s"}}}}}),
            "p.json: /families/0/steady_state: expected runtime as well (steady state is judged within a "
            "time-based round), got steady_state alone");
  EXPECT_EQ(error_of({{{"family", "file_read"},
                       {"runtime", "2s"},
                       {"steady_state",
                        {{"metric", "bw"}, {"mode", "spread"}, {"limit", "0%"}, {"window", "1s"}}}}}),
            "p.json: /families/0/steady_state/limit: expected a percentage above 0% such as 2%, got \"0%\"");
  EXPECT_EQ(
      error_of(
          {{{"family", "file_read"},
            {"runtime", "2s"},
            {"steady_state", {{"metric", "bw"}, {"mode", "spread"}, {"limit", "5%"}, {"window", "3s"}}}}}),
      "p.json: /families/0/steady_state/window: expected a window no longer than runtime (2s), got \"3s\"");
  EXPECT_TRUE(
      error_of(
          {{{"family", "file_read"},
            {"runtime", "2s"},
            {"steady_state", {{"metric", "lat"}, {"mode", "spread"}, {"limit", "5%"}, {"window", "1s"}}}}})
          .starts_with("p.json: /families/0/steady_state/metric: expected a steady-state criterion such as"))
      << error_of({{{"family", "file_read"},
                    {"runtime", "2s"},
                    {"steady_state",
                     {{"metric", "lat"}, {"mode", "spread"}, {"limit", "5%"}, {"window", "1s"}}}}});
}

TEST(SteadyStateSpecTest, ParsesTheCanonicalText) {
  SteadyStateSpec s = parse_steady_state("iops_spread:0.5%:250ms");
  EXPECT_EQ(s.metric, SteadyStateSpec::Metric::iops);
  EXPECT_EQ(s.mode, SteadyStateSpec::Mode::spread);
  EXPECT_DOUBLE_EQ(s.limit_percent, 0.5);
  EXPECT_EQ(s.window_ns, 250'000'000);
  EXPECT_EQ(format_steady_state(s), "iops_spread:0.5%:250ms");
}

}  // namespace
}  // namespace feedbench
