#include "summary.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "feedbench/units.h"
#include "case_view.h"
#include "loader_summary.h"

namespace feedbench {

namespace {

using json = nlohmann::json;

std::string param_text(const nlohmann::json& params, const char* key) {
  if (!params.is_object() || !params.contains(key)) return {};
  const auto& v = params[key];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// People read source before cache and cold before warm; anything else after, alphabetically.
int rank(const std::string& value, std::initializer_list<const char*> known) {
  int i = 0;
  for (const char* k : known) {
    if (value == k) return i;
    ++i;
  }
  return i;
}
bool path_less(const std::string& a, const std::string& b) {
  int ra = rank(a, {"source", "cache"}), rb = rank(b, {"source", "cache"});
  return ra != rb ? ra < rb : a < b;
}
bool state_less(const std::string& a, const std::string& b) {
  int ra = rank(a, {"cold", "warm", "direct"}), rb = rank(b, {"cold", "warm", "direct"});
  return ra != rb ? ra < rb : a < b;
}

struct Best {
  double bytes_per_second = -1;
  std::string case_name;
  nlohmann::json params;
  std::size_t repetitions = 0;
};

std::string ratio_text(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f×", r >= 1 ? r : 1 / r);
  return buf;
}

}  // namespace

json summarize(const ResultDocument& doc) {
  json out = json::object();
  json excluded = json::array();
  json skipped = json::array();
  // Per storage file_read case: its fold's median over achieved repetitions.
  std::map<std::string, double> rates;
  std::map<std::string, nlohmann::json> params;
  std::map<std::string, std::size_t> achieved;
  for (const CaseView& c : fold_cases(doc)) {
    if (!c.errors.empty())
      skipped.push_back({{"case", c.name}, {"reason", c.errors.front()}});
    for (const ExcludedRepetition& x : c.excluded) {
      json item = {{"case", c.name}, {"repetition_index", x.repetition_index}, {"reason", x.reason}};
      if (x.cache.is_object()) {
        item["requested"] = x.cache.value("requested", "");
        item["residency_before"] = x.cache.value("residency_before", -1.0);
      }
      excluded.push_back(item);
    }
    // A round that was not what its name says would flatter; calibration measures no storage.
    if (c.family != "file_read" || c.calibration) continue;
    if (auto bps = c.counter("bytes_per_second")) {
      rates[c.name] = *bps;
      params.emplace(c.name, c.params);
      achieved[c.name] = c.achieved;
    }
  }

  // Best median per path × cache state.
  std::map<std::pair<std::string, std::string>, Best> best;
  for (const auto& [name, m] : rates) {
    const auto& p = params[name];
    Best& b = best[{param_text(p, "path"), param_text(p, "cache_state")}];
    if (m > b.bytes_per_second) b = Best{m, name, p, achieved[name]};
  }
  std::vector<std::pair<std::string, std::string>> keys;
  for (const auto& [k, _] : best) keys.push_back(k);
  std::sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return path_less(a.first, b.first);
    return state_less(a.second, b.second);
  });
  if (!keys.empty()) {
    json fr = json::object();
    fr["best"] = json::array();
    for (const auto& k : keys) {
      const Best& b = best[k];
      json item = {{"path", k.first},
                   {"cache_state", k.second},
                   {"bytes_per_second", b.bytes_per_second},
                   {"case", b.case_name},
                   {"repetitions", b.repetitions}};
      for (const char* key : {"workers", "pattern", "engine", "block_size", "queue_depth"})
        if (b.params.is_object() && b.params.contains(key)) item[key] = json(b.params[key]);
      fr["best"].push_back(item);
    }
    json cold_warm = json::array();
    json cache_source = json::array();
    std::set<std::string> paths, states;
    for (const auto& k : keys) {
      paths.insert(k.first);
      states.insert(k.second);
    }
    std::vector<std::string> path_list(paths.begin(), paths.end());
    std::sort(path_list.begin(), path_list.end(), path_less);
    std::vector<std::string> state_list(states.begin(), states.end());
    std::sort(state_list.begin(), state_list.end(), state_less);
    for (const std::string& path : path_list) {
      auto cold = best.find({path, "cold"});
      auto warm = best.find({path, "warm"});
      if (cold == best.end() || warm == best.end() || cold->second.bytes_per_second <= 0) continue;
      cold_warm.push_back({{"path", path},
                           {"cold_bytes_per_second", cold->second.bytes_per_second},
                           {"warm_bytes_per_second", warm->second.bytes_per_second},
                           {"ratio", warm->second.bytes_per_second / cold->second.bytes_per_second}});
    }
    for (const std::string& state : state_list) {
      auto src = best.find({"source", state});
      auto cache = best.find({"cache", state});
      if (src == best.end() || cache == best.end() || src->second.bytes_per_second <= 0) continue;
      cache_source.push_back(
          {{"cache_state", state},
           {"source_bytes_per_second", src->second.bytes_per_second},
           {"cache_bytes_per_second", cache->second.bytes_per_second},
           {"ratio", cache->second.bytes_per_second / src->second.bytes_per_second}});
    }
    if (!cold_warm.empty()) fr["cold_vs_warm"] = cold_warm;
    if (!cache_source.empty()) fr["cache_vs_source"] = cache_source;
    out["file_read"] = fr;
  }
  if (!excluded.empty()) out["excluded"] = excluded;
  if (!skipped.empty()) out["skipped"] = skipped;
  json loader = summarize_loader(doc);
  if (loader.is_object() && !loader.empty()) out["loader"] = loader;
  return out;
}

std::string format_summary(const json& summary) {
  if (!summary.is_object() || summary.empty()) return {};
  std::string out = "Summary\n";
  auto line = [&](const std::string& s) { out += "  " + s + "\n"; };
  if (summary.contains("file_read")) {
    const json& fr = summary["file_read"];
    line("best throughput (median of achieved repetitions), per path and cache state:");
    for (const json& b : fr.value("best", json::array())) {
      char head[64];
      std::snprintf(head, sizeof head, "  %-7s %-7s %12s", b.value("path", "").c_str(),
                    b.value("cache_state", "").c_str(),
                    format_rate(b.value("bytes_per_second", 0.0)).c_str());
      std::string where;
      if (b.contains("workers")) where += "  workers " + b["workers"].dump();
      where += "  " + b.value("case", "");
      line(head + where);
    }
    for (const json& c : fr.value("cold_vs_warm", json::array())) {
      double r = c.value("ratio", 0.0);
      line("cold vs warm: " + c.value("path", "") + " warm was " + ratio_text(r) +
           (r >= 1 ? " faster" : " slower") + " than cold (" +
           format_rate(c.value("cold_bytes_per_second", 0.0)) + " cold, " +
           format_rate(c.value("warm_bytes_per_second", 0.0)) + " warm)");
    }
    for (const json& c : fr.value("cache_vs_source", json::array())) {
      double r = c.value("ratio", 0.0);
      line("source vs cache: cache path was " + ratio_text(r) + (r >= 1 ? " faster" : " slower") +
           " than source, " + c.value("cache_state", "") + " (" +
           format_rate(c.value("source_bytes_per_second", 0.0)) + " source, " +
           format_rate(c.value("cache_bytes_per_second", 0.0)) + " cache)");
    }
  }
  for (const json& n : summary.value("excluded", json::array()))
    line("excluded: " + n.value("case", "") + " repetition " +
         std::to_string(n.value("repetition_index", 0)) + ": " + n.value("reason", "") +
         " (not in the figures above)");
  for (const json& s : summary.value("skipped", json::array()))
    line("skipped: " + s.value("case", "") + ": " + s.value("reason", ""));
  if (summary.contains("loader")) out += format_loader_summary(summary["loader"]);
  return out == "Summary\n" ? std::string() : out;
}

}  // namespace feedbench
