// The loader family's part of the run summary and of its answers, read from the result
// document only, so that a summary computed again for an old result file says what a run
// would have.
#include "loader_summary.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <regex>
#include <vector>

#include "cache_trust.h"
#include "case_view.h"
#include "console_table.h"
#include "loader_demand.h"

namespace feedbench {
namespace {

using nlohmann::json;

constexpr double kCalibrationMin = 0.99;
// A worker count whose AU is below the best of the smaller counts by more than this share of it
// made things worse (the same margin as "within 5% of the best" for file_read's knee).
constexpr double kWorseMargin = 0.05;

bool is_loader(const CaseView& c) { return c.family == "loader"; }

// A case with too few measured steps carries no verdict (result files before the rule: judged).
bool judged(const CaseView& c) { return c.extra.value("judged", true); }

// Cases equal in everything but `key` form a sweep over it; named with key:* in place.
struct Sweep {
  std::string name;
  std::vector<std::pair<std::int64_t, const CaseView*>> points;  // sorted by value
};

std::vector<Sweep> sweeps_over(const std::vector<const CaseView*>& cases, const char* key,
                               const char* short_key) {
  std::map<std::string, Sweep> groups;
  for (const CaseView* p : cases) {
    const CaseView& c = *p;
    if (!c.params.is_object() || !c.params.contains(key) || !c.params[key].is_number_integer()) continue;
    if (c.calibration) continue;  // calibration answers no sizing
    json rest = json(c.params);
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

// RETURNS: the loader cases with a measured AU.
std::vector<const CaseView*> with_au(const std::vector<CaseView>& all) {
  std::vector<const CaseView*> cases;
  for (const CaseView& c : all)
    if (is_loader(c) && c.counter("au")) cases.push_back(&c);
  return cases;
}

// RETURNS: what a summary calls sweep `s`: its first case's label (case_view.h: case_labels)
// without the swept parameter `short_key`, "transform:decode state:cold"; the family ("loader")
// where only the swept parameter varies; its name where its case has no label.
std::string sweep_label(const Sweep& s, const std::map<std::string, std::string>& labels,
                        const std::string& short_key) {
  const auto it = labels.find(s.points.front().second->name);
  if (it == labels.end() || it->second == s.points.front().second->name) return s.name;
  std::string out;
  std::size_t start = 0;
  const std::string& label = it->second;
  while (start <= label.size()) {
    std::size_t end = label.find(' ', start);
    if (end == std::string::npos) end = label.size();
    const std::string part = label.substr(start, end - start);
    if (part.rfind(short_key + ":", 0) != 0) out += (out.empty() ? "" : " ") + part;
    start = end + 1;
  }
  return out.empty() ? s.name.substr(0, s.name.find('/')) : out;  // only the swept key varies: the family
}

json limit_in(const json& from);

// What a worker sweep's own figures say of more workers: "rising" when the largest count's AU is
// beyond noise (kWorseMargin) above every smaller count's, "cpu_saturated" when it is not and the
// largest count's round was CPU-bound (limit.h: the cores saturated), else "flat". Only a sweep
// may say more workers will not help: one round cannot (2, 4 and 8 workers once read AU 13.5%,
// 15.3% and 17.6%, each round CPU-bound, each saying more workers would not help).
std::string more_workers(const Sweep& s) {
  const CaseView& largest = *s.points.back().second;
  const double au = largest.counter("au").value_or(0);
  double below = 0;
  for (std::size_t i = 0; i + 1 < s.points.size(); ++i)
    below = std::max(below, s.points[i].second->counter("au").value_or(0));
  if (au > below * (1 + kWorseMargin)) return "rising";
  const json limit = limit_in(largest.extra);
  return !limit.is_null() && limit.value("by", "") == "cpu" ? "cpu_saturated" : "flat";
}

// A sweep over accelerators judged: the largest count at which the worst-fed trainer still
// reaches the target (none: nullopt), and each count's worst-fed AU.
struct AcceleratorsSupported {
  double target = 0.9;
  json tried = json::array();
  std::optional<std::int64_t> found;
};

AcceleratorsSupported accelerators_supported(const Sweep& s) {
  AcceleratorsSupported a;
  a.target = s.points.front().second->target_au();
  for (const auto& [k, c] : s.points) {
    const double au = c->worst_au().value_or(0.0);
    a.tried.push_back({{"accelerators", k}, {"min_au", au}});
    if (au >= a.target) a.found = k;
  }
  return a;
}

// A loader case's AU for one state: a cold case's first epoch is its cold figure, a later
// epoch served from memory its warm one; a case of one epoch is what its state says.
struct LoaderPoint {
  double au = 0, target = 0.9;
  std::int64_t workers = 0;  // 0: not recorded
  std::string name;
  double fed = 0;                      // accelerators its supply keeps at the target (loader_demand.h)
  std::optional<LoaderDemand> demand;  // per accelerator; nullopt in files that lack the figures
  json limit;                          // the record's (or its epoch's) limit; null in older files
  int realism = 0;                     // pipeline_realism
};

// How much of a real input pipeline a case runs: a transform counts over none (the decode a
// training job does), files read over samples from memory. The headline answers come from the
// most realistic cases a run has, so that the easiest case never speaks for the pipeline.
int pipeline_realism(const CaseView& c) {
  const std::string transform = c.param("transform");
  return (transform.empty() || transform == "none" ? 0 : 2) + (c.param("samples") == "memory" ? 0 : 1);
}

// RETURNS: the limit stored with `from` (a record's extra, or one epoch of it), when well formed.
json limit_in(const json& from) {
  const auto it = from.find("limit");
  if (it == from.end() || !it->is_object() || !it->contains("text") || !(*it)["text"].is_string())
    return nullptr;
  return *it;
}

// `au` judges the point (the worst-fed trainer's); `supply_au` counts what the trainers
// consumed together (their mean), which is what the accelerators fed are made of.
LoaderPoint point_of(const CaseView& c, double au, double supply_au, std::int64_t workers, json limit) {
  return {au,
          c.target_au(),
          workers,
          c.name,
          accelerators_fed(c, supply_au),
          demand_of(c),
          std::move(limit),
          pipeline_realism(c)};
}

using PointsByPathAndState = std::map<std::pair<std::string, std::string>, std::vector<LoaderPoint>>;

void add_loader_points(const CaseView& c, PointsByPathAndState* at) {
  const std::string path = c.param("path"), state = c.param("cache_state");
  const std::int64_t workers = c.int_param("workers", 0);
  const json epochs = c.extra.value("epochs", json::array());
  if (state == "cold" && epochs.is_array() && epochs.size() > 1 && epochs.front().is_object() &&
      epochs.back().is_object()) {
    const double first = epochs.front().value("au", 0.0);  // over every trainer of the epoch
    (*at)[{path, "cold"}].push_back(point_of(c, first, first, workers, limit_in(epochs.front())));
    const json& last = epochs.back();
    if (last.value("served_from_memory", false))
      (*at)[{path, "warm"}].push_back(
          point_of(c, last.value("au", 0.0), last.value("au", 0.0), workers, limit_in(last)));
    return;
  }
  if (auto au = c.worst_au())
    (*at)[{path, state}].push_back(
        point_of(c, *au, c.counter("au").value_or(*au), workers, limit_in(c.extra)));
}

// RETURNS: {fed, au, target_au, workers?, case, limit?, accelerators_fed?, demand?}: among
// cases reaching their target, the one with the fewest workers; else the highest AU.
// accelerators_fed is the most any point keeps at its target: a lower bound when `fed`.
json pick_answer(const std::vector<const LoaderPoint*>& points) {
  const LoaderPoint* pick = nullptr;
  for (const LoaderPoint* q : points) {
    const LoaderPoint& p = *q;
    if (p.au < p.target) continue;
    if (!pick || p.workers < pick->workers || (p.workers == pick->workers && p.au > pick->au)) pick = &p;
  }
  const bool fed = pick != nullptr;
  if (!pick)
    for (const LoaderPoint* p : points)
      if (!pick || p->au > pick->au) pick = p;
  json a = {{"fed", fed}, {"au", pick->au}, {"target_au", pick->target}, {"case", pick->name}};
  if (pick->workers > 0) a["workers"] = pick->workers;
  if (!pick->limit.is_null()) a["limit"] = pick->limit;
  const LoaderPoint* most = nullptr;
  for (const LoaderPoint* p : points)
    if (p->demand && (!most || p->fed > most->fed)) most = p;
  if (most) {
    a["accelerators_fed"] = most->fed;
    a["accelerators_fed_at_least"] = most->au >= most->target;
    a["demand"] = demand_json(*most->demand);
    if (most != pick) a["accelerators_fed_case"] = most->name;
    // Fed by the page cache: what the store alone delivered feeds fewer; the page cache the rest.
    // The headline says both, never counting the page cache as storage.
    const json device =
        most->limit.is_object() ? most->limit.value("device_bytes_per_second", json()) : json();
    if (most->limit.is_object() && most->limit.value("by", "") == "page_cache" && device.is_number() &&
        most->demand->bytes_per_second > 0 && most->target > 0)
      a["accelerators_fed_by_store"] =
          std::min(most->fed, device.get<double>() / (most->demand->bytes_per_second * most->target));
  }
  return a;
}

// The answer of one path and state from its most realistic pipeline (pipeline_realism), and
// beside it, when the run also measured storage alone (no transform), that answer as
// storage_alone: {fed, au, target_au, workers?, case, limit?, accelerators_fed?, ...}.
json loader_answer(const std::vector<LoaderPoint>& points) {
  int most = 0;
  for (const LoaderPoint& p : points) most = std::max(most, p.realism);
  std::vector<const LoaderPoint*> pipeline, alone;
  for (const LoaderPoint& p : points) {
    if (p.realism == most) pipeline.push_back(&p);
    if (p.realism == 1) alone.push_back(&p);  // files read, no transform
  }
  json a = pick_answer(pipeline);
  if (most > 1 && !alone.empty()) a["storage_alone"] = pick_answer(alone);
  return a;
}

}  // namespace

json node_answer(const std::vector<const CaseView*>& cases, std::int64_t node) {
  const CaseView* pick = nullptr;
  LoaderDemand demand;
  std::int64_t most_accelerators = 1;
  for (const CaseView* c : cases) {
    if (c->calibration) continue;  // the harness's own figure: no pipeline of the user's
    most_accelerators = std::max(most_accelerators, c->int_param("accelerators", 1));
    const std::optional<LoaderDemand> d = demand_of(*c);
    if (!d) continue;
    if (!pick || d->transform_cores > demand.transform_cores ||
        (d->transform_cores == demand.transform_cores && d->bytes_per_second > demand.bytes_per_second))
      pick = c, demand = *d;
  }
  if (!pick) return nullptr;
  const std::int64_t k = node > 0 ? node : most_accelerators;
  const double at = double(k) * pick->target_au();
  return {{"accelerators", k},
          {"from", node > 0 ? "run" : "cases"},
          {"target_au", pick->target_au()},
          {"samples_per_second", at * demand.samples_per_second},
          {"bytes_per_second", at * demand.bytes_per_second},
          {"transform_cores", at * demand.transform_cores},
          {"demand", demand_json(demand)},  // one accelerator's, at the step it is for
          {"case", pick->name}};
}

json loader_answers(const std::vector<CaseView>& all, std::int64_t node_accelerators) {
  PointsByPathAndState points;
  std::size_t not_judged = 0;
  bool any_judged = false;
  for (const CaseView& c : all) {
    // A calibration case measures the harness, not storage: it answers nothing.
    if (!is_loader(c) || c.calibration || !c.measured()) continue;
    if (!judged(c)) {
      ++not_judged;
      continue;
    }
    any_judged = any_judged || c.counter("au").has_value();
    add_loader_points(c, &points);
  }
  json paths = json::object();
  for (const auto& [key, at] : points)
    if (!at.empty() && (key.second == "cold" || key.second == "warm"))
      paths[key.first]["feeds"][key.second] = loader_answer(at);
  // Per path, the best of its sweeps over accelerators: what the console's "accelerators
  // supported" lines say sweep by sweep.
  std::vector<const CaseView*> sized;
  for (const CaseView* c : with_au(all))
    if (judged(*c)) sized.push_back(c);
  for (const Sweep& s : sweeps_over(sized, "accelerators", "acc")) {
    const AcceleratorsSupported a = accelerators_supported(s);
    json& keeps = paths[s.points.front().second->param("path")]["keeps"];
    // The largest count, with the target that count met (target_au can be swept).
    const std::int64_t n = a.found.value_or(0);
    if (keeps.is_null() || n > keeps["accelerators"].get<std::int64_t>())
      keeps = {{"accelerators", n}, {"target_au", a.target}};
  }
  json out = json::object();
  if (!paths.empty()) out["paths"] = paths;
  if (json node = node_answer(sized, node_accelerators); !node.is_null() && !paths.empty())
    out["node"] = node;
  if (!any_judged && not_judged > 0) out["not_judged"] = not_judged;
  return out;
}

json summarize_loader(const ResultDocument& doc) {
  const std::vector<CaseView> all = fold_cases(doc);
  const std::vector<const CaseView*> cases = with_au(all);
  if (cases.empty()) return json::object();

  json verdicts = json::array(), calibration = json::array();
  std::vector<const CaseView*> sized;  // judged: the points of sweeps
  for (const CaseView* c : cases) {
    if (judged(*c)) sized.push_back(c);
    const double au = *c->counter("au");
    json v = {{"case", c->name},
              {"au", au},
              {"stall_fraction", c->counter("stall_fraction").value_or(0.0)},
              {"target_au", c->target_au()},
              {"repetitions", c->achieved},
              {"verdict", c->extra.value("verdict", std::string())},
              {"verdict_line", c->extra.value("verdict_line", std::string())},
              {"cpu_bound", c->extra.value("cpu_bound", false)},
              {"calibration", c->calibration},
              {"judged", judged(*c)}};
    if (!c->excluded.empty()) v["excluded"] = c->exclusion_note();
    if (c->extra.contains("epochs") && c->extra["epochs"].is_array() && c->extra["epochs"].size() > 1)
      v["epochs"] = c->extra["epochs"];
    if (c->extra.contains("memory_note")) v["memory_note"] = c->extra["memory_note"];
    if (json limit = limit_in(c->extra); !limit.is_null()) v["limit"] = limit;
    if (const std::optional<LoaderDemand> d = demand_of(*c); d && !c->calibration && judged(*c)) {
      v["demand_per_accelerator"] = demand_json(*d);
      v["accelerators_fed"] = accelerators_fed(*c, au);
    }
    verdicts.push_back(v);
    if (c->calibration && judged(*c))
      calibration.push_back({{"case", c->name}, {"au", au}, {"ok", au >= kCalibrationMin}});
  }

  const std::map<std::string, std::string> labels = case_labels(all);
  json min_workers = json::array();
  for (const Sweep& s : sweeps_over(sized, "workers", "workers")) {
    json tried = json::array(), worse = json::array();
    json found = nullptr;
    const double target = s.points.front().second->target_au();
    double best_au = -1;
    std::int64_t best_workers = 0;
    for (const auto& [w, c] : s.points) {
      const double au = *c->counter("au");
      json t = {{"workers", w}, {"au", au}};
      if (auto sps = c->counter("samples_per_second")) t["samples_per_second"] = *sps;
      tried.push_back(t);
      if (found.is_null() && au >= target) found = w;
      // More workers is not always better: a count below the best of the smaller ones.
      if (best_au > 0 && au < best_au * (1 - kWorseMargin))
        worse.push_back({{"workers", w}, {"au", au}, {"best_workers", best_workers}, {"best_au", best_au}});
      if (au > best_au) best_au = au, best_workers = w;
    }
    min_workers.push_back({{"sweep", s.name},
                           {"sweep_label", sweep_label(s, labels, "workers")},
                           {"target_au", target},
                           {"tried", tried},
                           {"min_workers", found},
                           {"worse", worse},
                           {"more_workers", more_workers(s)}});
  }

  json max_accelerators = json::array();
  for (const Sweep& s : sweeps_over(sized, "accelerators", "acc")) {
    const AcceleratorsSupported a = accelerators_supported(s);
    max_accelerators.push_back({{"sweep", s.name},
                                {"sweep_label", sweep_label(s, labels, "acc")},
                                {"target_au", a.target},
                                {"tried", a.tried},
                                {"max_accelerators", a.found ? json(*a.found) : json(nullptr)}});
  }

  json out = {{"verdicts", verdicts}, {"min_workers", min_workers}, {"max_accelerators", max_accelerators}};
  if (!calibration.empty()) out["calibration"] = calibration;
  return out;
}

std::string format_loader_summary(const json& summary, bool cache_unverified) {
  if (!summary.is_object() || summary.empty()) return {};
  std::string out;
  auto line = [&](const std::string& s) { out += "  " + s + "\n"; };
  // What a line of a case (or a sweep, named as its cases are) on an unverified cache ends with.
  auto note = [&](const std::string& name) { return cache_note(cache_unverified && on_cache_path(name)); };
  const json verdicts = summary.value("verdicts", json::array());
  if (std::any_of(verdicts.begin(), verdicts.end(),
                  [](const json& v) { return !v.value("calibration", false); })) {
    line(
        "training loop (AU of all trainers together, median of achieved repetitions; the table's min AU is "
        "the lowest trainer's; target per case):");
    for (const json& v : summary["verdicts"]) {
      if (v.value("calibration", false)) continue;  // its own line below
      const std::string qualifier = note(v.value("case", ""));
      // The case by what sets it apart, its verdict's short line, then the verdict's details.
      const std::string verdict = v.value("verdict", ""), head = v.value("verdict_line", "");
      const std::string label = v.value("case_label", v.value("case", ""));
      out +=
          verdict_block(label + ": " + (head.empty() ? verdict : head) +
                            (v.contains("excluded") ? " [" + v.value("excluded", "") + "]" : "") + qualifier,
                        head.empty() ? "" : verdict, 4);
      for (const json& e : v.value("epochs", json::array())) {
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "    epoch %d: AU %.1f%%, wait p50 %.2f ms p99 %.2f ms, %.0f samples/s",
                      e.value("epoch", 0), 100 * e.value("au", 0.0), e.value("wait_p50_ms", 0.0),
                      e.value("wait_p99_ms", 0.0), e.value("samples_per_second", 0.0));
        std::string text = buf;
        if (e.contains("residency_before") && e["residency_before"].is_number())
          text += ", " + percent(e["residency_before"].get<double>()) +
                  " of the data set in the page cache before" +
                  (e.value("served_from_memory", false) ? ": served from memory" : "");
        line(text + qualifier);
      }
      if (v.contains("memory_note")) line("    " + v.value("memory_note", ""));
    }
  }
  for (const json& s : summary.value("min_workers", json::array())) {
    const double target = s.value("target_au", 0.9);
    std::string tried;
    for (const json& t : s.value("tried", json::array()))
      tried += (tried.empty() ? "" : ", ") + std::to_string(t.value("workers", 0)) + ": " +
               percent(t.value("au", 0.0));
    std::string worse;
    for (const json& w : s.value("worse", json::array()))
      worse += (worse.empty() ? "; more workers made it worse: " : ", ") +
               std::to_string(w.value("workers", 0)) + " workers reach AU " + percent(w.value("au", 0.0)) +
               ", " + std::to_string(w.value("best_workers", 0)) + " reached " +
               percent(w.value("best_au", 0.0));
    // Whether more workers help, as the sweep's own figures show it (more_workers).
    const std::string more = s.value("more_workers", "");
    if (more == "cpu_saturated" && s["min_workers"].is_null())
      worse +=
          "; more workers will not help on this CPU: the largest count raised AU no more than 5% and "
          "its cores were saturated";
    else if (more == "rising" && s["min_workers"].is_null())
      worse += "; AU still rising at the largest count tried: more workers may help";
    const std::string sweep = s.value("sweep_label", s.value("sweep", ""));
    if (s["min_workers"].is_null())
      line("minimum workers: none reaches AU " + percent(target) + " (" + tried + ") in " + sweep + worse +
           note(s.value("sweep", "")));
    else
      line("minimum workers: " + std::to_string(s["min_workers"].get<std::int64_t>()) +
           ", the smallest count reaching AU " + percent(target) + " (" + tried + ") in " + sweep + worse +
           note(s.value("sweep", "")));
  }
  for (const json& s : summary.value("max_accelerators", json::array())) {
    const double target = s.value("target_au", 0.9);
    std::string tried;
    for (const json& t : s.value("tried", json::array()))
      tried += (tried.empty() ? "" : ", ") + std::to_string(t.value("accelerators", 0)) + ": " +
               percent(t.value("min_au", 0.0));
    if (s["max_accelerators"].is_null())
      line("accelerators supported: none keeps every trainer at AU " + percent(target) +
           " (lowest trainer: " + tried + ") in " + s.value("sweep_label", s.value("sweep", "")) +
           note(s.value("sweep", "")));
    else
      line("accelerators supported: " + std::to_string(s["max_accelerators"].get<std::int64_t>()) +
           ", the largest count keeping every trainer at AU " + percent(target) + " (lowest trainer: " +
           tried + ") in " + s.value("sweep_label", s.value("sweep", "")) + note(s.value("sweep", "")));
  }
  for (const json& c : summary.value("calibration", json::array())) {
    const double au = c.value("au", 0.0);
    if (c.value("ok", false))
      line("calibration (samples from memory, no I/O): AU " + percent(au) +
           " >= " + percent(kCalibrationMin) + ": the harness adds no stall (" + c.value("case", "") + ")");
    else
      line("calibration FAILED (samples from memory, no I/O): AU " + percent(au) + " < " +
           percent(kCalibrationMin) + ": the harness itself stalls training, so the loader " +
           "figures above overstate the stall (" + c.value("case", "") + ")");
  }
  return out;
}

}  // namespace feedbench
