// The result document: round trip of every field, errors naming file and JSON pointer, and
// atomic saving.
#include "feedbench/result.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "feedbench/error.h"
#include "test_util.h"

namespace feedbench {
namespace {

using nlohmann::json;
using testing::TempDir;

BenchmarkEntry iteration(int rep) {
  BenchmarkEntry e;
  e.case_name = "file_read/pattern:sequential/bs:1048576/engine:psync/workers:2/state:cold/path:source";
  e.name = e.case_name + "/iterations:1/repeats:3/manual_time";
  e.run_name = e.name;
  e.run_type = "iteration";
  e.family_index = 4;
  e.per_family_instance_index = 0;
  e.repetitions = 3;
  e.repetition_index = rep;
  e.threads = 1;
  e.iterations = 1;
  e.real_time = 12.5 + rep;
  e.cpu_time = 0.25;
  e.time_unit = "ms";
  e.counters = {{"bytes_per_second", 8.25e8 + rep}, {"lat_p50_us", 41.5}, {"residency_before", 0.003}};
  e.label = "cold NOT achieved: 3.0% resident";
  e.params = nlohmann::ordered_json::object();
  e.params["family"] = "file_read";  // not alphabetical: order must survive save/load
  e.params["pattern"] = "sequential";
  e.params["block_size"] = 1048576;
  e.params["workers"] = 2;
  e.params["cache_state"] = "cold";
  e.params["path"] = "source";
  e.cache = {{"requested", "cold"}, {"residency_before", 0.003}, {"achieved", true},
             {"method", "cachestat"}};
  Histogram h;
  for (std::uint64_t v : {1000u, 2000u, 40000u, 41000u, 900000u}) h.record(v + rep);
  e.latency = h;
  e.extra = {{"bytes", 1 << 20}, {"verdict", "ok"}};
  return e;
}

ResultDocument full_document() {
  ResultDocument doc;
  doc.context = {{"date", "2024-05-01T12:00:00+00:00"}, {"host_name", "vm"}, {"num_cpus", 2},
                 {"mhz_per_cpu", 2400}, {"caches", json::array()}, {"load_avg", {0.5, 0.4, 0.3}},
                 {"library_build_type", "release"}, {"library_version", "1.7.1"}};
  doc.tool = {{"name", "feedbench"}, {"version", "0.1.0"}, {"git_commit", "abc"},
              {"git_dirty", false}, {"compiler", "GNU 12.2.0"}, {"build_type", "Debug"},
              {"benchmark_version", "1.7.1"}};
  doc.command_line = {"feedbench", "run", "--config", "configs/demo.json"};
  doc.environment_variables = {{"BENCHMARK_FILTER", "file_read"}, {"DATA", "/var/tmp/d"}};
  doc.config = {{"file", "configs/demo.json"}, {"name", "demo"}, {"sha256", "00ff"},
                {"resolved", {{"name", "demo"}}}};
  doc.dataset = {{"source", {{"root", "/var/tmp/d"}, {"files", 10}, {"bytes", 1000},
                             {"fingerprint", "aa"}}}};
  doc.environment = {{"host", {{"hostname", "vm"}}}, {"paths", {{"source", {{"fs_type", "ext4"}}}}}};
  doc.summary = {{"skipped", json::array()}};
  for (int rep = 0; rep < 3; ++rep) doc.benchmarks.push_back(iteration(rep));
  BenchmarkEntry agg = iteration(0);
  agg.name = agg.run_name + "_median";
  agg.run_type = "aggregate";
  agg.aggregate_name = "median";
  agg.repetition_index = -1;
  agg.label.clear();
  agg.cache = nullptr;
  agg.latency.reset();
  agg.extra = json::object();
  doc.benchmarks.push_back(agg);
  BenchmarkEntry failed = iteration(0);
  failed.case_name = "file_read/pattern:random/bs:4096/engine:libaio/qd:32/workers:1/state:direct/path:cache";
  failed.name = failed.run_name = failed.case_name + "/iterations:1/repeats:3/manual_time";
  failed.error_occurred = true;
  failed.error_message = "O_DIRECT refused by tmpfs";
  failed.counters.clear();
  failed.real_time = failed.cpu_time = 0;
  failed.latency.reset();
  doc.benchmarks.push_back(failed);
  return doc;
}

TEST(ResultTest, RoundTripKeepsEveryField) {
  const ResultDocument doc = full_document();
  ResultDocument back = ResultDocument::from_json(doc.to_ordered_json(), "x.json");
  EXPECT_TRUE(back == doc);
  EXPECT_EQ(back.benchmarks[0].params.dump(), doc.benchmarks[0].params.dump());  // order kept
  ASSERT_TRUE(back.benchmarks[0].latency);
  EXPECT_EQ(back.benchmarks[0].latency->count(), 5u);
  EXPECT_EQ(back.benchmarks[3].aggregate_name, "median");
  EXPECT_EQ(back.benchmarks[4].error_message, "O_DIRECT refused by tmpfs");

  // Through plain json too (params then come back in key order, same content).
  ResultDocument plain = ResultDocument::from_json(doc.to_json(), "x.json");
  EXPECT_EQ(plain.to_json(), doc.to_json());
}

TEST(ResultTest, SaveAndLoadRoundTrip) {
  TempDir dir;
  const ResultDocument doc = full_document();
  const std::string path = dir / "nested/folder/r.json";
  doc.save(path);
  ResultDocument back = ResultDocument::load(path);
  EXPECT_TRUE(back == doc);
  EXPECT_EQ(back.benchmarks[0].params.begin().key(), "family");
}

TEST(ResultTest, KeepsGoogleBenchmarksLayout) {
  json j = full_document().to_json();
  ASSERT_TRUE(j["context"].is_object());
  ASSERT_TRUE(j["benchmarks"].is_array());
  const json& e = j["benchmarks"][0];
  for (const char* key : {"name", "run_name", "run_type", "time_unit"})
    EXPECT_TRUE(e[key].is_string()) << key;
  for (const char* key : {"family_index", "per_family_instance_index", "repetitions",
                          "repetition_index", "threads", "iterations"})
    EXPECT_TRUE(e[key].is_number_integer()) << key;
  EXPECT_TRUE(e["real_time"].is_number_float());
  EXPECT_DOUBLE_EQ(e["bytes_per_second"].get<double>(), 8.25e8);  // counters flattened
  EXPECT_EQ(e["case"], full_document().benchmarks[0].case_name);
  EXPECT_TRUE(e["latency"]["bins"].is_array());
  EXPECT_GT(e["latency"]["p99_us"].get<double>(), 800.0);
  EXPECT_FALSE(e.contains("error_occurred"));  // only when set, as Google Benchmark does
  const json& agg = j["benchmarks"][3];
  EXPECT_FALSE(agg.contains("repetition_index"));
  EXPECT_EQ(agg["aggregate_name"], "median");
  EXPECT_EQ(agg["aggregate_unit"], "time");
  EXPECT_EQ(j["benchmarks"][4]["error_occurred"], true);
  // Ordered on disk as Google Benchmark writes it: schema first, name first.
  auto o = full_document().to_ordered_json();
  EXPECT_EQ(o.begin().key(), "schema");
  EXPECT_EQ(o["benchmarks"][0].begin().key(), "name");
}

TEST(ResultTest, ReadsAPlainGoogleBenchmarkFileWithSchemaAdded) {
  json j = {{"schema", kResultSchema},
            {"context", {{"date", "x"}}},
            {"benchmarks", {{{"name", "BM_x/iterations:1"}, {"run_name", "BM_x/iterations:1"},
                             {"run_type", "iteration"}, {"iterations", 1}, {"real_time", 3},
                             {"cpu_time", 2.5}, {"time_unit", "ns"}, {"items_per_second", 7.0}}}}};
  ResultDocument doc = ResultDocument::from_json(j, "gb.json");
  ASSERT_EQ(doc.benchmarks.size(), 1u);
  EXPECT_EQ(doc.benchmarks[0].case_name, "BM_x/iterations:1");
  EXPECT_EQ(doc.benchmarks[0].counter("items_per_second"), 7.0);
  EXPECT_FALSE(doc.benchmarks[0].latency);
}

std::string error_of(const std::string& text) {
  try {
    ResultDocument::parse(text, "x.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ResultTest, MalformedJsonNamesLineAndColumn) {
  std::string msg = error_of("{\n  \"schema\": \"feedbench-result/1\",\n  \"context\": {,}\n}");
  EXPECT_NE(msg.find("x.json: malformed JSON at line 3, column 15"), std::string::npos) << msg;
  EXPECT_NE(error_of("").find("x.json: malformed JSON at line 1"), std::string::npos);
}

TEST(ResultTest, WrongOrMissingSchemaIsRefused) {
  EXPECT_EQ(error_of(R"({"schema": "feedbench-result/2", "context": {}, "benchmarks": []})"),
            "x.json: /schema: expected \"feedbench-result/1\", got \"feedbench-result/2\"");
  EXPECT_NE(error_of(R"({"context": {}, "benchmarks": []})").find("x.json: /schema: missing"),
            std::string::npos);
}

TEST(ResultTest, WrongTypesNameTheirPointer) {
  json j = full_document().to_json();
  auto msg = [&](const json& doc) {
    try {
      ResultDocument::from_json(doc, "r.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  json a = j;
  a["benchmarks"][1]["real_time"] = "fast";
  EXPECT_EQ(msg(a), "r.json: /benchmarks/1/real_time: expected a number, got string \"fast\"");
  json b = j;
  b["benchmarks"][0]["iterations"] = 1.5;
  EXPECT_NE(msg(b).find("r.json: /benchmarks/0/iterations: expected an integer"), std::string::npos);
  json c = j;
  c["command_line"][2] = 3;
  EXPECT_NE(msg(c).find("r.json: /command_line/2: expected a string"), std::string::npos);
  json d = j;
  d["benchmarks"][2]["run_type"] = "other";
  EXPECT_NE(msg(d).find("/benchmarks/2/run_type: expected \"iteration\" or \"aggregate\""),
            std::string::npos);
  json e = j;
  e["benchmarks"][0]["cache"] = 5;
  EXPECT_NE(msg(e).find("/benchmarks/0/cache: expected an object or null"), std::string::npos);
  json f = j;
  f.erase("benchmarks");
  EXPECT_NE(msg(f).find("r.json: /benchmarks: missing"), std::string::npos);
  json g = j;
  g["environment_variables"]["X"] = 1;
  EXPECT_NE(msg(g).find("/environment_variables/X: expected a string"), std::string::npos);
}

TEST(ResultTest, LoadOfAnUnreadableFileNamesIt) {
  TempDir dir;
  try {
    ResultDocument::load(dir / "missing.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(dir / "missing.json"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ResultDocument::load(dir.path()), InputError);  // a folder
}

TEST(ResultTest, SaveReplacesAWholeFileAndLeavesNoTemporary) {
  TempDir dir;
  const std::string path = dir / "r.json";
  testing::write_file(path, std::string(100000, 'x'));  // longer than the new file
  full_document().save(path);
  std::string text = testing::read_file(path);
  EXPECT_EQ(text.find('x' + std::string(10, 'x')), std::string::npos);
  EXPECT_NO_THROW(ResultDocument::load(path));
  int entries = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir.path())) {
    ++entries;
    EXPECT_EQ(f.path().filename(), "r.json");
  }
  EXPECT_EQ(entries, 1);
}

TEST(ResultTest, WriteFileAtomicallyFailsCleanlyWhereItCannotWrite) {
  TempDir dir;
  testing::write_file(dir / "file", "x");
  // A parent that is a file: cannot create the folder.
  EXPECT_THROW(write_file_atomically(dir / "file/sub/r.json", "{}"), RunError);
  EXPECT_EQ(testing::read_file(dir / "file"), "x");
}

}  // namespace
}  // namespace feedbench
