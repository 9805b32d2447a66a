// A loader case in accelerators (loader_demand.h): one accelerator's demand, how many its
// supply keeps at the target, and what the summary answers from them.
#include "loader_demand.h"

#include <gtest/gtest.h>

#include "feedbench/results/result.h"
#include "summary.h"

namespace feedbench {
namespace {

using nlohmann::json;

constexpr double kSample = 128 * 1024;  // bytes

// A loader repetition: batch 8, a 20 ms step, 20 measured steps per accelerator, 2 ms of
// transform per sample.
BenchmarkEntry loader_case(const std::string& path, int accelerators, double au, bool calibration = false) {
  BenchmarkEntry e;
  e.params = nlohmann::ordered_json::object();
  e.params["family"] = "loader";
  e.params["batch_size"] = 8;
  e.params["workers"] = 2;
  e.params["accelerators"] = accelerators;
  e.params["transform"] = "2ms/sample";
  if (calibration) e.params["samples"] = "memory";
  e.params["target_au"] = 0.9;
  e.params["cache_state"] = "warm";
  e.params["path"] = path;
  e.case_name = "loader/acc:" + std::to_string(accelerators) + (calibration ? "/samples:memory" : "") +
                "/state:warm/path:" + path;
  e.name = e.run_name = e.case_name + "/iterations:1/manual_time";
  e.run_type = "iteration";
  e.repetitions = 1;
  const double samples = 20.0 * 8 * accelerators, compute_s = 20 * 0.020 * accelerators;
  e.counters = {{"au", au}, {"stall_fraction", 1 - au}, {"samples_per_second", samples / compute_s * au}};
  e.cache = {{"requested", "warm"}, {"residency_before", 1.0}, {"achieved", true}};
  e.extra = {{"min_au", au},
             {"target_au", 0.9},
             {"calibration", calibration},
             {"samples", samples},
             {"bytes", samples * kSample},
             {"compute_s", compute_s},
             {"transform_s", (samples + 16) * 0.002},
             {"transform_bytes", (samples + 16) * kSample},
             {"transform_samples", samples + 16}};
  return e;
}

CaseView view_of(const BenchmarkEntry& e) {
  ResultDocument doc;
  doc.benchmarks.push_back(e);
  return fold_cases(doc).at(0);
}

TEST(LoaderDemandTest, OneAcceleratorAsksBatchOverStep) {
  const std::optional<LoaderDemand> d = demand_of(view_of(loader_case("source", 2, 0.45)));
  ASSERT_TRUE(d);
  EXPECT_DOUBLE_EQ(d->samples_per_second, 400);  // 8 samples per 20 ms
  EXPECT_DOUBLE_EQ(d->bytes_per_second, 400 * kSample);
  EXPECT_NEAR(d->transform_cores, 0.8, 1e-9) << "2 ms per sample × 400 samples/s";
}

TEST(LoaderDemandTest, AcceleratorsFedIsTheSupplyOverOneAtTheTarget) {
  EXPECT_DOUBLE_EQ(accelerators_fed(view_of(loader_case("source", 2, 0.45)), 0.45), 1.0);
  EXPECT_DOUBLE_EQ(accelerators_fed(view_of(loader_case("source", 1, 0.99)), 0.99), 1.1);
  EXPECT_EQ(accelerators_fed_text(0.5, false), "0.50");
  EXPECT_EQ(accelerators_fed_text(1.1, true), "≥ 1.10");
}

TEST(LoaderDemandTest, NoTransformTakesNoCores) {
  BenchmarkEntry e = loader_case("source", 1, 0.5);
  e.params["transform"] = "none";
  EXPECT_EQ(demand_of(view_of(e))->transform_cores, 0.0) << "wall time around no transform is no cost";
}

TEST(LoaderDemandTest, NoDemandWithoutWhatTheTrainersConsumed) {
  BenchmarkEntry e = loader_case("source", 1, 0.5);
  e.extra.erase("compute_s");
  EXPECT_FALSE(demand_of(view_of(e)));
  BenchmarkEntry f = loader_case("source", 1, 0.5);
  f.params["family"] = "file_read";
  EXPECT_FALSE(demand_of(view_of(f)));
}

TEST(LoaderDemandTest, TheSummarySaysAcceleratorsFedPerPathAndWhatANodeNeeds) {
  ResultDocument doc;
  doc.benchmarks = {loader_case("source", 1, 0.45), loader_case("cache", 1, 0.99),
                    loader_case("source", 1, 0.999, true)};
  doc.config = {{"node_accelerators", 8}};
  const json a = summarize(doc)["answers"];
  const json& source = a["paths"][0]["path"] == "source" ? a["paths"][0] : a["paths"][1];
  EXPECT_DOUBLE_EQ(source["feeds"]["warm"]["accelerators_fed"].get<double>(), 0.5) << a.dump(2);
  EXPECT_FALSE(source["feeds"]["warm"]["accelerators_fed_at_least"].get<bool>());
  EXPECT_EQ(a["node"]["accelerators"], 8);
  EXPECT_EQ(a["node"]["from"], "run");
  EXPECT_NEAR(a["node"]["bytes_per_second"].get<double>(), 8 * 0.9 * 400 * kSample, 1e-3);
  EXPECT_NEAR(a["node"]["transform_cores"].get<double>(), 8 * 0.9 * 0.8, 1e-9);
  const std::string text = format_answers(a);
  EXPECT_NE(
      text.find("  accelerators fed at AU ≥ 90.0%: source 0.50 warm; cache ≥ 1.10 warm (one accelerator "
                "needs 400 samples/s, 50 MiB/s)\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("  a node of 8 accelerators needs 360 MiB/s (2.88k samples/s) and 5.8 CPU cores of "
                      "transform to keep AU ≥ 90.0%"),
            std::string::npos)
      << text;
  const std::vector<std::string> page = answer_sentences(a);
  ASSERT_GE(page.size(), 2u);
  EXPECT_EQ(page[0].rfind("Accelerators fed at AU ≥ 90.0%: source 0.50 warm", 0), 0u) << page[0];
  EXPECT_EQ(page[1].rfind("A node of 8 accelerators needs 360 MiB/s", 0), 0u) << page[1];
}

TEST(LoaderDemandTest, ACaseTooShortToJudgeStatesNoAcceleratorsFed) {
  ResultDocument doc;
  BenchmarkEntry e = loader_case("source", 1, 0.45);
  e.extra["judged"] = false;
  doc.benchmarks = {e};
  const json verdicts = summarize(doc)["loader"]["verdicts"];
  ASSERT_EQ(verdicts.size(), 1u) << verdicts.dump(2);
  EXPECT_FALSE(verdicts[0].contains("accelerators_fed")) << verdicts.dump(2);
}

TEST(LoaderDemandTest, AcceleratorsFedCountWhatEveryTrainerConsumedNotTheWorstFed) {
  ResultDocument doc;
  BenchmarkEntry e = loader_case("source", 4, 0.6);
  e.extra["min_au"] = 0.3;  // one trainer fed worse than the mean
  doc.benchmarks = {e};
  const json a = summarize(doc)["answers"];
  EXPECT_NEAR(a["paths"][0]["feeds"]["warm"]["accelerators_fed"].get<double>(), 4 * 0.6 / 0.9, 1e-9)
      << a.dump(2);
  EXPECT_NEAR(a["paths"][0]["feeds"]["warm"]["au"].get<double>(), 0.3, 1e-9)
      << "the verdict is the worst-fed's";
}

TEST(LoaderDemandTest, TheNodeDefaultsToTheMostAcceleratorsACaseRan) {
  ResultDocument doc;
  doc.benchmarks = {loader_case("source", 1, 0.45), loader_case("source", 4, 0.3)};
  const json a = summarize(doc)["answers"];
  EXPECT_EQ(a["node"]["accelerators"], 4) << a.dump(2);
  EXPECT_EQ(a["node"]["from"], "cases");
}

}  // namespace
}  // namespace feedbench
