#include "case_view.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "feedbench/base/statistics.h"
#include "feedbench/results/counters.h"

namespace feedbench {

namespace {

using nlohmann::json;

std::string family_of(const BenchmarkEntry& e, const std::string& key) {
  if (e.params.is_object() && e.params.contains("family") && e.params["family"].is_string())
    return e.params["family"].get<std::string>();
  return key.substr(0, key.find('/'));
}

// The worst-fed trainer's AU of one repetition: the lowest of its AU, extra.min_au and
// extra.au_per_accelerator, where recorded (K accelerators count only when every one is fed).
std::optional<double> worst_au_of(const BenchmarkEntry& e) {
  std::optional<double> au = e.counter("au");
  auto lower = [&](const json& v) {
    if (v.is_number()) au = au ? std::min(*au, v.get<double>()) : v.get<double>();
  };
  if (e.extra.is_object()) {
    if (e.extra.contains("min_au")) lower(e.extra["min_au"]);
    if (e.extra.contains("au_per_accelerator") && e.extra["au_per_accelerator"].is_array())
      for (const json& v : e.extra["au_per_accelerator"]) lower(v);
  }
  return au;
}

CaseView fold_one(const std::string& key, const std::vector<const BenchmarkEntry*>& runs,
                  bool from_aggregate) {
  CaseView c;
  c.name = key;
  const BenchmarkEntry& first = *runs.front();
  if (first.params.is_object()) c.params = json(first.params);
  c.family = family_of(first, key);
  c.from_aggregate = from_aggregate;
  c.time_unit = first.time_unit;
  std::vector<const BenchmarkEntry*> counted;
  for (const BenchmarkEntry* e : runs) {
    c.calibration = c.calibration || is_calibration(*e);
    if (e->error_occurred) {
      ++c.errored;
      std::string why = e->error_message.empty() ? "failed (no reason recorded)" : e->error_message;
      if (std::find(c.errors.begin(), c.errors.end(), why) == c.errors.end()) c.errors.push_back(why);
      continue;
    }
    if (e->cache.is_object()) {
      if (c.requested_state.empty() && e->cache.contains("requested") && e->cache["requested"].is_string())
        c.requested_state = e->cache["requested"].get<std::string>();
      if (e->cache.contains("residency_before") && e->cache["residency_before"].is_number())
        c.residency.push_back(e->cache["residency_before"].get<double>());
    }
    if (std::string why = exclusion_reason(*e); !why.empty()) {
      c.excluded.push_back({e->repetition_index, why, e->cache});
      continue;
    }
    counted.push_back(e);
  }
  if (c.requested_state.empty()) c.requested_state = c.param("cache_state");
  c.achieved = counted.size();
  if (counted.empty()) return c;

  std::map<std::string, std::vector<double>> values, extras;
  std::vector<double> times;
  for (const BenchmarkEntry* e : counted) {
    for (const auto& [k, v] : e->counters) values[k].push_back(v);
    if (e->extra.is_object())
      for (const auto& [k, v] : e->extra.items())
        if (v.is_number() && k != "min_au") extras[k].push_back(v.get<double>());
    if (auto w = worst_au_of(*e)) extras["min_au"].push_back(*w);
    times.push_back(e->real_time);
    if (e->latency) {
      if (c.latency) c.latency->merge(*e->latency);
      else c.latency = e->latency;
    }
  }
  for (const auto& [k, v] : values) {
    c.counters[k] = median(v);
    if (v.size() < 2) continue;
    double mean = 0, squares = 0;
    for (double x : v) mean += x / double(v.size());
    for (double x : v) squares += (x - mean) * (x - mean);
    if (mean != 0) c.spread[k] = std::sqrt(squares / double(v.size() - 1)) / std::fabs(mean);
  }
  for (const auto& [k, v] : extras)
    if (v.size() == counted.size()) c.extra_numbers[k] = median(v);
  c.real_time = median(times);

  // The representative: the lower middle by the primary counter (the first when none has it).
  const std::string primary = primary_counter(c.family);
  std::vector<const BenchmarkEntry*> ranked = counted;
  std::stable_sort(ranked.begin(), ranked.end(), [&](const BenchmarkEntry* a, const BenchmarkEntry* b) {
    return a->counter(primary).value_or(0) < b->counter(primary).value_or(0);
  });
  const BenchmarkEntry* rep = ranked[(ranked.size() - 1) / 2];
  if (rep->extra.is_object()) c.extra = rep->extra;
  c.label = rep->label;
  return c;
}

}  // namespace

std::string case_key(const BenchmarkEntry& e) {
  if (!e.case_name.empty()) return e.case_name;
  return e.run_name.empty() ? e.name : e.run_name;
}

std::optional<double> CaseView::counter(const std::string& key) const {
  auto it = counters.find(key);
  if (it == counters.end()) return std::nullopt;
  return it->second;
}

std::string CaseView::param(const char* key) const {
  if (!params.is_object() || !params.contains(key)) return {};
  const auto& v = params[key];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::int64_t CaseView::int_param(const char* key, std::int64_t fallback) const {
  if (!params.is_object()) return fallback;
  const auto it = params.find(key);
  return it != params.end() && it->is_number_integer() ? it->get<std::int64_t>() : fallback;
}

std::optional<double> CaseView::worst_au() const {
  if (auto it = extra_numbers.find("min_au"); it != extra_numbers.end()) return it->second;
  return counter("au");
}

double CaseView::target_au() const {
  if (params.is_object() && params.contains("target_au") && params["target_au"].is_number())
    return params["target_au"].get<double>();
  if (auto it = extra_numbers.find("target_au"); it != extra_numbers.end()) return it->second;
  if (extra.is_object() && extra.contains("target_au") && extra["target_au"].is_number())
    return extra["target_au"].get<double>();
  return 0.90;
}

std::string CaseView::exclusion_note() const {
  if (excluded.empty()) return "";
  std::string reasons;
  for (const ExcludedRepetition& x : excluded)
    reasons += (reasons.empty() ? "" : "; ") +
               ("repetition " + std::to_string(x.repetition_index) + ": " + x.reason);
  const std::size_t measured = achieved + excluded.size();
  return std::to_string(excluded.size()) + " of " + std::to_string(measured) +
         (measured == 1 ? " repetition" : " repetitions") + " excluded (" + reasons + ")";
}

std::vector<CaseView> fold_cases(const ResultDocument& doc) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const BenchmarkEntry*>> iterations, medians;
  for (const BenchmarkEntry& e : doc.benchmarks) {
    const std::string key = case_key(e);
    if (!iterations.count(key) && !medians.count(key)) order.push_back(key);
    if (e.run_type == "aggregate") {
      auto& list = medians[key];  // known even when only other aggregates exist
      if (e.aggregate_name == "median") list.push_back(&e);
    } else {
      iterations[key].push_back(&e);
    }
  }
  std::vector<CaseView> out;
  for (const std::string& key : order) {
    auto it = iterations.find(key);
    if (it != iterations.end() && !it->second.empty()) {
      out.push_back(fold_one(key, it->second, false));
    } else if (auto m = medians.find(key); m != medians.end() && !m->second.empty()) {
      out.push_back(fold_one(key, {m->second.front()}, true));
    }
  }
  return out;
}

namespace {

// A case name's family and its key:value parts, a part without ':' joined to the one before.
std::pair<std::string, std::vector<std::pair<std::string, std::string>>> name_pairs(const std::string& name) {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::size_t start = name.find('/');
  const std::string family = name.substr(0, start);
  while (start != std::string::npos) {
    const std::size_t next = name.find('/', start + 1);
    const std::string part = name.substr(start + 1, next == std::string::npos ? next : next - start - 1);
    const std::size_t colon = part.find(':');
    if (colon == std::string::npos && !pairs.empty()) pairs.back().second += "/" + part;
    else if (colon == std::string::npos) pairs.push_back({part, ""});
    else pairs.push_back({part.substr(0, colon), part.substr(colon + 1)});
    start = next;
  }
  return {family, pairs};
}

}  // namespace

std::map<std::string, std::string> case_labels(const std::vector<std::string>& names) {
  // Per family, each key's values over its cases ("" where a case lacks the key).
  std::map<std::string, std::vector<std::string>> members;
  std::map<std::string, std::map<std::string, std::set<std::string>>> values;
  std::map<std::string, std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> parsed;
  for (const std::string& n : names) {
    if (parsed.count(n)) continue;
    parsed[n] = name_pairs(n);
    members[parsed[n].first].push_back(n);
  }
  std::map<std::string, std::map<std::string, std::size_t>> holding;  // cases holding each key
  for (const auto& [family, cases] : members)
    for (const std::string& n : cases)
      for (const auto& [key, value] : parsed[n].second) {
        values[family][key].insert(value);
        ++holding[family][key];
      }
  std::map<std::string, std::string> out;
  for (const auto& [n, p] : parsed) {
    const std::size_t family_size = members[p.first].size();
    std::string label;
    for (const auto& [key, value] : p.second)
      if (values[p.first][key].size() > 1 || holding[p.first][key] < family_size)
        label += (label.empty() ? "" : " ") + key + ":" + value;
    out[n] = label.empty() ? n : label;
  }
  return out;
}

std::map<std::string, std::string> case_labels(const std::vector<CaseView>& cases) {
  std::vector<std::string> names;
  for (const CaseView& c : cases) names.push_back(c.name);
  return case_labels(names);
}

}  // namespace feedbench
