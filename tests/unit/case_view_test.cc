// The one fold from repetitions to cases, and the reporters that must all use it: fed one
// document with a cold round that was not cold, a round that read less than planned and a
// calibration case, the console summary, Markdown, CSV, the loader summary and the HTML page
// quote the same headline figures, none of them counting the bad rounds or the calibration.
#include "reporters/case_view.h"

#include <sstream>

#include <gtest/gtest.h>

#include <cmath>

#include "feedbench/base/units.h"
#include "reporters/csv_writer.h"
#include "reporters/html_report.h"
#include "reporters/loader_summary.h"
#include "reporters/markdown_writer.h"
#include "reporters/summary.h"

namespace feedbench {
namespace {

using nlohmann::json;

std::string read_name(int workers, const std::string& state) {
  return "file_read/pattern:sequential/bs:1048576/engine:psync/qd:1/workers:" + std::to_string(workers) +
         "/state:" + state + "/path:source";
}

BenchmarkEntry read_rep(int workers, const std::string& state, int rep, double bps, bool achieved = true) {
  BenchmarkEntry e;
  e.case_name = read_name(workers, state);
  e.name = e.run_name = e.case_name + "/iterations:1/repeats:3/manual_time";
  e.run_type = "iteration";
  e.repetitions = 3;
  e.repetition_index = rep;
  e.real_time = 1e3 * 1e8 / bps;
  e.params = nlohmann::ordered_json::object();
  e.params["family"] = "file_read";
  e.params["pattern"] = "sequential";
  e.params["block_size"] = 1048576;
  e.params["workers"] = workers;
  e.params["cache_state"] = state;
  e.params["path"] = "source";
  e.counters = {{"bytes_per_second", bps}, {"items_per_second", bps / 1048576}};
  const double residency = state == "cold" ? (achieved ? 0.0 : 0.97) : (achieved ? 1.0 : 0.2);
  e.cache = {{"requested", state}, {"residency_before", residency}, {"achieved", achieved}};
  e.extra = {{"bytes", 100000000}};
  return e;
}

BenchmarkEntry loader_rep(int accelerators, int rep, double au, bool calibration = false) {
  BenchmarkEntry e;
  e.params = nlohmann::ordered_json::object();
  e.params["family"] = "loader";
  e.params["batch_size"] = 32;
  e.params["workers"] = 4;
  e.params["accelerators"] = accelerators;
  if (calibration) e.params["samples"] = "memory";
  e.params["target_au"] = 0.9;
  e.params["cache_state"] = "cold";
  e.params["path"] = "source";
  e.case_name = "loader/batch:32/workers:4/acc:" + std::to_string(accelerators) +
                (calibration ? "/samples:memory" : "") + "/state:cold/path:source";
  e.name = e.run_name = e.case_name + "/iterations:1/repeats:3/manual_time";
  e.run_type = "iteration";
  e.repetitions = 3;
  e.repetition_index = rep;
  e.counters = {{"samples_per_second", 1000 * au},
                {"au", au},
                {"stall_fraction", 1 - au},
                {"bytes_per_second", 1e6 * au}};
  // A calibration run does no I/O: its page cache is whatever it is, and that is not a flaw.
  e.cache = {
      {"requested", "cold"}, {"residency_before", calibration ? 1.0 : 0.0}, {"achieved", !calibration}};
  e.extra = {{"verdict", au >= 0.9 ? "AU high: storage keeps up" : "AU low: training waits"},
             {"min_au", au},
             {"target_au", 0.9},
             {"calibration", calibration}};
  return e;
}

// The aggregates Google Benchmark adds, computed over every repetition (bad ones included).
void add_gb_median(ResultDocument* d, const std::string& name, double bps) {
  BenchmarkEntry agg;
  agg.case_name = name;
  agg.name = name + "/iterations:1/repeats:3/manual_time_median";
  agg.run_name = name + "/iterations:1/repeats:3/manual_time";
  agg.run_type = "aggregate";
  agg.aggregate_name = "median";
  agg.counters = {{"bytes_per_second", bps}};
  d->benchmarks.push_back(agg);
}

// Source cold at 1 worker: 100, 110 and a cold round that found its data cached (5 GB/s).
// Source cold at 2 workers: 120, 130 and a round that read a tenth of its plan (9 GB/s).
// Source cold at 4 workers: one round only, not cold (20 GB/s): no figure at all.
// Source warm at 1 worker: 1000, 1100, 1200.
// Loader over 1, 2, 4 accelerators (AU 0.95, 0.92, 0.5) and a calibration case at 8 (0.999).
ResultDocument mixed_document() {
  ResultDocument d;
  d.config = {{"name", "agreement"}};
  d.benchmarks.push_back(read_rep(1, "cold", 0, 100e6));
  d.benchmarks.push_back(read_rep(1, "cold", 1, 110e6));
  d.benchmarks.push_back(read_rep(1, "cold", 2, 5000e6, /*achieved=*/false));
  add_gb_median(&d, read_name(1, "cold"), 110e6);
  d.benchmarks.push_back(read_rep(2, "cold", 0, 120e6));
  d.benchmarks.push_back(read_rep(2, "cold", 1, 130e6));
  BenchmarkEntry short_round = read_rep(2, "cold", 2, 9000e6);
  short_round.extra["round_complete"] = false;
  short_round.extra["bytes_planned"] = 100000000;
  short_round.extra["bytes_read"] = 10000000;
  d.benchmarks.push_back(short_round);
  add_gb_median(&d, read_name(2, "cold"), 130e6);
  d.benchmarks.push_back(read_rep(4, "cold", 0, 20000e6, /*achieved=*/false));
  for (int rep = 0; rep < 3; ++rep) d.benchmarks.push_back(read_rep(1, "warm", rep, 1000e6 + rep * 100e6));
  for (int rep = 0; rep < 3; ++rep) {
    d.benchmarks.push_back(loader_rep(1, rep, 0.95));
    d.benchmarks.push_back(loader_rep(2, rep, 0.92));
    d.benchmarks.push_back(loader_rep(4, rep, 0.5));
    d.benchmarks.push_back(loader_rep(8, rep, 0.999, /*calibration=*/true));
  }
  return d;
}

// RETURNS: the CSV's case row (run_type "case") of `name`, split at commas outside quotes.
std::vector<std::string> csv_case_row(const std::string& csv, const std::string& name,
                                      std::vector<std::string>* header) {
  auto split = [](const std::string& line) {
    std::vector<std::string> cells{""};
    bool quoted = false;
    for (char ch : line) {
      if (ch == '"') quoted = !quoted;
      if (ch == ',' && !quoted) cells.emplace_back();
      else if (ch != '"') cells.back() += ch;
    }
    return cells;
  };
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  *header = split(line);
  while (std::getline(in, line)) {
    auto cells = split(line);
    if (cells[0] != name) continue;
    for (std::size_t i = 0; i < header->size(); ++i)
      if ((*header)[i] == "run_type" && cells[i] == "case") return cells;
  }
  return {};
}

std::string cell_of(const std::vector<std::string>& header, const std::vector<std::string>& row,
                    const std::string& column) {
  for (std::size_t i = 0; i < header.size() && i < row.size(); ++i)
    if (header[i] == column) return row[i];
  return "(no column " + column + ")";
}

TEST(CaseViewTest, EveryReporterQuotesTheSameHeadlineWithoutBadRoundsOrCalibration) {
  const ResultDocument doc = mixed_document();
  const double best_cold = 125e6;  // median of 120 and 130: the 9 GB/s short round excluded
  const double warm = 1100e6;

  // The console summary.
  json s = summarize(doc);
  ASSERT_TRUE(s.contains("file_read")) << s.dump(2);
  json cold_best, warm_best;
  for (const json& b : s["file_read"]["best"]) {
    if (b["cache_state"] == "cold") cold_best = b;
    if (b["cache_state"] == "warm") warm_best = b;
  }
  ASSERT_FALSE(cold_best.is_null()) << s.dump(2);
  EXPECT_DOUBLE_EQ(cold_best["bytes_per_second"].get<double>(), best_cold) << s.dump(2);
  EXPECT_EQ(cold_best["case"], read_name(2, "cold"));
  EXPECT_DOUBLE_EQ(warm_best["bytes_per_second"].get<double>(), warm);
  const std::string console = format_summary(s);
  EXPECT_NE(console.find(format_rate(best_cold)), std::string::npos) << console;
  EXPECT_NE(console.find("short round"), std::string::npos) << console;

  // The loader summary: 2 accelerators; the calibration case at 8 is no storage figure.
  json loader = summarize_loader(doc);
  ASSERT_EQ(loader["max_accelerators"].size(), 1u) << loader.dump(2);
  EXPECT_EQ(loader["max_accelerators"][0]["max_accelerators"], 2);
  EXPECT_NE(console.find("accelerators supported: 2,"), std::string::npos) << console;

  // Markdown: the same figures in the tables and the summary, none of the bad rounds'.
  const std::string md = format_markdown(doc);
  EXPECT_NE(md.find(format_rate(best_cold)), std::string::npos) << md;
  EXPECT_NE(md.find("accelerators supported: 2,"), std::string::npos) << md;
  for (double bad : {130e6, 110e6, 5000e6, 9000e6, 20000e6})
    EXPECT_EQ(md.find(format_rate(bad)), std::string::npos) << format_rate(bad) << "\n" << md;
  EXPECT_NE(md.find("short round"), std::string::npos) << md;

  // CSV: per-repetition rows stay; the case row carries the fold's median.
  const std::string csv = format_csv(doc);
  std::vector<std::string> header;
  auto row = csv_case_row(csv, read_name(2, "cold"), &header);
  ASSERT_FALSE(row.empty()) << csv;
  EXPECT_EQ(cell_of(header, row, "bytes_per_second"), json(best_cold).dump()) << csv;
  EXPECT_EQ(cell_of(header, row, "achieved_repetitions"), "2") << csv;
  row = csv_case_row(csv, read_name(4, "cold"), &header);
  ASSERT_FALSE(row.empty()) << csv;
  EXPECT_EQ(cell_of(header, row, "bytes_per_second"), "") << csv;  // nothing measured
  // Google Benchmark's aggregates fold every round, the bad ones too: not a figure here.
  EXPECT_EQ(csv.find("\"aggregate\""), std::string::npos) << csv;

  // The HTML page: the embedded data and the headline.
  json data = html_report_data({doc}, {"r"});
  for (const json& c : data["files"][0]["cases"]) {
    if (c["case"] == read_name(2, "cold")) {
      EXPECT_DOUBLE_EQ(c["counters"]["bytes_per_second"].get<double>(), best_cold);
    } else if (c["case"] == read_name(1, "cold")) {
      EXPECT_DOUBLE_EQ(c["counters"]["bytes_per_second"].get<double>(), 105e6);
    } else if (c["case"] == read_name(4, "cold")) {
      EXPECT_FALSE(c["counters"].contains("bytes_per_second"));
    }
  }
  std::string verdicts;
  for (const std::string& v : html_report_verdicts(doc)) verdicts += v + "\n";
  EXPECT_NE(verdicts.find("keeps 2 simulated accelerators"), std::string::npos) << verdicts;
  EXPECT_NE(verdicts.find("119 MiB/s cold (2 workers"), std::string::npos) << verdicts;
  EXPECT_EQ(verdicts.find("GiB/s cold"), std::string::npos) << verdicts;
}

TEST(CaseViewTest, FoldsAchievedRepetitionsAndCountsTheRest) {
  std::vector<CaseView> cases = fold_cases(mixed_document());
  ASSERT_EQ(cases.size(), 8u);
  const CaseView& one = cases[0];
  EXPECT_EQ(one.name, read_name(1, "cold"));
  EXPECT_EQ(one.family, "file_read");
  EXPECT_EQ(one.achieved, 2u);
  ASSERT_EQ(one.excluded.size(), 1u);
  EXPECT_EQ(one.excluded[0].repetition_index, 2);
  EXPECT_EQ(one.excluded[0].reason, "cold not achieved: 97.0% resident before the round");
  EXPECT_DOUBLE_EQ(*one.counter("bytes_per_second"), 105e6);
  // The spread is over the counted repetitions only (the 5 GB/s round is not in it): the
  // coefficient of variation of 100 and 110, and of 1000, 1100, 1200.
  EXPECT_NEAR(one.spread.at("bytes_per_second"), std::sqrt(50.0) / 105, 1e-12);
  EXPECT_NEAR(cases[3].spread.at("bytes_per_second"), 100.0 / 1100, 1e-12);
  EXPECT_FALSE(cases[4].spread.count("nothing"));
  EXPECT_EQ(one.repetitions(), 3u);
  EXPECT_EQ(one.exclusion_note(),
            "1 of 3 repetitions excluded (repetition 2: cold not achieved: 97.0% resident before the round)");
  EXPECT_EQ(cases[1].excluded.at(0).reason, "short round: read 9.54 MiB of 95.4 MiB planned");
  EXPECT_FALSE(cases[2].measured());
  EXPECT_FALSE(cases[2].counter("bytes_per_second"));
  const CaseView& calibration = cases[7];
  EXPECT_TRUE(calibration.calibration);
  EXPECT_EQ(calibration.achieved, 3u);  // its cache state is moot, so nothing is excluded
  EXPECT_FALSE(cases[4].calibration);
  EXPECT_DOUBLE_EQ(*cases[6].worst_au(), 0.5);
  EXPECT_DOUBLE_EQ(cases[6].target_au(), 0.9);
}

TEST(CaseViewTest, ErrorsAreCountedAndAnAggregateStandsInForMissingRepetitions) {
  ResultDocument d;
  BenchmarkEntry failed = read_rep(1, "cold", 0, 0);
  failed.error_occurred = true;
  failed.error_message = "O_DIRECT unsupported";
  failed.counters.clear();
  d.benchmarks.push_back(failed);
  add_gb_median(&d, read_name(2, "cold"), 42e6);  // a file with aggregates only
  std::vector<CaseView> cases = fold_cases(d);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].errored, 1u);
  EXPECT_EQ(cases[0].errors, std::vector<std::string>{"O_DIRECT unsupported"});
  EXPECT_FALSE(cases[0].measured());
  EXPECT_TRUE(cases[1].from_aggregate);
  EXPECT_DOUBLE_EQ(*cases[1].counter("bytes_per_second"), 42e6);
}

// A summary names a case by what sets it apart from its family's other cases; a family of one
// case keeps its full name; a value holding a '/' stays whole.
TEST(CaseLabelsTest, NameOnlyWhatSetsACaseApartInItsFamily) {
  const std::string a = "loader/batch:8/workers:2/transform:1ms/sample/state:cold/path:source";
  const std::string b = "loader/batch:8/workers:4/transform:1ms/sample/state:cold/path:source";
  const std::string c = "loader/batch:8/workers:4/transform:none/state:warm/path:source";
  const std::string r = "replay/job:train/state:cold/path:source";
  const std::map<std::string, std::string> labels = case_labels({a, b, c, r});
  EXPECT_EQ(labels.at(a), "workers:2 transform:1ms/sample state:cold");
  EXPECT_EQ(labels.at(b), "workers:4 transform:1ms/sample state:cold");
  EXPECT_EQ(labels.at(c), "workers:4 transform:none state:warm");
  EXPECT_EQ(labels.at(r), r) << "nothing sets the only replay apart";
  // A key only some cases have sets them apart.
  const std::string d = "file_read/bs:4096/state:cold", e = "file_read/bs:4096/state:cold/qd:8";
  const auto more = case_labels({d, e});
  EXPECT_EQ(more.at(d), d);
  EXPECT_EQ(more.at(e), "qd:8");
}

// The summary's lines and the page's answers name a case by its label, not its full name.
TEST(CaseLabelsTest, TheSummaryAndThePageNameCasesByWhatSetsThemApart) {
  ResultDocument doc;
  for (int workers : {1, 2}) {
    BenchmarkEntry e;
    e.params = {{"family", "loader"},  {"batch_size", 8},       {"workers", workers}, {"target_au", 0.9},
                {"transform", "none"}, {"cache_state", "cold"}, {"path", "source"}};
    e.case_name = "loader/batch:8/workers:" + std::to_string(workers) +
                  "/prefetch:2/step:2ms/transform:none/samples:files/epochs:1/steps:20/warmup:1/acc:1/"
                  "target:0.9/engine:psync/state:cold/path:source";
    e.name = e.run_name = e.case_name;
    e.run_type = "iteration";
    e.counters = {{"au", 0.5 * workers}, {"stall_fraction", 1 - 0.5 * workers}};
    e.extra = {{"verdict", "AU 50% — limit: storage — the device delivered 10 MiB/s"},
               {"verdict_line", "AU 50% — limit: storage, the device delivered 10 MiB/s"},
               {"limit",
                {{"by", "storage"},
                 {"fed", false},
                 {"text", "limit: storage — the device delivered 10 MiB/s"},
                 {"line", "limit: storage, the device delivered 10 MiB/s"}}}};
    doc.benchmarks.push_back(e);
  }
  const std::string text = format_summary(summarize(doc));
  EXPECT_EQ(text.find("loader/batch:8/workers:1/prefetch"), std::string::npos) << text;
  EXPECT_NE(text.find("    workers:1: AU 50% — limit: storage, the device delivered 10 MiB/s\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("(at workers:2)"), std::string::npos) << text;
  for (const std::string& s : html_report_verdicts(doc))
    EXPECT_EQ(s.find("loader/batch:8/workers:"), std::string::npos) << s;
}
}  // namespace
}  // namespace feedbench
