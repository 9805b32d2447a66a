#include "reporters/result_builder.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "test_util.h"

namespace feedbench {
namespace {

using json = nlohmann::json;
using testing::TempDir;

// Three ranks on two hosts: ranks 0 and 2 on "a", rank 1 on "b".
class FakeCluster final : public Cluster {
 public:
  int rank() const override { return 0; }
  int size() const override { return 3; }
  int host_index() const override { return 0; }
  int hosts() const override { return 2; }
  const std::string& host_name() const override { return names_[0]; }
  const std::vector<int>& ranks_on_host() const override { return on_host_; }
  const std::vector<int>& host_of_rank() const override { return host_of_rank_; }
  const std::vector<std::string>& host_names() const override { return names_; }
  std::string implementation() const override { return "fake MPI"; }
  void barrier() override {}
  std::vector<unsigned char> all_gather_bytes(const void*, std::size_t) override { return {}; }
  void abort(int) override {}

 private:
  std::vector<std::string> names_{"a", "b"};
  std::vector<int> on_host_{0, 2};
  std::vector<int> host_of_rank_{0, 1, 0};
};

// One repetition of a file_read case; skipped with `error` when it is not "".
BenchmarkEntry entry(const std::string& path, const std::string& error = "", int repetition = 0) {
  BenchmarkEntry e;
  e.case_name = "file_read/pattern:sequential/path:" + path;
  e.name = e.run_name = e.case_name + "/iterations:1/repeats:1/manual_time";
  e.run_type = "iteration";
  e.repetition_index = repetition;
  e.params = nlohmann::ordered_json::object();
  e.params["family"] = "file_read";
  e.params["pattern"] = "sequential";
  e.params["path"] = path;
  if (error.empty()) {
    e.counters["bytes_per_second"] = 100e6;
    e.cache = {{"requested", "cold"}, {"residency_before", 0.0}, {"achieved", true}};
  } else {
    e.error_occurred = true;
    e.error_message = error;
  }
  return e;
}

class ResultBuilderTest : public ::testing::Test {
 protected:
  TempDir dir;
  Config config;
  Plan plan;
  FileSet source, cache;

  void SetUp() override {
    std::filesystem::create_directories(dir / "source");
    std::filesystem::create_directories(dir / "cache");
    const json doc = {{"name", "builder"},
                      {"dataset",
                       {{"source", dir / "source"},
                        {"cache", dir / "cache"},
                        {"include", json::array({"*.bin"})},
                        {"throttle", {{"source", "40MiB/s"}}}}},
                      {"defaults", {{"seed", 7}}},
                      {"families", json::array({{{"family", "file_read"}}})}};
    config = parse_config(doc.dump(), "b.json");
    plan.dropped = {"libaio reads only with O_DIRECT"};
    source = FileSet(dir / "source");
    for (int i = 0; i < 5; ++i)
      source.add("f" + std::to_string(i) + ".bin", std::uint64_t(1000 * (i + 1)), 1);
    source.sort();
    cache = FileSet(dir / "cache");
    cache.add("f0.bin", 1000, 1);
    cache.sort();
  }

  // The facts of a run of one measured source case, on one process, with no cache scanned.
  RunFacts facts() {
    RunFacts f;
    f.context = {{"host_name", "h"}, {"library_version", "1.7.1"}};
    f.benchmarks = {entry("source")};
    f.tool = {{"version", "0.1.0"}};
    f.command_line = {"feedbench", "run", "--config", "b.json"};
    f.environment_variables = {{"FEEDBENCH_X", "1"}};
    f.config = &config;
    f.plan = &plan;
    f.source = &source;
    f.environment = {{"host", {{"kernel", "k"}}}, {"paths", {{"source", {{"fs_type", "ext4"}}}}}};
    f.load = {{"before", 0.5}};
    f.sizing = sizing(15000, 1u << 30);
    return f;
  }
};

TEST_F(ResultBuilderTest, CopiesWhatTheRunGatheredIntoItsFields) {
  const ResultDocument doc = build_result(facts());
  EXPECT_EQ(doc.context["host_name"], "h");
  ASSERT_EQ(doc.benchmarks.size(), 1u);
  EXPECT_EQ(doc.benchmarks[0].case_name, "file_read/pattern:sequential/path:source");
  EXPECT_EQ(doc.tool["version"], "0.1.0");
  EXPECT_EQ(doc.command_line.back(), "b.json");
  EXPECT_EQ(doc.environment_variables.at("FEEDBENCH_X"), "1");
}

TEST_F(ResultBuilderTest, ConfigRecordsSelectionSeedDroppedAndBudget) {
  RunFacts f = facts();
  const ResultDocument plain = build_result(facts());
  EXPECT_EQ(plain.config["file"], "b.json");
  EXPECT_EQ(plain.config["name"], "builder");
  EXPECT_EQ(plain.config["sha256"], config.sha256);
  EXPECT_EQ(plain.config["seed"], 7);
  EXPECT_EQ(plain.config["dropped"], json::array({"libaio reads only with O_DIRECT"}));
  EXPECT_EQ(plain.config["selection"], json({{"include", {"*.bin"}}, {"from", "config"}}));
  EXPECT_FALSE(plain.config.contains("budget"));

  config.include_from_cache = true;
  f.budget = {{"budget_s", 60}};
  const ResultDocument budgeted = build_result(std::move(f));
  EXPECT_EQ(budgeted.config["selection"]["from"], "cache manifest");
  EXPECT_EQ(budgeted.config["budget"]["budget_s"], 60);
}

TEST_F(ResultBuilderTest, DatasetDescribesEachSelectionAndTheCacheChecks) {
  RunFacts f = facts();
  f.source_content = "abc123";
  f.cache = &cache;
  f.manifest = {{"label", "val"}};
  f.verification = {{"ok", false}, {"problems", {"missing: f1.bin"}}};
  f.allow_unverified_cache = true;
  const ResultDocument doc = build_result(std::move(f));
  const json& s = doc.dataset["source"];
  EXPECT_EQ(s["root"], dir / "source");
  EXPECT_EQ(s["files"], 5);
  EXPECT_EQ(s["bytes"], 15000);
  EXPECT_EQ(s["fingerprint"], source.fingerprint());
  EXPECT_EQ(s["file_size"],
            json({{"min", 1000}, {"p50", 3000}, {"p90", 5000}, {"p99", 5000}, {"max", 5000}}));
  EXPECT_EQ(s["content_fingerprint"], "abc123");
  EXPECT_EQ(s["throttle_bytes_per_second"], 40u << 20);
  const json& c = doc.dataset["cache"];
  EXPECT_EQ(c["files"], 1);
  EXPECT_FALSE(c.contains("content_fingerprint"));  // not asked for
  EXPECT_FALSE(c.contains("throttle_bytes_per_second"));
  EXPECT_EQ(c["manifest"]["label"], "val");
  EXPECT_EQ(c["verified"], false);
  EXPECT_EQ(c["verification"]["problems"][0], "missing: f1.bin");
  EXPECT_EQ(c["allow_unverified_cache"], true);
  // No cache scanned: no cache entry at all.
  EXPECT_FALSE(build_result(facts()).dataset.contains("cache"));
}

TEST_F(ResultBuilderTest, EnvironmentKeepsWhatWasDescribedAndAddsLoadRanksAndCores) {
  const ResultDocument alone = build_result(facts());
  EXPECT_EQ(alone.environment["host"]["kernel"], "k");
  EXPECT_EQ(alone.environment["host"]["load"]["before"], 0.5);
  EXPECT_EQ(alone.environment["paths"]["source"]["fs_type"], "ext4");
  EXPECT_FALSE(alone.environment.contains("cluster"));
  EXPECT_FALSE(alone.environment.contains("cpu_affinity"));

  LocalCluster one;
  RunFacts f = facts();
  f.cluster = &one;
  EXPECT_FALSE(build_result(std::move(f)).environment.contains("cluster"));  // one process

  FakeCluster three;
  f = facts();
  f.cluster = &three;
  f.cpu_affinity = {{"reading_threads", 4}};
  const ResultDocument doc = build_result(std::move(f));
  EXPECT_EQ(doc.environment["cluster"],
            json({{"implementation", "fake MPI"},
                  {"ranks", 3},
                  {"hosts", {{{"name", "a"}, {"ranks", {0, 2}}}, {{"name", "b"}, {"ranks", {1}}}}},
                  {"share", "per_rank"}}));
  EXPECT_EQ(doc.environment["cpu_affinity"]["reading_threads"], 4);
}

TEST_F(ResultBuilderTest, SummaryNamesSkippedCasesAndCarriesTheSizingNote) {
  RunFacts f = facts();
  f.benchmarks.push_back(entry("cache", "no cache"));
  const ResultDocument doc = build_result(std::move(f));
  ASSERT_TRUE(doc.summary.contains("skipped")) << doc.summary.dump(2);
  EXPECT_EQ(doc.summary["skipped"][0]["case"], "file_read/pattern:sequential/path:cache");
  EXPECT_EQ(doc.summary["skipped"][0]["reason"], "no cache");
  EXPECT_EQ(doc.summary["sizing"]["smaller_than_memory"], true);
  EXPECT_NE(doc.summary["sizing"]["note"].get<std::string>().find("smaller than this machine's memory"),
            std::string::npos);
}

TEST_F(ResultBuilderTest, DocumentReadsBackAsWritten) {
  RunFacts f = facts();
  f.cache = &cache;
  const ResultDocument doc = build_result(std::move(f));
  EXPECT_EQ(ResultDocument::parse(doc.dump(), "built.json"), doc);
}

TEST(ResultSizingTest, NoteOnlyWhenTheSelectionFitsInMemory) {
  EXPECT_EQ(sizing(2u << 30, 1u << 30)["note"], "");
  EXPECT_EQ(sizing(2u << 30, 1u << 30)["smaller_than_memory"], false);
  EXPECT_EQ(sizing(100, 0)["smaller_than_memory"], false);  // memory unknown
  const json small = sizing(1u << 20, 1u << 30);
  EXPECT_EQ(small["selection_bytes"], 1u << 20);
  EXPECT_EQ(small["memory_bytes"], 1u << 30);
  EXPECT_NE(small["note"].get<std::string>().find("(1 MiB) is smaller than this machine's memory (1 GiB)"),
            std::string::npos)
      << small["note"];
}

TEST(ResultNothingMeasuredTest, EmptyWhenAnyRepetitionRan) {
  ResultDocument doc;
  doc.benchmarks = {entry("cache", "no cache"), entry("source")};
  EXPECT_EQ(nothing_measured(doc), "");
}

TEST(ResultNothingMeasuredTest, EverySkippedCaseCountedOnceAndEachReasonOnce) {
  ResultDocument doc;
  doc.benchmarks = {entry("cache", "no cache", 0), entry("cache", "no cache", 1), entry("source", "EACCES")};
  BenchmarkEntry mean = entry("source");  // an aggregate is no measurement
  mean.run_type = "aggregate";
  doc.benchmarks.push_back(mean);
  EXPECT_EQ(nothing_measured(doc),
            "every case was skipped (2 cases; the result file records why): no cache; EACCES");
}

TEST(ResultNothingMeasuredTest, NamesThreeReasonsAndCountsTheRest) {
  ResultDocument doc;
  for (const char* path : {"a", "b", "c", "d", "e"})
    doc.benchmarks.push_back(entry(path, std::string("r") + path));
  EXPECT_EQ(nothing_measured(doc),
            "every case was skipped (5 cases; the result file records why): ra; rb; rc; and 2 more");
}

}  // namespace
}  // namespace feedbench
