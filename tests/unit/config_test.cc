#include "feedbench/plan/config.h"

#include <cstdlib>
#include <filesystem>
#include <set>

#include <gtest/gtest.h>

#include "feedbench/base/error.h"
#include "feedbench/plan/plan.h"
#include "test_util.h"

namespace feedbench {
namespace {

using json = nlohmann::json;
using testing::TempDir;

// A config around `families` reading from `source`.
std::string config_text(const std::string& source, const json& families, const json& extra = json::object()) {
  json doc = {{"name", "t"}, {"dataset", {{"source", source}}}, {"families", families}};
  for (const auto& [k, v] : extra.items()) doc[k] = v;
  return doc.dump(2);
}

// RETURNS: the InputError message parse_config gives, or "" when it accepts the text.
std::string error_of(const std::string& text, const ConfigOverrides& o = {}) {
  try {
    parse_config(text, "f.json", o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

class ConfigTest : public ::testing::Test {
 protected:
  TempDir dir;
  std::string source = dir / "source";
  std::string cache = dir / "cache";
  void SetUp() override {
    std::filesystem::create_directories(source);
    std::filesystem::create_directories(cache);
  }
  std::string one(const json& family) { return config_text(source, json::array({family})); }
};

TEST_F(ConfigTest, ParsesMinimalConfigWithoutSchemaKey) {
  Config c = parse_config(one({{"family", "file_read"}}), "f.json");
  EXPECT_EQ(c.file, "f.json");
  EXPECT_EQ(c.name, "t");
  EXPECT_EQ(c.source_root, source);
  EXPECT_EQ(c.cache_root, "");
  EXPECT_TRUE(c.include.empty());
  EXPECT_EQ(c.families.size(), 1u);
  EXPECT_TRUE(c.defaults.is_object());
  EXPECT_EQ(c.sha256.size(), 64u);
  EXPECT_EQ(c.resolved["families"][0]["family"], "file_read");
}

TEST_F(ConfigTest, AcceptsSchemaKeyDescriptionAndInclude) {
  std::string text = config_text(source, json::array({{{"family", "stage"}}}),
                                 {{"$schema", "schema/experiment.schema.json"},
                                  {"description", "d"},
                                  {"dataset", {{"source", source}, {"include", {"validation/**"}}}}});
  Config c = parse_config(text, "f.json");
  EXPECT_EQ(c.description, "d");
  EXPECT_EQ(c.include, std::vector<std::string>{"validation/**"});
}

TEST_F(ConfigTest, Sha256FollowsTheResolvedConfig) {
  Config a = parse_config(one({{"family", "file_read"}, {"workers", 2}}), "f.json");
  Config b = parse_config(one({{"family", "file_read"}, {"workers", 2}}), "g.json");
  Config c = parse_config(one({{"family", "file_read"}, {"workers", 3}}), "f.json");
  EXPECT_EQ(a.sha256, b.sha256);
  EXPECT_NE(a.sha256, c.sha256);
}

TEST(ConfigEnvTest, ExpandsVariablesAndDefaults) {
  ::setenv("FB_CONFIG_TEST_A", "alpha", 1);
  ::unsetenv("FB_CONFIG_TEST_UNSET");
  ::setenv("FB_CONFIG_TEST_EMPTY", "", 1);
  std::map<std::string, std::string> used, defaulted;
  EXPECT_EQ(expand_env("x/${FB_CONFIG_TEST_A}/y", "w", &used, &defaulted), "x/alpha/y");
  EXPECT_EQ(expand_env("${FB_CONFIG_TEST_UNSET:-/var/tmp/d}", "w", &used, &defaulted), "/var/tmp/d");
  EXPECT_EQ(expand_env("${FB_CONFIG_TEST_A:-other}", "w", &used, &defaulted), "alpha");
  EXPECT_EQ(expand_env("${FB_CONFIG_TEST_EMPTY:-dflt}", "w", &used, &defaulted), "dflt");
  EXPECT_EQ(expand_env("$HOME and $ alone", "w", &used, &defaulted), "$HOME and $ alone");
  EXPECT_EQ(expand_env("${FB_CONFIG_TEST_UNSET:-}", "w", &used, &defaulted), "");
  // What the user set, apart from the config's fallbacks that applied.
  EXPECT_EQ(used, (std::map<std::string, std::string>{{"FB_CONFIG_TEST_A", "alpha"}}));
  EXPECT_EQ(defaulted, (std::map<std::string, std::string>{{"FB_CONFIG_TEST_EMPTY", "dflt"},
                                                           {"FB_CONFIG_TEST_UNSET", ""}}));
  EXPECT_THROW(expand_env("${FB_CONFIG_TEST_A", "w", &used), InputError);
  EXPECT_THROW(expand_env("${1BAD}", "w", &used), InputError);
  EXPECT_THROW(expand_env("${}", "w", &used), InputError);
  try {
    expand_env("${FB_CONFIG_TEST_UNSET}/data", "f.json: /dataset/source", &used);
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "f.json: /dataset/source: expected environment variable FB_CONFIG_TEST_UNSET to be set (for "
        "${FB_CONFIG_TEST_UNSET}; write ${FB_CONFIG_TEST_UNSET:-default} to give a default), got it unset");
  }
}

TEST_F(ConfigTest, ExpandsEveryStringOfTheConfig) {
  ::setenv("FB_CONFIG_TEST_SRC", source.c_str(), 1);
  ::setenv("FB_CONFIG_TEST_BS", "64KiB", 1);
  ::unsetenv("FB_CONFIG_TEST_UNSET");
  std::string text =
      config_text("${FB_CONFIG_TEST_SRC}",
                  json::array({{{"family", "file_read"},
                                {"block_size", {"${FB_CONFIG_TEST_BS}", "${FB_CONFIG_TEST_UNSET:-4KiB}"}}}}));
  Config c = parse_config(text, "f.json");
  EXPECT_EQ(c.source_root, source);
  EXPECT_EQ(c.families[0]["block_size"], json({"64KiB", "4KiB"}));
  EXPECT_EQ(c.expanded_env.at("FB_CONFIG_TEST_SRC"), source);
  EXPECT_EQ(c.expanded_env.at("FB_CONFIG_TEST_BS"), "64KiB");
  // The ${FB_CONFIG_TEST_UNSET:-4KiB} fallback is no variable the user set.
  EXPECT_EQ(c.expanded_env.count("FB_CONFIG_TEST_UNSET"), 0u);
  EXPECT_EQ(c.defaults_used, (std::map<std::string, std::string>{{"FB_CONFIG_TEST_UNSET", "4KiB"}}));

  std::string bad =
      config_text(source, json::array({{{"family", "file_read"}, {"engine", "${FB_CONFIG_TEST_UNSET}"}}}));
  std::string msg = error_of(bad);
  EXPECT_TRUE(
      msg.starts_with("f.json: /families/0/engine: expected environment variable FB_CONFIG_TEST_UNSET"))
      << msg;
}

TEST_F(ConfigTest, SourceAndCacheOverridesWin) {
  TempDir other;
  ConfigOverrides o;
  o.source = other.path();
  o.cache = cache;
  Config c = parse_config(
      config_text("/does/not/exist", json::array({{{"family", "file_read"}, {"path", "cache"}}})), "f.json",
      o);
  EXPECT_EQ(c.source_root, other.path());
  EXPECT_EQ(c.cache_root, cache);
  EXPECT_EQ(c.resolved["dataset"]["source"], other.path());

  o.source = "/does/not/exist/either";
  EXPECT_EQ(error_of(one({{"family", "file_read"}}), o),
            "f.json: /dataset/source (from --source): /does/not/exist/either does not exist");
}

TEST_F(ConfigTest, SetOverrideForcesEveryFamilyThatHasTheParameter) {
  ConfigOverrides o;
  o.set = {{"repetitions", 1}, {"workers", {1}}, {"verify", false}};
  json families = json::array({{{"family", "file_read"}, {"workers", {1, 2, 4}}, {"repetitions", 5}},
                               {{"family", "loader"}},
                               {{"family", "stage"}, {"workers", 8}}});
  Config c = parse_config(config_text(source, families), "f.json", o);
  EXPECT_EQ(c.defaults["repetitions"], 1);
  EXPECT_EQ(c.defaults["workers"], json({1}));
  EXPECT_EQ(c.defaults["verify"], false);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(c.families[i]["workers"], json({1})) << i;
    EXPECT_EQ(c.families[i]["repetitions"], 1) << i;
  }
  EXPECT_FALSE(c.families[0].contains("verify"));
  EXPECT_EQ(c.families[2]["verify"], false);

  o.set = {{"wrokers", 2}};
  EXPECT_TRUE(error_of(config_text(source, families), o)
                  .starts_with("f.json: --set wrokers: expected a parameter name"));
  o.set = {{"workers", 0}};
  EXPECT_EQ(error_of(config_text(source, families), o),
            "f.json: /families/0/workers: expected an integer from 1 to 1024, or a non-empty list of them (a "
            "sweep), got 0 (from --set workers)");
}

TEST_F(ConfigTest, UnknownKeyNamesPointerAndAllowedKeys) {
  std::string msg = error_of(one({{"family", "file_read"}, {"blok_size", "4KiB"}}));
  EXPECT_EQ(
      msg,
      "f.json: /families/0/blok_size: expected one of the keys allowed in a file_read family (block_size, "
      "cache_state, engine, family, max_bytes, path, pattern, queue_depth, ramp_time, repetitions, runtime, "
      "sink, steady_state, workers), got unknown key "
      "\"blok_size\"");
  msg = error_of(config_text(source, json::array({{{"family", "stage"}}}), {{"nmae", "x"}}));
  EXPECT_TRUE(msg.starts_with(
      "f.json: /nmae: expected one of the keys allowed at the top level ($schema, dataset, defaults,"))
      << msg;
  // A parameter of another family is unknown here, too.
  msg = error_of(one({{"family", "stage"}, {"block_size", "4KiB"}}));
  EXPECT_TRUE(
      msg.starts_with("f.json: /families/0/block_size: expected one of the keys allowed in a stage family"))
      << msg;
  msg = error_of(
      config_text(source, json::array({{{"family", "stage"}}}), {{"defaults", {{"colour", "red"}}}}));
  EXPECT_TRUE(
      msg.starts_with("f.json: /defaults/colour: expected one of the keys allowed in /defaults (accelerator, "
                      "accelerators, batch_size,"))
      << msg;
}

TEST_F(ConfigTest, WrongTypesNameWhatWasExpected) {
  EXPECT_EQ(error_of(one({{"family", "file_read"}, {"workers", "four"}})),
            "f.json: /families/0/workers: expected an integer from 1 to 1024, or a non-empty list of them (a "
            "sweep), "
            "got \"four\"");
  EXPECT_EQ(error_of(one({{"family", "file_read"}, {"queue_depth", {1, 8192}}})),
            "f.json: /families/0/queue_depth/1: expected an integer from 1 to 4096, got 8192");
  EXPECT_EQ(error_of(one({{"family", "file_reed"}})),
            "f.json: /families/0/family: expected one of \"file_read\", \"loader\", \"replay\", \"stage\", "
            "\"checkpoint\", "
            "got \"file_reed\"");
  EXPECT_EQ(error_of(one({{"family", "stage"}, {"verify", "yes"}})),
            "f.json: /families/0/verify: expected true or false, or a non-empty list of them (a sweep), got "
            "\"yes\"");
  EXPECT_EQ(
      error_of(one({{"family", "loader"}, {"cache_state", "direct"}})),
      "f.json: /families/0/cache_state: expected one of \"cold\", \"warm\", or a non-empty list of them (a "
      "sweep), got \"direct\"");
  EXPECT_EQ(
      error_of(one({{"family", "loader"}, {"target_au", 1.5}})),
      "f.json: /families/0/target_au: expected a number from 0 to 1, or a non-empty list of them (a sweep), "
      "got 1.5");
  EXPECT_EQ(error_of(config_text(source, json::object())),
            "f.json: /families: expected a non-empty list, got {}");
  EXPECT_EQ(error_of(R"({"name": "bad name", "dataset": {"source": ")" + source +
                     R"("}, "families": [{"family": "stage"}]})"),
            "f.json: /name: expected a name of letters, digits, '.', '_' or '-', got \"bad name\"");
}

TEST_F(ConfigTest, ALoadersFrameworkAndCollateAreNamedChoices) {
  // The framework whose costs the loader pays and what its batch hands over: a value of neither
  // is refused at its pointer, naming the choices (the run exits 2 on it).
  EXPECT_EQ(
      error_of(one({{"family", "loader"}, {"framework", "tensorflow"}})),
      "f.json: /families/0/framework: expected one of \"pytorch\", \"none\", or a non-empty list of them "
      "(a sweep), got \"tensorflow\"");
  EXPECT_EQ(error_of(one({{"family", "loader"}, {"collate", {"stack", "pad"}}})),
            "f.json: /families/0/collate/1: expected one of \"stack\", \"list\", got \"pad\"");
  EXPECT_EQ(error_of(one({{"family", "loader"}, {"framework", {"pytorch", "none"}}, {"collate", "list"}})),
            "");
}

TEST_F(ConfigTest, BadUnitsNameTheValue) {
  EXPECT_EQ(error_of(one({{"family", "file_read"}, {"block_size", "4XB"}})),
            "f.json: /families/0/block_size: expected a size such as 4KiB, 1MiB or 4096 (bytes), or a "
            "non-empty list "
            "of them (a sweep), got \"4XB\"");
  EXPECT_EQ(error_of(one({{"family", "file_read"}, {"block_size", {"4KiB", "1 parsec"}}})),
            "f.json: /families/0/block_size/1: expected a size such as 4KiB, 1MiB or 4096 (bytes), got \"1 "
            "parsec\"");
  EXPECT_EQ(error_of(one({{"family", "loader"}, {"step_time", "50"}})),
            "f.json: /families/0/step_time: expected a step time such as 50ms, normal:50ms:5ms or "
            "uniform:40ms:60ms, "
            "or a non-empty list of them (a sweep), got \"50\"");
  EXPECT_TRUE(
      error_of(one({{"family", "loader"}, {"transform", "5ms/GiB"}}))
          .starts_with("f.json: /families/0/transform: expected none, a CPU cost such as 200us/sample"));
  EXPECT_TRUE(
      error_of(one({{"family", "loader"}, {"samples", "records"}}))
          .starts_with("f.json: /families/0/samples: expected files, memory, tfrecord or records:SIZE"));
}

TEST_F(ConfigTest, EmptySweepIsAnError) {
  EXPECT_EQ(error_of(one({{"family", "file_read"}, {"workers", json::array()}})),
            "f.json: /families/0/workers: expected an integer from 1 to 1024, or a non-empty list of them (a "
            "sweep); "
            "an empty sweep runs nothing, got []");
  EXPECT_EQ(error_of(config_text(source, json::array())),
            "f.json: /families: expected at least one family, got []");
}

TEST_F(ConfigTest, MissingKeysAndPaths) {
  EXPECT_EQ(error_of(R"({"name": "t", "dataset": {}, "families": [{"family": "stage"}]})"),
            "f.json: /dataset/source: expected a non-empty string (required), got nothing");
  EXPECT_EQ(error_of(config_text(source, json::array({json::object()}))),
            "f.json: /families/0/family: expected one of \"file_read\", \"loader\", \"replay\", \"stage\", "
            "\"checkpoint\" "
            "(required), "
            "got nothing");
  EXPECT_EQ(error_of(config_text("/x/y", json::array({{{"family", "stage"}}}))),
            "f.json: /dataset/source: /x/y does not exist");
  std::string file = dir / "plain-file";
  testing::write_file(file, "x");
  EXPECT_EQ(error_of(config_text(file, json::array({{{"family", "stage"}}}))),
            "f.json: /dataset/source: " + file + " is not a folder");
  // The cache must exist when a family reads it (its own path or the default's).
  json doc = json::parse(one({{"family", "file_read"}, {"path", {"source", "cache"}}}));
  doc["dataset"]["cache"] = dir / "no-cache";
  EXPECT_EQ(error_of(doc.dump()), "f.json: /dataset/cache: " + dir / "no-cache" + " does not exist");
  doc["families"][0].erase("path");
  EXPECT_EQ(error_of(doc.dump()), "");  // nothing reads the cache: it need not exist
  doc["defaults"] = {{"path", "cache"}};
  EXPECT_EQ(error_of(doc.dump()), "f.json: /dataset/cache: " + dir / "no-cache" + " does not exist");
}

TEST_F(ConfigTest, DefaultsMustSuitEachFamilyThatTakesThem) {
  std::string text = config_text(source, json::array({{{"family", "file_read"}}, {{"family", "loader"}}}),
                                 {{"defaults", {{"cache_state", "direct"}}}});
  EXPECT_EQ(error_of(text),
            "f.json: /defaults/cache_state: expected one of \"cold\", \"warm\", or a non-empty list of them "
            "(a sweep) "
            "(the default for the loader family at /families/1), got \"direct\"");
  // A family that sets the key itself does not take the default.
  text = config_text(
      source, json::array({{{"family", "file_read"}}, {{"family", "loader"}, {"cache_state", "cold"}}}),
      {{"defaults", {{"cache_state", "direct"}}}});
  EXPECT_EQ(error_of(text), "");
  // A range every family shares is the default's own range.
  text =
      config_text(source, json::array({{{"family", "file_read"}}}), {{"defaults", {{"workers", {1, 2048}}}}});
  EXPECT_EQ(error_of(text), "f.json: /defaults/workers/1: expected an integer from 1 to 1024, got 2048");
}

TEST_F(ConfigTest, ShareSaysHowRanksSplitTheSelection) {
  EXPECT_EQ(parse_config(one({{"family", "file_read"}}), "f.json").share, "per_rank");  // the default
  json doc = json::parse(one({{"family", "file_read"}}));
  doc["dataset"]["share"] = "per_node";
  EXPECT_EQ(parse_config(doc.dump(), "f.json").share, "per_node");
  doc["dataset"]["share"] = "per_host";
  EXPECT_EQ(error_of(doc.dump()),
            "f.json: /dataset/share: expected one of \"per_rank\", \"per_node\", got \"per_host\"");
}

TEST_F(ConfigTest, MalformedJsonNamesLineAndColumn) {
  std::string msg = error_of("{\n  \"name\": \"t\",\n  \"dataset\": }\n");
  EXPECT_TRUE(msg.starts_with("f.json: line 3, column 14: expected valid JSON, got ")) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  msg = error_of("");
  EXPECT_TRUE(msg.starts_with("f.json: line 1, column 1: expected valid JSON")) << msg;
}

TEST_F(ConfigTest, LoadConfigNamesAMissingFile) {
  try {
    load_config(dir / "nope.json");
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              dir / "nope.json" + ": cannot read the config: No such file or directory");
  }
  std::string path = dir / "c.json";
  testing::write_file(path, one({{"family", "file_read"}}));
  EXPECT_EQ(load_config(path).file, path);
}

TEST(ConfigFilesTest, EveryShippedConfigValidatesAndExpands) {
  TempDir dir;
  std::filesystem::create_directories(dir / "source");
  std::filesystem::create_directories(dir / "cache");
  ConfigOverrides o;
  o.source = dir / "source";
  o.cache = dir / "cache";
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(FEEDBENCH_SOURCE_DIR "/configs")) {
    if (entry.path().extension() != ".json") continue;
    ++seen;
    SCOPED_TRACE(entry.path().string());
    Config c = load_config(entry.path().string(), o);
    EXPECT_FALSE(c.description.empty()) << "every shipped config says what it is for";
    Plan plan = expand_plan(c);
    EXPECT_FALSE(plan.cases.empty());
  }
  EXPECT_GE(seen, 2);
}

TEST(ConfigFilesTest, EmbeddedSchemaIsTheFileInTheTree) {
  std::string text = testing::read_file(FEEDBENCH_SOURCE_DIR "/configs/schema/experiment.schema.json");
  EXPECT_EQ(experiment_schema(), json::parse(text)) << "re-run the build so CMake re-embeds the schema";
}

// Text that enters a config from outside its JSON (an environment variable, a --set value,
// --source/--cache) must be UTF-8, or recording the config (its dump, its SHA-256) fails later
// with an uncaught JSON exception: it is refused as bad input naming where it came from.
TEST_F(ConfigTest, RefusesTextThatIsNotUtf8FromOutsideTheFile) {
  const std::string bad = "64\x9ciB";
  try {
    parse_sets({"block_size=" + bad});
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--set block_size: expected UTF-8 text, got byte 0x9C at offset 2");
  }
  EXPECT_THROW(parse_sets({"bl\xff=4"}), InputError);  // in the key

  ::setenv("FB_CONFIG_TEST_BAD", bad.c_str(), 1);
  EXPECT_EQ(error_of(one({{"family", "file_read"}, {"block_size", "${FB_CONFIG_TEST_BAD}"}})),
            "f.json: /families/0/block_size: environment variable FB_CONFIG_TEST_BAD: expected UTF-8 "
            "text, got byte 0x9C at offset 2");
  ::unsetenv("FB_CONFIG_TEST_BAD");

  ConfigOverrides o;
  o.source = source + "\xc3";  // a truncated two-byte sequence
  EXPECT_EQ(error_of(one({{"family", "file_read"}}), o),
            "--source: expected UTF-8 text, got byte 0xC3 at offset " + std::to_string(source.size()));
  // Overlong forms and UTF-16 surrogates are not UTF-8 either; real multibyte text is.
  EXPECT_THROW(parse_sets({"name=\xc0\xaf"}), InputError);
  EXPECT_THROW(parse_sets({"name=\xed\xa0\x80"}), InputError);
  EXPECT_EQ(parse_sets({"name=caf\xc3\xa9 \xf0\x9f\x93\x80"})["name"], "caf\xc3\xa9 \xf0\x9f\x93\x80");
}

}  // namespace
}  // namespace feedbench

namespace feedbench {
namespace {

// --set sweeps any parameter as --set workers=[1,2] does: a bracketed list of bare words is a
// list of strings (each element JSON where it parses as JSON), so path, engine, block_size and
// cache_state sweep from the command line without JSON quoting.
TEST(ParseSetsTest, BracketedBareWordsAreASweep) {
  EXPECT_EQ(parse_sets({"path=[source,cache]"})["path"], json({"source", "cache"}));
  EXPECT_EQ(parse_sets({"block_size=[4KiB, 64KiB]"})["block_size"], json({"4KiB", "64KiB"}));
  EXPECT_EQ(parse_sets({"engine=[psync]"})["engine"], json({"psync"}));
  EXPECT_EQ(parse_sets({"workers=[1,2]"})["workers"], json({1, 2}));
  EXPECT_EQ(parse_sets({"workers=[1, 2, 4]"})["workers"], json({1, 2, 4}));
  EXPECT_EQ(parse_sets({"path=[\"source\",\"cache\"]"})["path"], json({"source", "cache"}));
  EXPECT_EQ(parse_sets({"x=[1,cold]"})["x"], json({1, "cold"}));  // each element on its own
  EXPECT_EQ(parse_sets({"step_time=20ms"})["step_time"], "20ms");
  // An empty element is refused where it was given (an empty list is JSON: the config refuses it).
  EXPECT_THROW(parse_sets({"path=[source,]"}), InputError);
  try {
    parse_sets({"path=[source,,cache]"});
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "--set path: expected a list such as [source,cache], got an empty element in '[source,,cache]'");
  }
}

// The plan sweeps what --set gave as a list of bare words, in every family that has it.
TEST(ParseSetsTest, ASweptPathMakesCasesOnBothPaths) {
  TempDir dir;
  const std::string source = dir.path() + "/src", cache = dir.path() + "/cache";
  std::filesystem::create_directories(source);
  std::filesystem::create_directories(cache);
  json config = {{"name", "t"},
                 {"dataset", {{"source", source}, {"cache", cache}}},
                 {"families", {{{"family", "file_read"}, {"path", "source"}, {"workers", 1}}}}};
  ConfigOverrides o;
  o.set = parse_sets({"path=[source,cache]", "cache_state=[cold,warm]"});
  Plan plan = expand_plan(parse_config(config.dump(), "t.json", o));
  ASSERT_EQ(plan.cases.size(), 4u);
  std::set<std::string> seen;
  for (const Case& c : plan.cases) seen.insert(*c.path() + "/" + c.cache_state());
  EXPECT_EQ(seen, (std::set<std::string>{"source/cold", "source/warm", "cache/cold", "cache/warm"}));
}

}  // namespace
}  // namespace feedbench
