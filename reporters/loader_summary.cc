// The loader family's part of the run summary, read from the result document only, so that
// `feedbench report` on an old result file says the same as the run did.
#include "loader_summary.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <regex>
#include <vector>

namespace feedbench {
namespace {

using nlohmann::json;

constexpr double kCalibrationMin = 0.99;

// One loader case: its measured repetitions.
struct CaseRuns {
  std::string name;
  json params;
  std::vector<const BenchmarkEntry*> runs;
};

double au_of(const BenchmarkEntry& e) { return e.counter("au").value_or(0.0); }

double min_au_of(const BenchmarkEntry& e) {
  if (e.extra.contains("min_au") && e.extra["min_au"].is_number())
    return e.extra["min_au"].get<double>();
  return au_of(e);
}

// RETURNS: the repetition with the median AU (the lower middle for an even count).
const BenchmarkEntry& median_run(const CaseRuns& c, double (*key)(const BenchmarkEntry&)) {
  std::vector<const BenchmarkEntry*> sorted = c.runs;
  std::sort(sorted.begin(), sorted.end(),
            [&](const BenchmarkEntry* a, const BenchmarkEntry* b) { return key(*a) < key(*b); });
  return *sorted[(sorted.size() - 1) / 2];
}

double target_of(const CaseRuns& c) {
  const BenchmarkEntry& e = *c.runs.front();
  if (e.extra.contains("target_au") && e.extra["target_au"].is_number())
    return e.extra["target_au"].get<double>();
  if (c.params.contains("target_au") && c.params["target_au"].is_number())
    return c.params["target_au"].get<double>();
  return 0.90;
}

bool is_loader(const BenchmarkEntry& e) {
  if (e.params.is_object() && e.params.contains("family"))
    return e.params["family"] == "loader";
  return e.case_name.starts_with("loader/");
}

// Cases equal in everything but `key` form a sweep over it; named with key:* in place.
struct Sweep {
  std::string name;
  std::vector<std::pair<std::int64_t, const CaseRuns*>> points;  // sorted by value
};

std::vector<Sweep> sweeps_over(const std::vector<CaseRuns>& cases, const char* key,
                               const char* short_key) {
  std::map<std::string, Sweep> groups;
  for (const CaseRuns& c : cases) {
    if (!c.params.is_object() || !c.params.contains(key) || !c.params[key].is_number_integer())
      continue;
    if (c.params.value("samples", "") == "memory") continue;  // calibration answers no sizing
    json rest = c.params;
    rest.erase(key);
    Sweep& s = groups[rest.dump()];
    if (s.name.empty())
      s.name = std::regex_replace(c.name, std::regex(std::string("/") + short_key + ":[^/]*"),
                                  std::string("/") + short_key + ":*");
    s.points.push_back({c.params[key].get<std::int64_t>(), &c});
  }
  std::vector<Sweep> out;
  for (auto& [_, s] : groups) {
    if (s.points.size() < 2) continue;
    std::sort(s.points.begin(), s.points.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    out.push_back(std::move(s));
  }
  return out;
}

std::string percent(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * f);
  return buf;
}

}  // namespace

json summarize_loader(const ResultDocument& doc) {
  std::vector<CaseRuns> cases;
  std::map<std::string, std::size_t> index;
  for (const BenchmarkEntry& e : doc.benchmarks) {
    if (e.run_type != "iteration" || e.error_occurred || !is_loader(e)) continue;
    if (!e.counter("au")) continue;
    auto [it, added] = index.try_emplace(e.case_name, cases.size());
    if (added) cases.push_back({e.case_name, e.params, {}});
    cases[it->second].runs.push_back(&e);
  }
  if (cases.empty()) return json::object();

  json verdicts = json::array(), calibration = json::array();
  for (const CaseRuns& c : cases) {
    const BenchmarkEntry& m = median_run(c, au_of);
    json v = {{"case", c.name},
              {"au", au_of(m)},
              {"stall_fraction", m.counter("stall_fraction").value_or(0.0)},
              {"target_au", target_of(c)},
              {"repetitions", c.runs.size()},
              {"verdict", m.extra.value("verdict", std::string())},
              {"cpu_bound", m.extra.value("cpu_bound", false)}};
    verdicts.push_back(v);
    const bool is_calibration = m.extra.value("calibration", false) ||
                                (c.params.is_object() && c.params.value("samples", "") == "memory");
    if (is_calibration)
      calibration.push_back(
          {{"case", c.name}, {"au", au_of(m)}, {"ok", au_of(m) >= kCalibrationMin}});
  }

  json min_workers = json::array();
  for (const Sweep& s : sweeps_over(cases, "workers", "workers")) {
    json tried = json::array();
    json found = nullptr;
    const double target = target_of(*s.points.front().second);
    for (const auto& [w, c] : s.points) {
      const double au = au_of(median_run(*c, au_of));
      tried.push_back({{"workers", w}, {"au", au}});
      if (found.is_null() && au >= target) found = w;
    }
    min_workers.push_back(
        {{"sweep", s.name}, {"target_au", target}, {"tried", tried}, {"min_workers", found}});
  }

  json max_accelerators = json::array();
  for (const Sweep& s : sweeps_over(cases, "accelerators", "acc")) {
    json tried = json::array();
    json found = nullptr;
    const double target = target_of(*s.points.front().second);
    for (const auto& [k, c] : s.points) {
      const double au = min_au_of(median_run(*c, min_au_of));
      tried.push_back({{"accelerators", k}, {"min_au", au}});
      if (au >= target) found = k;
    }
    max_accelerators.push_back({{"sweep", s.name},
                                {"target_au", target},
                                {"tried", tried},
                                {"max_accelerators", found}});
  }

  json out = {{"verdicts", verdicts},
              {"min_workers", min_workers},
              {"max_accelerators", max_accelerators}};
  if (!calibration.empty()) out["calibration"] = calibration;
  return out;
}

std::string format_loader_summary(const json& summary) {
  if (!summary.is_object() || summary.empty()) return {};
  std::string out;
  auto line = [&](const std::string& s) { out += "  " + s + "\n"; };
  if (!summary.value("verdicts", json::array()).empty()) {
    line("training loop (median AU of repetitions, target per case):");
    for (const json& v : summary["verdicts"])
      line("  " + v.value("case", "") + ": " + v.value("verdict", ""));
  }
  for (const json& s : summary.value("min_workers", json::array())) {
    const double target = s.value("target_au", 0.9);
    std::string tried;
    for (const json& t : s.value("tried", json::array()))
      tried += (tried.empty() ? "" : ", ") + std::to_string(t.value("workers", 0)) + ": " +
               percent(t.value("au", 0.0));
    if (s["min_workers"].is_null())
      line("minimum workers: none reaches AU " + percent(target) + " (" + tried + ") in " +
           s.value("sweep", ""));
    else
      line("minimum workers: " + std::to_string(s["min_workers"].get<std::int64_t>()) +
           ", the smallest count reaching AU " + percent(target) + " (" + tried + ") in " +
           s.value("sweep", ""));
  }
  for (const json& s : summary.value("max_accelerators", json::array())) {
    const double target = s.value("target_au", 0.9);
    std::string tried;
    for (const json& t : s.value("tried", json::array()))
      tried += (tried.empty() ? "" : ", ") + std::to_string(t.value("accelerators", 0)) + ": " +
               percent(t.value("min_au", 0.0));
    if (s["max_accelerators"].is_null())
      line("accelerators supported: none keeps every trainer at AU " + percent(target) +
           " (lowest trainer: " + tried + ") in " + s.value("sweep", ""));
    else
      line("accelerators supported: " +
           std::to_string(s["max_accelerators"].get<std::int64_t>()) +
           ", the largest count keeping every trainer at AU " + percent(target) +
           " (lowest trainer: " + tried + ") in " + s.value("sweep", ""));
  }
  for (const json& c : summary.value("calibration", json::array())) {
    const double au = c.value("au", 0.0);
    if (c.value("ok", false))
      line("calibration (samples from memory, no I/O): AU " + percent(au) + " >= " +
           percent(kCalibrationMin) + ": the harness adds no stall (" + c.value("case", "") + ")");
    else
      line("calibration FAILED (samples from memory, no I/O): AU " + percent(au) + " < " +
           percent(kCalibrationMin) + ": the harness itself stalls training, so the loader " +
           "figures above overstate the stall (" + c.value("case", "") + ")");
  }
  return out;
}

}  // namespace feedbench
