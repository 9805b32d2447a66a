// The reporters: a Google Benchmark Run turned into a result entry joined with the RunLog,
// the closing summary, and the CSV and Markdown writers.
#include <gtest/gtest.h>

#include <iostream>
#include <sstream>

#include "benchmarks/collecting_reporter.h"
#include "feedbench/base/error.h"
#include "output_lines.h"
#include "reporters/cache_trust.h"
#include "reporters/case_view.h"
#include "reporters/csv_writer.h"
#include "reporters/markdown_writer.h"
#include "reporters/summary.h"
#include "test_util.h"

namespace feedbench {
namespace {

using nlohmann::json;
using BenchRun = benchmark::BenchmarkReporter::Run;

const std::string kCase =
    "file_read/pattern:sequential/bs:1048576/engine:psync/workers:2/state:cold/path:source";

BenchRun make_run(const std::string& case_name, int rep, double seconds, double bps) {
  BenchRun r;
  r.run_name.function_name = case_name;
  r.run_name.iterations = "iterations:1";
  r.run_name.repetitions = "repeats:3";
  r.run_name.time_type = "manual_time";
  r.family_index = 2;
  r.per_family_instance_index = 0;
  r.run_type = BenchRun::RT_Iteration;
  r.iterations = 1;
  r.threads = 1;
  r.repetitions = 3;
  r.repetition_index = rep;
  r.time_unit = benchmark::kMillisecond;
  r.real_accumulated_time = seconds;
  r.cpu_accumulated_time = seconds / 10;
  r.counters["bytes_per_second"] = benchmark::Counter(bps);
  r.counters["residency_before"] = benchmark::Counter(0.002);
  return r;
}

CaseRecord make_record(const std::string& case_name, double residency, bool achieved) {
  CaseRecord rec;
  rec.case_name = case_name;
  rec.params = nlohmann::ordered_json::object();
  rec.params["family"] = "file_read";
  rec.params["pattern"] = "sequential";
  rec.params["workers"] = 2;
  rec.params["cache_state"] = "cold";
  rec.params["path"] = "source";
  rec.cache = {
      {"requested", "cold"}, {"residency_before", residency}, {"achieved", achieved}, {"method", "mincore"}};
  Histogram h;
  h.record(1000);
  h.record(3000);
  rec.latency = h;
  rec.extra = {{"bytes", 4096}};
  return rec;
}

// Counts what the collecting reporter forwards.
class CountingReporter : public benchmark::BenchmarkReporter {
 public:
  int contexts = 0, runs = 0, finalized = 0;
  bool ReportContext(const Context&) override { return ++contexts, true; }
  void ReportRuns(const std::vector<BenchRun>& r) override { runs += int(r.size()); }
  void Finalize() override { ++finalized; }
};

TEST(ReportersTest, ARunBecomesAnEntryJoinedWithItsRecord) {
  RunLog log;
  log.add(make_record(kCase, 0.001, true));
  log.add(make_record(kCase, 0.5, false));  // repetition 1
  BenchRun run = make_run(kCase, 1, 0.0125, 8e8);
  BenchmarkEntry e = CollectingReporter::to_entry(run, log);
  EXPECT_EQ(e.case_name, kCase);
  EXPECT_EQ(e.name, kCase + "/iterations:1/repeats:3/manual_time");
  EXPECT_EQ(e.run_name, e.name);
  EXPECT_EQ(e.run_type, "iteration");
  EXPECT_EQ(e.repetition_index, 1);
  EXPECT_EQ(e.family_index, 2);
  EXPECT_DOUBLE_EQ(e.real_time, 12.5);  // ms, as Google Benchmark reports it
  EXPECT_EQ(e.time_unit, "ms");
  EXPECT_EQ(e.counter("bytes_per_second"), 8e8);
  EXPECT_EQ(e.cache["residency_before"], 0.5);  // the record of repetition 1, not 0
  EXPECT_EQ(e.cache["achieved"], false);
  ASSERT_TRUE(e.latency);
  EXPECT_EQ(e.latency->count(), 2u);
  EXPECT_EQ(e.params["workers"], 2);
  EXPECT_EQ(e.extra["bytes"], 4096);

  BenchRun agg = make_run(kCase, 0, 0.0125, 8e8);
  agg.run_type = BenchRun::RT_Aggregate;
  agg.aggregate_name = "median";
  BenchmarkEntry a = CollectingReporter::to_entry(agg, log);
  EXPECT_EQ(a.name, kCase + "/iterations:1/repeats:3/manual_time_median");
  EXPECT_EQ(a.run_type, "aggregate");
  EXPECT_EQ(a.case_name, kCase);
  EXPECT_EQ(a.params["path"], "source");
  EXPECT_TRUE(a.cache.is_null());
  EXPECT_FALSE(a.latency);
}

TEST(ReportersTest, ASkippedRunKeepsItsReason) {
  RunLog log;
  BenchRun run = make_run(kCase, 0, 0, 0);
  run.counters.clear();
  run.error_occurred = true;
  run.error_message = "O_DIRECT refused";
  BenchmarkEntry e = CollectingReporter::to_entry(run, log);
  EXPECT_TRUE(e.error_occurred);
  EXPECT_EQ(e.error_message, "O_DIRECT refused");
  EXPECT_TRUE(e.cache.is_null());
}

TEST(ReportersTest, CollectingReporterForwardsAndCollects) {
  RunLog log;
  log.add(make_record(kCase, 0.001, true));
  auto display = std::make_unique<CountingReporter>();
  CountingReporter* seen = display.get();
  CollectingReporter reporter(std::move(display), log);
  benchmark::BenchmarkReporter::Context context;
  EXPECT_TRUE(reporter.ReportContext(context));
  reporter.ReportRuns({make_run(kCase, 0, 0.01, 1e9)});
  reporter.Finalize();
  EXPECT_EQ(seen->contexts, 1);
  EXPECT_EQ(seen->runs, 1);
  EXPECT_EQ(seen->finalized, 1);
  const json& c = reporter.context();
  for (const char* key : {"date", "host_name", "library_build_type", "library_version"})
    EXPECT_TRUE(c[key].is_string()) << key;
  EXPECT_GE(c["num_cpus"].get<int>(), 1);
  EXPECT_TRUE(c["caches"].is_array());
  EXPECT_TRUE(c["load_avg"].is_array());
  std::vector<BenchmarkEntry> entries = reporter.take_entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].cache["residency_before"], 0.001);
  EXPECT_TRUE(reporter.take_entries().empty());

  CollectingReporter silent(nullptr, log);  // no display: still collects
  silent.ReportRuns({make_run(kCase, 0, 0.01, 1e9)});
  EXPECT_EQ(silent.take_entries().size(), 1u);
}

// The compact console table sees each batch's entries as they are reported, with no display.
TEST(ReportersTest, EntriesViewSeesEachBatchOfEntries) {
  RunLog log;
  log.add(make_record(kCase, 0.001, true));
  log.add(make_record(kCase, 0.002, true));
  CollectingReporter reporter(nullptr, log);
  std::vector<std::size_t> batches;
  std::vector<double> residency;
  reporter.set_entries_view([&](const std::vector<BenchmarkEntry>& entries) {
    batches.push_back(entries.size());
    for (const BenchmarkEntry& e : entries) residency.push_back(e.cache["residency_before"].get<double>());
  });
  reporter.ReportRuns({make_run(kCase, 0, 0.01, 1e9)});
  reporter.ReportRuns({make_run(kCase, 1, 0.01, 1e9)});
  EXPECT_EQ(batches, (std::vector<std::size_t>{1, 1}));  // only the new entries, each time
  EXPECT_EQ(residency, (std::vector<double>{0.001, 0.002}));
  EXPECT_EQ(reporter.take_entries().size(), 2u);  // and still collected for the result
}

// Google Benchmark's aggregates fold excluded repetitions too: the display shows them, the result
// keeps them only for a case whose repetitions were not reported (aggregates-only output).
TEST(ReportersTest, AggregatesAreKeptOnlyWhereNoRepetitionWasReported) {
  RunLog log;
  log.add(make_record(kCase, 0.001, true));
  auto display = std::make_unique<CountingReporter>();
  CountingReporter* seen = display.get();
  CollectingReporter reporter(std::move(display), log);
  auto aggregate = [](const std::string& case_name, const char* name) {
    BenchRun a = make_run(case_name, 0, 0.01, 1e9);
    a.run_type = BenchRun::RT_Aggregate;
    a.aggregate_name = name;
    return a;
  };
  const std::string other = kCase + "/other";
  reporter.ReportRuns({make_run(kCase, 0, 0.01, 1e9)});
  reporter.ReportRuns({aggregate(kCase, "mean"), aggregate(kCase, "median")});
  reporter.ReportRuns({aggregate(other, "mean")});
  EXPECT_EQ(seen->runs, 4);  // all shown
  std::vector<BenchmarkEntry> entries = reporter.take_entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].run_type, "iteration");
  EXPECT_EQ(entries[1].run_type, "aggregate");
  EXPECT_EQ(entries[1].case_name, other);
}

// A display that prints what Google Benchmark's console reporter prints about a DEBUG library.
class DebugContextReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override {
    GetErrorStream() << "Run on (2 X 2000 MHz CPUs)\n"
                     << "***WARNING*** Library was built as DEBUG. Timings may be affected.\n"
                     << "Load Average: 1.00\n";
    return true;
  }
  void ReportRuns(const std::vector<BenchRun>&) override {}
};

TEST(ReportersTest, LibraryBuildTypeIsWhatTheLinkedLibraryReports) {
  // Read back from the library's own JSON context, as a Google Benchmark user would see it.
  std::ostringstream out;
  benchmark::JSONReporter gb;
  gb.SetOutputStream(&out);
  gb.SetErrorStream(&out);
  benchmark::BenchmarkReporter::Context context;
  gb.ReportContext(context);
  const bool debug = out.str().find("\"library_build_type\": \"debug\"") != std::string::npos;
  const bool release = out.str().find("\"library_build_type\": \"release\"") != std::string::npos;
  ASSERT_NE(debug, release) << out.str();
  json c = CollectingReporter::context_to_json(context);
  EXPECT_EQ(c["library_build_type"], debug ? "debug" : "release");
  EXPECT_EQ(c.contains("library_build_note"), debug);
  if (debug) {
    EXPECT_NE(c["library_build_note"].get<std::string>().find("not affected"), std::string::npos);
  }
}

TEST(ReportersTest, TheLibrarysDebugWarningBecomesOneNoteOnTheConsole) {
  RunLog log;
  CollectingReporter reporter(std::make_unique<DebugContextReporter>(), log);
  std::ostringstream captured;
  std::streambuf* saved = std::cerr.rdbuf(captured.rdbuf());
  benchmark::BenchmarkReporter::Context context;
  reporter.ReportContext(context);
  std::cerr.rdbuf(saved);
  const std::string text = captured.str();
  EXPECT_EQ(text.find("***WARNING*** Library was built as DEBUG"), std::string::npos) << text;
  EXPECT_EQ(text,
            "Run on (2 X 2000 MHz CPUs)\nnote: " + std::string(kLibraryDebugNote) + "\nLoad Average: 1.00\n");
}

TEST(ReportersTest, DisplayReporterFollowsTheFormatFlag) {
  EXPECT_NE(dynamic_cast<benchmark::ConsoleReporter*>(make_display_reporter("console", false).get()),
            nullptr);
  EXPECT_NE(dynamic_cast<benchmark::JSONReporter*>(make_display_reporter("json", false).get()), nullptr);
  EXPECT_NE(make_display_reporter("csv", true), nullptr);
  EXPECT_THROW(make_display_reporter("xml", false), InputError);
}

// A document with source and cache, cold and warm, one case not achieved, one skipped.
ResultDocument sample_document() {
  ResultDocument doc;
  doc.config = {{"name", "demo"}, {"file", "configs/demo.json"}, {"sha256", "abcdef0123456789"}};
  doc.environment = {{"host",
                      {{"hostname", "vm"},
                       {"cpu_model", "EPYC"},
                       {"cores", 2},
                       {"sockets", 1},
                       {"numa_nodes", 1},
                       {"memory_total_bytes", 1 << 30},
                       {"kernel", "6.1"},
                       {"distribution", "Debian"},
                       {"instance_type", ""},
                       {"gpus", json::array()}}},
                     {"paths",
                      {{"source",
                        {{"resolved", "/data"},
                         {"fs_type", "ext4"},
                         {"mount_source", "/dev/vda"},
                         {"mount_point", "/"},
                         {"device", "vda"},
                         {"device_info", {{"rotational", false}}},
                         {"same_device_as", {"cache"}}}}}}};
  auto add = [&](const std::string& path, const std::string& state, int workers, double bps, int rep,
                 bool achieved = true) {
    std::string name =
        "file_read/pattern:sequential/bs:1048576/engine:psync/workers:" + std::to_string(workers) +
        "/state:" + state + "/path:" + path;
    BenchmarkEntry e;
    e.case_name = name;
    e.name = e.run_name = name + "/iterations:1/repeats:3/manual_time";
    e.run_type = "iteration";
    e.repetition_index = rep;
    e.real_time = 10;
    e.counters = {{"bytes_per_second", bps}, {"lat_p50_us", 40}, {"residency_before", 0.0}};
    e.params = nlohmann::ordered_json::object();
    e.params["family"] = "file_read";
    e.params["pattern"] = "sequential";
    e.params["workers"] = workers;
    e.params["cache_state"] = state;
    e.params["path"] = path;
    e.cache = {{"requested", state}, {"residency_before", achieved ? 0.0 : 0.42}, {"achieved", achieved}};
    doc.benchmarks.push_back(e);
  };
  for (int rep = 0; rep < 3; ++rep) {
    add("source", "cold", 1, 100e6 + rep * 1e6, rep);
    add("source", "cold", 4, 200e6 + rep * 1e6, rep);  // best source cold: median 201e6
    add("source", "warm", 4, 2000e6, rep);
    add("cache", "cold", 4, 603e6, rep);             // 3.0x source, cold
    add("cache", "warm", 4, 2010e6, rep, rep != 1);  // one round not achieved
  }
  BenchmarkEntry skipped;
  skipped.case_name =
      "file_read/pattern:random/bs:4096/engine:libaio/qd:32/workers:1/state:direct/path:cache";
  skipped.name = skipped.run_name = skipped.case_name + "/iterations:1/repeats:3/manual_time";
  skipped.run_type = "iteration";
  skipped.error_occurred = true;
  skipped.error_message = "O_DIRECT refused, by tmpfs";
  doc.benchmarks.push_back(skipped);
  return doc;
}

TEST(ReportersTest, SummaryFindsBestThroughputAndRatios) {
  ResultDocument doc = sample_document();
  json s = summarize(doc);
  const json& best = s["file_read"]["best"];
  ASSERT_EQ(best.size(), 4u);
  EXPECT_EQ(best[0]["path"], "source");
  EXPECT_EQ(best[0]["cache_state"], "cold");
  EXPECT_DOUBLE_EQ(best[0]["bytes_per_second"].get<double>(), 201e6);
  EXPECT_EQ(best[0]["workers"], 4);
  EXPECT_EQ(best[2]["path"], "cache");
  const json& cs = s["file_read"]["cache_vs_source"];
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[0]["cache_state"], "cold");
  EXPECT_DOUBLE_EQ(cs[0]["ratio"].get<double>(), 3.0);
  EXPECT_EQ(s["file_read"]["cold_vs_warm"][0]["path"], "source");
  ASSERT_EQ(s["excluded"].size(), 1u);
  EXPECT_EQ(s["excluded"][0]["repetition_index"], 1);
  EXPECT_DOUBLE_EQ(s["excluded"][0]["residency_before"].get<double>(), 0.42);
  EXPECT_EQ(s["excluded"][0]["reason"], "warm not achieved: 42.0% resident before the round");
  ASSERT_EQ(s["skipped"].size(), 1u);
  EXPECT_EQ(s["skipped"][0]["reason"], "O_DIRECT refused, by tmpfs");

  std::string text = format_summary(s);
  EXPECT_NE(text.find("source vs cache, sequential 4 workers cold: cache path was 3.0× faster than source"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("cold vs warm, sequential 4 workers source: warm was 10.0× faster than cold"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("excluded: " + case_labels(fold_cases(doc)).at(doc.benchmarks[4].case_name) +
                      " repetition 1: warm not achieved: 42.0% resident before the round"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("skipped: " + doc.benchmarks.back().case_name), std::string::npos) << text;
  EXPECT_EQ(format_summary(summarize(ResultDocument{})), "");
}

TEST(ReportersTest, CsvHasAStableHeaderAndOneRowPerRun) {
  ResultDocument doc = sample_document();
  testing::TempDir dir;
  write_csv(doc, dir / "out/r.csv");
  std::string text = testing::read_file(dir / "out/r.csv");
  std::istringstream lines(text);
  std::string header, line;
  std::getline(lines, header);
  EXPECT_EQ(header.rfind("case,family,pattern,block_size,engine,queue_depth,workers,cache_state,"
                         "path,",
                         0),
            0u)
      << header;
  EXPECT_NE(header.find(",repetition_index,run_type,aggregate_name,real_time,time_unit,"
                        "bytes_per_second,items_per_second,files_per_second,lat_p50_us,"),
            std::string::npos)
      << header;
  // Counters added later come after au, never between older columns.
  EXPECT_NE(
      header.find(",stall_fraction,au,h2d_bytes_per_second,copy_p50_us,copy_p99_us,copy_bound_share,"
                  "write_slowest_rank_bytes_per_second,checkpoint_s,fsync_share,restore_bytes_per_second,"
                  "restore_slowest_rank_bytes_per_second,restore_s,generation_bytes_per_second,"
                  "blocking_share,async_bytes_per_second,error,excluded,achieved_repetitions"),
      std::string::npos)
      << header;
  std::size_t rows = 0;
  std::string last;
  while (std::getline(lines, line)) ++rows, last = line;
  EXPECT_EQ(rows, doc.benchmarks.size() + 6) << "each repetition, and one row per case\n" << text;
  EXPECT_NE(text.find(",\"warm not achieved: 42.0% resident before the round\","), std::string::npos) << text;
  // Numbers unformatted, strings quoted, a comma inside a string kept inside its quotes.
  EXPECT_NE(text.find(",200000000.0,"), std::string::npos);
  EXPECT_NE(last.find(",\"O_DIRECT refused, by tmpfs\""), std::string::npos) << last;
  EXPECT_EQ(last.rfind("\"file_read/pattern:random", 0), 0u);
}

// The Markdown of a run, line by line in order: environment, paths, one table per family with
// a row per case (excluded and skipped repetitions said in the row), the skipped list, the summary.
TEST(ReportersTest, MarkdownLinesInOrder) {
  ResultDocument doc = sample_document();
  const std::string md = format_markdown(doc);
  const std::string seq = R"(\| `file_read/pattern:sequential/bs:1048576/engine:psync/workers:)";
  testing::expect_lines(
      md,
      {
          "# feedbench: demo",
          "",
          R"(- \*\*Host\*\*: `vm`, EPYC, 2 cores \(1 socket, 1 NUMA node\), 1 GiB memory, Debian, kernel 6\.1, )"
          R"(no GPU seen)",
          R"(- \*\*Config\*\*: `demo` \(configs/demo\.json, sha256 `abcdef0123456789`\))",
          "",
          "## Paths",
          "",
          R"(\| role \| path \| file system \| mount \| device \| model \| rotational \| shares device with \|)",
          R"(\|---\|---\|---\|---\|---\|---\|---\|---\|)",
          R"(\| source \| `/data` \| ext4 \| /dev/vda on / \| vda \|  \| no \| cache \|)",
          "",
          R"(## file_read \(median of achieved repetitions\))",
          "",
          R"(\| case \| reps \| bytes_per_second \| lat_p50_us \| residency_before \| notes \|)",
          R"(\|---\|---\|---\|---\|---\|---\|)",
          seq + R"(1/state:cold/path:source` \| 3 \| 96\.3 MiB/s \| 40 \| 0\.0% \|  \|)",
          seq + R"(4/state:cold/path:source` \| 3 \| 192 MiB/s \| 40 \| 0\.0% \|  \|)",
          seq + R"(4/state:warm/path:source` \| 3 \| 1\.86 GiB/s \| 40 \| 0\.0% \|  \|)",
          seq + R"(4/state:cold/path:cache` \| 3 \| 575 MiB/s \| 40 \| 0\.0% \|  \|)",
          seq +
              R"(4/state:warm/path:cache` \| 2 of 3 \| 1\.87 GiB/s \| 40 \| 0\.0% \| \*\*1 of 3 repetitions )"
              R"(excluded \(repetition 1: warm not achieved: 42\.0% resident before the round\)\*\* \|)",
          R"(\| `file_read/pattern:random/[^`]*/path:cache` \| 0 of 1 \| – \| – \| – \| )"
          R"(skipped: O_DIRECT refused, by tmpfs \|)",
          "",
          "## Skipped",
          "",
          R"(- `file_read/pattern:random/bs:4096/engine:libaio/qd:32/workers:1/state:direct/path:cache`: )"
          R"(O_DIRECT refused, by tmpfs)",
          "",
          "## Summary",
          "",
          "```text",
          "Summary",
          R"(  path +state +accelerators fed +limit +rate)",
          R"(  source +cold +- +- +192 MiB/s read)",
          R"(  source +warm +- +- +1\.86 GiB/s read)",
          R"(  cache.* +cold +- +- +575 MiB/s read)",
          R"(  cache.* +warm +- +- +1\.87 GiB/s read)",
          R"(  source: reads at best 192 MiB/s cold \(4 workers\), 1\.86 GiB/s warm \(4 workers\); .*)",
          R"(  cache: reads at best 575 MiB/s cold \(4 workers\), 1\.87 GiB/s warm \(4 workers\); .*)",
          R"(  does the cache help\? cold: yes, the cache path reads 3\.0× faster than the source .*)",
          R"(  best throughput \(median of achieved repetitions\), per path and cache state:)",
          R"(    source +cold +192 MiB/s +workers 4 +.*state:cold path:source)",
          R"(    source +warm +1\.86 GiB/s +workers 4 +.*state:warm path:source)",
          R"(    cache +cold +575 MiB/s +workers 4 +.*state:cold path:cache)",
          R"(    cache +warm +1\.87 GiB/s +workers 4 +.*state:warm path:cache)",
          R"(  more workers, deeper queues \(knee: the smallest count within 5% of the best\):)",
          R"(    sequential cold source: best at 4 workers \(192 MiB/s\); still rising .*)",
          R"(  cold vs warm, sequential 4 workers source: warm was %ratio faster than cold .*)",
          R"(  cold vs warm, sequential 4 workers cache: warm was %ratio faster than cold .*)",
          R"(  source vs cache, sequential 4 workers cold: cache path was 3\.0× faster than source .*)",
          R"(  source vs cache, sequential 4 workers warm: cache path was within 5% of source .*)",
          R"(  excluded: .*state:warm path:cache repetition 1: warm not achieved: .*)",
          R"(  skipped: file_read/pattern:random/.*: O_DIRECT refused, by tmpfs)",
          "```",
      });
  testing::TempDir dir;
  write_markdown(doc, dir / "r.md");
  EXPECT_EQ(testing::read_file(dir / "r.md"), md);
}

// Markdown prints the summary the run stored, as its console did (the sizing note only the run
// could measure included); a file from an older feedbench is summarised again.
TEST(ReportersTest, MarkdownPrintsTheSummaryTheRunStored) {
  ResultDocument doc = sample_document();
  doc.summary = summarize(doc);
  doc.summary["sizing"] = {{"note", "the selection is smaller than this machine's memory"}};
  std::string md = format_markdown(doc);
  EXPECT_NE(md.find("```text\n" + format_summary(doc.summary) + "```\n"), std::string::npos) << md;
  EXPECT_NE(md.find("  sizing: the selection is smaller than this machine's memory\n"), std::string::npos)
      << md;
  doc.summary = {{"note", "written before the answers had a version"}};
  md = format_markdown(doc);
  EXPECT_NE(md.find("```text\n" + format_summary(summarize(doc)) + "```\n"), std::string::npos) << md;
}

// A cache measured unverified: each row of a cache case's figures, and each line of the summary
// that states a cache figure, says "(cache unverified)" beside it; a source row or line does
// not, nor does a skipped case's row, which states no figure. A verified cache's Markdown, or
// one from a file that does not say, carries none.
TEST(ReportersTest, MarkdownSaysAnUnverifiedCacheBesideItsFigures) {
  ResultDocument doc = sample_document();
  doc.dataset["cache"] = {{"root", "/cache"}, {"files", 4}, {"bytes", 4096}, {"verified", false}};
  doc.summary = summarize(doc);
  const std::string md = format_markdown(doc);
  const std::string seq = R"(\| `file_read/pattern:sequential/bs:1048576/engine:psync/workers:)";
  std::vector<std::string> rows, summary;
  bool in_summary = false;
  for (const std::string& line : testing::lines_of(md)) {
    if (line.rfind("| `file_read", 0) == 0) rows.push_back(line);
    if (in_summary && line != "```") summary.push_back(line);
    in_summary = (in_summary || line == "```text") && line != "```";
  }
  std::string row_text, summary_text;
  for (const std::string& r : rows) row_text += r + "\n";
  for (const std::string& l : summary) summary_text += l + "\n";
  testing::expect_lines(row_text,
                        {
                            seq + R"(1/state:cold/path:source` \| 3 \| .*)",
                            seq + R"(4/state:cold/path:source` \| 3 \| .*)",
                            seq + R"(4/state:warm/path:source` \| 3 \| .*)",
                            seq + R"(4/state:cold/path:cache` \(cache unverified\) \| 3 \| 575 MiB/s \|.*)",
                            seq + R"(4/state:warm/path:cache` \(cache unverified\) \| 2 of 3 \| .*)",
                            R"(\| `file_read/pattern:random/[^`]*/path:cache` \| 0 of 1 \| – \|.*)",
                        });
  testing::expect_lines(
      summary_text,
      {
          "Summary",
          R"(  path +state +accelerators fed +limit +rate)",
          R"(  source +cold +- +- +192 MiB/s read)",
          R"(  source +warm +- +- +1\.86 GiB/s read)",
          R"(  cache.* +cold +- +- +575 MiB/s read)",
          R"(  cache.* +warm +- +- +1\.87 GiB/s read)",
          R"(  source: reads at best 192 MiB/s cold \(4 workers\), 1\.86 GiB/s warm \(4 workers\); .*against)",
          R"(  cache \(cache unverified\): reads at best 575 MiB/s cold \(4 workers\), .*against)",
          R"(  does the cache help\? cold: yes, .* differs only in its path \(cache unverified\))",
          R"(  best throughput \(median of achieved repetitions\), per path and cache state:)",
          R"(    source +cold +192 MiB/s +workers 4 +.*state:cold path:source)",
          R"(    source +warm +1\.86 GiB/s +workers 4 +.*state:warm path:source)",
          R"(    cache +cold +575 MiB/s +workers 4 +.*state:cold path:cache \(cache unverified\))",
          R"(    cache +warm +1\.87 GiB/s +workers 4 +.*state:warm path:cache \(cache unverified\))",
          R"(  more workers, deeper queues \(knee: the smallest count within 5% of the best\):)",
          R"(    sequential cold source: best at 4 workers \(192 MiB/s\); still rising .*help)",
          R"(  cold vs warm, sequential 4 workers source: warm was %ratio faster than cold .*warm\))",
          R"(  cold vs warm, sequential 4 workers cache: warm was %ratio faster .*warm\) \(cache unverified\))",
          R"(  source vs cache, sequential 4 workers cold: cache path was 3\.0× .*cache\) \(cache unverified\))",
          R"(  source vs cache, sequential 4 workers warm: cache path was within 5% .*cache\) \(cache unverified\))",
          R"(  excluded: .*state:warm path:cache repetition 1: warm not achieved: .*above\))",
          R"(  skipped: file_read/pattern:random/.*: O_DIRECT refused, by tmpfs)",
      });
  for (const json& verified : {json(true), json(nullptr)}) {
    doc.dataset["cache"]["verified"] = verified;
    if (verified.is_null()) doc.dataset["cache"].erase("verified");
    const std::string plain = format_markdown(doc);  // the stored answers, with this verification
    EXPECT_EQ(plain.find(kCacheUnverified), std::string::npos) << plain;
    EXPECT_NE(plain.find("\n  cache: reads at best 575 MiB/s cold"), std::string::npos) << plain;
  }
}

}  // namespace
}  // namespace feedbench
