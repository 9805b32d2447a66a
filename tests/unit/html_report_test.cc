// The HTML report: self-contained (no external URL, no network call), its embedded data equal
// to the documents', one entry per file, verdicts per path, flags and errors shown.
#include "reporters/html_report.h"

#include <cstdio>
#include <functional>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "feedbench/base/error.h"
#include "feedbench/base/units.h"
#include "feedbench/chartjs.h"
#include "reporters/cache_trust.h"
#include "reporters/markdown_writer.h"
#include "reporters/summary.h"
#include "test_util.h"

namespace feedbench {
namespace {

using nlohmann::json;

BenchmarkEntry read_entry(const std::string& path, const std::string& state, int workers, int rep, double bps,
                          double residency = 0.0, bool achieved = true) {
  BenchmarkEntry e;
  e.params = {{"family", "file_read"}, {"pattern", "random"}, {"block_size", 4096},   {"engine", "psync"},
              {"queue_depth", 1},      {"workers", workers},  {"cache_state", state}, {"path", path}};
  e.case_name = "file_read/pattern:random/bs:4096/engine:psync/qd:1/workers:" + std::to_string(workers) +
                "/state:" + state + "/path:" + path;
  e.name = e.run_name = e.case_name + "/iterations:1/repeats:3/manual_time";
  e.run_type = "iteration";
  e.repetitions = 3;
  e.repetition_index = rep;
  e.counters = {{"bytes_per_second", bps},
                {"items_per_second", bps / 4096},
                {"lat_p50_us", 80.0 + rep},
                {"residency_before", residency}};
  e.cache = {{"requested", state}, {"residency_before", residency}, {"achieved", achieved}};
  Histogram h;
  for (int i = 1; i <= 100; ++i) h.record(static_cast<std::uint64_t>(i * 1000 * (rep + 1)));
  e.latency = h;
  return e;
}

BenchmarkEntry loader_entry(const std::string& path, int workers, int accelerators, double au) {
  BenchmarkEntry e;
  e.params = {
      {"family", "loader"}, {"batch_size", 32},      {"workers", workers}, {"accelerators", accelerators},
      {"target_au", 0.9},   {"cache_state", "cold"}, {"path", path}};
  e.case_name = "loader/batch:32/workers:" + std::to_string(workers) +
                "/acc:" + std::to_string(accelerators) + "/state:cold/path:" + path;
  e.name = e.run_name = e.case_name;
  e.run_type = "iteration";
  e.counters = {{"samples_per_second", 1000 * au}, {"au", au}, {"stall_fraction", 1 - au}};
  e.extra = {{"verdict", au >= 0.9 ? "AU high — storage keeps up" : "AU low — training waits for data"}};
  return e;
}

BenchmarkEntry stage_entry(double bps) {
  BenchmarkEntry stage;
  stage.case_name = stage.name = stage.run_name = "stage/workers:4/state:cold/verify:true";
  stage.run_type = "iteration";
  stage.params = {{"family", "stage"}, {"workers", 4}, {"cache_state", "cold"}, {"verify", true}};
  stage.counters = {{"bytes_per_second", bps}};
  return stage;
}

ResultDocument base_doc() {
  ResultDocument d;
  d.context = {{"date", "2024-05-01T10:00:00+00:00"}};
  d.tool = {{"version", "0.1.0"}, {"git_commit", "0123456789abcdef"}};
  d.command_line = {"feedbench", "run", "--config", "configs/demo.json", "--out", "my result.json"};
  d.config = {{"file", "configs/demo.json"},
              {"name", "demo"},
              {"sha256", std::string(64, 'a')},
              {"resolved", {{"name", "demo"}, {"families", json::array()}}}};
  d.dataset = {
      {"source", {{"root", "/data/src"}, {"files", 320}, {"bytes", 1 << 20}, {"fingerprint", "f00d"}}},
      {"cache",
       {{"root", "/data/cache"}, {"files", 160}, {"bytes", 1 << 19}, {"manifest", {{"label", "demo-v1"}}}}}};
  d.environment = {{"host",
                    {{"cpu_model", "Test CPU"},
                     {"cores", 2},
                     {"memory_total_bytes", 8LL << 30},
                     {"kernel", "6.1"},
                     {"instance_type", "p4d.24xlarge"},
                     {"gpus", json::array()}}},
                   {"paths",
                    {{"source", {{"resolved", "/data/src"}, {"fs_type", "ext4"}, {"device", "vda"}}},
                     {"cache", {{"resolved", "/data/cache"}, {"fs_type", "ext4"}, {"device", "vda"}}}}}};
  for (int rep = 0; rep < 3; ++rep) {
    d.benchmarks.push_back(read_entry("source", "cold", 1, rep, 100e6 + rep * 10e6));
    d.benchmarks.push_back(read_entry("source", "cold", 4, rep, 300e6 + rep * 10e6));
    d.benchmarks.push_back(read_entry("source", "warm", 1, rep, 900e6 + rep * 10e6, 0.5, false));
    d.benchmarks.push_back(read_entry("cache", "cold", 1, rep, 200e6 + rep * 10e6));
  }
  return d;
}

// RETURNS: the page's embedded data.
json embedded_data(const std::string& page) {
  const std::string open = "<script id=\"feedbench-data\" type=\"application/json\">";
  auto begin = page.find(open);
  EXPECT_NE(begin, std::string::npos);
  begin += open.size();
  auto end = page.find("</script>", begin);
  return json::parse(page.substr(begin, end - begin));
}

// The page without the inlined Chart.js (whose licence comment names its web site).
std::string page_without_chartjs(std::string page) {
  std::string chartjs = embedded::kChartJs;
  auto at = page.find(chartjs.substr(0, 200));
  EXPECT_NE(at, std::string::npos) << "Chart.js is not inlined";
  page.erase(at, chartjs.size());
  return page;
}

// A case run across 3 ranks on 2 hosts, rank 2 slow, and a loader case across 2 ranks.
ResultDocument ranks_doc() {
  ResultDocument d = base_doc();
  for (BenchmarkEntry& e : d.benchmarks) {
    if (e.case_name.find("workers:4/state:cold/path:source") == std::string::npos) continue;
    e.extra = {{"cluster", {{"ranks", 3}, {"hosts", 2}, {"straggler_below", 0.8}}},
               {"ranks",
                {{{"rank", 0}, {"host", "node-a"}, {"bytes_per_second", 200e6}},
                 {{"rank", 1}, {"host", "node-a"}, {"bytes_per_second", 190e6}},
                 {{"rank", 2}, {"host", "node-b"}, {"bytes_per_second", 20e6}}}},
               {"hosts",
                {{{"host", "node-a"}, {"bytes_per_second", 390e6}},
                 {{"host", "node-b"}, {"bytes_per_second", 20e6}}}},
               {"stragglers",
                {{{"rank", 2}, {"host", "node-b"}, {"bytes_per_second", 20e6}, {"vs_median", 0.105}}}}};
  }
  BenchmarkEntry l = loader_entry("source", 2, 2, 0.6);
  l.extra["ranks"] = {
      {{"rank", 0}, {"host", "node-a"}, {"au", 0.95}, {"min_au", 0.94}, {"au_per_accelerator", {0.94, 0.96}}},
      {{"rank", 1}, {"host", "node-b"}, {"au", 0.61}, {"min_au", 0.6}, {"au_per_accelerator", {0.6, 0.62}}}};
  l.extra["min_au"] = 0.6;
  l.extra["min_au_rank"] = 1;
  l.extra["min_au_host"] = "node-b";
  d.benchmarks.push_back(l);
  return d;
}

TEST(HtmlReportTest, CasesAcrossRanksShowHostsAndTheStragglerLine) {
  const std::string page = render_html_report({ranks_doc()}, {"r"});
  const auto at = page.find("<section id=\"across-ranks\">");
  ASSERT_NE(at, std::string::npos);
  const std::string section = page.substr(at, page.find("</section>", at) - at);
  EXPECT_NE(section.find("3 ranks — hosts node-a 372 MiB/s, node-b 19.1 MiB/s"), std::string::npos)
      << section;
  EXPECT_NE(section.find("straggler: rank 2 (host node-b) at 19.1 MiB/s, 0.10 of the median rank&#39;s rate"),
            std::string::npos)
      << section;
  EXPECT_NE(section.find("lowest AU 60.0% on rank 1 (host node-b)"), std::string::npos) << section;
  // Cases of one rank have no line; the chart's data (every rank's figures) is embedded.
  EXPECT_EQ(section.find("workers:1/"), std::string::npos) << section;
  const json data = embedded_data(page);
  std::size_t with_ranks = 0;
  for (const json& c : data["files"][0]["cases"])
    if (c["extra"].contains("ranks")) ++with_ranks;
  EXPECT_EQ(with_ranks, 2u);
  // A run of one process has no such section.
  EXPECT_EQ(render_html_report({base_doc()}, {"r"}).find("across-ranks"), std::string::npos);
}

TEST(HtmlReportTest, MakesNoNetworkRequest) {
  std::string page = render_html_report({base_doc()}, {"r"});
  ASSERT_NE(page.find("Chart.js v3"), std::string::npos);
  // Every src/href attribute is an in-page anchor.
  std::regex attr(R"((src|href)\s*=\s*["']?([^"' >]*))", std::regex::icase);
  int anchors = 0;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), attr); it != std::sregex_iterator(); ++it) {
    std::string value = (*it)[2];
    EXPECT_TRUE(!value.empty() && value[0] == '#') << "external reference: " << it->str();
    ++anchors;
  }
  EXPECT_GT(anchors, 0);
  std::string own = page_without_chartjs(page);
  for (const char* s : {"http://", "https://", "fetch(", "XMLHttpRequest", "import(", "@import", "url("})
    EXPECT_EQ(own.find(s), std::string::npos) << s;
  EXPECT_NE(own.find("default-src 'none'"), std::string::npos);  // the browser refuses any request
}

TEST(HtmlReportTest, EmbeddedDataEqualsTheDocument) {
  ResultDocument doc = base_doc();
  json data = embedded_data(render_html_report({doc}, {"r"}));
  ASSERT_EQ(data["files"].size(), 1u);
  const json& cases = data["files"][0]["cases"];
  ASSERT_EQ(cases.size(), 4u);
  const json& c = cases[1];
  const BenchmarkEntry& first = doc.benchmarks[1];
  EXPECT_EQ(c["case"], first.case_name);
  EXPECT_EQ(c["params"], json(first.params));
  EXPECT_EQ(c["repetitions"], 3);
  // The median of the three repetitions (300, 310, 320 MB/s).
  EXPECT_DOUBLE_EQ(c["counters"]["bytes_per_second"].get<double>(), 310e6);
  EXPECT_DOUBLE_EQ(c["counters"]["lat_p50_us"].get<double>(), 81.0);
  EXPECT_EQ(c["cache"]["requested"], "cold");
  EXPECT_EQ(c["cache"]["achieved"], true);
  // Latency merged across repetitions; the CDF ends at 100% at the largest value (300 µs).
  EXPECT_EQ(c["latency"]["count"], 300);
  const json& cdf = c["latency"]["cdf"];
  EXPECT_DOUBLE_EQ(cdf.back()[1].get<double>(), 1.0);
  EXPECT_NEAR(cdf.back()[0].get<double>(), 300.0, 3.0);
  for (std::size_t i = 1; i < cdf.size(); ++i)
    EXPECT_GE(cdf[i][1].get<double>(), cdf[i - 1][1].get<double>());
  EXPECT_EQ(cases[2]["cache"]["achieved"], false);
}

TEST(HtmlReportTest, SeveralFilesGiveOneEntryPerFileAndRatios) {
  ResultDocument a = base_doc(), b = base_doc();
  for (auto& e : b.benchmarks) e.counters["bytes_per_second"] *= 2;
  std::string page = render_html_report({a, b}, {"before", "after"});
  json data = embedded_data(page);
  ASSERT_EQ(data["files"].size(), 2u);
  EXPECT_EQ(data["files"][0]["name"], "before");
  EXPECT_EQ(data["files"][1]["name"], "after");
  EXPECT_DOUBLE_EQ(data["files"][1]["cases"][0]["counters"]["bytes_per_second"].get<double>(),
                   2 * data["files"][0]["cases"][0]["counters"]["bytes_per_second"].get<double>());
  EXPECT_NE(page.find("id=\"ratios\""), std::string::npos);
  EXPECT_NE(page.find("2.00×"), std::string::npos);
  // One file alone has no ratio table.
  EXPECT_EQ(render_html_report({a}, {"before"}).find("id=\"ratios\""), std::string::npos);
}

TEST(HtmlReportTest, HeaderShowsWhatAReaderNeedsToRerun) {
  std::string page = render_html_report({base_doc()}, {"r"});
  for (const char* s : {"p4d.24xlarge", "Test CPU", "demo-v1", "f00d", "/data/cache", "ext4",
                        "feedbench run --config configs/demo.json --out &#39;my result.json&#39;",
                        "<details>", "Same device"})
    EXPECT_NE(page.find(s), std::string::npos) << s;
  EXPECT_NE(page.find("not warm</span>"), std::string::npos);  // the warm round that was not
}

TEST(HtmlReportTest, VerdictPerPath) {
  auto reads = html_report_verdicts(base_doc());
  ASSERT_EQ(reads.size(), 3u);
  EXPECT_EQ(reads[0].rfind("Source path reads at best", 0), 0u) << reads[0];
  EXPECT_NE(reads[0].find("cold"), std::string::npos);
  // Every source warm round found its data only half cached: no warm figure to quote.
  EXPECT_EQ(reads[0].find("warm"), std::string::npos) << reads[0];
  EXPECT_EQ(reads[1].rfind("Cache path reads at best", 0), 0u) << reads[1];
  EXPECT_EQ(reads[2],
            "Does the cache help? Cold: yes, the cache path reads 1.9× faster than the source (1 matched "
            "pair); like with like: each pair differs only in its path.");

  ResultDocument swept;
  for (int acc : {1, 2, 4, 8}) {
    swept.benchmarks.push_back(loader_entry("cache", 4, acc, 0.95));
    swept.benchmarks.push_back(loader_entry("source", 4, acc, acc <= 2 ? 0.93 : 0.5));
  }
  auto v = html_report_verdicts(swept);
  ASSERT_FALSE(v.empty());
  // The summary's order: the source first.
  EXPECT_EQ(v[0], "Source path keeps 2 simulated accelerators at AU ≥ 90%; cache path keeps 8.");
  // Every trainer must reach the target, not only their mean.
  for (auto& e : swept.benchmarks)
    if (e.params["path"] == "cache" && e.params["accelerators"] == 8)
      e.extra["au_per_accelerator"] = {0.99, 0.99, 0.99, 0.99, 0.99, 0.99, 0.99, 0.7};
  EXPECT_EQ(html_report_verdicts(swept)[0],
            "Source path keeps 2 simulated accelerators at AU ≥ 90%; cache path keeps 4.");

  // Whether storage feeds the trainers: the fewest workers that reach the target.
  ResultDocument workers;
  workers.benchmarks = {loader_entry("source", 1, 1, 0.5), loader_entry("source", 4, 1, 0.96),
                        loader_entry("source", 8, 1, 0.97)};
  v = html_report_verdicts(workers);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0],
            "Source path feeds the simulated trainers cold: AU 96.0% with 4 workers — meets the 90% target.");
  workers.benchmarks = {loader_entry("source", 1, 1, 0.5), loader_entry("source", 4, 1, 0.6)};
  EXPECT_EQ(
      html_report_verdicts(workers),
      std::vector<std::string>{"Source path does not feed the simulated trainers cold: AU 60.0% at best "
                               "with 4 workers — below the 90% target."});
}

TEST(HtmlReportTest, EnvironmentShowsOnlyVariablesThatWereSetAndTheDefaultsApart) {
  ResultDocument d = base_doc();
  d.environment_variables = {{"FEEDBENCH_SOURCE", "/data/src"}};
  d.config["defaults_used"] = {{"FEEDBENCH_CACHE", "/var/tmp/feedbench-cache"}};
  std::string page = render_html_report({d}, {"r"});
  const auto set = page.find("With these environment variables set:");
  const auto defaults = page.find("Defaults the config applied (these variables were <em>not</em> set):");
  ASSERT_NE(set, std::string::npos) << page;
  ASSERT_NE(defaults, std::string::npos) << page;
  const std::string set_block = page.substr(set, page.find("</pre>", set) - set);
  EXPECT_NE(set_block.find("FEEDBENCH_SOURCE=/data/src"), std::string::npos) << set_block;
  EXPECT_EQ(set_block.find("FEEDBENCH_CACHE"), std::string::npos) << set_block;
  const std::string default_block = page.substr(defaults, page.find("</pre>", defaults) - defaults);
  EXPECT_NE(
      default_block.find("FEEDBENCH_CACHE unset: the config&#39;s default /var/tmp/feedbench-cache applied"),
      std::string::npos)
      << default_block;
  // No variable set, no block claiming one was.
  d.environment_variables.clear();
  EXPECT_EQ(render_html_report({d}, {"r"}).find("With these environment variables"), std::string::npos);
}

TEST(HtmlReportTest, ErrorsAndHostileTextAreShownEscaped) {
  ResultDocument d = base_doc();
  d.config["name"] = "</script><script>alert(1)</script>";
  BenchmarkEntry failed = read_entry("cache", "direct", 1, 0, 0);
  failed.error_occurred = true;
  failed.error_message = "O_DIRECT unsupported on tmpfs <x>";
  failed.counters.clear();
  d.benchmarks.push_back(failed);
  std::string page = render_html_report({d}, {"r"});
  EXPECT_EQ(page.find("<script>alert(1)"), std::string::npos);
  EXPECT_NE(page.find("O_DIRECT unsupported on tmpfs &lt;x&gt;"), std::string::npos);
  json data = embedded_data(page);  // still parses: no early </script>
  EXPECT_EQ(data["files"][0]["cases"].back()["errors"][0], "O_DIRECT unsupported on tmpfs <x>");
}

// ---------------------------------------------------------------- sentences with parts absent

// RETURNS: the page's text as a reader sees it, one line per block element: no <script>,
// <style> or <pre> (code and data, not sentences), inline tags dropped, the five escaped
// characters decoded.
std::string visible_text(std::string page) {
  for (const char* element : {"script", "style", "pre"}) {
    const std::string open = std::string("<") + element, close = std::string("</") + element + ">";
    for (std::size_t at; (at = page.find(open)) != std::string::npos;) {
      auto end = page.find(close, at);
      page.erase(at, end == std::string::npos ? std::string::npos : end + close.size() - at);
    }
  }
  static const std::regex inline_tag(R"(</?(code|strong|em|span|a)( [^>]*)?>)");
  page = std::regex_replace(page, inline_tag, "");
  static const std::regex block_tag(R"(<[^>]*>)");
  page = std::regex_replace(page, block_tag, "\n");
  for (auto [entity, c] :
       {std::pair{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&amp;", "&"}})
    for (std::size_t at; (at = page.find(entity)) != std::string::npos;)
      page.replace(at, std::string(entity).size(), c);
  return page;
}

// RETURNS: the items of the page's verdict lists, as a reader sees them.
std::vector<std::string> page_verdicts(const std::string& page) {
  std::vector<std::string> out;
  static const std::regex item("<li>([^<]*)</li>");
  for (std::size_t at = 0; (at = page.find("<div class=\"verdict\">", at)) != std::string::npos; ++at) {
    const std::string block = page.substr(at, page.find("</div>", at) - at);
    for (auto it = std::sregex_iterator(block.begin(), block.end(), item); it != std::sregex_iterator(); ++it)
      out.push_back(visible_text((*it)[1]));
  }
  return out;
}

// RETURNS: the first sign of a value left out of a sentence ("(4 workers, )", "1 ×  40 GiB",
// " (0123)"), or "" when there is none. Lines are checked one by one.
std::string missing_value_sign(const std::string& text) {
  static const std::regex sign(
      R"(\(\s|\s\)|\(\)|,\s*[,.)]|\s,|\S  +\S|^ +\S.*\S$|undefined|NaN|\bnull\b|— *$|—\s*[,.)])");
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, sign)) return "\"" + line + "\" (" + m.str() + ")";
  }
  return "";
}

TEST(HtmlReportTest, MissingValueSignsAreFound) {  // the checker itself
  EXPECT_NE(missing_value_sign("at best 461 MiB/s cold (4 workers, )"), "");
  EXPECT_NE(missing_value_sign("1 ×  40960 MiB"), "");
  EXPECT_NE(missing_value_sign(" (0123456789ab)"), "");
  EXPECT_NE(missing_value_sign("AU undefined%"), "");
  EXPECT_EQ(missing_value_sign("Source path reads at best 461 MiB/s cold (4 workers, random)."), "");
}

// Each optional part of a document taken away in turn: every sentence the page writes still
// reads whole.
TEST(HtmlReportTest, NoSentenceHasAMissingValue) {
  using Strip = std::function<void(ResultDocument&)>;
  auto erase_param = [](const char* key) {
    return Strip([key](ResultDocument& d) {
      for (auto& e : d.benchmarks) e.params.erase(key);
    });
  };
  auto with_loader = [](ResultDocument& d) {
    for (int w : {1, 4}) d.benchmarks.push_back(loader_entry("source", w, 1, w == 4 ? 0.95 : 0.5));
    d.benchmarks.push_back(stage_entry(600.0 * 1048576));  // and staging
  };
  std::vector<std::pair<std::string, Strip>> variants = {
      {"whole", [](ResultDocument&) {}},
      {"no workers", erase_param("workers")},
      {"no pattern", erase_param("pattern")},
      {"no path", erase_param("path")},
      {"no workers, no pattern",
       [&](ResultDocument& d) {
         erase_param("workers")(d);
         erase_param("pattern")(d);
       }},
      {"no verdict text",
       [](ResultDocument& d) {
         for (auto& e : d.benchmarks) e.extra.erase("verdict");
       }},
      {"no target", erase_param("target_au")},
      {"no host", [](ResultDocument& d) { d.environment.erase("host"); }},
      {"no paths", [](ResultDocument& d) { d.environment.erase("paths"); }},
      {"no environment", [](ResultDocument& d) { d.environment = json::object(); }},
      {"no data set", [](ResultDocument& d) { d.dataset = json::object(); }},
      {"no config", [](ResultDocument& d) { d.config = json::object(); }},
      {"no context", [](ResultDocument& d) { d.context = json::object(); }},
      {"no tool version", [](ResultDocument& d) { d.tool.erase("version"); }},
      {"no tool", [](ResultDocument& d) { d.tool = json::object(); }},
      {"no command line", [](ResultDocument& d) { d.command_line.clear(); }},
      {"no cpu model", [](ResultDocument& d) { d.environment["host"].erase("cpu_model"); }},
      {"gpu without name",
       [](ResultDocument& d) {
         d.environment["host"]["gpus"] = json::array({{{"memory", "40960 MiB"}}});
       }},
      {"gpu without memory",
       [](ResultDocument& d) {
         d.environment["host"]["gpus"] = json::array({{{"name", "A100"}, {"driver", "535"}}});
       }},
      {"mount without mount point",
       [](ResultDocument& d) { d.environment["paths"]["source"]["mount_source"] = "fs-1:/export"; }},
      {"device without name",
       [](ResultDocument& d) {
         d.environment["paths"]["source"]["device"] = "";
         d.environment["paths"]["source"]["device_info"] = {{"model", "NVMe"}};
       }},
      {"manifest without label",
       [](ResultDocument& d) {
         d.dataset["cache"]["manifest"] = {{"version", 2}};
       }},
      {"no cases", [](ResultDocument& d) { d.benchmarks.clear(); }},
      {"every case failed",
       [](ResultDocument& d) {
         for (auto& e : d.benchmarks) {
           e.error_occurred = true;
           e.error_message = "failed";
           e.counters.clear();
         }
       }},
  };
  for (bool loader : {false, true})
    for (const auto& [what, strip] : variants) {
      ResultDocument d = base_doc();
      if (loader) with_loader(d);
      strip(d);
      for (const auto& v : html_report_verdicts(d))
        EXPECT_EQ(missing_value_sign(v), "") << what << (loader ? " (with loader)" : "") << ": verdict";
      ResultDocument other = d;
      std::string page = render_html_report({d, other}, {"a", "b"}, "", {"/runs/a.json", "/runs/b.json"});
      EXPECT_EQ(missing_value_sign(visible_text(page)), "") << what << (loader ? " (with loader)" : "");
      page = render_html_report({d}, {"a"});
      EXPECT_EQ(missing_value_sign(visible_text(page)), "") << what << (loader ? " (with loader)" : "");
    }
}

// A loader case that measured too few steps says so and nothing more: it neither "keeps"
// accelerators at the target nor gives the best case's verdict.
TEST(HtmlReportTest, ALoaderCaseTooShortToJudgeGivesNoVerdict) {
  auto too_short = [](BenchmarkEntry e) {
    e.extra["judged"] = false;
    e.extra["verdict"] = "not enough steps to judge: 3 measured, 10 needed per trainer: raise steps to 12";
    return e;
  };
  ResultDocument swept;
  for (int acc : {1, 2}) swept.benchmarks.push_back(too_short(loader_entry("cache", 4, acc, 0.95)));
  EXPECT_EQ(html_report_verdicts(swept),
            std::vector<std::string>{"Loader cases: too few steps measured to judge them (raise steps)."});

  // A judged case beside a short one with a higher AU: the judged one speaks.
  ResultDocument mixed;
  mixed.benchmarks = {loader_entry("source", 1, 1, 0.5), too_short(loader_entry("source", 4, 1, 0.99))};
  const auto v = html_report_verdicts(mixed);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("with 1 worker"), std::string::npos) << v[0];
  EXPECT_EQ(v[0].find("not enough steps"), std::string::npos) << v[0];
}

TEST(HtmlReportTest, ReadVerdictNamesOnlyTheParametersItHas) {
  ResultDocument d = base_doc();
  EXPECT_EQ(html_report_verdicts(d)[0], "Source path reads at best 296 MiB/s cold (4 workers, random).");
  for (auto& e : d.benchmarks) e.params.erase("pattern");
  EXPECT_EQ(html_report_verdicts(d)[0], "Source path reads at best 296 MiB/s cold (4 workers).");
  for (auto& e : d.benchmarks) e.params.erase("workers");
  EXPECT_EQ(html_report_verdicts(d)[0], "Source path reads at best 296 MiB/s cold.");
  d = base_doc();
  for (auto& e : d.benchmarks) e.params.erase("workers");
  EXPECT_EQ(html_report_verdicts(d)[0], "Source path reads at best 296 MiB/s cold (random).");
}

TEST(HtmlReportTest, StagingIsSaidApartFromReads) {
  ResultDocument d = base_doc();
  d.benchmarks.push_back(stage_entry(600.0 * 1048576));
  auto v = html_report_verdicts(d);
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[3], "Staging to the cache copies at best 600 MiB/s (4 workers).");
  d.benchmarks.back().params.erase("workers");
  EXPECT_EQ(html_report_verdicts(d)[3], "Staging to the cache copies at best 600 MiB/s.");
}

// ---------------------------------------------------------------- one verdict engine

// Every kind of answer: reads cold and with O_DIRECT on both paths (a matched pair each), a
// loader over workers and accelerators, staging.
ResultDocument every_answer_doc() {
  ResultDocument d = base_doc();
  for (int rep = 0; rep < 3; ++rep) {
    d.benchmarks.push_back(read_entry("source", "direct", 4, rep, 150e6 + rep * 1e6));
    d.benchmarks.push_back(read_entry("cache", "direct", 4, rep, 450e6 + rep * 1e6));
  }
  for (int w : {1, 4})
    for (int acc : {1, 2})
      d.benchmarks.push_back(loader_entry("source", w, acc, w == 4 && acc == 1 ? 0.95 : 0.5));
  d.benchmarks.push_back(stage_entry(600.0 * 1048576));
  return d;
}

// RETURNS: "3.0×", as the answers print a ratio.
std::string ratio_figure(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f×", r >= 1 ? r : 1 / r);
  return buf;
}

// The page, the console and Markdown print one set of answers: a page that judged on its own,
// or a summary that left a state out, fails here.
TEST(HtmlReportTest, ThePageSaysWhatTheSummarySays) {
  ResultDocument d = every_answer_doc();
  d.summary = summarize(d);  // as run stores it
  const json& answers = d.summary["answers"];
  const std::vector<std::string> sentences = answer_sentences(answers);
  EXPECT_EQ(html_report_verdicts(d), sentences);
  EXPECT_EQ(page_verdicts(render_html_report({d}, {"r"})), sentences);
  const std::string console = format_answers(answers);
  EXPECT_EQ(format_summary(d.summary).rfind("Summary\n" + console, 0), 0u) << format_summary(d.summary);
  EXPECT_NE(format_markdown(d).find(console), std::string::npos) << format_markdown(d);

  // Each answer's figure in the console's words and in the page's.
  std::string page;
  for (const std::string& s : sentences) page += s + "\n";
  std::vector<std::string> figures;
  std::set<std::string> kinds;
  for (const json& p : answers["paths"]) {
    const json reads = p.value("reads", json::object()), feeds = p.value("feeds", json::object());
    for (const auto& [state, r] : reads.items()) {
      figures.push_back(format_rate(r["bytes_per_second"].get<double>()) + " " + state);
      kinds.insert("reads " + state);
    }
    for (const auto& [state, f] : feeds.items()) {
      char au[32];
      std::snprintf(au, sizeof au, "AU %.1f%%", 100 * f["au"].get<double>());
      figures.push_back(au);
      kinds.insert("feeds " + state);
    }
    if (p.contains("keeps")) {
      figures.push_back(std::to_string(p["keeps"]["accelerators"].get<int>()) + " simulated accelerator");
      kinds.insert("keeps");
    }
  }
  for (const json& c : answers.value("cache_helps", json::array())) {
    figures.push_back(ratio_figure(c["ratio"].get<double>()));
    kinds.insert("cache helps " + c["cache_state"].get<std::string>());
  }
  if (answers.contains("stage")) {
    figures.push_back(format_rate(answers["stage"]["bytes_per_second"].get<double>()));
    kinds.insert("stage");
  }
  for (const std::string& f : figures) {
    EXPECT_NE(console.find(f), std::string::npos) << f << " not in the console's answers:\n" << console;
    EXPECT_NE(page.find(f), std::string::npos) << f << " not in the page's verdict:\n" << page;
  }
  // O_DIRECT is judged as a state of its own, by every reporter.
  EXPECT_EQ(kinds, (std::set<std::string>{"reads cold", "reads direct", "feeds cold", "keeps",
                                          "cache helps cold", "cache helps direct", "stage"}))
      << answers.dump(2);
  EXPECT_NE(page.find("Source path reads at best 296 MiB/s cold (4 workers, random) and 144 MiB/s direct (4 "
                      "workers, random)."),
            std::string::npos)
      << page;
  EXPECT_NE(
      console.find("source: can storage feed the simulated trainers? cold: yes (AU 95.0%, target 90.0%, 4 "
                   "workers); keeps 1 simulated accelerator at AU ≥ 90.0%; reads at best 296 MiB/s cold (4 "
                   "workers), 144 MiB/s direct (4 workers)\n"),
      std::string::npos)
      << console;
}

// What the run stored is what the page prints; only a file from an older feedbench, whose
// summary has no answers of this engine's, is judged again, by the same engine.
TEST(HtmlReportTest, ThePagePrintsTheStoredAnswers) {
  ResultDocument d = every_answer_doc();
  d.summary = summarize(d);
  d.summary["answers"]["stage"]["bytes_per_second"] = 1234.0 * 1048576;
  const std::string stored = format_rate(1234.0 * 1048576);
  EXPECT_EQ(html_report_verdicts(d).back(),
            "Staging to the cache copies at best " + stored + " (4 workers).");
  EXPECT_NE(format_markdown(d).find("staging to the cache copies at best " + stored), std::string::npos);
  const std::vector<std::string> judged_now = answer_sentences(summarize(d)["answers"]);
  EXPECT_NE(html_report_verdicts(d), judged_now);
  for (auto older : {std::function<void(json&)>([](json& s) { s["answers"].erase("version"); }),
                     std::function<void(json&)>([](json& s) { s.erase("answers"); }),
                     std::function<void(json&)>([](json& s) {
                       s = {{"note", "fixture"}};
                     }),
                     std::function<void(json&)>([](json& s) { s = json::object(); })}) {
    ResultDocument o = d;
    older(o.summary);
    EXPECT_EQ(html_report_verdicts(o), judged_now) << o.summary.dump();
    EXPECT_EQ(page_verdicts(render_html_report({o}, {"r"})), judged_now);
  }
}

// ---------------------------------------------------------------- several files

TEST(HtmlReportTest, FilesAreNamedByTheirLabelNotTheirPath) {
  ResultDocument a = base_doc(), b = base_doc();
  const std::vector<std::string> files = {"/runs/2024/result.json", "/runs/2025/result.json"};
  // The same cache label and instance type: the file names tell them apart, not whole paths.
  EXPECT_EQ(report_labels({a, b}, {"/x/before.json", "/y/after.json"}, {}),
            (std::vector<std::string>{"before", "after"}));
  // Different data versions in the cache: their manifest labels.
  b.dataset["cache"]["manifest"]["label"] = "demo-v2";
  EXPECT_EQ(report_labels({a, b}, files, {}), (std::vector<std::string>{"demo-v1", "demo-v2"}));
  // Same data, different instance types.
  b = base_doc();
  b.environment["host"]["instance_type"] = "p5.48xlarge";
  EXPECT_EQ(report_labels({a, b}, files, {}), (std::vector<std::string>{"p4d.24xlarge", "p5.48xlarge"}));
  // Nothing tells them apart but the path.
  EXPECT_EQ(report_labels({a, a}, files, {}), files);
  // --label wins, one per file, distinct.
  EXPECT_EQ(report_labels({a, b}, files, {"old", "new"}), (std::vector<std::string>{"old", "new"}));
  EXPECT_THROW(report_labels({a, b}, files, {"old"}), InputError);
  EXPECT_THROW(report_labels({a, b}, files, {"same", "same"}), InputError);
  EXPECT_THROW(report_labels({a, b}, files, {"", "x"}), InputError);
  // One file: its cache label, else its file name.
  EXPECT_EQ(report_labels({a}, {"/runs/q1.json"}, {}), (std::vector<std::string>{"demo-v1"}));
  a.dataset.erase("cache");
  EXPECT_EQ(report_labels({a}, {"/runs/q1.json"}, {}), (std::vector<std::string>{"q1"}));
}

// RETURNS: the class of the ratio cell of the row whose case name contains `needle`.
std::string ratio_class(const std::string& page, const std::string& needle) {
  auto table = page.find("id=\"ratios\"");
  EXPECT_NE(table, std::string::npos);
  auto row = page.find(needle, table);
  EXPECT_NE(row, std::string::npos) << needle;
  auto end = page.find("</tr>", row);
  std::string r = page.substr(row, end - row);
  std::smatch m;
  std::regex cell(R"re(<td class="num( [a-z]+)?"[^>]*>[0-9.]+×</td>)re");
  EXPECT_TRUE(std::regex_search(r, m, cell)) << r;
  return m[1].matched ? m[1].str().substr(1) : "";
}

TEST(HtmlReportTest, RatiosAreColouredOnlyWhereDiffJudgesAChange) {
  ResultDocument a = base_doc(), b = base_doc();
  for (auto& e : b.benchmarks) {
    const int rep = static_cast<int>(e.repetition_index);
    if (e.params["workers"] == 4) {
      // +10% on the median, but the repetitions spread far wider than that: diff says noisy.
      e.counters["bytes_per_second"] *= std::vector<double>{0.5, 1.1, 1.9}[rep];
    } else if (e.params["path"] == "cache") {
      e.counters["bytes_per_second"] *= 2;  // doubled, tightly: an improvement
    } else if (e.params["cache_state"] == "cold") {
      e.counters["bytes_per_second"] *= 0.5;  // halved: a regression
    }
  }
  std::string page = render_html_report({a, b}, {"before", "after"});
  EXPECT_EQ(ratio_class(page, "workers:4/state:cold/path:source"), "");
  EXPECT_EQ(ratio_class(page, "workers:1/state:cold/path:cache"), "better");
  EXPECT_EQ(ratio_class(page, "workers:1/state:cold/path:source"), "worse");
  // A judgement needs cases in common: none, no colour (and no error).
  ResultDocument c = base_doc();
  for (auto& e : c.benchmarks) e.case_name += "/other";
  EXPECT_EQ(render_html_report({a, c}, {"a", "c"}).find("class=\"num better"), std::string::npos);
}

// The journey's watched pair: AU 0.85 -> 0.555 while another program took 1.3 of 2 cores
// during "after". The report drew 0.65x in red; diff now calls it noisy, so the ratio is not
// coloured, and its tooltip names the shares. Without the record, as before, a regression.
TEST(HtmlReportTest, ARatioThatOtherProgramsExplainIsNotDrawnAsARegression) {
  ResultDocument a = base_doc(), b = base_doc();
  a.benchmarks.push_back(loader_entry("source", 2, 1, 0.85));
  b.benchmarks.push_back(loader_entry("source", 2, 1, 0.555));
  EXPECT_EQ(ratio_class(render_html_report({a, b}, {"before", "after"}), "loader/batch:32/workers:2"),
            "worse");
  a.environment["host"]["load"] = {{"loadavg_1m_before", 1.9},
                                   {"loadavg_1m_after", 2.0},
                                   {"online_cores", 2},
                                   {"other_programs_cores", 0.1}};
  b.environment["host"]["load"] = {{"loadavg_1m_before", 2.0},
                                   {"loadavg_1m_after", 2.1},
                                   {"online_cores", 2},
                                   {"other_programs_cores", 1.3}};
  const std::string page = render_html_report({a, b}, {"before", "after"});
  EXPECT_EQ(ratio_class(page, "loader/batch:32/workers:2"), "");
  EXPECT_NE(page.find("diff: noisy, not a regression: other programs took 0.1 of 2 cores BASE, 1.3 NEW"),
            std::string::npos);
}

// ---------------------------------------------------------------- the every-case table

TEST(HtmlReportTest, CaseTableLeadsWithTheLabelAndWhatMatters) {
  ResultDocument d = base_doc();
  for (int w : {1, 4}) d.benchmarks.push_back(loader_entry("source", w, 1, w == 4 ? 0.95 : 0.5));
  std::string page = render_html_report({d}, {"r"});
  auto loader = page.find("<h3>loader");
  ASSERT_NE(loader, std::string::npos);
  std::string head =
      page.substr(page.find("<thead>", loader), page.find("</thead>", loader) - page.find("<thead>", loader));
  std::vector<std::string> headers;
  std::regex th(R"(<th[^>]*>([^<]*)</th>)");
  for (auto it = std::sregex_iterator(head.begin(), head.end(), th); it != std::sregex_iterator(); ++it)
    headers.push_back((*it)[1]);
  ASSERT_GE(headers.size(), 6u);
  EXPECT_EQ(headers[0], "case");
  EXPECT_EQ(headers[1], "reps");
  EXPECT_EQ(headers[2], "samples/s");
  EXPECT_EQ(headers[3], "AU %");
  EXPECT_EQ(headers[4], "stall %");
  EXPECT_EQ(headers[5], "verdict");
  // The label names what varies; what is the same for every case is said once.
  EXPECT_NE(page.find("<th scope=\"row\" class=\"label\">w 4</th>", loader), std::string::npos);
  EXPECT_NE(page.find("Every case here: batch 32", loader), std::string::npos);
  EXPECT_NE(page.find("<td class=\"verdict\">AU high — storage keeps up</td>", loader), std::string::npos);
}

// A cell is a bare number in the unit its column's header names: the counter table's, or for a
// counter not in it, the unit its name ends with.
TEST(HtmlReportTest, CellsAreInTheUnitTheirHeaderNames) {
  ResultDocument d = base_doc();
  for (auto& e : d.benchmarks) {
    e.counters["lat_p75_us"] = 12.345;
    e.counters["wait_p75_ms"] = 1.234;
    e.counters["cpu_util"] = 0.25;
  }
  const std::string page = render_html_report({d}, {"r"});
  for (const char* header : {">MiB/s</th>", ">p75 µs</th>", ">wait p75 ms</th>", ">CPU %</th>"})
    EXPECT_NE(page.find(header), std::string::npos) << header;
  // 310e6 B/s is 295.6 MiB/s; a CPU use of 0.25 is 25.0 %.
  for (const char* cell : {">295.6</td>", ">12.3</td>", ">1.23</td>", ">25.0</td>"})
    EXPECT_NE(page.find(cell), std::string::npos) << cell;
}

// ---------------------------------------------------------------- the page's own files

TEST(HtmlReportTest, StyleAndScriptComeFromTheirOwnFiles) {
  std::string page = render_html_report({base_doc()}, {"r"});
  for (const char* file : {"reporters/report.css", "reporters/report.js"}) {
    std::string text = testing::read_file(std::string(FEEDBENCH_SOURCE_DIR) + "/" + file);
    ASSERT_GT(text.size(), 1000u) << file;
    EXPECT_NE(page.find(text), std::string::npos) << file << " is not inlined as it is";
  }
}

TEST(HtmlReportTest, WritesTheFileAtomically) {
  testing::TempDir dir;
  write_html_report({base_doc()}, {"r"}, dir / "sub/report.html", "My title");
  std::string page = testing::read_file(dir / "sub/report.html");
  EXPECT_NE(page.find("<title>My title</title>"), std::string::npos);
  EXPECT_EQ(page.substr(page.size() - 8), "</html>\n");
}

// ---------------------------------------------------------------- a cache measured unverified

// RETURNS: per row of the section `id` (its title: the case name), the text of the row's label.
std::vector<std::pair<std::string, std::string>> row_labels(const std::string& page, const std::string& id) {
  const auto at = page.find("<section id=\"" + id + "\">");
  EXPECT_NE(at, std::string::npos) << id;
  const std::string section = page.substr(at, page.find("</section>", at) - at);
  std::vector<std::pair<std::string, std::string>> out;
  static const std::regex row(R"re(<tr[^>]* title="([^"]*)"><th scope="row" class="label">([^<]*)</th>)re");
  for (auto it = std::sregex_iterator(section.begin(), section.end(), row); it != std::sregex_iterator();
       ++it)
    out.emplace_back((*it)[1], (*it)[2]);
  return out;
}

// Verified false: the headline's sentences of the cache path and of the cache's answer, each
// row of a cache case (in the every-case table, the ratios and across ranks) and the charts'
// name of the path say "(cache unverified)"; nothing of the source does.
TEST(HtmlReportTest, AnUnverifiedCacheIsSaidBesideEveryCacheFigure) {
  ResultDocument d = ranks_doc();
  d.benchmarks.push_back(loader_entry("cache", 1, 1, 0.95));
  for (BenchmarkEntry& e : d.benchmarks)  // the cache's read across ranks too
    if (e.case_name.find("workers:1/state:cold/path:cache") != std::string::npos)
      e.extra = d.benchmarks[1].extra;
  d.dataset["cache"]["verified"] = false;
  EXPECT_EQ(
      html_report_verdicts(d),
      (std::vector<std::string>{
          "Source path does not feed the simulated trainers cold: AU 60.0% at best with 2 workers — below "
          "the 90% target.",
          "Source path reads at best 296 MiB/s cold (4 workers, random).",
          "Cache path (cache unverified) feeds the simulated trainers cold: AU 95.0% with 1 worker — meets "
          "the 90% target.",
          "Cache path (cache unverified) reads at best 200 MiB/s cold (1 worker, random).",
          "Does the cache help? Cold: yes, the cache path reads 1.9× faster than the source (1 matched "
          "pair); like with like: each pair differs only in its path (cache unverified).",
      }));
  const std::string page = render_html_report({d}, {"r"});
  EXPECT_EQ(page_verdicts(page), html_report_verdicts(d));
  const auto rows = row_labels(page, "cases");
  ASSERT_EQ(rows.size(), 6u);
  for (const auto& [name, label] : rows) {
    const bool cache = on_cache_path(name);
    EXPECT_EQ(label.size() > 18 && label.substr(label.size() - 18) == "(cache unverified)", cache)
        << name << ": " << label;
  }
  const auto ranks_at = page.find("<section id=\"across-ranks\">");
  ASSERT_NE(ranks_at, std::string::npos);
  const std::string ranks = page.substr(ranks_at, page.find("</section>", ranks_at) - ranks_at);
  EXPECT_NE(ranks.find("workers:1/state:cold/path:cache</code> (cache unverified): 3 ranks"),
            std::string::npos)
      << ranks;
  EXPECT_NE(ranks.find("workers:4/state:cold/path:source</code>: 3 ranks"), std::string::npos) << ranks;
  EXPECT_EQ(embedded_data(page)["files"][0]["cache_qualifier"], kCacheUnverified);

  // Two files, the second's cache unverified: its cells of a cache case say so, and the ratios
  // made of them; the first file's cells, and every source cell, do not.
  ResultDocument a = base_doc(), b = base_doc();
  b.dataset["cache"]["verified"] = false;
  const std::string two = render_html_report({a, b}, {"a", "b"});
  const auto table = two.find("id=\"ratios\"");
  ASSERT_NE(table, std::string::npos);
  const auto row = two.find("path:cache\"", table);
  ASSERT_NE(row, std::string::npos);
  const std::string cache_row = two.substr(row, two.find("</tr>", row) - row);
  EXPECT_TRUE(std::regex_search(
      cache_row, std::regex(R"re(>1\.00× \(cache unverified\)</td><td class="num">[0-9.]+</td>)re"
                            R"re(<td class="num">[0-9.]+ \(cache unverified\)</td>$)re")))
      << cache_row;
  const auto source_row = two.find("path:source\"", table);
  const std::string source_cells = two.substr(source_row, two.find("</tr>", source_row) - source_row);
  EXPECT_EQ(source_cells.find(kCacheUnverified), std::string::npos) << source_cells;
  const json data = embedded_data(two);
  EXPECT_FALSE(data["files"][0].contains("cache_qualifier"));
  EXPECT_EQ(data["files"][1]["cache_qualifier"], kCacheUnverified);
}

// Verified true, or a file that does not say (verification unknown): the page says nothing of it.
TEST(HtmlReportTest, AVerifiedOrUnknownCacheIsNotQualified) {
  for (const json& verified : {json(true), json(nullptr)}) {
    ResultDocument d = ranks_doc();
    d.benchmarks.push_back(loader_entry("cache", 1, 1, 0.95));
    if (!verified.is_null()) d.dataset["cache"]["verified"] = verified;
    const std::string page = render_html_report({d, d}, {"a", "b"});
    EXPECT_EQ(page.find(kCacheUnverified), std::string::npos) << verified;
    EXPECT_FALSE(embedded_data(page)["files"][0].contains("cache_qualifier"));
    const std::vector<std::string> v = html_report_verdicts(d);
    EXPECT_NE(std::find(v.begin(), v.end(), "Cache path reads at best 200 MiB/s cold (1 worker, random)."),
              v.end());
  }
}

}  // namespace
}  // namespace feedbench
