// A loader case in accelerators (loader_demand.h): one accelerator's demand, how many its
// supply keeps at the target, and what the summary answers from them.
#include "reporters/loader_demand.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "feedbench/results/result.h"
#include "reporters/summary.h"

using ::testing::HasSubstr;

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
  e.params["step_time"] = "20ms";
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
  e.counters = {{"au", au},
                {"stall_fraction", 1 - au},
                {"samples_per_second", samples / compute_s * au},
                {"steps", 20.0 * accelerators}};
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
  EXPECT_THAT(
      text,
      HasSubstr(
          "  accelerators fed at AU ≥ 90.0%: source 0.50 warm; cache ≥ 1.10 warm\n"
          "  at a 20.0 ms step of 8 samples, one accelerator needs 400 samples/s, 50 MiB/s, 0.80 cores\n"));
  EXPECT_THAT(
      text,
      HasSubstr("  a node of 8 accelerators needs 360 MiB/s (2.88k samples/s) and 5.8 CPU cores of "
                "transform to keep AU ≥ 90.0%: 8 × 90.0% of one accelerator's need at a 20.0 ms step of 8 "
                "samples (400 samples/s, 50 MiB/s, 0.80 cores; at path:source)"));
  const std::vector<std::string> page = answer_sentences(a);
  ASSERT_GE(page.size(), 3u);
  EXPECT_EQ(page[0].rfind("Accelerators fed at AU ≥ 90.0%: source 0.50 warm", 0), 0u) << page[0];
  EXPECT_EQ(page[1].rfind("At a 20.0 ms step of 8 samples, one accelerator needs 400 samples/s", 0), 0u)
      << page[1];
  EXPECT_EQ(page[2].rfind("A node of 8 accelerators needs 360 MiB/s", 0), 0u) << page[2];
}

// The case of the issue: cases at a 30 ms and a 60 ms step of 32 samples. Each line of demand
// names its step and batch, one line per step; what it says is what a reader computes from it
// (32 / 60 ms = 533 samples/s), not the trainers' measured compute (a step overshot to 64.4 ms
// said 497); the node's figures are K × target × one's need at the step it names.
TEST(LoaderDemandTest, EveryDemandNamesTheStepItIsForOneLinePerStep) {
  auto at_step = [](const std::string& path, int step_ms) {
    BenchmarkEntry e = loader_case(path, 1, 0.45);
    e.params["batch_size"] = 32;
    e.params["step_time"] = std::to_string(step_ms) + "ms";
    e.case_name = "loader/batch:32/step:" + std::to_string(step_ms) + "ms/state:warm/path:" + path;
    e.name = e.run_name = e.case_name + "/iterations:1/manual_time";
    const double steps = 20, samples = 32 * steps;
    e.counters["steps"] = steps;
    e.extra["samples"] = samples;
    e.extra["bytes"] = samples * kSample;
    e.extra["compute_s"] = steps * step_ms * 1.073e-3;  // each step overshot by 7.3%
    e.extra["transform_samples"] = samples;
    e.extra["transform_bytes"] = samples * kSample;
    e.extra["transform_s"] = samples * 0.00625;  // 6.25 ms of CPU a sample
    return e;
  };
  ResultDocument doc;
  doc.benchmarks = {at_step("source", 60), at_step("cache", 30)};
  doc.config = {{"node_accelerators", 8}};
  const json a = summarize(doc)["answers"];
  const std::optional<LoaderDemand> d = demand_of(view_of(at_step("source", 60)));
  ASSERT_TRUE(d);
  EXPECT_NEAR(d->samples_per_second, 32 / 0.060, 1e-9);
  EXPECT_NEAR(d->bytes_per_second, 32 / 0.060 * kSample, 1e-6);
  EXPECT_NEAR(d->transform_cores, 32 / 0.060 * 0.00625, 1e-9);
  EXPECT_EQ(step_text(*d), "a 60.0 ms step of 32 samples");
  const std::string text = format_answers(a);
  EXPECT_THAT(
      text,
      HasSubstr("\n  at a 60.0 ms step of 32 samples, one accelerator needs 533 samples/s, 66.7 MiB/s, 3.33 "
                "cores (source warm)\n"));
  EXPECT_THAT(
      text,
      HasSubstr("\n  at a 30.0 ms step of 32 samples, one accelerator needs 1.07k samples/s, 133 MiB/s, 6.67 "
                "cores (cache warm)\n"));
  // The node: the heaviest pipeline (the 30 ms step's), 8 × 90% × 1.07k = 7.68k samples/s.
  EXPECT_THAT(
      text,
      HasSubstr(
          "  a node of 8 accelerators needs 960 MiB/s (7.68k samples/s) and 48.0 CPU cores of transform "
          "to keep AU ≥ 90.0%: 8 × 90.0% of one accelerator's need at a 30.0 ms step of 32 samples "
          "(1.07k samples/s, 133 MiB/s, 6.67 cores; at "));
}

TEST(LoaderDemandTest, AReplaysDemandIsAtTheMeanStepItAsked) {
  BenchmarkEntry e = loader_case("source", 1, 0.45);
  e.params = nlohmann::ordered_json{{"family", "replay"}, {"cache_state", "cold"}, {"path", "source"}};
  e.case_name = "replay/job:j/state:cold/path:source";
  e.counters["steps"] = 50;
  e.extra["samples"] = 50 * 4;         // 4 samples a step
  e.extra["compute_s"] = 50 * 0.0089;  // a loaded host's steps, 8.9 ms each
  e.extra["asked_step_s"] = 0.0052;    // the recorded steps × step_scale
  std::optional<LoaderDemand> d = demand_of(view_of(e));
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->step_mean);
  EXPECT_NEAR(d->samples_per_second, 4 / 0.0052, 1e-9);
  EXPECT_EQ(step_text(*d), "a mean step of 5.20 ms of 4 samples");
  e.extra.erase("asked_step_s");  // a file before it was recorded: the measured mean
  d = demand_of(view_of(e));
  EXPECT_NEAR(d->samples_per_second, 4 / 0.0089, 1e-9);
  EXPECT_EQ(step_text(*d), "a mean step of 8.90 ms of 4 samples");
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

// The headline is the pipeline's: a decode case at AU 54% speaks for the path, not the
// no-transform case that is fed; storage alone is said beside it, and each answer's limit with
// the case it came from.
TEST(LoaderDemandTest, TheHeadlineIsTheMostRealisticPipelineWithStorageAloneBeside) {
  ResultDocument doc;
  BenchmarkEntry decode = loader_case("source", 1, 0.54);
  decode.params["transform"] = "decode:224";
  decode.case_name += "/transform:decode";
  decode.name = decode.run_name = decode.case_name + "/iterations:1/manual_time";
  decode.extra["limit"] = {
      {"by", "cpu"}, {"fed", false}, {"text", "limit: the decode's CPU — 2 cores saturated"}};
  BenchmarkEntry plain = loader_case("source", 1, 0.97);
  plain.params["transform"] = "none";
  plain.extra["limit"] = {
      {"by", "page_cache"},
      {"fed", true},
      {"text", "fed by the page cache, not storage: 64% of the bytes read came from memory"}};
  doc.benchmarks = {plain, decode};
  const json a = summarize(doc)["answers"];
  const json& warm = a["paths"][0]["feeds"]["warm"];
  EXPECT_FALSE(warm["fed"].get<bool>()) << a.dump(2);
  EXPECT_NEAR(warm["au"].get<double>(), 0.54, 1e-9);
  EXPECT_EQ(warm["case"], decode.case_name);
  EXPECT_EQ(warm["limit"]["by"], "cpu");
  EXPECT_NEAR(warm["accelerators_fed"].get<double>(), 0.6, 1e-9) << "the pipeline's, not the easiest case's";
  ASSERT_TRUE(warm.contains("storage_alone")) << a.dump(2);
  EXPECT_TRUE(warm["storage_alone"]["fed"].get<bool>());
  EXPECT_EQ(warm["storage_alone"]["case"], plain.case_name);
  const std::string text = format_answers(a);
  EXPECT_THAT(text, HasSubstr("  accelerators fed at AU ≥ 90.0%: source 0.60 warm"));
  EXPECT_THAT(
      text, HasSubstr("  source warm: limit: the decode's CPU — 2 cores saturated (at transform:decode)\n"));
  EXPECT_NE(
      text.find("  source warm, storage alone (no transform): fed by the page cache, not storage: 64% of the "
                "bytes read came from memory\n      (at " +
                plain.case_name + ")"),
      std::string::npos)
      << text;
  EXPECT_THAT(
      text,
      HasSubstr("warm: no (AU 54.0% at best, target 90.0%, 2 workers), storage alone (no transform): only "
                "through the page cache (AU 97.0%, target 90.0%, 2 workers)"));
  // The limit lines come right after the accelerators fed: the summary's first lines.
  EXPECT_LT(text.find("accelerators fed"), text.find("source warm: limit"));
  const std::vector<std::string> page = answer_sentences(a);
  ASSERT_GE(page.size(), 3u);
  EXPECT_EQ(page[1].rfind("Source warm: limit: the decode's CPU", 0), 0u) << page[1];
}

// A hot set fed by the page cache on a slow store: the headline says what the store alone feeds
// and what the page cache added, never the whole as storage's (a 40 MiB/s store once read
// "source >= 1.01 cold" beside its own case's "the store alone delivered 24 MiB/s").
TEST(LoaderDemandTest, TheHeadlineNeverCountsThePageCacheAsStorage) {
  constexpr double kMiB = 1 << 20;
  ResultDocument doc;
  BenchmarkEntry hot = loader_case("source", 1, 0.95);  // 50 MiB/s at AU 100%: 45 MiB/s at the target
  hot.extra["limit"] = {{"by", "page_cache"},
                        {"fed", true},
                        {"memory_share", 0.6},
                        {"device_bytes_per_second", 22.5 * kMiB},
                        {"text",
                         "fed by the page cache, not storage: 60% of the bytes read came from memory; "
                         "the store alone delivered 22.5 MiB/s"},
                        {"line", "fed by the page cache; the store alone delivered 22.5 MiB/s"}};
  doc.benchmarks = {hot};
  const json a = summarize(doc)["answers"];
  const json& warm = a["paths"][0]["feeds"]["warm"];
  EXPECT_NEAR(warm["accelerators_fed"].get<double>(), 0.95 / 0.9, 1e-9) << a.dump(2);
  EXPECT_NEAR(warm.value("accelerators_fed_by_store", -1.0), 0.5, 1e-9) << a.dump(2);
  const std::string text = format_answers(a);
  EXPECT_THAT(
      text,
      HasSubstr("accelerators fed at AU ≥ 90.0%: source warm 0.50 from the store + ≥ 0.56 from the page "
                "cache\n"));
  EXPECT_EQ(text.find("source ≥ 1.06 warm"), std::string::npos) << text;
  const std::vector<std::vector<std::string>> table = answer_table(a);
  ASSERT_EQ(table.size(), 2u);
  EXPECT_EQ(table[1], (std::vector<std::string>{"source", "warm", "0.50 + ≥ 0.56 page cache",
                                                "fed: page cache", "22.5 MiB/s from the store"}));
  // A case storage fed alone says one count, as before.
  hot.extra["limit"] = {{"by", "storage"},
                        {"fed", true},
                        {"memory_share", 0.0},
                        {"device_bytes_per_second", 60 * kMiB},
                        {"text", "storage keeps up"}};
  doc.benchmarks = {hot};
  EXPECT_NE(format_answers(summarize(doc)["answers"]).find("source ≥ 1.06 warm"), std::string::npos);
}

// A stored answer whose limit is not an object with a text is not trusted: the summary is
// computed again from the cases.
TEST(LoaderDemandTest, AStoredAnswerWithAMalformedLimitIsComputedAgain) {
  ResultDocument doc;
  doc.benchmarks = {loader_case("source", 1, 0.45)};
  json a = summarize(doc)["answers"];
  a["paths"][0]["feeds"]["warm"]["limit"] = "storage";
  doc.summary = {{"answers", a}};
  const json again = summary_of(doc)["answers"];
  EXPECT_FALSE(again["paths"][0]["feeds"]["warm"].contains("limit")) << again.dump(2);
}

}  // namespace
}  // namespace feedbench
