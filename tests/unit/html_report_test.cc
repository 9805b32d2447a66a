// The HTML report: self-contained (no external URL, no network call), its embedded data equal
// to the documents', one entry per file, verdicts per path, flags and errors shown.
#include "html_report.h"

#include <regex>

#include <gtest/gtest.h>

#include "feedbench/chartjs.h"
#include "test_util.h"

namespace feedbench {
namespace {

using nlohmann::json;

BenchmarkEntry read_entry(const std::string& path, const std::string& state, int workers, int rep,
                          double bps, double residency = 0.0, bool achieved = true) {
  BenchmarkEntry e;
  e.params = {{"family", "file_read"}, {"pattern", "random"}, {"block_size", 4096},
              {"engine", "psync"},     {"queue_depth", 1},    {"workers", workers},
              {"cache_state", state},  {"path", path}};
  e.case_name = "file_read/pattern:random/bs:4096/engine:psync/qd:1/workers:" + std::to_string(workers) +
                "/state:" + state + "/path:" + path;
  e.name = e.run_name = e.case_name + "/iterations:1/repeats:3/manual_time";
  e.run_type = "iteration";
  e.repetitions = 3;
  e.repetition_index = rep;
  e.counters = {{"bytes_per_second", bps}, {"items_per_second", bps / 4096}, {"lat_p50_us", 80.0 + rep},
                {"residency_before", residency}};
  e.cache = {{"requested", state}, {"residency_before", residency}, {"achieved", achieved}};
  Histogram h;
  for (int i = 1; i <= 100; ++i) h.record(static_cast<std::uint64_t>(i * 1000 * (rep + 1)));
  e.latency = h;
  return e;
}

BenchmarkEntry loader_entry(const std::string& path, int workers, int accelerators, double au) {
  BenchmarkEntry e;
  e.params = {{"family", "loader"}, {"batch_size", 32}, {"workers", workers}, {"accelerators", accelerators},
              {"target_au", 0.9},   {"cache_state", "cold"}, {"path", path}};
  e.case_name = "loader/batch:32/workers:" + std::to_string(workers) + "/acc:" + std::to_string(accelerators) +
                "/state:cold/path:" + path;
  e.name = e.run_name = e.case_name;
  e.run_type = "iteration";
  e.counters = {{"samples_per_second", 1000 * au}, {"au", au}, {"stall_fraction", 1 - au}};
  e.extra = {{"verdict", au >= 0.9 ? "AU high — storage keeps up" : "AU low — training waits for data"}};
  return e;
}

ResultDocument base_doc() {
  ResultDocument d;
  d.context = {{"date", "2024-05-01T10:00:00+00:00"}};
  d.tool = {{"version", "0.1.0"}, {"git_commit", "0123456789abcdef"}};
  d.command_line = {"feedbench", "run", "--config", "configs/demo.json", "--out", "my result.json"};
  d.config = {{"file", "configs/demo.json"}, {"name", "demo"}, {"sha256", std::string(64, 'a')},
              {"resolved", {{"name", "demo"}, {"families", json::array()}}}};
  d.dataset = {{"source", {{"root", "/data/src"}, {"files", 320}, {"bytes", 1 << 20}, {"fingerprint", "f00d"}}},
               {"cache", {{"root", "/data/cache"}, {"files", 160}, {"bytes", 1 << 19}, {"manifest", {{"label", "demo-v1"}}}}}};
  d.environment = {
      {"host", {{"cpu_model", "Test CPU"}, {"cores", 2}, {"memory_total_bytes", 8LL << 30}, {"kernel", "6.1"},
                {"instance_type", "p4d.24xlarge"}, {"gpus", json::array()}}},
      {"paths", {{"source", {{"resolved", "/data/src"}, {"fs_type", "ext4"}, {"device", "vda"}}},
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
  for (std::size_t i = 1; i < cdf.size(); ++i) EXPECT_GE(cdf[i][1].get<double>(), cdf[i - 1][1].get<double>());
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
  ASSERT_EQ(reads.size(), 2u);
  EXPECT_EQ(reads[0].rfind("Source path reads at best", 0), 0u) << reads[0];
  EXPECT_NE(reads[0].find("cold"), std::string::npos);
  // Every source warm round found its data only half cached: no warm figure to quote.
  EXPECT_EQ(reads[0].find("warm"), std::string::npos) << reads[0];
  EXPECT_EQ(reads[1].rfind("Cache path reads at best", 0), 0u) << reads[1];

  ResultDocument swept;
  for (int acc : {1, 2, 4, 8}) {
    swept.benchmarks.push_back(loader_entry("cache", 4, acc, 0.95));
    swept.benchmarks.push_back(loader_entry("source", 4, acc, acc <= 2 ? 0.93 : 0.5));
  }
  auto v = html_report_verdicts(swept);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0], "Cache path keeps 8 simulated accelerators at AU ≥ 90%; source path keeps 2.");
  // Every trainer must reach the target, not only their mean.
  for (auto& e : swept.benchmarks)
    if (e.params["path"] == "cache" && e.params["accelerators"] == 8)
      e.extra["au_per_accelerator"] = {0.99, 0.99, 0.99, 0.99, 0.99, 0.99, 0.99, 0.7};
  EXPECT_EQ(html_report_verdicts(swept)[0], "Cache path keeps 4 simulated accelerators at AU ≥ 90%; source path keeps 2.");

  ResultDocument workers;
  workers.benchmarks = {loader_entry("source", 1, 1, 0.5), loader_entry("source", 4, 1, 0.96)};
  v = html_report_verdicts(workers);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("with 4 workers"), std::string::npos) << v[0];
  EXPECT_NE(v[0].find("storage keeps up"), std::string::npos) << v[0];
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
  EXPECT_NE(default_block.find("FEEDBENCH_CACHE unset: the config&#39;s default /var/tmp/feedbench-cache applied"),
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

TEST(HtmlReportTest, WritesTheFileAtomically) {
  testing::TempDir dir;
  write_html_report({base_doc()}, {"r"}, dir / "sub/report.html", "My title");
  std::string page = testing::read_file(dir / "sub/report.html");
  EXPECT_NE(page.find("<title>My title</title>"), std::string::npos);
  EXPECT_EQ(page.substr(page.size() - 8), "</html>\n");
}

}  // namespace
}  // namespace feedbench
