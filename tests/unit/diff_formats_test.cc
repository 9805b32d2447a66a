// The four views of a comparison: what a person, a pull request, a tool and a CI system read.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "feedbench/base/error.h"
#include "output_lines.h"
#include "reporters/diff_formats.h"

namespace feedbench {
namespace {

using testing::expect_lines;

constexpr const char* kSeq = "file_read/pattern:sequential/bs:65536/state:warm";
constexpr const char* kRand = "file_read/pattern:random/bs:4096/state:warm";
constexpr const char* kGone = "file_read/pattern:shuffled_files/bs:65536/state:warm";

void add_case(ResultDocument* d, const std::string& name, const char* metric,
              const std::vector<double>& values) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    BenchmarkEntry e;
    e.name = e.run_name = name + "/manual_time";
    e.case_name = name;
    e.run_type = "iteration";
    e.repetition_index = static_cast<std::int64_t>(i);
    e.counters[metric] = values[i];
    d->benchmarks.push_back(e);
  }
}

// A regression in kSeq (a <tricky> & "quoted" name for the XML), an improvement in kRand,
// a weak regression, a removed case and a comparability warning.
Comparison sample() {
  ResultDocument base, next;
  std::vector<double> b9, n9, f9;
  for (int i = 0; i < 9; ++i) {
    b9.push_back(1e9 + i * 1e6);
    n9.push_back(0.8e9 + i * 1e6);
    f9.push_back(100 - i * 0.1);
  }
  add_case(&base, kSeq, "bytes_per_second", b9);
  add_case(&next, kSeq, "bytes_per_second", n9);
  add_case(&base, kRand, "lat_p99_us", f9);
  std::vector<double> faster;
  for (double v : f9) faster.push_back(v * 0.5);
  add_case(&next, kRand, "lat_p99_us", faster);
  add_case(&base, "loader/x:<a&\"b\">", "au", {0.95, 0.951});
  add_case(&next, "loader/x:<a&\"b\">", "au", {0.80, 0.801});
  add_case(&base, kGone, "bytes_per_second", {1, 2});
  base.config = {{"sha256", "aaaa"}};
  next.config = {{"sha256", "bbbb"}};
  return compare_results(base, next, {}, "base.json", "new.json");
}

TEST(DiffFormatsTest, ParsesFormatNames) {
  EXPECT_EQ(parse_diff_format("table"), DiffFormat::kTable);
  EXPECT_EQ(parse_diff_format("markdown"), DiffFormat::kMarkdown);
  EXPECT_EQ(parse_diff_format("json"), DiffFormat::kJson);
  EXPECT_EQ(parse_diff_format("junit"), DiffFormat::kJunit);
  EXPECT_THROW(parse_diff_format("html"), InputError);
}

// The table, line by line in order: warnings on top, a header, each case with its metrics,
// the missing cases, the note said once, the geometric means, the one-line summary; no colour.
TEST(DiffFormatsTest, TableLinesInOrder) {
  const std::string t = format_diff(sample(), DiffFormat::kTable, {});
  EXPECT_EQ(t.find('\033'), std::string::npos) << "no colour unless asked";
  expect_lines(
      t, {
             R"(BASE base\.json)",
             R"(NEW  new\.json)",
             R"(warning: config sha256 differs: BASE "aaaa", NEW "bbbb")",
             "",
             R"(  metric +base +new +change +p +verdict)",
             kSeq,
             R"(  bytes_per_second +957 MiB/s +767 MiB/s +-19\.9% +<0\.001 +REGRESSION)",
             kRand,
             R"(  lat_p99_us +99\.6 us +49\.8 us +-50\.0% +<0\.001 +improvement)",
             R"(loader/x:<a&"b">)",
             R"(  au +0\.9505 +0\.8005 +-15\.8% +0\.333 +REGRESSION \(weak\))",
             "",
             R"(MISSING in NEW \(fails the diff; --allow-missing to accept\):)",
             "  " + std::string(kGone) + ": only in BASE",
             "",
             R"(weak verdict: too few repetitions \(as few as 2 per side, in 1 comparison\) for the test to )"
             R"(reach alpha 0\.05: .*; use 4 or more repetitions per side)",
             "geomean NEW/BASE over the compared cases:",
             R"(  bytes_per_second 0\.801 \(-19\.9%, higher is better, 1 case\))",
             R"(  lat_p99_us 0\.500 \(-50\.0%, lower is better, 1 case\))",
             R"(  au 0\.842 \(-15\.8%, higher is better, 1 case\))",
             R"(2 regressions, 1 improvement, 0 noisy in 3 compared cases \(threshold 5%, alpha 0\.05\); )"
             R"(1 case of BASE not measured in NEW)",
         });
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Every row of a 3-repetition run is weak: the note is said once, not on every row; a noisy
// comparison is named with why and counted apart in the summary.
TEST(DiffFormatsTest, TheWeakNoteIsSaidOncePerDocumentAndNoisyIsCountedApart) {
  ResultDocument base, next;
  add_case(&base, kSeq, "bytes_per_second", {1e9, 1.01e9, 1.02e9});
  add_case(&next, kSeq, "bytes_per_second", {1e9, 1.01e9, 1.02e9});
  add_case(&base, kRand, "bytes_per_second", {1e9, 1.01e9, 1.02e9});
  add_case(&next, kRand, "bytes_per_second", {0.5e9, 0.51e9, 0.52e9});  // a weak regression
  add_case(&base, kGone, "bytes_per_second", {1e9, 0.7e9, 1.3e9});      // CV 30%
  add_case(&next, kGone, "bytes_per_second", {0.85e9, 0.6e9, 1.1e9});
  Comparison c = compare_results(base, next, {});
  for (DiffFormat f : {DiffFormat::kTable, DiffFormat::kMarkdown}) {
    std::string t = format_diff(c, f, {});
    EXPECT_EQ(count(t, "weak verdict: too few repetitions"), 1u) << t;
    EXPECT_EQ(count(t, "cannot reach alpha"), 0u) << t;
    EXPECT_NE(t.find("noisy (spread: CV 30.0% BASE"), std::string::npos) << t;
    EXPECT_NE(t.find("1 regression, 0 improvements, 1 noisy in 3 compared cases"), std::string::npos) << t;
  }
  nlohmann::json j = diff_to_json(c, false);
  EXPECT_EQ(j["noisy"], 1);
  EXPECT_EQ(j["notes"].size(), 1u);
  EXPECT_EQ(j["cases"][2]["metrics"][0]["verdict"], "noisy");
  EXPECT_NEAR(j["cases"][2]["metrics"][0]["base_cv"].get<double>(), 0.3, 1e-9);
}

TEST(DiffFormatsTest, TableColourOnlyWhenAsked) {
  DiffFormatOptions o;
  o.colour = true;
  EXPECT_NE(format_diff(sample(), DiffFormat::kTable, o).find("\033[1;31m"), std::string::npos);
}

// The Markdown for a pull request, line by line: the verdict in the heading, the warnings and
// the note as quotes, one table row per metric, the missing list, the geometric means.
TEST(DiffFormatsTest, MarkdownLinesInOrder) {
  expect_lines(
      format_diff(sample(), DiffFormat::kMarkdown, {}),
      {
          R"(### feedbench diff: ❌ 2 regressions, 1 improvement, 0 noisy in 3 compared cases )"
          R"(\(threshold 5%, alpha 0\.05\); 1 case of BASE not measured in NEW)",
          "",
          R"(BASE `base\.json` · NEW `new\.json`)",
          "",
          R"(> \*\*Not comparable:\*\*)",
          R"(> - config sha256 differs: BASE "aaaa", NEW "bbbb")",
          "",
          R"(> weak verdict: too few repetitions \(as few as 2 per side, in 1 comparison\) .*)",
          "",
          R"(\| case \| metric \| base \| new \| change \| p \| verdict \|)",
          R"(\| --- \| --- \| ---: \| ---: \| ---: \| ---: \| --- \|)",
          R"(\| `)" + std::string(kSeq) +
              R"(` \| bytes_per_second \| 957 MiB/s \| 767 MiB/s \| %pct \| <0\.001 \| \*\*REGRESSION\*\* \|)",
          R"(\| `)" + std::string(kRand) +
              R"(` \| lat_p99_us \| 99\.6 us \| 49\.8 us \| %pct \| <0\.001 \| improvement \|)",
          R"(\| `loader/x:<a&"b">` \| au \| 0\.9505 \| 0\.8005 \| %pct \| 0\.333 \| \*\*REGRESSION \(weak\)\*\* \|)",
          "",
          R"(\*\*Missing in NEW \(fails the diff\)\*\*)",
          "",
          "- `" + std::string(kGone) + "`: only in BASE",
          "",
          R"(\*\*Geometric mean NEW/BASE:\*\* bytes_per_second 0\.801 \(-19\.9%, higher is better, 1 case\); )"
          R"(lat_p99_us 0\.500 \(-50\.0%, lower is better, 1 case\); au 0\.842 \(-15\.8%, higher is better, 1 case\))",
      });
}

TEST(DiffFormatsTest, JsonCarriesVerdictsAndExitCode) {
  Comparison c = sample();
  nlohmann::json j = nlohmann::json::parse(format_diff(c, DiffFormat::kJson, {}));
  EXPECT_EQ(j["schema"], "feedbench-diff/2");
  EXPECT_EQ(j["regressions"], 2);
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["warnings"].size(), 1u);
  const nlohmann::json& first = j["cases"][0];
  EXPECT_EQ(first["case"], kSeq);
  EXPECT_EQ(first["status"], "compared");
  EXPECT_EQ(first["metrics"][0]["verdict"], "regression");
  EXPECT_EQ(first["metrics"][0]["base_values"].size(), 9u);
  EXPECT_NEAR(first["metrics"][0]["change"].get<double>(), -0.2, 0.01);
  EXPECT_EQ(j["cases"][2]["metrics"][0]["weak"], true);
  EXPECT_EQ(j["cases"][2]["metrics"][0]["repetitions_needed"], 4);
  EXPECT_EQ(j["cases"][3]["status"], "removed");
  EXPECT_EQ(j["cases"][3]["missing"], true);
  EXPECT_EQ(j["missing"], 1);
  EXPECT_EQ(j["compared"], 3);
}

TEST(DiffFormatsTest, JunitMakesEachRegressedCaseAFailedTest) {
  std::string x = format_diff(sample(), DiffFormat::kJunit, {});
  EXPECT_EQ(x.rfind("<?xml", 0), 0u);
  // 4 cases + the comparability test; 2 regressed, 1 missing in NEW (failed); not strict.
  EXPECT_NE(
      x.find("<testsuite name=\"feedbench diff\" tests=\"5\" failures=\"3\" errors=\"0\" skipped=\"0\">"),
      std::string::npos)
      << x;
  EXPECT_NE(x.find("name=\"" + std::string(kGone) + "\">\n      <failure type=\"missing\""),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("name=\"" + std::string(kSeq) + "\">\n      <failure type=\"regression\""),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("loader/x:&lt;a&amp;&quot;b&quot;&gt;"), std::string::npos) << "escaped\n" << x;
  EXPECT_EQ(x.find("x:<a"), std::string::npos);
  DiffFormatOptions strict;
  strict.strict = true;
  std::string s = format_diff(sample(), DiffFormat::kJunit, strict);
  EXPECT_NE(s.find("failures=\"4\""), std::string::npos) << s;
  EXPECT_NE(s.find("<failure type=\"not_comparable\""), std::string::npos) << s;
}

TEST(DiffFormatsTest, AllowedMissingCasesAreListedButSkipped) {
  ResultDocument base, next;
  add_case(&base, kSeq, "bytes_per_second", {1e9, 1e9, 1e9});
  add_case(&next, kSeq, "bytes_per_second", {1e9, 1e9, 1e9});
  add_case(&base, kGone, "bytes_per_second", {1e9, 1e9, 1e9});
  CompareOptions o;
  o.allow_missing = true;
  Comparison c = compare_results(base, next, o);
  EXPECT_EQ(c.exit_code(false), 0);
  std::string x = format_diff(c, DiffFormat::kJunit, {});
  EXPECT_NE(x.find("failures=\"0\" errors=\"0\" skipped=\"1\""), std::string::npos) << x;
  std::string t = format_diff(c, DiffFormat::kTable, {});
  EXPECT_NE(t.find("missing in NEW (allowed by --allow-missing):"), std::string::npos) << t;
}

// One wild BASE repetition: said once on top, named under its case (side, repetition, value,
// median) in the table, listed in the Markdown, per metric in the JSON, in JUnit's details.
TEST(DiffFormatsTest, TheRepetitionsSetAsideAreNamedInEveryFormat) {
  const double mib = 1048576;
  ResultDocument base, next;
  add_case(&base, kSeq, "bytes_per_second", {39.7 * mib, 41.7 * mib, 37.7 * mib, 19.0 * mib, 39.8 * mib});
  add_case(&next, kSeq, "bytes_per_second", {30.1 * mib, 29.8 * mib, 30.3 * mib, 29.9 * mib, 30.0 * mib});
  const Comparison c = compare_results(base, next, {}, "base.json", "new.json");
  expect_lines(
      format_diff(c, DiffFormat::kTable, {}),
      {
          R"(BASE base\.json)",
          R"(NEW  new\.json)",
          R"(warning: BASE has an outlier repetition \(1 case; farther than 3\.5 scaled MADs and 10% )"
          R"(from the median of its case\): judged without it, listed under its case; measure the )"
          R"(baseline again before keeping it)",
          "",
          R"(  metric +base +new +change +p +verdict)",
          kSeq,
          R"(  \(set aside as outliers: BASE repetition 3 of bytes_per_second: 19 MiB/s, median 39\.7 MiB/s\))",
          R"(  bytes_per_second +39\.8 MiB/s +30 MiB/s +-24\.5% +0\.016 +REGRESSION)",
          "",
          R"(geomean NEW/BASE over the compared cases:)",
          R"(  bytes_per_second 0\.755 .*)",
          R"(1 regression, 0 improvements, 0 noisy in 1 compared case .*)",
      });
  const std::string md = format_diff(c, DiffFormat::kMarkdown, {});
  EXPECT_NE(md.find("> **Outliers:** BASE has an outlier repetition"), std::string::npos) << md;
  EXPECT_NE(md.find("**Set aside as outliers (judged without them)**\n\n- `" + std::string(kSeq) +
                    "`: BASE repetition 3 of bytes_per_second: 19 MiB/s, median 39.7 MiB/s\n"),
            std::string::npos)
      << md;
  const nlohmann::json j = diff_to_json(c, false);
  const nlohmann::json& m = j["cases"][0]["metrics"][0];
  EXPECT_EQ(m["base_values"].size(), 4u);
  ASSERT_EQ(m["base_set_aside"].size(), 1u);
  EXPECT_EQ(m["base_set_aside"][0]["repetition_index"], 3);
  EXPECT_DOUBLE_EQ(m["base_set_aside"][0]["value"].get<double>(), 19.0 * mib);
  EXPECT_DOUBLE_EQ(m["base_set_aside"][0]["median"].get<double>(), 39.7 * mib);
  EXPECT_TRUE(m["new_set_aside"].empty());
  ASSERT_EQ(j["notes"].size(), 1u);
  EXPECT_EQ(j["notes"][0].get<std::string>().rfind("BASE has an outlier repetition", 0), 0u);
  EXPECT_EQ(j["load"]["differ"], false);
  const std::string x = format_diff(c, DiffFormat::kJunit, {});
  EXPECT_NE(x.find("set aside as outliers: BASE repetition 3 of bytes_per_second"), std::string::npos) << x;
  // Without outliers, none of it.
  EXPECT_EQ(format_diff(sample(), DiffFormat::kTable, {}).find("outlier"), std::string::npos);
}

TEST(DiffFormatsTest, MetricValuesForPeople) {
  EXPECT_EQ(format_metric_value("bytes_per_second", 812.0 * 1024 * 1024), "812 MiB/s");
  EXPECT_EQ(format_metric_value("bytes_per_second", 1.5 * 1024 * 1024 * 1024), "1.5 GiB/s");
  EXPECT_EQ(format_metric_value("lat_p99_us", 153.25), "153.2 us");
  // Never an exponent: a duration in a larger unit, a large count in whole digits.
  EXPECT_EQ(format_metric_value("lat_p99_us", 96210), "96.21 ms");
  EXPECT_EQ(format_metric_value("lat_p99_us", 2.5e6), "2.5 s");
  EXPECT_EQ(format_metric_value("wait_p50_ms", 3100), "3.1 s");
  EXPECT_EQ(format_metric_value("epoch_s", 12345), "12345 s");
  EXPECT_EQ(format_metric_value("steps", 123456), "123456");
  EXPECT_EQ(format_metric_value("real_time", 12.5e6), "12.5 ms");
  EXPECT_EQ(format_metric_value("stall_fraction", 0.031), "0.031");
  EXPECT_EQ(format_metric_value("items_per_second", 489912), "489.9k/s");
  EXPECT_EQ(format_metric_value("samples_per_second", 950), "950/s");
}

}  // namespace
}  // namespace feedbench
