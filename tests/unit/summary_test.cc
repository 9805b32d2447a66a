// The closing summary's answers to the method's questions: where more workers (or a deeper
// queue) stop paying, and source vs cache / cold vs warm compared case for matched case.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "output_lines.h"
#include "reporters/cache_trust.h"
#include "reporters/console_table.h"
#include "reporters/loader_summary.h"
#include "reporters/summary.h"

using ::testing::HasSubstr;

namespace feedbench {
namespace {

using nlohmann::json;

struct Shape {
  std::string pattern = "sequential";
  std::int64_t block_size = 131072;
  std::string engine = "psync";
  std::int64_t queue_depth = 1;
  std::int64_t workers = 1;
  std::string state = "cold";
  std::string path = "source";
};

std::string name_of(const Shape& s) {
  return "file_read/pattern:" + s.pattern + "/bs:" + std::to_string(s.block_size) + "/engine:" + s.engine +
         "/qd:" + std::to_string(s.queue_depth) + "/workers:" + std::to_string(s.workers) +
         "/state:" + s.state + "/path:" + s.path;
}

// Three achieved repetitions of one case, all at `bps`.
void add_case(ResultDocument* doc, const Shape& s, double bps) {
  for (int rep = 0; rep < 3; ++rep) {
    BenchmarkEntry e;
    e.case_name = name_of(s);
    e.name = e.run_name = e.case_name + "/iterations:1/repeats:3/manual_time";
    e.run_type = "iteration";
    e.repetitions = 3;
    e.repetition_index = rep;
    e.counters["bytes_per_second"] = bps;
    e.params = nlohmann::ordered_json::object();
    e.params["family"] = "file_read";
    e.params["pattern"] = s.pattern;
    e.params["block_size"] = s.block_size;
    e.params["engine"] = s.engine;
    e.params["queue_depth"] = s.queue_depth;
    e.params["workers"] = s.workers;
    e.params["cache_state"] = s.state;
    e.params["path"] = s.path;
    e.cache = {
        {"requested", s.state}, {"residency_before", s.state == "warm" ? 1.0 : 0.0}, {"achieved", true}};
    doc->benchmarks.push_back(e);
  }
}

const json* find_scaling(const json& summary, const std::string& parameter, const std::string& path,
                         const std::string& state) {
  if (!summary.contains("file_read") || !summary["file_read"].contains("scaling")) return nullptr;
  for (const json& s : summary["file_read"]["scaling"])
    if (s["parameter"] == parameter && s["group"]["path"] == path && s["group"]["cache_state"] == state)
      return &s;
  return nullptr;
}

TEST(SummaryTest, WorkerSweepNamesTheKneeAndTheCountsThatAreSlower) {
  ResultDocument doc;
  Shape s;
  // Peaks at 2 workers; 4 is 10% slower, 8 is 22% slower.
  for (auto [w, bps] : {std::pair{1, 300e6}, {2, 500e6}, {4, 450e6}, {8, 390e6}}) {
    s.workers = w;
    add_case(&doc, s, bps);
  }
  json summary = summarize(doc);
  const json* sc = find_scaling(summary, "workers", "source", "cold");
  ASSERT_NE(sc, nullptr) << summary.dump(2);
  EXPECT_EQ((*sc)["best"], 2);
  EXPECT_EQ((*sc)["knee"], 2);
  EXPECT_DOUBLE_EQ((*sc)["best_bytes_per_second"].get<double>(), 500e6);
  ASSERT_EQ((*sc)["slower_than_best"].size(), 2u);
  EXPECT_EQ((*sc)["slower_than_best"][0]["value"], 4);
  EXPECT_NEAR((*sc)["slower_than_best"][1]["slower_by"].get<double>(), 0.22, 1e-9);
  EXPECT_EQ((*sc)["points"].size(), 4u);
  std::string text = format_summary(summary);
  EXPECT_THAT(text, HasSubstr("sequential 128 KiB psync cold source: best at 2 workers"));
  EXPECT_THAT(text, HasSubstr("8 workers is 22% slower"));
}

TEST(SummaryTest, KneeIsTheSmallestCountWithinFivePercentOfTheBest) {
  ResultDocument doc;
  Shape s;
  s.state = "warm";
  // Rises to 16, but 4 is already within 5% of it: the knee is 4.
  for (auto [w, bps] : {std::pair{1, 1e9}, {2, 1.6e9}, {4, 1.94e9}, {8, 1.97e9}, {16, 2e9}}) {
    s.workers = w;
    add_case(&doc, s, bps);
  }
  json summary = summarize(doc);
  const json* sc = find_scaling(summary, "workers", "source", "warm");
  ASSERT_NE(sc, nullptr) << summary.dump(2);
  EXPECT_EQ((*sc)["best"], 16);
  EXPECT_EQ((*sc)["knee"], 4);
  EXPECT_TRUE((*sc)["slower_than_best"].empty());
  std::string text = format_summary(summary);
  EXPECT_THAT(text, HasSubstr("4 workers are within 5% of the best (16 workers)"));
}

TEST(SummaryTest, QueueDepthSweepsAreJudgedPerGroupOfOtherwiseEqualCases) {
  ResultDocument doc;
  Shape s;
  s.pattern = "random";
  s.block_size = 4096;
  s.engine = "libaio";
  s.state = "direct";
  for (std::int64_t w : {1, 4}) {
    s.workers = w;
    for (auto [qd, bps] : {std::pair{1, 50e6}, {8, 200e6}, {32, 150e6}}) {
      s.queue_depth = qd;
      add_case(&doc, s, bps * double(w));
    }
  }
  json summary = summarize(doc);
  int groups = 0;
  ASSERT_TRUE(summary["file_read"].contains("scaling")) << summary.dump(2);
  for (const json& sc : summary["file_read"]["scaling"]) {
    if (sc["parameter"] != "queue_depth") continue;
    ++groups;
    EXPECT_EQ(sc["best"], 8);
    EXPECT_EQ(sc["knee"], 8);
    EXPECT_EQ(sc["slower_than_best"][0]["value"], 32);
  }
  EXPECT_EQ(groups, 2) << summary.dump(2);
  std::string text = format_summary(summary);
  EXPECT_THAT(text, HasSubstr("queue depth 32 is 25% slower"));
}

TEST(SummaryTest, ASingleCountIsNoSweep) {
  ResultDocument doc;
  add_case(&doc, Shape{}, 1e8);
  EXPECT_FALSE(summarize(doc)["file_read"].contains("scaling"));
}

// The best random 4 KiB source case and the best sequential 1 MiB cache case are not a
// comparison of the paths: only cases equal in everything but the path are.
TEST(SummaryTest, SourceVsCacheComparesMatchedCasesOnly) {
  ResultDocument doc;
  Shape a;  // sequential 1 MiB, on the source only
  a.block_size = 1 << 20;
  add_case(&doc, a, 900e6);
  Shape b;  // random 4 KiB, on both paths
  b.pattern = "random";
  b.block_size = 4096;
  add_case(&doc, b, 20e6);
  b.path = "cache";
  add_case(&doc, b, 80e6);
  Shape c;  // sequential 128 KiB 4 workers on the cache only
  c.workers = 4;
  c.path = "cache";
  add_case(&doc, c, 2000e6);
  json summary = summarize(doc);
  const json& cs = summary["file_read"]["cache_vs_source"];
  ASSERT_EQ(cs.size(), 1u) << summary.dump(2);
  EXPECT_EQ(cs[0]["cache_state"], "cold");
  EXPECT_EQ(cs[0].value("pattern", ""), "random");
  EXPECT_EQ(cs[0].value("block_size", 0), 4096);
  EXPECT_DOUBLE_EQ(cs[0]["source_bytes_per_second"].get<double>(), 20e6);
  EXPECT_DOUBLE_EQ(cs[0]["cache_bytes_per_second"].get<double>(), 80e6);
  EXPECT_DOUBLE_EQ(cs[0]["ratio"].get<double>(), 4.0);
  std::string text = format_summary(summary);
  EXPECT_THAT(text,
              HasSubstr("source vs cache, random 4 KiB psync 1 worker cold: cache path was 4.0× faster"));
  EXPECT_EQ(text.find("2.2×"), std::string::npos) << text;  // 2000e6 / 900e6: unmatched bests
}

TEST(SummaryTest, ColdVsWarmComparesMatchedCasesAndAggregatesMany) {
  ResultDocument doc;
  Shape s;
  // Cold is measured at 1 and 8 workers, warm at 8 only: one matched pair.
  s.workers = 1;
  add_case(&doc, s, 100e6);
  s.workers = 8;
  add_case(&doc, s, 400e6);
  s.state = "warm";
  add_case(&doc, s, 2000e6);
  s.workers = 2;  // warm at 2 workers has no cold partner
  add_case(&doc, s, 5000e6);
  json summary = summarize(doc);
  const json& cw = summary["file_read"]["cold_vs_warm"];
  ASSERT_EQ(cw.size(), 1u) << summary.dump(2);
  EXPECT_EQ(cw[0].value("workers", 0), 8);
  EXPECT_DOUBLE_EQ(cw[0]["ratio"].get<double>(), 5.0);

  // Many matched pairs on one path: one aggregate line (geometric mean, range), not one each.
  ResultDocument many;
  Shape m;
  for (std::int64_t w : {1, 2, 4, 8, 16, 32, 64}) {
    m.workers = w;
    m.state = "cold";
    add_case(&many, m, 100e6);
    m.state = "warm";
    add_case(&many, m, 400e6);
  }
  json ms = summarize(many);
  ASSERT_EQ(ms["file_read"]["cold_vs_warm"].size(), 7u);
  ASSERT_EQ(ms["file_read"]["cold_vs_warm_overall"].size(), 1u);
  EXPECT_EQ(ms["file_read"]["cold_vs_warm_overall"][0]["pairs"], 7);
  EXPECT_NEAR(ms["file_read"]["cold_vs_warm_overall"][0]["geomean_ratio"].get<double>(), 4.0, 1e-9);
  std::string text = format_summary(ms);
  EXPECT_THAT(
      text,
      HasSubstr("cold vs warm, source: warm was 4.0× faster than cold (geometric mean of 7 matched pairs"));
}

// A ratio within a few per cent is not "1.0× slower": it says the paths read the same, and a
// ratio near one is printed so that its direction cannot be misread.
TEST(SummaryTest, NearEqualPairsSayTheSameNotOnePointZeroSlower) {
  ResultDocument doc;
  Shape s;
  s.pattern = "random";
  s.block_size = 4096;
  add_case(&doc, s, 100e6);
  s.path = "cache";
  add_case(&doc, s, 97e6);
  const json summary = summarize(doc);
  const std::string text = format_summary(summary);
  EXPECT_EQ(text.find("1.0×"), std::string::npos) << text;
  EXPECT_THAT(text, HasSubstr("cache path was within 5% of source"));
  EXPECT_NE(format_answers(summary["answers"])
                .find("no difference beyond 10% (the cache path reads 0.97× the "
                      "source's rate)"),
            std::string::npos)
      << format_answers(summary["answers"]);

  // Many pairs: the range's ends near one say so too.
  ResultDocument many;
  Shape m;
  for (std::int64_t w : {1, 2, 4, 8, 16}) {
    m.workers = w;
    m.path = "source";
    add_case(&many, m, 100e6);
    m.path = "cache";
    add_case(&many, m, w == 1 ? 98e6 : 300e6);
  }
  const std::string many_text = format_summary(summarize(many));
  EXPECT_EQ(many_text.find("1.0×"), std::string::npos) << many_text;
  EXPECT_THAT(many_text, HasSubstr("from within 5% ("));
}

// Cases skipped for one reason say it once, naming what tells the cases apart; the reason
// of a sweep's every case is not repeated once per case.
TEST(SummaryTest, CasesSkippedForOneReasonAreOneLine) {
  const json summary = json::parse(R"({"skipped": [
      {"case": "loader/batch:4/workers:1/path:source", "reason": "a.bin: not a JPEG"},
      {"case": "file_read/pattern:seq/path:cache", "reason": "no cache"},
      {"case": "loader/batch:4/workers:2/path:source", "reason": "a.bin: not a JPEG"},
      {"case": "loader/batch:8/workers:2/path:source", "reason": "a.bin: not a JPEG"}]})");
  const std::string text = format_summary(summary);
  EXPECT_THAT(
      text,
      HasSubstr("skipped: 3 loader cases (batch:4/workers:1, batch:4/workers:2, batch:8/workers:2): a.bin: "
                "not a JPEG\n"));
  EXPECT_EQ(text.find("not a JPEG"), text.rfind("not a JPEG")) << text;
  EXPECT_THAT(text, HasSubstr("skipped: file_read/pattern:seq/path:cache: no cache\n"));
}

// A result written with one wild repetition records it, and `run` warns with a line naming
// the case, metric, repetition, value and median.
TEST(SummaryTest, AnOutlierRepetitionIsRecordedAndWarnedAbout) {
  ResultDocument doc;
  Shape s;
  add_case(&doc, s, 40.0 * 1048576);  // three repetitions: too few to judge an outlier
  EXPECT_FALSE(summarize(doc).contains("outliers"));
  EXPECT_TRUE(outlier_warning_lines(summarize(doc)).empty());
  for (double mib : {41.0, 19.0}) {
    BenchmarkEntry e = doc.benchmarks.back();
    e.repetition_index += 1;
    e.counters["bytes_per_second"] = mib * 1048576;
    doc.benchmarks.push_back(e);
  }
  const json summary = summarize(doc);
  ASSERT_TRUE(summary.contains("outliers")) << summary.dump(1);
  ASSERT_EQ(summary["outliers"].size(), 1u);
  const json& o = summary["outliers"][0];
  EXPECT_EQ(o["case"], name_of(s));
  EXPECT_EQ(o["metric"], "bytes_per_second");
  EXPECT_EQ(o["repetition_index"], 4);
  EXPECT_DOUBLE_EQ(o["value"].get<double>(), 19.0 * 1048576);
  EXPECT_DOUBLE_EQ(o["median"].get<double>(), 40.0 * 1048576);
  const std::vector<std::string> lines = outlier_warning_lines(summary);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "outlier repetition: " + name_of(s) +
                " repetition 4 of bytes_per_second: 19 MiB/s, median 40 MiB/s (farther than 3.5 "
                "scaled MADs and 10% from the median): diff judges without it; measure again before "
                "keeping this result as a baseline");
}

TEST(SummaryStragglers, NamesEachSlowRankWithHowOftenAndItsSlowestRepetition) {
  ResultDocument doc;
  add_case(&doc, Shape{}, 100e6);
  // Rank 2 named in two of the three repetitions; its slowest at 0.25 of the median rank.
  doc.benchmarks[0].extra["stragglers"] =
      json::array({{{"rank", 2}, {"host", "b"}, {"bytes_per_second", 30e6}, {"vs_median", 0.3}}});
  doc.benchmarks[1].extra["stragglers"] = json::array();
  doc.benchmarks[2].extra["stragglers"] =
      json::array({{{"rank", 2}, {"host", "b"}, {"bytes_per_second", 25e6}, {"vs_median", 0.25}}});
  const json summary = summarize(doc);
  ASSERT_TRUE(summary.contains("stragglers")) << summary.dump();
  ASSERT_EQ(summary["stragglers"].size(), 1u);
  const json& st = summary["stragglers"][0];
  EXPECT_EQ(st["rank"], 2);
  EXPECT_EQ(st["repetitions"], 2);
  EXPECT_EQ(st["of_repetitions"], 3);
  EXPECT_DOUBLE_EQ(st["vs_median"].get<double>(), 0.25);
  const std::string text = format_summary(summary);
  EXPECT_NE(text.find("straggler: rank 2 (host b) in 2 of 3 repetitions of " + name_of(Shape{})),
            std::string::npos)
      << text;
  EXPECT_THAT(text, HasSubstr("0.25 of the median rank's rate"));
}

TEST(SummaryStragglers, NoneWithoutRanks) {
  ResultDocument doc;
  add_case(&doc, Shape{}, 100e6);
  EXPECT_FALSE(summarize(doc).contains("stragglers"));
}

}  // namespace
}  // namespace feedbench

namespace feedbench {
namespace {

using nlohmann::json;

// No sentence may show a missing value: no empty parenthesis, no dangling separator. The answers'
// table (`table`, which pads its columns) opens `text` and is left out of the check.
void expect_whole_sentences(std::string text, const std::string& table = "") {
  ASSERT_EQ(text.rfind(table, 0), 0u) << text;
  text = text.substr(table.size());
  for (const char* bad : {"()", "( ", " )", "(, ", ", )", ",,", ", ,", ";;", "; ;", " ;", " ,", "nan", "inf",
                          ": ;", ": ,", "?;", "? ;"})
    EXPECT_EQ(text.find(bad), std::string::npos) << "'" << bad << "' in:\n" << text;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    EXPECT_FALSE(!line.empty() &&
                 (line.back() == ' ' || line.back() == ',' || line.back() == ';' || line.back() == ':'))
        << "'" << line << "'";
    EXPECT_EQ(line.find("   ", 2), std::string::npos) << "'" << line << "'";
    start = end + 1;
  }
}

json full_answers() {
  return json::parse(R"({
    "version": 2,
    "paths": [
      {"path": "source",
       "feeds": {"cold": {"fed": false, "au": 0.61, "target_au": 0.9, "workers": 2, "case": "a"},
                 "warm": {"fed": true, "au": 0.99, "target_au": 0.9, "workers": 1, "case": "b"}},
       "keeps": {"accelerators": 2, "target_au": 0.9},
       "reads": {"cold": {"bytes_per_second": 104857600, "workers": 4, "pattern": "random", "case": "c"},
                 "warm": {"bytes_per_second": 1073741824, "workers": 1, "case": "d"},
                 "direct": {"bytes_per_second": 52428800, "workers": 4, "case": "f"}}},
      {"path": "cache",
       "feeds": {"cold": {"fed": true, "au": 0.97, "target_au": 0.9, "workers": 1, "case": "e"}}}],
    "cache_helps": [{"cache_state": "cold", "ratio": 3.0, "pairs": 12},
                    {"cache_state": "warm", "ratio": 1.02, "pairs": 1},
                    {"cache_state": "direct", "ratio": 0.5, "pairs": 2}],
    "stage": {"bytes_per_second": 629145600, "workers": 4, "case": "g"}})");
}

TEST(SummaryAnswersTest, SayFirstPerPathWhetherStorageFeedsTheTrainersAndWhetherTheCacheHelps) {
  EXPECT_EQ(
      format_answers(full_answers()),
      "  path    state   accelerators fed  limit  rate\n"
      "  source  cold    -                 -      100 MiB/s read\n"
      "  source  warm    -                 -      1 GiB/s read\n"
      "  source  direct  -                 -      50 MiB/s read\n"
      "  cache   cold    -                 -      -\n"
      "  source: can storage feed the simulated trainers? cold: no (AU 61.0% at best, target 90.0%, "
      "2 workers); warm: yes (AU 99.0%, target 90.0%, 1 worker); keeps 2 simulated accelerators at AU ≥ "
      "90.0%; "
      "reads at best 100 MiB/s cold (4 workers), 1 GiB/s warm (1 worker), 50 MiB/s direct (4 workers)\n"
      "  cache: can storage feed the simulated trainers? cold: yes (AU 97.0%, target 90.0%, 1 worker)\n"
      "  does the cache help? cold: yes, the cache path reads 3.0× faster than the source (12 matched "
      "pairs); warm: no difference beyond 10% (the cache path reads 1.02× the source's rate) (1 matched "
      "pair); direct: no, the cache path reads 2.0× slower than the source (2 matched pairs); like with "
      "like: "
      "each pair differs only in its path\n"
      "  staging to the cache copies at best 600 MiB/s (4 workers)\n");
}

// The same answers, worded for the page: one sentence each, in the console's order.
TEST(SummaryAnswersTest, ThePageSentencesSayTheSameAnswers) {
  EXPECT_EQ(
      answer_sentences(full_answers()),
      (std::vector<std::string>{
          "Source path keeps 2 simulated accelerators at AU ≥ 90%.",
          "Source path does not feed the simulated trainers cold: AU 61.0% at best with 2 workers — below "
          "the 90% target.",
          "Source path feeds the simulated trainers warm: AU 99.0% with 1 worker — meets the 90% target.",
          "Source path reads at best 100 MiB/s cold (4 workers, random), 1 GiB/s warm (1 worker) and 50 "
          "MiB/s direct (4 workers).",
          "Cache path feeds the simulated trainers cold: AU 97.0% with 1 worker — meets the 90% target.",
          "Does the cache help? Cold: yes, the cache path reads 3.0× faster than the source (12 matched "
          "pairs); warm: no difference beyond 10% (the cache path reads 1.02× the source's rate) (1 "
          "matched pair); direct: no, the cache path reads 2.0× slower than the source (2 matched pairs); "
          "like with like: each pair differs only in its path.",
          "Staging to the cache copies at best 600 MiB/s (4 workers).",
      }));
  json a = full_answers();
  a["paths"][1]["keeps"] = {{"accelerators", 0}, {"target_au", 0.9}};
  EXPECT_EQ(answer_sentences(a)[0],
            "Source path keeps 2 simulated accelerators at AU ≥ 90%; cache path keeps none.");
  std::swap(a["paths"][0], a["paths"][1]);
  EXPECT_EQ(answer_sentences(a)[0],
            "Cache path keeps no simulated accelerator at AU ≥ 90%; source path keeps 2.");
  EXPECT_EQ(answer_sentences(json::object()), std::vector<std::string>{});
  // Loader cases too short to judge: said so, by both.
  const json short_only = {{"version", 2}, {"loader_not_judged", 2}, {"paths", json::array()}};
  EXPECT_EQ(answer_sentences(short_only),
            std::vector<std::string>{"Loader cases: too few steps measured to judge them (raise steps)."});
  EXPECT_EQ(format_answers(short_only),
            "  loader: too few steps measured to judge whether storage feeds the simulated trainers (raise "
            "steps)\n");
}

// Every optional part of every sentence, left out one at a time and all together.
TEST(SummaryAnswersTest, EveryOptionalPartCanBeAbsent) {
  const json full = full_answers();
  std::vector<std::vector<std::string>> removals = {
      {"/paths/0/feeds/cold/workers"},
      {"/paths/0/feeds/cold/au"},
      {"/paths/0/feeds/cold/target_au"},
      {"/paths/0/feeds/cold/workers", "/paths/0/feeds/cold/au", "/paths/0/feeds/cold/target_au"},
      {"/paths/0/feeds/warm"},
      {"/paths/0/feeds/cold"},
      {"/paths/0/feeds"},
      {"/paths/0/keeps"},
      {"/paths/0/keeps/target_au"},
      {"/paths/0/keeps", "/paths/0/feeds"},
      {"/paths/0/reads/cold/workers"},
      {"/paths/0/reads/cold/pattern"},
      {"/paths/0/reads/cold/workers", "/paths/0/reads/cold/pattern"},
      {"/paths/0/reads/warm/workers"},
      {"/paths/0/reads/direct/workers"},
      {"/paths/0/reads/direct"},
      {"/paths/0/reads/cold"},
      {"/paths/0/reads/warm/bytes_per_second"},
      {"/paths/0/reads"},
      {"/paths/0/feeds", "/paths/0/reads"},
      {"/paths/1/feeds/cold"},
      {"/paths/1"},
      {"/paths/0/path"},
      {"/paths/0/path", "/paths/0/feeds", "/paths/0/keeps"},
      {"/stage/workers"},
      {"/stage"},
      {"/cache_helps/0/pairs"},
      {"/cache_helps/1"},
      {"/cache_helps"},
      {"/paths/0/feeds", "/paths/1/feeds", "/cache_helps/0/pairs", "/cache_helps/1/pairs"}};
  for (const auto& gone : removals) {
    json a = full;
    for (const std::string& pointer : gone) {
      const json::json_pointer p(pointer);
      json& parent = a[p.parent_pointer()];
      if (parent.is_array()) parent.erase(std::stoul(p.back()));
      else parent.erase(p.back());
    }
    SCOPED_TRACE(gone.front());
    expect_whole_sentences(format_answers(a), text_table(answer_table(a), 2));
    std::string page;
    for (const std::string& sentence : answer_sentences(a)) page += sentence + "\n";
    expect_whole_sentences(page);
  }
  // Without the source's loader, its line says what it reads and that nothing judged it.
  json a = full;
  a["paths"][0].erase("feeds");
  a["paths"][0].erase("keeps");
  a["paths"][0]["reads"].erase("direct");
  EXPECT_NE(
      format_answers(a).find("  source: reads at best 100 MiB/s cold (4 workers), 1 GiB/s warm (1 worker); "
                             "no training loop in this run to judge that against\n"),
      std::string::npos)
      << format_answers(a);
  a["paths"][0]["reads"]["cold"].erase("workers");
  EXPECT_NE(format_answers(a).find("reads at best 100 MiB/s cold, 1 GiB/s warm (1 worker);"),
            std::string::npos)
      << format_answers(a);
  a["cache_helps"][0].erase("pairs");
  EXPECT_NE(format_answers(a).find("cold: yes, the cache path reads 3.0× faster than the source; warm"),
            std::string::npos)
      << format_answers(a);
  EXPECT_EQ(format_answers(json::object()), "");
}

// From a result: the answers come first in the printed summary, from the fold's medians, and
// every line fits the console.
TEST(SummaryAnswersTest, ARunsSummaryOpensWithTheAnswers) {
  ResultDocument doc;
  Shape s;
  for (const char* path : {"source", "cache"})
    for (const char* state : {"cold", "warm"}) {
      s.path = path;
      s.state = state;
      add_case(&doc, s, std::string(path) == "cache" && std::string(state) == "cold" ? 300e6 : 100e6);
    }
  const json summary = summarize(doc);
  ASSERT_TRUE(summary.contains("answers")) << summary.dump(2);
  const std::string text = wrap_text(format_summary(summary));
  EXPECT_EQ(
      text.rfind("Summary\n  path    state  accelerators fed  limit  rate\n"
                 "  source  cold   -                 -      95.4 MiB/s read\n"
                 "  source  warm   -                 -      95.4 MiB/s read\n"
                 "  cache   cold   -                 -      286 MiB/s read\n"
                 "  cache   warm   -                 -      95.4 MiB/s read\n"
                 "  source: reads at best 95.4 MiB/s cold (1 worker), 95.4 MiB/s warm (1 worker); no "
                 "training loop in this run to judge\n      that against\n  cache: reads at best 286 MiB/s "
                 "cold (1 worker)",
                 0),
      0u)
      << text;
  EXPECT_NE(format_answers(summary["answers"])
                .find("  does the cache help? cold: yes, the cache path reads 3.0× "
                      "faster than the source (1 matched pair); warm: no difference beyond 10% (the cache "
                      "path reads 1.00× the source's rate) (1 matched pair)"),
            std::string::npos)
      << text;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    std::size_t cols = 0;
    for (std::size_t i = start; i < end; ++i) cols += (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
    EXPECT_LE(cols, 120u) << text.substr(start, end - start);
    start = end + 1;
  }
}

// A case read with O_DIRECT measures the device: its own state in the answers, beside cold and
// warm, in what the path reads and in whether the cache helps.
TEST(SummaryAnswersTest, DirectIsAStateOfItsOwn) {
  ResultDocument doc;
  Shape s;
  for (const char* path : {"source", "cache"})
    for (const char* state : {"cold", "direct"}) {
      s.path = path;
      s.state = state;
      add_case(&doc, s,
               (std::string(state) == "direct" ? 50e6 : 100e6) * (std::string(path) == "cache" ? 3 : 1));
    }
  const json a = summarize(doc)["answers"];
  ASSERT_TRUE(a["paths"][0]["reads"].contains("direct")) << a.dump(2);
  EXPECT_DOUBLE_EQ(a["paths"][0]["reads"]["direct"]["bytes_per_second"].get<double>(), 50e6);
  ASSERT_EQ(a["cache_helps"].size(), 2u) << a.dump(2);
  EXPECT_EQ(a["cache_helps"][1]["cache_state"], "direct");
  EXPECT_NE(format_answers(a).find(
                "source: reads at best 95.4 MiB/s cold (1 worker), 47.7 MiB/s direct (1 worker)"),
            std::string::npos)
      << format_answers(a);
  EXPECT_NE(format_answers(a).find(
                "; direct: yes, the cache path reads 3.0× faster than the source (1 matched pair)"),
            std::string::npos)
      << format_answers(a);
}

// The answers always carry their version, even when they say nothing: a reader tells this
// engine's from an older file's, which had none.
TEST(SummaryAnswersTest, TheStoredSummaryIsPrintedUnlessItIsOlderThanTheEngine) {
  EXPECT_EQ(summarize(ResultDocument{})["answers"]["version"], kAnswersVersion);
  ResultDocument doc;
  add_case(&doc, Shape{}, 100e6);
  doc.summary = summarize(doc);
  doc.summary["sizing"] = {{"note", "smaller than memory"}};
  doc.summary["answers"]["paths"][0]["reads"]["cold"]["bytes_per_second"] = 1e9;  // what the run said
  EXPECT_EQ(summary_of(doc), doc.summary);
  for (const json& older :
       {json::object(), json{{"note", "fixture"}},
        json{{"answers", {{"paths", json::array()}}}, {"sizing", doc.summary["sizing"]}},
        json{{"answers", {{"version", "2"}}}}, json{{"answers", {{"version", 2}, {"paths", "source"}}}},
        json{{"answers",
              {{"version", 2},
               {"paths", {{{"path", "source"}, {"reads", {{"cold", {{"bytes_per_second", "fast"}}}}}}}}}}},
        json{{"answers", {{"version", 2}, {"stage", {{"bytes_per_second", "fast"}}}}}},
        json{{"answers", {{"version", 2}, {"cache_helps", {{{"ratio", "2"}}}}}}}}) {
    doc.summary = older;
    json expected = summarize(doc);
    if (older.contains("sizing")) expected["sizing"] = older["sizing"];
    EXPECT_EQ(summary_of(doc), expected) << older.dump();
  }
}

// ---- a cache measured unverified (--allow-unverified-cache): said beside every cache figure

// A loader case on `path`: its AU and verdict as the family records them.
BenchmarkEntry loader_case(const std::string& path, int workers, double au) {
  BenchmarkEntry e;
  e.params = {{"family", "loader"}, {"batch_size", 4},       {"workers", workers},
              {"target_au", 0.9},   {"cache_state", "warm"}, {"path", path}};
  e.case_name = "loader/batch:4/workers:" + std::to_string(workers) + "/state:warm/path:" + path;
  e.name = e.run_name = e.case_name;
  e.run_type = "iteration";
  e.counters = {{"samples_per_second", 1000 * au}, {"au", au}, {"stall_fraction", 1 - au}};
  e.extra = {{"verdict", "AU " + std::to_string(static_cast<int>(au * 100)) + "%"}};
  return e;
}

// Both paths read cold and warm with 1 and 2 workers, and a loader worker sweep on the cache
// beside one loader case on the source; `verified` is what dataset.cache says (null: nothing).
ResultDocument both_paths_doc(const json& verified) {
  ResultDocument doc;
  Shape s;
  for (const char* path : {"source", "cache"})
    for (const char* state : {"cold", "warm"})
      for (int workers : {1, 2}) {
        s.path = path;
        s.state = state;
        s.workers = workers;
        add_case(&doc, s,
                 (std::string(path) == "cache" ? 300e6 : 100e6) * (state[0] == 'w' ? 4 : 1) * workers);
      }
  doc.benchmarks.push_back(loader_case("cache", 1, 0.95));
  doc.benchmarks.push_back(loader_case("cache", 2, 0.97));
  doc.benchmarks.push_back(loader_case("source", 1, 0.5));
  doc.dataset["cache"] = {{"root", "/cache"}, {"files", 4}};
  if (!verified.is_null()) doc.dataset["cache"]["verified"] = verified;
  return doc;
}

// The lines of both_paths_doc's summary; `q` is what a cache figure's line carries after it.
std::vector<std::string> both_paths_lines(const std::string& q) {
  return {
      "Summary",
      R"(  path +state +accelerators fed +limit +rate)",
      R"(  source +cold +- +- +191 MiB/s read)",
      R"(  source +warm +- +- +763 MiB/s read)",
      "  cache" + q + R"( +cold +- +- +572 MiB/s read)",
      "  cache" + q + R"( +warm +- +- +2\.24 GiB/s read)",
      R"(  source: can storage feed the simulated trainers\? warm: no \(AU 50\.0% at best, target 90\.0%, 1 )"
      R"(worker\); reads at best 191 MiB/s cold \(2 workers\), 763 MiB/s warm \(2 workers\))",
      "  cache" + q +
          R"(: can storage feed the simulated trainers\? warm: yes \(AU 95\.0%, target 90\.0%, 1 )"
          R"(worker\); reads at best 572 MiB/s cold \(2 workers\), 2\.24 GiB/s warm \(2 workers\))",
      R"(  does the cache help\? cold: yes, the cache path reads 3\.0× faster than the source \(2 matched )"
      R"(pairs\); warm: yes, the cache path reads 3\.0× faster than the source \(2 matched pairs\); like with )"
      "like: each pair differs only in its path" +
          q,
      R"(  best throughput \(median of achieved repetitions\), per path and cache state:)",
      "    source  cold +191 MiB/s  workers 2  workers:2 state:cold path:source",
      "    source  warm +763 MiB/s  workers 2  workers:2 state:warm path:source",
      "    cache   cold +572 MiB/s  workers 2  workers:2 state:cold path:cache" + q,
      "    cache   warm +2\\.24 GiB/s  workers 2  workers:2 state:warm path:cache" + q,
      R"(  more workers, deeper queues \(knee: the smallest count within 5% of the best\):)",
      R"(    sequential 128 KiB psync cold source: best at 2 workers \(191 MiB/s\); still rising .*)",
      R"(    sequential 128 KiB psync warm source: best at 2 workers \(763 MiB/s\); still rising .*)",
      R"(    sequential 128 KiB psync cold cache: best at 2 workers \(572 MiB/s\); still rising .*help)" + q,
      R"(    sequential 128 KiB psync warm cache: best at 2 workers \(2\.24 GiB/s\); still rising .*help)" +
          q,
      R"(  cold vs warm, sequential 128 KiB psync 1 worker source: warm was 4\.0× faster than cold .*warm\))",
      R"(  cold vs warm, sequential 128 KiB psync 2 workers source: warm was 4\.0× faster than cold .*warm\))",
      R"(  cold vs warm, sequential 128 KiB psync 1 worker cache: warm was 4\.0× .*warm\))" + q,
      R"(  cold vs warm, sequential 128 KiB psync 2 workers cache: warm was 4\.0× .*warm\))" + q,
      R"(  source vs cache, sequential 128 KiB psync 1 worker cold: cache path was 3\.0× .*cache\))" + q,
      R"(  source vs cache, sequential 128 KiB psync 2 workers cold: cache path was 3\.0× .*cache\))" + q,
      R"(  source vs cache, sequential 128 KiB psync 1 worker warm: cache path was 3\.0× .*cache\))" + q,
      R"(  source vs cache, sequential 128 KiB psync 2 workers warm: cache path was 3\.0× .*cache\))" + q,
      R"(  training loop \(AU of all trainers together, median of achieved repetitions; the table's min AU is the lowest trainer's; target per case\):)",
      "    workers:1 path:cache: AU 95%" + q,
      "    workers:2 path:cache: AU 97%" + q,
      "    workers:1 path:source: AU 50%",
      R"(  minimum workers: 1, the smallest count reaching AU 90\.0% \(1: 95\.0%, 2: 97\.0%\) in )"
      "path:cache" +
          q,
  };
}

// Verified false: every line of a figure or an answer measured on the cache path says so, and
// no line of the source does; the answers record it for the reporters that print them.
TEST(SummaryCacheUnverified, EveryCacheFigureSaysItAndNoSourceFigureDoes) {
  const json summary = summarize(both_paths_doc(false));
  EXPECT_EQ(summary["answers"]["cache_unverified"], true);
  EXPECT_TRUE(answers_cache_unverified(summary["answers"]));
  testing::expect_lines(format_summary(summary), both_paths_lines(R"( \(cache unverified\))"));
}

// Verified true, or a file that does not say (verification unknown): no qualifier anywhere.
TEST(SummaryCacheUnverified, AVerifiedOrUnknownCacheIsNotQualified) {
  for (const json& verified : {json(true), json(nullptr), json("no")}) {
    const json summary = summarize(both_paths_doc(verified));
    EXPECT_FALSE(summary["answers"].contains("cache_unverified")) << verified;
    const std::string text = format_summary(summary);
    EXPECT_EQ(text.find(kCacheUnverified), std::string::npos) << text;
    testing::expect_lines(text, both_paths_lines(""));
  }
  ResultDocument no_cache = both_paths_doc(nullptr);
  no_cache.dataset = json::object();
  EXPECT_FALSE(cache_unverified(no_cache));
}

// The page's sentences say it of the cache path and of the cache's answer.
TEST(SummaryCacheUnverified, ThePageSentencesSayItToo) {
  json a = full_answers();
  a["paths"][1]["keeps"] = {{"accelerators", 8}, {"target_au", 0.9}};
  a["cache_unverified"] = true;
  const std::vector<std::string> sentences = answer_sentences(a);
  ASSERT_EQ(sentences.size(), 7u);
  EXPECT_EQ(sentences[0],
            "Source path keeps 2 simulated accelerators at AU ≥ 90%; cache path (cache unverified) keeps 8.");
  EXPECT_EQ(sentences[3].rfind("Source path reads at best", 0), 0u);
  EXPECT_EQ(sentences[4],
            "Cache path (cache unverified) feeds the simulated trainers cold: AU 97.0% with 1 worker — meets "
            "the 90% target.");
  const std::string helps_end = "like with like: each pair differs only in its path (cache unverified).";
  ASSERT_GT(sentences[5].size(), helps_end.size());
  EXPECT_EQ(sentences[5].substr(sentences[5].size() - helps_end.size()), helps_end);
  EXPECT_EQ(sentences[6], "Staging to the cache copies at best 600 MiB/s (4 workers).");
  for (std::size_t i : {1, 2, 3}) EXPECT_EQ(sentences[i].find(kCacheUnverified), std::string::npos);
  a.erase("cache_unverified");
  for (const std::string& sentence : answer_sentences(a))
    EXPECT_EQ(sentence.find(kCacheUnverified), std::string::npos) << sentence;
}

// The stored answers are printed, with the document's verification: a file whose answers were
// stored before they carried it says its cache unverified all the same, and the document's
// record wins over answers that say otherwise.
TEST(SummaryCacheUnverified, TheStoredAnswersTakeTheDocumentsVerification) {
  ResultDocument doc = both_paths_doc(false);
  doc.summary = summarize(doc);
  doc.summary["answers"].erase("cache_unverified");  // as a run before the field stored them
  doc.summary["answers"]["paths"][1]["reads"]["cold"]["bytes_per_second"] = 1e9;  // what the run said
  json printed = summary_of(doc);
  EXPECT_EQ(printed["answers"]["cache_unverified"], true);
  EXPECT_DOUBLE_EQ(printed["answers"]["paths"][1]["reads"]["cold"]["bytes_per_second"].get<double>(), 1e9);
  EXPECT_NE(format_summary(printed).find("  cache (cache unverified): can storage feed"), std::string::npos);
  doc.dataset["cache"]["verified"] = true;
  doc.summary["answers"]["cache_unverified"] = true;
  printed = summary_of(doc);
  EXPECT_FALSE(printed["answers"].contains("cache_unverified"));
  EXPECT_EQ(format_summary(printed).find(kCacheUnverified), std::string::npos);
}

// Lines the fixtures above have none of: epochs of a loader case, accelerator sweeps, cases
// across ranks and stragglers, each on the cache path or not.
TEST(SummaryCacheUnverified, LoaderEpochsSweepsRanksAndStragglersOnTheCacheSayIt) {
  const std::string cache = "loader/batch:4/workers:1/acc:*/state:cold/path:cache";
  const json loader = {{"verdicts",
                        {{{"case", "loader/batch:4/workers:1/state:cold/path:cache"},
                          {"verdict", "AU 95%"},
                          {"epochs", {{{"epoch", 1}, {"au", 0.9}}, {{"epoch", 2}, {"au", 1.0}}}}}}},
                       {"max_accelerators",
                        {{{"sweep", cache},
                          {"target_au", 0.9},
                          {"tried", {{{"accelerators", 2}, {"min_au", 0.95}}}},
                          {"max_accelerators", 2}},
                         {{"sweep", "loader/acc:*/path:source"},
                          {"target_au", 0.9},
                          {"tried", json::array()},
                          {"max_accelerators", nullptr}}}}};
  testing::expect_lines(
      format_loader_summary(loader, true),
      {R"(  training loop \(AU of all trainers together, median of achieved repetitions; the table's min AU is the lowest trainer's; target per case\):)",
       R"(    loader/batch:4/workers:1/state:cold/path:cache: AU 95% \(cache unverified\))",
       R"(      epoch 1: AU 90\.0%, .* samples/s \(cache unverified\))",
       R"(      epoch 2: AU 100\.0%, .* samples/s \(cache unverified\))",
       R"(  accelerators supported: 2, .* in loader/.*/path:cache \(cache unverified\))",
       R"(  accelerators supported: none .* in loader/acc:\*/path:source)"});
  EXPECT_EQ(format_loader_summary(loader).find(kCacheUnverified), std::string::npos);

  const std::string on_cache = name_of(Shape{.path = "cache"}), on_source = name_of(Shape{});
  const json host = {{"host", "a"}, {"bytes_per_second", 1e8}},
             rank = {{"rank", 0}, {"host", "a"}, {"bytes_per_second", 1e8}};
  const json straggler = {
      {"rank", 1},       {"host", "b"}, {"repetitions", 1}, {"of_repetitions", 1}, {"bytes_per_second", 1e7},
      {"vs_median", 0.1}};
  json summary = {{"answers", {{"version", kAnswersVersion}, {"cache_unverified", true}}},
                  {"ranks",
                   {{{"case", on_cache}, {"repetitions", 1}, {"hosts", {host}}, {"ranks", {rank}}},
                    {{"case", on_source}, {"repetitions", 1}, {"hosts", {host}}, {"ranks", {rank}}}}},
                  {"stragglers", {straggler, straggler}}};
  summary["stragglers"][0]["case"] = on_cache;
  summary["stragglers"][1]["case"] = on_source;
  const std::string q = R"( \(cache unverified\))";
  testing::expect_lines(format_summary(summary),
                        {"Summary", "  across ranks, .*/path:cache \\(medians of 1 repetitions\\)" + q + ":",
                         "    hosts: a 95\\.4 MiB/s" + q, "    ranks: 0 \\(a\\) 95\\.4 MiB/s" + q,
                         "  across ranks, .*/path:source \\(medians of 1 repetitions\\):",
                         "    hosts: a 95\\.4 MiB/s", "    ranks: 0 \\(a\\) 95\\.4 MiB/s",
                         "  straggler: rank 1 .* of .*/path:cache: .* of the median rank's rate" + q,
                         "  straggler: rank 1 .* of .*/path:source: .* of the median rank's rate"});
}

TEST(SummaryCacheUnverified, OnlyAPartOfTheNameReadsTheCachePath) {
  EXPECT_TRUE(on_cache_path("file_read/workers:1/path:cache"));
  EXPECT_TRUE(on_cache_path("loader/path:cache/extra:1"));
  EXPECT_FALSE(on_cache_path("file_read/workers:1/path:source"));
  EXPECT_FALSE(on_cache_path("file_read/path:cache2"));
  EXPECT_FALSE(on_cache_path("file_read/subpath:cache"));
  EXPECT_EQ(cache_note(true), " (cache unverified)");
  EXPECT_EQ(cache_note(false), "");
}

// ---- whether more workers help: the sweep's own figures say it, never one round

// A CPU-bound worker sweep reaching `au` at 2, 4 and 8 workers.
ResultDocument cpu_sweep(const std::vector<double>& au) {
  ResultDocument doc;
  const int counts[] = {2, 4, 8};
  for (std::size_t i = 0; i < au.size(); ++i) {
    BenchmarkEntry e = loader_case("source", counts[i], au[i]);
    e.extra["limit"] = {{"by", "cpu"},
                        {"fed", false},
                        {"text",
                         "limit: the decode's CPU — 2 cores saturated (98% busy), 90% of the workers' time "
                         "in the decode: a cheaper transform or more cores"}};
    doc.benchmarks.push_back(e);
  }
  return doc;
}

// AU rising 13.5 -> 15.3 -> 17.6% with 2, 4, 8 workers once printed "more workers will not help
// on this CPU" beside it: the sweep says AU still rises instead.
TEST(SummaryMoreWorkers, ASweepStillRisingNeverSaysMoreWorkersWillNotHelp) {
  const json summary = summarize(cpu_sweep({0.135, 0.153, 0.176}));
  EXPECT_EQ(summary["loader"]["min_workers"][0]["more_workers"], "rising") << summary["loader"].dump(2);
  const std::string text = format_summary(summary);
  EXPECT_EQ(text.find("will not help"), std::string::npos) << text;
  EXPECT_THAT(text, HasSubstr("(2: 13.5%, 4: 15.3%, 8: 17.6%) in loader; AU still rising at the largest "
                              "count tried: more workers may help"));
}

TEST(SummaryMoreWorkers, AFlatSweepOnSaturatedCoresSaysMoreWorkersWillNotHelp) {
  const std::string text = format_summary(summarize(cpu_sweep({0.150, 0.160, 0.162})));
  EXPECT_THAT(
      text,
      HasSubstr("; more workers will not help on this CPU: the largest count raised AU no more than 5% and "
                "its cores were saturated"));
  // Flat but not CPU-bound (storage): nothing said of the CPU.
  ResultDocument doc = cpu_sweep({0.150, 0.160, 0.162});
  for (BenchmarkEntry& e : doc.benchmarks) e.extra["limit"]["by"] = "storage";
  EXPECT_EQ(format_summary(summarize(doc)).find("will not help"), std::string::npos);
}
}  // namespace
}  // namespace feedbench
