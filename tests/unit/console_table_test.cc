// The run's default console display: short labels, group headers, one line per case fitting
// 120 columns, colour only on a terminal. Output tests in Google Benchmark's style: the lines
// printed, in order, each matched by a regular expression.
#include "reporters/console_table.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <sstream>

#include "feedbench/plan/config.h"
#include "feedbench/plan/plan.h"
#include "output_lines.h"
#include "test_util.h"

namespace feedbench {
namespace {

using nlohmann::json;
using testing::expect_lines;
using testing::lines_of;
using testing::TempDir;

// RETURNS: `s` without ANSI colour sequences.
std::string plain(const std::string& s) { return std::regex_replace(s, std::regex("\x1b\\[[0-9;]*m"), ""); }

// RETURNS: the columns a line takes on a terminal (UTF-8 code points, escapes left out).
std::size_t columns(const std::string& line) {
  std::size_t n = 0;
  for (unsigned char c : plain(line)) n += (c & 0xC0) != 0x80;
  return n;
}

Plan plan_of(const json& families, const std::string& root) {
  std::filesystem::create_directories(root + "/src");
  std::filesystem::create_directories(root + "/cache");
  json config = {{"name", "t"},
                 {"dataset", {{"source", root + "/src"}, {"cache", root + "/cache"}}},
                 {"defaults", {{"repetitions", 3}}},
                 {"families", families}};
  return expand_plan(parse_config(config.dump(), "t.json"));
}

// `n` achieved repetitions of a file_read case at `bps` (each rep a little apart).
void add_file_read(ResultDocument* doc, const Case& c, double bps, int n = 3) {
  for (int rep = 0; rep < n; ++rep) {
    BenchmarkEntry e;
    e.case_name = c.name();
    e.name = e.run_name = e.case_name + "/iterations:1/repeats:3/manual_time";
    e.run_type = "iteration";
    e.repetitions = n;
    e.repetition_index = rep;
    e.real_time = 10;
    e.time_unit = "ms";
    e.counters = {{"bytes_per_second", bps * (1 + 0.01 * (rep - 1))},
                  {"items_per_second", 4100},
                  {"lat_p99_us", 1200},
                  {"cpu_util", 0.23}};
    e.params = json(c.params);
    e.params["family"] = c.family;
    e.cache = {{"requested", c.cache_state()},
               {"residency_before", c.cache_state() == "warm" ? 1.0 : 0.0},
               {"achieved", true}};
    doc->benchmarks.push_back(e);
  }
}

TEST(ConsoleTableTest, ColourOnlyOnATerminalWithoutNoColorOrDumbTerm) {
  EXPECT_TRUE(colour_wanted(true, nullptr, "xterm-256color"));
  EXPECT_TRUE(colour_wanted(true, nullptr, nullptr));
  EXPECT_TRUE(colour_wanted(true, "", "xterm"));         // NO_COLOR="" asks for nothing
  EXPECT_FALSE(colour_wanted(false, nullptr, "xterm"));  // a file or a pipe
  EXPECT_FALSE(colour_wanted(true, "1", "xterm"));
  EXPECT_FALSE(colour_wanted(true, "0", "xterm"));  // any value but ""
  EXPECT_FALSE(colour_wanted(true, nullptr, "dumb"));
}

TEST(ConsoleTableTest, WrapBreaksLongLinesAtSpacesWithAHangingIndent) {
  const std::string words = "  sizing: " + std::string(30, 'a') + " " + std::string(30, 'b') + " " +
                            std::string(30, 'c') + " " + std::string(30, 'd');
  const std::string wrapped = wrap_text(words + "\nshort\n", 70);
  EXPECT_EQ(wrapped, "  sizing: " + std::string(30, 'a') + "\n      " + std::string(30, 'b') + " " +
                         std::string(30, 'c') + "\n      " + std::string(30, 'd') + "\nshort\n");
  // A word longer than the line stays whole; nothing ends in a space.
  const std::string name = "  best: " + std::string(90, 'n') + " end";
  EXPECT_EQ(wrap_text(name, 60), "  best:\n      " + std::string(90, 'n') + "\n      end");
  EXPECT_EQ(wrap_text("fits\n", 60), "fits\n");
  // A case name longer than a line breaks after a '/'.
  const std::string long_name =
      "  in " + std::string(30, 'a') + "/" + std::string(30, 'b') + "/" + std::string(30, 'c');
  EXPECT_EQ(wrap_text(long_name, 50), "  in " + std::string(30, 'a') + "/\n      " + std::string(30, 'b') +
                                          "/\n      " + std::string(30, 'c'));
}

TEST(ConsoleTableTest, LabelsShowOnlyWhatVariesWithinTheGroup) {
  TempDir dir;
  Plan plan = plan_of({{{"family", "file_read"},
                        {"pattern", {"sequential", "random"}},
                        {"block_size", {"64KiB", "1MiB"}},
                        {"engine", "psync"},
                        {"workers", {1, 2}},
                        {"cache_state", {"cold", "warm"}},
                        {"path", {"source", "cache"}}},
                       {{"family", "file_read"},
                        {"pattern", "random"},
                        {"block_size", "4KiB"},
                        {"engine", "io_uring"},
                        {"queue_depth", {1, 32}},
                        {"workers", 1},
                        {"cache_state", "direct"},
                        {"path", "source"}}},
                      dir.path());
  const CaseLabels labels = label_cases(plan.cases);
  ASSERT_EQ(labels.groups.size(), 2u);
  EXPECT_EQ(labels.groups[0].varying,
            (std::vector<std::string>{"pattern", "block_size", "workers", "cache_state", "path"}));
  EXPECT_EQ(labels.groups[0].header, "file_read /families/0: psync qd1; 3 repetitions (32 cases)");
  EXPECT_EQ(labels.groups[1].header,
            "file_read /families/1: rand 4KiB io_uring w1 direct source; 3 repetitions (2 cases)");
  for (const Case& c : plan.cases) {
    const CaseLabels::Label* l = labels.find(c.name());
    ASSERT_NE(l, nullptr) << c.name();
    if (c.name() ==
        "file_read/pattern:sequential/bs:1048576/engine:psync/qd:1/workers:2/state:cold/path:cache") {
      EXPECT_EQ(l->group, 0u);
      EXPECT_EQ(l->label, "seq 1MiB w2 cold cache");
      // Progress lines name the case within its whole family: what varies across the family.
      EXPECT_EQ(l->brief, "file_read seq 1MiB psync qd1 w2 cold cache");
    }
    if (c.name() ==
        "file_read/pattern:random/bs:4096/engine:io_uring/qd:32/workers:1/state:direct/path:source") {
      EXPECT_EQ(l->group, 1u);
      EXPECT_EQ(l->label, "qd32");
    }
  }
  EXPECT_EQ(labels.find("file_read/not/in/the/plan"), nullptr);
}

TEST(ConsoleTableTest, OneLinePerCaseUnderItsGroupsHeader) {
  TempDir dir;
  Plan plan = plan_of({{{"family", "file_read"},
                        {"pattern", "sequential"},
                        {"block_size", "1MiB"},
                        {"engine", "psync"},
                        {"workers", {1, 2}},
                        {"cache_state", {"cold", "warm"}},
                        {"path", "source"}}},
                      dir.path());
  const CaseLabels labels = label_cases(plan.cases);
  std::ostringstream out;
  CaseTable table(out, labels, /*colour=*/false);
  for (const Case& c : plan.cases) {
    ResultDocument doc;
    add_file_read(&doc, c, c.cache_state() == "warm" ? 2000e6 : 300e6);
    table.add(doc.benchmarks);
  }
  expect_lines(out.str(),
               {"^$", R"(^file_read /families/0: seq 1MiB psync qd1 source; 3 repetitions \(4 cases\)$)",
                R"(^  {10} +median +spread +IOPS +p99 lat +CPU +verdict$)",
                R"(^  w1 cold  +286 MiB/s +1\.0% +4\.10k +1\.20 ms +23% +ok$)",
                R"(^  w1 warm  +1\.86 GiB/s +1\.0% +4\.10k +1\.20 ms +23% +ok$)",
                R"(^  w2 cold  +286 MiB/s +1\.0% +4\.10k +1\.20 ms +23% +ok$)",
                R"(^  w2 warm  +1\.86 GiB/s +1\.0% +4\.10k +1\.20 ms +23% +ok$)"});
}

TEST(ConsoleTableTest, WhatTheFiguresLeaveOutFollowsOnIndentedLines) {
  TempDir dir;
  Plan plan = plan_of({{{"family", "file_read"},
                        {"pattern", "sequential"},
                        {"block_size", "1MiB"},
                        {"engine", "psync"},
                        {"workers", {1, 2, 4}},
                        {"cache_state", "cold"},
                        {"path", "source"}}},
                      dir.path());
  const CaseLabels labels = label_cases(plan.cases);
  std::ostringstream out;
  CaseTable table(out, labels, /*colour=*/false);
  {  // one repetition not cold
    ResultDocument doc;
    add_file_read(&doc, plan.cases[0], 300e6);
    doc.benchmarks[1].cache = {{"requested", "cold"}, {"residency_before", 0.87}, {"achieved", false}};
    doc.benchmarks[1].label = "cold NOT achieved: 87.0% resident";
    table.add(doc.benchmarks);
  }
  {  // skipped, with a reason longer than a line
    BenchmarkEntry e;
    e.case_name = plan.cases[1].name();
    e.name = e.run_name = e.case_name + "/iterations:1/repeats:3/manual_time";
    e.run_type = "iteration";
    e.error_occurred = true;
    e.error_message = "preparing the cold state: " + std::string(40, 'x') + " " + std::string(60, 'y') + " " +
                      std::string(50, 'z');
    e.params = json(plan.cases[1].params);
    table.add({e});
  }
  {  // a note the run attached to its rounds
    ResultDocument doc;
    add_file_read(&doc, plan.cases[2], 300e6, 1);
    doc.benchmarks[0].label = "direct requested, served from memory (tmpfs)";
    table.add(doc.benchmarks);
  }
  expect_lines(
      out.str(),
      {"^$", R"(^file_read /families/0: .*$)", R"(^ .*verdict$)",
       R"(^  w1 +28\d MiB/s +\d\.\d% .* 1 excluded$)",
       R"(^    1 of 3 repetitions excluded \(repetition 1: cold not achieved: 87\.0% resident before the round\)$)",
       R"(^  w2 +- +- +- +- +- +skipped$)", R"(^    preparing the cold state: x{40}$)",
       R"(^      y{60} z{50}$)", R"(^  w4 +2\d\d MiB/s +- .* ok$)",
       R"(^    direct requested, served from memory \(tmpfs\)$)"});
}

// A sweep skipped for one reason prints the reason under its first case only; a new group
// prints it again.
TEST(ConsoleTableTest, AReasonRepeatedByTheNextCaseIsNotPrintedAgain) {
  TempDir dir;
  Plan plan = plan_of({{{"family", "file_read"},
                        {"pattern", "sequential"},
                        {"block_size", "1MiB"},
                        {"engine", "psync"},
                        {"workers", {1, 2, 4}},
                        {"cache_state", "cold"},
                        {"path", "source"}}},
                      dir.path());
  const CaseLabels labels = label_cases(plan.cases);
  std::ostringstream out;
  CaseTable table(out, labels, /*colour=*/false);
  for (std::size_t i = 0; i < 3; ++i) {
    BenchmarkEntry e;
    e.case_name = plan.cases[i].name();
    e.name = e.run_name = e.case_name + "/iterations:1/repeats:3/manual_time";
    e.run_type = "iteration";
    e.error_occurred = true;
    e.error_message = i < 2 ? "a.bin: not a JPEG" : "b.bin: not a JPEG";
    e.params = json(plan.cases[i].params);
    table.add({e});
  }
  expect_lines(out.str(), {"^$", R"(^file_read /families/0: .*$)", R"(^ .*verdict$)",
                           R"(^  w1 +- +- +- +- +- +skipped$)", R"(^    a\.bin: not a JPEG$)",
                           R"(^  w2 +- +- +- +- +- +skipped$)", R"(^    \(the same as above\)$)",
                           R"(^  w4 +- +- +- +- +- +skipped$)", R"(^    b\.bin: not a JPEG$)"});
}

// Whatever the label or the verdict, a line fits 120 columns (a label too long for the
// figures beside it gets a line of its own); colour does not count and is only on the verdict.
TEST(ConsoleTableTest, EveryLineFitsTheConsoleWidthWithOrWithoutColour) {
  TempDir dir;
  Plan plan = plan_of({{{"family", "file_read"},
                        {"pattern", {"sequential", "shuffled_files"}},
                        {"block_size", "4KiB"},
                        {"engine", "psync"},
                        {"queue_depth", 1},
                        {"workers", {1, 16}},
                        {"cache_state", {"cold", "warm"}},
                        {"path", {"source", "cache"}},
                        {"runtime", {"1s", "1500ms"}},
                        {"max_bytes", {"1GiB", "2GiB"}},
                        {"ramp_time", {"100ms", "200ms"}}}},
                      dir.path());
  const CaseLabels labels = label_cases(plan.cases);
  for (bool colour : {false, true}) {
    std::ostringstream out;
    CaseTable table(out, labels, colour);
    for (const Case& c : plan.cases) {
      ResultDocument doc;
      add_file_read(&doc, c, 123.4e9);
      doc.benchmarks[0].counters["items_per_second"] = 123456789;
      doc.benchmarks[0].counters["lat_p99_us"] = 123456789;
      table.add(doc.benchmarks);
    }
    for (const std::string& line : lines_of(out.str())) {
      EXPECT_LE(columns(line), kConsoleWidth) << line;
      EXPECT_EQ(line.find('\x1b') != std::string::npos, colour && plain(line).ends_with("  ok")) << line;
    }
    // The longest label gets a line of its own, the figures under it.
    EXPECT_NE(out.str().find("\n  shuffled w16 warm cache runtime 1500ms max 2GiB ramp 200ms\n"),
              std::string::npos)
        << out.str();
    if (colour) {
      EXPECT_NE(out.str().find("\x1b[32mok\x1b[0m"), std::string::npos);
    }
  }
}

TEST(ConsoleTableTest, LoaderLinesShowAuStallAndAShortVerdict) {
  TempDir dir;
  Plan plan = plan_of({{{"family", "loader"},
                        {"batch_size", 8},
                        {"workers", {1, 2}},
                        {"step_time", "20ms"},
                        {"steps", 20},
                        {"cache_state", "cold"},
                        {"path", "source"}}},
                      dir.path());
  const CaseLabels labels = label_cases(plan.cases);
  std::ostringstream out;
  CaseTable table(out, labels, false);
  for (const Case& c : plan.cases) {
    const bool fed = c.loader().workers == 2;
    BenchmarkEntry e;
    e.case_name = c.name();
    e.name = e.run_name = e.case_name + "/iterations:1/manual_time";
    e.run_type = "iteration";
    e.params = json(c.params);
    e.params["family"] = "loader";
    e.counters = {{"au", fed ? 0.97 : 0.61},
                  {"stall_fraction", fed ? 0.03 : 0.39},
                  {"samples_per_second", 390},
                  {"wait_p99_ms", 12.5}};
    e.extra = {{"verdict",
                fed ? "AU 97.0% — storage keeps up" : "AU 61.0% — training waits for data 39.0% of the time"},
               {"judged", true},
               {"target_au", 0.9},
               {"samples", 160},
               {"bytes", 160 * 4096},
               {"compute_s", 0.4}};
    table.add({e});
  }
  expect_lines(
      out.str(),
      {"^$", R"(^loader /families/0: b8 prefetch 2 step 20ms no transform from files 1 epoch 20 steps .*$)",
       R"(^    .*source; 3 repetitions \(2 cases\)$)",
       R"(^  {2} +min AU +spread +stall +samples/s +acc fed +wait p99 +verdict$)",
       R"(^  w1 +61\.0% +- +39\.0% +390 +0\.68 +12\.5 ms +stalls$)",
       R"(^    training waits for data 39\.0% of the time$)",
       R"(^  w2 +97\.0% +- +3\.0% +390 +≥ 1\.08 +12\.5 ms +fed$)"});
}

// A verdict opens with one short line; each clause of its details follows on its own indented
// line (those the first line already says left out), every line within 120 columns.
TEST(VerdictBlockTest, TheShortLineFirstThenEachClauseIndented) {
  const std::string details =
      "AU 19.1% — training waits for data 80.9% of the time — limit: the transform's CPU — 2 cores saturated "
      "(100% busy; this run 24%, other programs 76%), 51% of the workers' time in the transform: a cheaper "
      "transform or more cores; then storage: the device delivered 6.32 MiB/s; the page cache served 0% of "
      "the "
      "bytes read";
  const std::string block = verdict_block("w1 cold: AU 19.1% — limit: the transform's CPU", details, 2);
  EXPECT_EQ(block,
            "  w1 cold: AU 19.1% — limit: the transform's CPU\n"
            "      training waits for data 80.9% of the time\n"
            "      2 cores saturated (100% busy; this run 24%, other programs 76%), 51% of the workers' time "
            "in the "
            "transform: a\n"
            "          cheaper transform or more cores\n"
            "      then storage: the device delivered 6.32 MiB/s\n"
            "      the page cache served 0% of the bytes read\n");
  // Without a short line (a file from before them), the first clause opens the verdict.
  EXPECT_EQ(verdict_block("", "AU 98.0% — storage keeps up", 4), "    AU 98.0%\n        storage keeps up\n");
}

TEST(TextTableTest, ColumnsAlignByCharactersNotBytes) {
  EXPECT_EQ(text_table({{"path", "fed"}, {"source", "≥ 1.01"}, {"cache", "8.6"}}, 2),
            "  path    fed\n  source  ≥ 1.01\n  cache   8.6\n");
  EXPECT_EQ(text_table({}, 2), "");
}
}  // namespace
}  // namespace feedbench
