// The result document: round trip of every field, errors naming file and JSON pointer, and
// atomic saving.
#include "feedbench/results/result.h"

#include <cmath>
#include <filesystem>
#include <random>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "benchmarks/collecting_reporter.h"
#include "feedbench/base/error.h"
#include "feedbench/plan/config.h"
#include "feedbench/plan/plan.h"
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
  e.cache = {{"requested", "cold"}, {"residency_before", 0.003}, {"achieved", true}, {"method", "cachestat"}};
  Histogram h;
  for (std::uint64_t v : {1000u, 2000u, 40000u, 41000u, 900000u}) h.record(v + rep);
  e.latency = h;
  e.extra = {{"bytes", 1 << 20}, {"verdict", "ok"}};
  return e;
}

ResultDocument full_document() {
  ResultDocument doc;
  doc.context = {{"date", "2024-05-01T12:00:00+00:00"},
                 {"host_name", "vm"},
                 {"num_cpus", 2},
                 {"mhz_per_cpu", 2400},
                 {"caches", json::array()},
                 {"load_avg", {0.5, 0.4, 0.3}},
                 {"library_build_type", "release"},
                 {"library_version", "1.7.1"}};
  doc.tool = {{"name", "feedbench"},         {"version", "0.1.0"},       {"git_commit", "abc"},
              {"git_dirty", false},          {"compiler", "GNU 12.2.0"}, {"build_type", "Debug"},
              {"benchmark_version", "1.7.1"}};
  doc.command_line = {"feedbench", "run", "--config", "configs/demo.json"};
  doc.environment_variables = {{"BENCHMARK_FILTER", "file_read"}, {"DATA", "/var/tmp/d"}};
  doc.config = {
      {"file", "configs/demo.json"}, {"name", "demo"}, {"sha256", "00ff"}, {"resolved", {{"name", "demo"}}}};
  doc.dataset = {{"source", {{"root", "/var/tmp/d"}, {"files", 10}, {"bytes", 1000}, {"fingerprint", "aa"}}}};
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
  for (const char* key : {"family_index", "per_family_instance_index", "repetitions", "repetition_index",
                          "threads", "iterations"})
    EXPECT_TRUE(e[key].is_number_integer()) << key;
  EXPECT_TRUE(e["real_time"].is_number_float());
  EXPECT_DOUBLE_EQ(e["bytes_per_second"].get<double>(), 8.25e8);  // counters flattened
  EXPECT_EQ(e["case"], full_document().benchmarks[0].case_name);
  EXPECT_EQ(e["latency_hist"]["encoding"], "zlib-varint-runs");
  EXPECT_EQ(e["latency_hist"]["count"], 5);
  EXPECT_FALSE(e.contains("latency"));  // what a revision-1 reader would parse as bins
  EXPECT_EQ(j["schema"], "feedbench-result/1");
  EXPECT_EQ(j["schema_revision"], 2);
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
            {"benchmarks",
             {{{"name", "BM_x/iterations:1"},
               {"run_name", "BM_x/iterations:1"},
               {"run_type", "iteration"},
               {"iterations", 1},
               {"real_time", 3},
               {"cpu_time", 2.5},
               {"time_unit", "ns"},
               {"items_per_second", 7.0}}}}};
  ResultDocument doc = ResultDocument::from_json(j, "gb.json");
  ASSERT_EQ(doc.benchmarks.size(), 1u);
  EXPECT_EQ(doc.benchmarks[0].case_name, "BM_x/iterations:1");
  EXPECT_EQ(doc.benchmarks[0].counter("items_per_second"), 7.0);
  EXPECT_FALSE(doc.benchmarks[0].latency);
}

// What revision 1 wrote for an entry's histogram: bins as [lower, upper, count] beside
// percentiles in microseconds.
json revision_one_latency(const Histogram& h) {
  json j = h.to_json("ns");
  j["p50_us"] = h.quantile(0.5) / 1000.0;
  j["p90_us"] = h.quantile(0.9) / 1000.0;
  j["p99_us"] = h.quantile(0.99) / 1000.0;
  j["p999_us"] = h.quantile(0.999) / 1000.0;
  j["max_us"] = double(h.max()) / 1000.0;
  return j;
}

// Result files written before revision 2 (baselines kept in git) are read as they were.
TEST(ResultTest, ReadsRevisionOneFiles) {
  const ResultDocument doc = full_document();
  nlohmann::ordered_json j = doc.to_ordered_json();  // params keep their order, as in a file
  j.erase("schema_revision");
  for (std::size_t i = 0; i < doc.benchmarks.size(); ++i) {
    nlohmann::ordered_json& e = j["benchmarks"][i];
    e.erase("latency_hist");
    e["latency"] = doc.benchmarks[i].latency
                       ? nlohmann::ordered_json(revision_one_latency(*doc.benchmarks[i].latency))
                       : nlohmann::ordered_json(nullptr);
  }
  ResultDocument back = ResultDocument::from_json(j, "r1.json");
  EXPECT_TRUE(back == doc);
  ASSERT_TRUE(back.benchmarks[0].latency);
  EXPECT_EQ(back.benchmarks[0].latency->to_json(), doc.benchmarks[0].latency->to_json());
  // Saved again, it is revision 2 with the same content.
  EXPECT_TRUE(ResultDocument::parse(back.dump(), "r2.json") == doc);
  nlohmann::ordered_json bad = j;
  bad["benchmarks"][0]["latency"]["bins"][0][2] = 7;
  EXPECT_THROW(ResultDocument::from_json(bad, "r1.json"), InputError);
}

TEST(ResultTest, OneEntryPerLine) {
  const ResultDocument doc = full_document();
  const std::string text = doc.dump();
  std::size_t lines = 0, entry_lines = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line); ++lines)
    if (line.rfind("    {\"name\":", 0) == 0) ++entry_lines;
  EXPECT_EQ(entry_lines, doc.benchmarks.size()) << text;
  EXPECT_LT(lines, 80u) << text;
  EXPECT_TRUE(ResultDocument::parse(text, "r.json") == doc);
  ResultDocument empty = doc;
  empty.benchmarks.clear();
  EXPECT_TRUE(ResultDocument::parse(empty.dump(), "r.json") == empty);
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

TEST(ResultTest, ABadRevisionIsRefused) {
  EXPECT_EQ(
      error_of(
          R"({"schema": "feedbench-result/1", "schema_revision": "2", "context": {}, "benchmarks": []})"),
      "x.json: /schema_revision: expected an integer of at least 1, got string \"2\"");
  // A later revision only adds keys this reader ignores.
  EXPECT_EQ(
      error_of(R"({"schema": "feedbench-result/1", "schema_revision": 3, "context": {}, "benchmarks": []})"),
      "(no error)");
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

// The family-specific `extra` keys the reporters and diff read ("judged", "verdict", ...) are
// checked on load like the entry's own keys: a hostile type is bad input naming its pointer,
// not a json type_error from deep inside a reporter (exit 1, no place named).
TEST(ResultTest, ExtraKeysTheReadersUseHaveTheirTypesChecked) {
  json j = full_document().to_json();
  auto msg = [&](const char* key, const json& value) {
    json doc = j;
    doc["benchmarks"][0]["extra"][key] = value;
    try {
      ResultDocument::from_json(doc, "r.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(msg("judged", "no"),
            "r.json: /benchmarks/0/extra/judged: expected true or false, got string \"no\"");
  EXPECT_EQ(msg("cpu_bound", 1),
            "r.json: /benchmarks/0/extra/cpu_bound: expected true or false, got number 1");
  EXPECT_NE(msg("verdict", 3).find("/benchmarks/0/extra/verdict: expected a string"), std::string::npos);
  EXPECT_NE(msg("bytes_read", "x").find("/benchmarks/0/extra/bytes_read: expected a number"),
            std::string::npos);
  EXPECT_NE(msg("epochs", json::object()).find("/benchmarks/0/extra/epochs: expected an array"),
            std::string::npos);
  // Right types, and keys no reader uses, load as before.
  EXPECT_EQ(msg("judged", false), "(no error)");
  EXPECT_EQ(msg("some_future_key", "anything"), "(no error)");
}

// A counter of the table (bytes_per_second, au, ...) that is not a number is bad input
// naming its pointer, not a counter quietly dropped (diff would then judge without it). Null
// is what a NaN or an infinity is written as: read as absent, and diff names it missing.
// Keys not in the table stay what they were: a newer writer's additions, ignored.
TEST(ResultTest, AKnownCounterThatIsNotANumberIsRefusedNamingItsPointer) {
  json j = full_document().to_json();
  auto msg = [&](const char* key, const json& value, ResultDocument* out = nullptr) {
    json doc = j;
    doc["benchmarks"][1][key] = value;
    try {
      ResultDocument d = ResultDocument::from_json(doc, "r.json");
      if (out) *out = d;
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(msg("bytes_per_second", "fast"),
            "r.json: /benchmarks/1/bytes_per_second: expected a number or null, got string \"fast\"");
  EXPECT_EQ(msg("au", true), "r.json: /benchmarks/1/au: expected a number or null, got boolean true");
  EXPECT_NE(msg("steps", json::array()).find("/benchmarks/1/steps: expected a number or null"),
            std::string::npos);
  ResultDocument d;
  EXPECT_EQ(msg("bytes_per_second", nullptr, &d), "(no error)");
  EXPECT_FALSE(d.benchmarks[1].counter("bytes_per_second"));
  EXPECT_EQ(msg("some_future_key", "anything"), "(no error)");
}

// parse() reads each entry as the parser completes it and drops it (a large result is never a
// whole DOM in memory): what it reads, and the first error it names, are from_json's.
TEST(ResultTest, ParsingEntriesAsTheyComeReadsWhatTheDocumentHolds) {
  const json j = full_document().to_json();
  auto both = [&](const json& doc) {
    std::string from_dom = "(no error)", from_text = "(no error)";
    try {
      ResultDocument::from_json(doc, "x.json");
    } catch (const InputError& e) {
      from_dom = e.what();
    }
    from_text = error_of(doc.dump());
    EXPECT_EQ(from_text, from_dom) << doc.dump().substr(0, 200);
    return from_text;
  };
  EXPECT_EQ(both(j), "(no error)");
  json a = j;
  a["benchmarks"][1]["real_time"] = "fast";
  a["benchmarks"][3]["real_time"] = "slow";
  EXPECT_EQ(both(a), "x.json: /benchmarks/1/real_time: expected a number, got string \"fast\"");
  json b = j;
  b["benchmarks"][2] = 5;
  EXPECT_EQ(both(b), "x.json: /benchmarks/2: expected an object, got number 5");
  json c = a;  // a bad entry, and before it in reading order a bad member: the member is named
  c["schema"] = "other/1";
  EXPECT_NE(both(c).find("x.json: /schema: expected"), std::string::npos);
  json d = a;
  d.erase("context");
  EXPECT_NE(both(d).find("x.json: /context: missing"), std::string::npos);
  json e = j;
  e["benchmarks"] = {{"not", "an array"}};
  EXPECT_EQ(both(e), "x.json: /benchmarks: expected an array, got object {\"not\":\"an array\"}");
  json f = j;
  f["benchmarks"][0]["params"]["nested"] = {{"benchmarks", json::array({5})}};  // not the top level
  EXPECT_EQ(both(f), "(no error)");
  // Read from text, every field arrives, in the file's order.
  const ResultDocument doc = full_document();
  EXPECT_TRUE(ResultDocument::parse(doc.dump(), "x.json") == doc);
  // A repeated key: the last one counts, as in a DOM.
  const std::string head = R"({"schema": "feedbench-result/1", "context": {}, )";
  EXPECT_EQ(error_of(head + R"("benchmarks": [5], "benchmarks": []})"), "(no error)");
  EXPECT_EQ(error_of(head + R"("benchmarks": [], "benchmarks": [{"name": "a", "real_time": 1}, 5]})"),
            "x.json: /benchmarks/1: expected an object, got number 5");
  const ResultDocument last = ResultDocument::parse(
      head +
          R"("benchmarks": [{"name": "a", "real_time": 1}], "benchmarks": [{"name": "b", "real_time": 2}]})",
      "x.json");
  ASSERT_EQ(last.benchmarks.size(), 1u);
  EXPECT_EQ(last.benchmarks[0].name, "b");
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

// A result the size of a real qualify run, made the way `feedbench run` makes it: Google
// Benchmark's runs of 276 cases like configs/qualify-instance.json's (3 repetitions each, then
// the library's four aggregates) through the CollectingReporter, joined with the RunLog's
// records. Every repetition has the counters, cache state, extra and a latency histogram of
// 4000 reads spread as a loaded device spreads them (log-normal around 200 us, 1% in a tail to
// 50 ms): about 500 non-empty bins each, which is what made that run's file 33.8 MB.
ResultDocument qualify_sized_document() {
  TempDir data;  // the config's data set roots must exist; nothing is read from them
  ConfigOverrides roots;
  roots.source = data.path();
  roots.cache = data.path();
  const Config config =
      load_config(std::string(FEEDBENCH_SOURCE_DIR) + "/configs/qualify-instance.json", roots);
  const Plan plan = expand_plan(config);
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> typical(std::log(200e3), 0.45);
  std::uniform_real_distribution<double> tail(1e6, 50e6);
  std::uniform_real_distribution<double> unit(0, 1);
  // A few distinct histograms, used in turn: recording them all would make the test slow.
  std::vector<Histogram> spreads(7);
  for (Histogram& h : spreads)
    for (int i = 0; i < 4000; ++i) h.record(std::uint64_t(unit(rng) < 0.01 ? tail(rng) : typical(rng)));
  auto counters = [&](benchmark::BenchmarkReporter::Run& r) {
    for (const char* k :
         {"bytes_per_second", "items_per_second", "files_per_second", "lat_p50_us", "lat_p90_us",
          "lat_p99_us", "lat_p999_us", "lat_max_us", "residency_before", "cpu_util"})
      r.counters[k] = benchmark::Counter(1e6 * unit(rng));
  };

  RunLog log;
  CollectingReporter reporter(nullptr, log);
  const int reps = 3;
  // The plan has about as many cases as that run; made up to exactly 276.
  for (std::size_t i = 0; i < 276; ++i) {
    const Case& c = plan.cases[i % plan.cases.size()];
    const std::string name = c.name() + (i < plan.cases.size() ? "" : "/copy:" + std::to_string(i));
    benchmark::BenchmarkReporter::Run run;
    run.run_name.function_name = name;
    run.run_name.iterations = "iterations:1";
    run.run_name.repetitions = "repeats:3";
    run.run_name.time_type = "manual_time";
    run.family_index = std::int64_t(i);
    run.iterations = 1;
    run.threads = 1;
    run.repetitions = reps;
    run.time_unit = benchmark::kMillisecond;
    std::vector<benchmark::BenchmarkReporter::Run> repetitions, aggregates;
    for (int rep = 0; rep < reps; ++rep) {
      CaseRecord record;
      record.case_name = name;
      record.params = c.params;
      record.cache = {{"requested", "cold"},
                      {"residency_before", unit(rng) / 100},
                      {"achieved", true},
                      {"method", "cachestat"}};
      record.latency = spreads[(i * reps + std::size_t(rep)) % spreads.size()];
      record.extra = {{"bytes", 123456789012},
                      {"reads", 4000},
                      {"files", 4096},
                      {"cpu_seconds", unit(rng)},
                      {"latency_recorded", true},
                      {"round_complete", true},
                      {"bytes_planned", 123456789012},
                      {"bytes_read", 123456789012},
                      {"noatime", true}};
      log.add(std::move(record));
      benchmark::BenchmarkReporter::Run r = run;
      r.run_type = benchmark::BenchmarkReporter::Run::RT_Iteration;
      r.repetition_index = rep;
      r.real_accumulated_time = 1 + unit(rng);
      r.cpu_accumulated_time = unit(rng) / 100;
      counters(r);
      repetitions.push_back(r);
    }
    for (const char* agg : {"mean", "median", "stddev", "cv"}) {
      benchmark::BenchmarkReporter::Run a = run;
      a.run_type = benchmark::BenchmarkReporter::Run::RT_Aggregate;
      a.aggregate_name = agg;
      a.aggregate_unit = std::string(agg) == "cv" ? benchmark::kPercentage : benchmark::kTime;
      a.real_accumulated_time = unit(rng);
      a.cpu_accumulated_time = unit(rng) / 100;
      counters(a);
      aggregates.push_back(a);
    }
    // As Google Benchmark 1.7 reports one benchmark: its repetitions, then its aggregates.
    reporter.ReportRuns(repetitions);
    reporter.ReportRuns(aggregates);
  }
  ResultDocument doc = full_document();
  doc.config = {{"file", "configs/qualify-instance.json"},
                {"name", config.name},
                {"sha256", config.sha256},
                {"resolved", config.resolved},
                {"dropped", plan.dropped}};
  doc.benchmarks = reporter.take_entries();
  return doc;
}

// Result files are kept in git: a qualify run must stay small whatever its histograms hold.
TEST(ResultSizeTest, QualifySizedResultFitsInTwoMegabytes) {
  TempDir dir;
  const ResultDocument doc = qualify_sized_document();
  std::set<std::string> cases;
  for (const BenchmarkEntry& e : doc.benchmarks) {
    cases.insert(e.case_name);
    EXPECT_EQ(e.run_type, "iteration") << "aggregates folded excluded repetitions too: not kept";
    EXPECT_TRUE(e.latency) << e.name;
  }
  ASSERT_EQ(cases.size(), 276u);
  ASSERT_EQ(doc.benchmarks.size(), 276u * 3);
  const std::string path = dir / "qualify.json";
  doc.save(path);
  const auto size = std::filesystem::file_size(path);
  std::printf("qualify-sized result (%zu cases, %zu entries): %ju bytes\n", cases.size(),
              doc.benchmarks.size(), std::uintmax_t(size));
  // To look at it, or feed it to Google Benchmark's compare.py.
  if (const char* keep = std::getenv("FEEDBENCH_KEEP_QUALIFY_RESULT"))
    std::filesystem::copy_file(path, keep, std::filesystem::copy_options::overwrite_existing);
  EXPECT_LT(size, 2u * 1000 * 1000);
  // Smaller, not poorer: it reads back to the same document.
  EXPECT_TRUE(ResultDocument::load(path) == doc);
}

}  // namespace
}  // namespace feedbench
