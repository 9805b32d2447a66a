#include "summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "cache_trust.h"
#include "case_view.h"
#include "console_table.h"
#include "diff_formats.h"
#include "feedbench/base/text.h"
#include "feedbench/base/units.h"
#include "feedbench/results/comparison.h"
#include "loader_demand.h"
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

// Within this of one, two rates are "the same": a ratio printed to one decimal would read
// "1.0× slower", which says neither how much nor that it is within a repetition's noise.
constexpr double kSameWithin = 0.05;

// An end of a range of ratios: "3.0×", "1.2× slower", "within 5%".
std::string range_end_text(double r) {
  if (r >= 1 + kSameWithin) return ratio_text(r);
  if (r <= 1 / (1 + kSameWithin)) return ratio_text(r) + " slower";
  return "within " + std::to_string(static_cast<int>(kSameWithin * 100)) + "%";
}

// "3.0× faster than source", "1.2× slower than source", "within 5% of source".
std::string relative_text(double r, const std::string& other) {
  if (r >= 1 + kSameWithin) return ratio_text(r) + " faster than " + other;
  return range_end_text(r) + (r <= 1 / (1 + kSameWithin) ? " than " : " of ") + other;
}

// Splits a case name "family/key:value/..." at its slashes.
std::vector<std::string> name_parts(const std::string& name) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t slash; (slash = name.find('/', start)) != std::string::npos; start = slash + 1)
    parts.push_back(name.substr(start, slash - start));
  parts.push_back(name.substr(start));
  return parts;
}

// One line per family and reason: "skipped: NAME: REASON" for one case; for several,
// "skipped: 3 loader cases (workers:1, workers:2, ...): REASON", naming per case only the parts
// of its name that differ within the group.
std::vector<std::string> skipped_lines(const json& skipped) {
  std::vector<std::pair<std::string, std::string>> order;  // (family, reason), first-seen order
  std::map<std::pair<std::string, std::string>, std::vector<std::vector<std::string>>> groups;
  for (const json& s : skipped) {
    std::vector<std::string> parts = name_parts(s.value("case", ""));
    const std::pair<std::string, std::string> key{parts.front(), s.value("reason", "")};
    auto& group = groups[key];
    if (group.empty()) order.push_back(key);
    group.push_back(std::move(parts));
  }
  constexpr std::size_t kNamed = 8;
  std::vector<std::string> lines;
  for (const auto& key : order) {
    const auto& group = groups[key];
    auto whole = [](const std::vector<std::string>& parts) {
      std::string name;
      for (const std::string& p : parts) name += (name.empty() ? "" : "/") + p;
      return name;
    };
    if (group.size() == 1) {
      lines.push_back("skipped: " + whole(group.front()) + ": " + key.second);
      continue;
    }
    // The positions where the names differ; names of other shapes are named whole.
    const std::size_t width = group.front().size();
    std::vector<bool> differs(width, false);
    bool same_shape = true;
    for (const auto& parts : group) {
      if (parts.size() != width) same_shape = false;
      for (std::size_t i = 0; same_shape && i < width; ++i)
        differs[i] = differs[i] || parts[i] != group.front()[i];
    }
    std::string names;
    for (std::size_t n = 0; n < group.size() && n < kNamed; ++n) {
      std::string own;
      for (std::size_t i = 1; same_shape && i < width; ++i)
        if (differs[i]) own += (own.empty() ? "" : "/") + group[n][i];
      names += (n == 0 ? "" : ", ") + (same_shape ? own : whole(group[n]));
    }
    if (group.size() > kNamed) names += " and " + std::to_string(group.size() - kNamed) + " more";
    lines.push_back("skipped: " + std::to_string(group.size()) + " " + key.first + " cases (" + names +
                    "): " + key.second);
  }
  return lines;
}

std::string percent_text(double share) { return format_percent(share, 0); }

// One measured storage case: its params and the fold's median.
struct Measured {
  std::string name;
  json params;
  double bytes_per_second = 0;
};

// RETURNS: the params without the family and without `leave_out`: the key of the cases that
// are equal in everything else.
std::string key_without(const json& params, std::initializer_list<const char*> leave_out) {
  json k = params.is_object() ? params : json::object();
  k.erase("family");
  for (const char* key : leave_out) k.erase(key);
  return k.dump();
}

std::int64_t int_param(const json& params, const char* key, std::int64_t fallback) {
  if (!params.is_object() || !params.contains(key) || !params[key].is_number_integer()) return fallback;
  return params[key].get<std::int64_t>();
}

// "4 workers", "1 worker", "queue depth 8".
std::string count_text(const std::string& parameter, std::int64_t n) {
  if (parameter == "workers") return std::to_string(n) + (n == 1 ? " worker" : " workers");
  if (parameter == "queue_depth") return "queue depth " + std::to_string(n);
  return parameter + " " + std::to_string(n);
}

// "sequential 128 KiB psync 4 workers cold source": the case's shape in words, without the
// parameters in `leave_out` (the one swept, or the one compared).
std::string shape_text(const json& p, std::initializer_list<const char*> leave_out) {
  auto left_out = [&](const char* key) {
    for (const char* k : leave_out)
      if (std::string(k) == key) return true;
    return false;
  };
  std::string out;
  auto add = [&](const std::string& word) {
    if (!word.empty()) out += (out.empty() ? "" : " ") + word;
  };
  if (!left_out("pattern")) add(param_text(p, "pattern"));
  if (!left_out("block_size") && p.contains("block_size") && p["block_size"].is_number())
    add(format_size(p["block_size"].get<double>()));
  if (!left_out("engine")) add(param_text(p, "engine"));
  if (!left_out("queue_depth") && int_param(p, "queue_depth", 1) != 1)
    add(count_text("queue_depth", int_param(p, "queue_depth", 1)));
  if (!left_out("workers") && p.contains("workers")) add(count_text("workers", int_param(p, "workers", 1)));
  if (!left_out("cache_state")) add(param_text(p, "cache_state"));
  if (!left_out("path")) add(param_text(p, "path"));
  return out;
}

// Where more of `parameter` stops paying, per group of cases equal in everything else.
// The knee is the smallest value within 5% of the best: past it, more buys little.
json scaling(const std::vector<Measured>& cases, const char* parameter) {
  constexpr double kWithin = 0.05;
  std::map<std::string, std::vector<const Measured*>> groups;
  std::vector<std::string> order;
  for (const Measured& m : cases) {
    if (!m.params.contains(parameter) || !m.params[parameter].is_number_integer()) continue;
    std::string key = key_without(m.params, {parameter});
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(&m);
  }
  json out = json::array();
  for (const std::string& key : order) {
    auto& g = groups[key];
    if (g.size() < 2) continue;
    std::sort(g.begin(), g.end(), [&](const Measured* a, const Measured* b) {
      return a->params[parameter].get<std::int64_t>() < b->params[parameter].get<std::int64_t>();
    });
    const Measured* best = g.front();
    for (const Measured* m : g)
      if (m->bytes_per_second > best->bytes_per_second) best = m;
    if (best->bytes_per_second <= 0) continue;
    const Measured* knee = best;
    for (const Measured* m : g)
      if (m->bytes_per_second >= (1 - kWithin) * best->bytes_per_second) {
        knee = m;
        break;
      }
    const std::int64_t best_value = best->params[parameter].get<std::int64_t>();
    json item = {{"parameter", parameter},
                 {"group", json::parse(key)},
                 {"description", shape_text(best->params, {parameter})},
                 {"points", json::array()},
                 {"best", best_value},
                 {"best_bytes_per_second", best->bytes_per_second},
                 {"best_case", best->name},
                 {"knee", knee->params[parameter]},
                 {"knee_bytes_per_second", knee->bytes_per_second},
                 {"slower_than_best", json::array()}};
    for (const Measured* m : g) {
      const std::int64_t v = m->params[parameter].get<std::int64_t>();
      item["points"].push_back({{"value", v}, {"bytes_per_second", m->bytes_per_second}, {"case", m->name}});
      const double slower = 1 - m->bytes_per_second / best->bytes_per_second;
      if (v > best_value && slower > kWithin)
        item["slower_than_best"].push_back({{"value", v}, {"slower_by", slower}, {"case", m->name}});
    }
    // The best is the largest value tried and nothing smaller comes close: more may help.
    item["still_rising"] = best == g.back() && knee == best;
    out.push_back(item);
  }
  return out;
}

// Pairs of cases equal in everything but `compared` ("path" or "cache_state"), `a` against `b`.
// RETURNS: [{every shared param, <a>_case, <b>_case, <a>_bytes_per_second, <b>_bytes_per_second,
// ratio = b / a}] in the order of the `a` cases.
json matched_pairs(const std::vector<Measured>& cases, const char* compared, const std::string& a,
                   const std::string& b) {
  std::map<std::string, const Measured*> on_b;
  for (const Measured& m : cases)
    if (param_text(m.params, compared) == b) on_b[key_without(m.params, {compared})] = &m;
  json out = json::array();
  for (const Measured& m : cases) {
    if (param_text(m.params, compared) != a || m.bytes_per_second <= 0) continue;
    auto other = on_b.find(key_without(m.params, {compared}));
    if (other == on_b.end()) continue;
    json item = json::object();
    for (auto it = m.params.begin(); it != m.params.end(); ++it)
      if (it.key() != "family" && it.key() != compared) item[it.key()] = it.value();
    item[a + "_case"] = m.name;
    item[b + "_case"] = other->second->name;
    item[a + "_bytes_per_second"] = m.bytes_per_second;
    item[b + "_bytes_per_second"] = other->second->bytes_per_second;
    item["ratio"] = other->second->bytes_per_second / m.bytes_per_second;
    out.push_back(item);
  }
  return out;
}

// Per value of `by` ("path" for cold vs warm, "cache_state" for source vs cache): how many
// matched pairs, the geometric mean of their ratios and the extremes.
json overall(const json& pairs, const char* by) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const json*>> groups;
  for (const json& p : pairs) {
    std::string v = p.value(by, "");
    if (!groups.count(v)) order.push_back(v);
    groups[v].push_back(&p);
  }
  json out = json::array();
  for (const std::string& v : order) {
    const auto& g = groups[v];
    double log_sum = 0;
    const json* lo = g.front();
    const json* hi = g.front();
    for (const json* p : g) {
      const double r = (*p)["ratio"].get<double>();
      log_sum += std::log(r);
      if (r < (*lo)["ratio"].get<double>()) lo = p;
      if (r > (*hi)["ratio"].get<double>()) hi = p;
    }
    out.push_back({{by, v},
                   {"pairs", g.size()},
                   {"geomean_ratio", std::exp(log_sum / double(g.size()))},
                   {"min_ratio", (*lo)["ratio"]},
                   {"min_pair", *lo},
                   {"max_ratio", (*hi)["ratio"]},
                   {"max_pair", *hi}});
  }
  return out;
}

// Runs across ranks: each rank named a straggler (below the threshold of the median rank's
// rate) in any repetition of a case, with how often and its slowest repetition.
json summarize_stragglers(const ResultDocument& doc) {
  json out = json::array();
  std::map<std::pair<std::string, int>, json> by_rank;
  std::vector<std::pair<std::string, int>> order;
  std::map<std::string, std::int64_t> repetitions;
  for (const BenchmarkEntry& b : doc.benchmarks) {
    if (b.run_type != "iteration" || b.error_occurred || !b.extra.contains("stragglers")) continue;
    ++repetitions[b.case_name];
    for (const json& st : b.extra["stragglers"]) {
      const std::pair<std::string, int> key{b.case_name, st.value("rank", 0)};
      json& item = by_rank[key];
      if (item.is_null()) {
        order.push_back(key);
        item = {{"case", b.case_name},
                {"rank", key.second},
                {"host", st.value("host", "")},
                {"repetitions", 0},
                {"bytes_per_second", st.value("bytes_per_second", 0.0)},
                {"vs_median", st.value("vs_median", 0.0)}};
      }
      item["repetitions"] = item["repetitions"].get<std::int64_t>() + 1;
      if (st.value("vs_median", 0.0) < item["vs_median"].get<double>()) {
        item["vs_median"] = st.value("vs_median", 0.0);
        item["bytes_per_second"] = st.value("bytes_per_second", 0.0);
      }
    }
  }
  for (const auto& key : order) {
    json item = by_rank[key];
    item["of_repetitions"] = repetitions[key.first];
    out.push_back(item);
  }
  return out;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Runs across ranks: per case, each rank's and each host's rate, medians over the repetitions
// that ran (file_read cases; the loader's ranks are in its extra).
json summarize_ranks(const ResultDocument& doc) {
  json out = json::array();
  std::vector<std::string> order;
  std::map<std::string, std::map<std::pair<int, std::string>, std::vector<double>>> ranks, hosts;
  for (const BenchmarkEntry& b : doc.benchmarks) {
    if (b.run_type != "iteration" || b.error_occurred || !b.extra.contains("cluster") ||
        !b.extra.contains("hosts") || !b.extra["hosts"].is_array())
      continue;
    if (!ranks.count(b.case_name)) order.push_back(b.case_name);
    for (const json& r : b.extra.value("ranks", json::array()))
      ranks[b.case_name][{r.value("rank", 0), r.value("host", "")}].push_back(
          r.value("bytes_per_second", 0.0));
    for (const json& h : b.extra["hosts"])
      hosts[b.case_name][{h.value("host_index", 0), h.value("host", "")}].push_back(
          h.value("bytes_per_second", 0.0));
  }
  for (const std::string& name : order) {
    json item = {{"case", name}, {"ranks", json::array()}, {"hosts", json::array()}};
    std::size_t reps = 0;
    for (const auto& [key, rates] : ranks[name]) {
      item["ranks"].push_back(
          {{"rank", key.first}, {"host", key.second}, {"bytes_per_second", median_of(rates)}});
      reps = std::max(reps, rates.size());
    }
    for (const auto& [key, rates] : hosts[name])
      item["hosts"].push_back({{"host", key.second}, {"bytes_per_second", median_of(rates)}});
    item["repetitions"] = reps;
    out.push_back(item);
  }
  return out;
}

// The plain answers that open the summary, computed once here and printed by every reporter
// (the console and Markdown with format_answers, the HTML page with answer_sentences): per
// path, can storage feed the simulated trainers, cold and warm (the loader's AU against its
// target) and how many accelerators it keeps fed, how fast it reads cold, warm and with
// O_DIRECT; does the cache help, as the geometric mean of like-with-like ratios; how fast
// staging copies.

// RETURNS: "(a, b)" of the parts that are not empty, or "" when none is.
std::string parenthesis(const std::vector<std::string>& parts) {
  std::string inside;
  for (const std::string& p : parts)
    if (!p.empty()) inside += (inside.empty() ? "" : ", ") + p;
  return inside.empty() ? "" : " (" + inside + ")";
}

std::string au_text(double au) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * au);
  return buf;
}

std::string workers_text(const json& j) {
  return j.contains("workers") && j["workers"].is_number_integer()
             ? count_text("workers", j["workers"].get<std::int64_t>())
             : std::string();
}

// RETURNS: what a summary calls the case of `o`: its case_label (case_view.h: case_labels), else
// its full name (a summary stored before labels).
std::string case_text(const json& o) {
  const std::string label = o.value("case_label", "");
  return label.empty() ? o.value("case", "") : label;
}

// Adds case_label beside every "case" in `j` (case_view.h: case_labels): the parameters that set
// the case apart from its family's others.
void add_case_labels(json& j, const std::map<std::string, std::string>& labels) {
  if (j.is_object()) {
    if (const auto c = j.find("case"); c != j.end() && c->is_string())
      if (const auto l = labels.find(c->get<std::string>()); l != labels.end()) j["case_label"] = l->second;
    for (auto& [_, v] : j.items()) add_case_labels(v, labels);
  } else if (j.is_array()) {
    for (json& v : j) add_case_labels(v, labels);
  }
}

// What limited (or fed) an answer's case: its limit's `by` ("" when it has none).
std::string limit_by(const json& a) {
  if (!a.contains("limit") || !a["limit"].is_object()) return "";
  return a["limit"].value("by", "");
}

// "yes (AU 97.0%, target 90.0%, 1 worker)", "no (AU 61.0% at best, target 90.0%, 2 workers)",
// "only through the page cache (...)" when what fed the case was memory, not storage.
std::string fed_text(const json& a) {
  const bool fed = a.value("fed", false);
  std::vector<std::string> parts;
  if (a.contains("au")) parts.push_back("AU " + au_text(a.value("au", 0.0)) + (fed ? "" : " at best"));
  if (a.contains("target_au")) parts.push_back("target " + au_text(a.value("target_au", 0.0)));
  parts.push_back(workers_text(a));
  const std::string answer = !fed                          ? "no"
                             : limit_by(a) == "page_cache" ? "only through the page cache"
                                                           : "yes";
  return answer + parenthesis(parts);
}

// Per path and state with a stored limit: "source cold: limit: storage, the device delivered
// 38.0 MiB/s (at workers:2 state:cold)", its details on indented lines after it (console_table.h:
// verdict_block, two spaces in, each block its lines), and storage alone beside the pipeline where
// the run measured it. `blocks` false: one sentence each, the whole limit in it (the page's).
std::vector<std::string> limit_lines(const json& paths, bool unverified, bool blocks) {
  std::vector<std::string> out;
  for (const json& p : paths) {
    if (!p.contains("feeds") || !p["feeds"].is_object()) continue;
    const std::string path = p.value("path", "");
    for (const char* state : {"cold", "warm"}) {
      if (!p["feeds"].contains(state)) continue;
      const json& a = p["feeds"][state];
      auto line = [&](const json& x, const std::string& what) {
        if (!x.contains("limit") || !x["limit"].is_object()) return;
        const std::string text = x["limit"].value("text", ""), head = x["limit"].value("line", "");
        const std::string lead = path + cache_note(unverified && path == "cache") + " " + state + what + ": ";
        if (!blocks) out.push_back(lead + text + " (at " + case_text(x) + ")");
        else
          out.push_back(verdict_block(lead + (head.empty() ? text : head) + " (at " + case_text(x) + ")",
                                      head.empty() ? "" : text, 2));
      };
      line(a, "");
      if (a.contains("storage_alone") && a["storage_alone"].is_object())
        line(a["storage_alone"], ", storage alone (no transform)");
    }
  }
  return out;
}

// "2 simulated accelerators", "1 simulated accelerator", "no simulated accelerator".
std::string accelerators_text(const json& keeps) {
  const std::int64_t n = keeps.value("accelerators", std::int64_t{0});
  if (n <= 0) return "no simulated accelerator";
  return plural(std::size_t(n), "simulated accelerator", "simulated accelerators");
}

// "102 MiB/s cold (4 workers)".
std::string reads_text(const json& r, const std::string& state) {
  if (!r.contains("bytes_per_second")) return "";
  return format_rate(r.value("bytes_per_second", 0.0)) + " " + state + parenthesis({workers_text(r)});
}

// "yes: the cache path reads 3.0× faster than the source", "no: 1.2× slower", "no difference".
std::string helps_text(const json& c) {
  const double r = c.value("ratio", 1.0);
  // Read as a double: a stored answer from any file may hold -1 or 1e300, which a size_t
  // conversion would print as 18446744073709551615 (or UBSan reject); such a count is left out.
  const double count = c.value("pairs", 0.0);
  const std::size_t pairs = count >= 1 && count < 1e15 ? std::size_t(count) : 0;
  const std::string n = pairs == 0 ? "" : plural(pairs, "matched pair", "matched pairs");
  std::string verdict;
  if (r >= 1.1) verdict = "yes, the cache path reads " + ratio_text(r) + " faster than the source";
  else if (r <= 1 / 1.1) verdict = "no, the cache path reads " + ratio_text(r) + " slower than the source";
  else {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f×", r);
    verdict = std::string("no difference beyond 10% (the cache path reads ") + buf + " the source's rate)";
  }
  return verdict + parenthesis({n});
}

// The states a read answers for, in the order people read them: through the page cache
// (cold, warm), then with O_DIRECT, which measures the device itself.
constexpr const char* kReadStates[] = {"cold", "warm", "direct"};

// RETURNS: {bytes_per_second, workers?, case} of the fastest staging case, or null.
json stage_answer(const std::vector<CaseView>& cases) {
  const CaseView* best = nullptr;
  for (const CaseView& c : cases) {
    if (c.family != "stage" || c.calibration || !c.measured() || !c.counter("bytes_per_second")) continue;
    if (!best || *c.counter("bytes_per_second") > *best->counter("bytes_per_second")) best = &c;
  }
  if (!best) return nullptr;
  json a = {{"bytes_per_second", *best->counter("bytes_per_second")}, {"case", best->name}};
  if (std::int64_t w = int_param(best->params, "workers", 0); w > 0) a["workers"] = w;
  return a;
}

// RETURNS: {bytes, ranks, write_s, restore_s, interval_s, blocking_share, async_bytes_per_second,
// generation_bytes_per_second, case} of the largest checkpoint measured (cold: a restore that
// was not cold is not an achieved repetition), or null.
json checkpoint_answer(const std::vector<CaseView>& cases) {
  const CaseView* best = nullptr;
  auto bytes = [](const CaseView& c) {
    const auto it = c.extra_numbers.find("bytes");
    return it == c.extra_numbers.end() ? 0.0 : it->second;
  };
  for (const CaseView& c : cases) {
    if (c.family != "checkpoint" || !c.measured() || !c.counter("checkpoint_s") || !c.counter("restore_s"))
      continue;
    if (!best || bytes(c) > bytes(*best)) best = &c;
  }
  if (!best) return nullptr;
  json a = {{"bytes", bytes(*best)}, {"case", best->name}};
  for (const auto& [key, field] : {std::pair{"ranks", "writer_ranks"}, std::pair{"interval_s", "interval_s"}})
    if (const auto it = best->extra_numbers.find(field); it != best->extra_numbers.end()) a[key] = it->second;
  for (const auto& [key, counter] :
       {std::pair{"write_s", "checkpoint_s"}, std::pair{"restore_s", "restore_s"},
        std::pair{"blocking_share", "blocking_share"},
        std::pair{"async_bytes_per_second", "async_bytes_per_second"},
        std::pair{"generation_bytes_per_second", "generation_bytes_per_second"}})
    a[key] = best->counter(counter).value_or(0.0);
  return a;
}

// RETURNS: a checkpoint answer in words, its first line ("a 105 GB checkpoint over 8 ranks takes
// 41 s to write, 12 s to restore cold") and its details ("at one an hour, a blocking checkpoint
// costs 1.1% of training; an asynchronous one needs 29.2 MiB/s", where its bytes were made).
std::vector<std::string> checkpoint_sentences(const json& c) {
  const double interval_s = c.value("interval_s", 0.0);
  const double share = c.value("blocking_share", 0.0) * 100;
  char percent[32];
  std::snprintf(percent, sizeof percent, share >= 100 ? "%.0f%%" : "%.2g%%", share);
  const std::string every =
      interval_s == 3600 ? "one an hour" : "one every " + format_duration_ns(interval_s * 1e9);
  const std::int64_t ranks = std::int64_t(c.value("ranks", 1.0));
  return {"a " + format_size(c.value("bytes", 0.0)) + " checkpoint over " +
              plural(std::size_t(ranks), "rank", "ranks") + " takes " +
              format_duration_ns(c.value("write_s", 0.0) * 1e9) + " to write, " +
              format_duration_ns(c.value("restore_s", 0.0) * 1e9) + " to restore cold",
          "at " + every + ", a blocking checkpoint costs " + percent +
              " of training; an asynchronous one needs " +
              format_rate(c.value("async_bytes_per_second", 0.0)),
          "the bytes written were made at " + format_rate(c.value("generation_bytes_per_second", 0.0)) +
              " before the clock, not while it ran"};
}

json answers(const std::vector<CaseView>& cases, const json& file_read, std::int64_t node_accelerators) {
  const json loader = loader_answers(cases, node_accelerators);
  const json loader_paths = loader.value("paths", json::object());
  const json best = file_read.value("best", json::array());
  std::vector<std::string> paths;
  auto add_path = [&](const std::string& p) {
    if (std::find(paths.begin(), paths.end(), p) == paths.end()) paths.push_back(p);
  };
  for (const auto& [path, _] : loader_paths.items()) add_path(path);
  for (const json& b : best) add_path(b.value("path", ""));
  std::stable_sort(paths.begin(), paths.end(), path_less);
  json out = {{"version", kAnswersVersion}, {"paths", json::array()}};
  if (loader.contains("not_judged")) out["loader_not_judged"] = loader["not_judged"];
  if (loader.contains("node")) out["node"] = loader["node"];
  for (const std::string& path : paths) {
    json item = {{"path", path}};
    if (loader_paths.contains(path))
      for (const char* part : {"feeds", "keeps"})
        if (loader_paths[path].contains(part)) item[part] = loader_paths[path][part];
    for (const char* state : kReadStates)
      for (const json& b : best)
        if (b.value("path", "") == path && b.value("cache_state", "") == state) {
          json r = {{"bytes_per_second", b.value("bytes_per_second", 0.0)}, {"case", b.value("case", "")}};
          for (const char* key : {"workers", "pattern"})
            if (b.contains(key)) r[key] = b[key];
          item["reads"][state] = r;
        }
    if (item.size() > 1) out["paths"].push_back(item);
  }
  for (const json& o : file_read.value("cache_vs_source_overall", json::array())) {
    const std::string state = o.value("cache_state", "");
    if (std::find(std::begin(kReadStates), std::end(kReadStates), state) == std::end(kReadStates)) continue;
    out["cache_helps"].push_back(
        {{"cache_state", state}, {"ratio", o.value("geomean_ratio", 1.0)}, {"pairs", o.value("pairs", 0)}});
  }
  if (json stage = stage_answer(cases); !stage.is_null()) out["stage"] = stage;
  if (json checkpoint = checkpoint_answer(cases); !checkpoint.is_null()) out["checkpoint"] = checkpoint;
  return out;
}

// RETURNS: the parts joined with `sep`, or with `last` before the final one ("a, b and c").
std::string joined(const std::vector<std::string>& parts, const std::string& sep,
                   const std::string& last = "") {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i)
    out += (i == 0 ? "" : i + 1 == parts.size() && !last.empty() ? last : sep) + parts[i];
  return out;
}

// "0.50", "≥ 1.09"; where the page cache fed the case, what the store alone feeds and what the
// page cache added: "0.31 from the store + ≥ 0.70 from the page cache" (`table`: "0.31 + ≥ 0.70
// page cache").
std::string fed_count_text(const json& a, bool table) {
  const double fed = a.value("accelerators_fed", 0.0);
  const bool at_least = a.value("accelerators_fed_at_least", false);
  if (!a.contains("accelerators_fed_by_store") || !a["accelerators_fed_by_store"].is_number())
    return accelerators_fed_text(fed, at_least);
  const double store = a["accelerators_fed_by_store"].get<double>();
  const std::string added = accelerators_fed_text(std::max(0.0, fed - store), at_least);
  return table ? accelerators_fed_text(store, false) + " + " + added + " page cache"
               : accelerators_fed_text(store, false) + " from the store + " + added + " from the page cache";
}

// "source 0.50 cold, 0.64 warm; cache ≥ 1.09 cold" — per path and state, how many
// accelerators its supply keeps at the target ("" when no answer says); where the page cache fed
// a case, "source 0.31 cold from the store + ≥ 0.70 from the page cache".
std::string fed_counts_text(const json& paths, bool unverified) {
  std::vector<std::string> per_path;
  for (const json& p : paths) {
    if (!p.contains("feeds")) continue;
    std::vector<std::string> states;
    for (const char* state : {"cold", "warm"}) {
      if (!p["feeds"].contains(state)) continue;
      const json& a = p["feeds"][state];
      if (!a.contains("accelerators_fed")) continue;
      states.push_back(a.contains("accelerators_fed_by_store")
                           ? std::string(state) + " " + fed_count_text(a, false)
                           : fed_count_text(a, false) + " " + state);
    }
    const std::string path = p.value("path", "");
    if (!states.empty())
      per_path.push_back(path + cache_note(unverified && path == "cache") + " " + joined(states, ", "));
  }
  return joined(per_path, "; ");
}

// The target the first answer with a count was judged at.
double first_target(const json& paths) {
  for (const json& p : paths)
    for (const char* state : {"cold", "warm"})
      if (p.contains("feeds") && p["feeds"].contains(state) && p["feeds"][state].contains("accelerators_fed"))
        return p["feeds"][state].value("target_au", 0.9);
  return 0.9;
}

// "accelerators fed at AU ≥ 90.0%: source 0.50 cold; cache ≥ 1.09 cold" ("" when the answers
// hold no count); what one accelerator needs is demand_lines'.
std::string fed_line(const json& a, bool unverified) {
  const json paths = a.value("paths", json::array());
  const std::string counts = fed_counts_text(paths, unverified);
  if (counts.empty()) return "";
  return "accelerators fed at AU ≥ " + au_text(first_target(paths)) + ": " + counts;
}

// One line per step the answers' demands are for: "at a 60.0 ms step of 32 samples, one
// accelerator needs 533 samples/s, 59.3 MiB/s, 3.30 cores"; where they differ, each names the
// answers it is for (" (source cold, cache cold)").
std::vector<std::string> demand_lines(const json& paths, bool unverified) {
  std::vector<std::pair<std::string, std::vector<std::string>>> lines;  // text, the answers it is for
  for (const json& p : paths)
    for (const char* state : {"cold", "warm"}) {
      if (!p.contains("feeds") || !p["feeds"].contains(state)) continue;
      const std::optional<LoaderDemand> d = demand_from_json(p["feeds"][state].value("demand", json()));
      if (!d) continue;
      const std::string text = "at " + step_text(*d) + ", one accelerator needs " + demand_text(*d);
      const std::string path = p.value("path", "");
      const std::string who = path + cache_note(unverified && path == "cache") + " " + state;
      auto same = [&text](const auto& l) { return l.first == text; };
      if (auto it = std::find_if(lines.begin(), lines.end(), same); it != lines.end())
        it->second.push_back(who);
      else lines.push_back({text, {who}});
    }
  std::vector<std::string> out;
  for (const auto& [text, who] : lines)
    out.push_back(lines.size() > 1 ? text + " (" + joined(who, ", ") + ")" : text);
  return out;
}

// "a node of 8 accelerators needs 2.81 GiB/s (23k samples/s) and 11.3 CPU cores of transform to
// keep AU ≥ 90.0%: 8 × 90.0% of one accelerator's need at a 20.0 ms step of 8 samples (400
// samples/s, 50 MiB/s, 1.96 cores; at CASE)", so that the product is checked from the line alone.
std::string node_line(const json& n) {
  const std::int64_t k = n.value("accelerators", std::int64_t{0});
  const std::string target = au_text(n.value("target_au", 0.9));
  std::string out = "a node of " +
                    plural(std::size_t(std::max<std::int64_t>(k, 0)), "accelerator", "accelerators") +
                    " needs " + format_rate(n.value("bytes_per_second", 0.0)) + " (" +
                    format_count(n.value("samples_per_second", 0.0)) + " samples/s)";
  if (const double cores = n.value("transform_cores", 0.0); cores > 0)
    out += " and " + format_printf("%.1f", cores) + " CPU cores of transform";
  out += " to keep AU ≥ " + target;
  const std::optional<LoaderDemand> one = demand_from_json(n.value("demand", json()));
  if (!one) return out + " (at " + case_text(n) + ")";  // a file before the step was said
  return out + ": " + std::to_string(k) + " × " + target + " of one accelerator's need at " +
         step_text(*one) + " (" + demand_text(*one) + "; at " + case_text(n) + ")";
}

// The console's line of one path: "source: can storage feed the simulated trainers? cold: ...;
// keeps 2 simulated accelerators at AU ≥ 90.0%; reads at best ..."; "cache (cache unverified): ..."
// when the answers' cache was not verified.
std::string path_answer_line(const json& p, bool unverified) {
  const std::string path = p.value("path", "");
  std::vector<std::string> said;
  if (p.contains("feeds")) {
    std::vector<std::string> states;
    for (const char* state : {"cold", "warm"})
      if (p["feeds"].contains(state)) {
        const json& a = p["feeds"][state];
        std::string text = std::string(state) + ": " + fed_text(a);
        if (a.contains("storage_alone") && a["storage_alone"].is_object())
          text += ", storage alone (no transform): " + fed_text(a["storage_alone"]);
        states.push_back(text);
      }
    if (!states.empty()) said.push_back("can storage feed the simulated trainers? " + joined(states, "; "));
  }
  if (p.contains("keeps"))
    said.push_back("keeps " + accelerators_text(p["keeps"]) + " at AU ≥ " +
                   au_text(p["keeps"].value("target_au", 0.9)));
  if (p.contains("reads")) {
    std::vector<std::string> states;
    for (const char* state : kReadStates)
      if (p["reads"].contains(state))
        if (std::string t = reads_text(p["reads"][state], state); !t.empty()) states.push_back(t);
    if (!states.empty())
      said.push_back("reads at best " + joined(states, ", ") +
                     (p.contains("feeds") || p.contains("keeps")
                          ? ""
                          : "; no training loop in this run to judge that against"));
  }
  if (said.empty()) return "";
  return (path.empty() ? "" : path + cache_note(unverified && path == "cache") + ": ") + joined(said, "; ");
}

// ---- the page's sentences, from the same answers

std::string capitalised(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

// "source path"; "cache path (cache unverified)" when the answers' cache was not verified;
// "storage" for cases that name no path (files of other writers).
std::string subject(const json& p, bool unverified) {
  const std::string path = p.value("path", "");
  return path.empty() ? "storage" : path + " path" + cache_note(unverified && path == "cache");
}

// "Source path feeds the simulated trainers cold: AU 97.0% with 1 worker — meets the 90% target."
std::string feeds_sentence(const json& p, const std::string& state, bool unverified) {
  const json& a = p["feeds"][state];
  const bool fed = a.value("fed", false);
  std::string figure;
  if (a.contains("au")) figure = "AU " + au_text(a.value("au", 0.0)) + (fed ? "" : " at best");
  if (std::string w = workers_text(a); !w.empty()) figure += (figure.empty() ? "with " : " with ") + w;
  std::string target;
  if (a.contains("target_au"))
    target = std::string(fed ? " — meets the " : " — below the ") + percent_text(a.value("target_au", 0.0)) +
             " target";
  const std::string through =
      fed && limit_by(a) == "page_cache" ? ", through the page cache, not storage" : "";
  return capitalised(subject(p, unverified)) + (fed ? " feeds" : " does not feed") +
         " the simulated trainers " + state + (figure.empty() ? "" : ": " + figure) + target + through + ".";
}

// "Source path reads at best 296 MiB/s cold (4 workers, random) and 1 GiB/s warm (1 worker)."
std::string reads_sentence(const json& p, bool unverified) {
  std::vector<std::string> parts;
  for (const char* state : kReadStates) {
    if (!p["reads"].contains(state) || !p["reads"][state].contains("bytes_per_second")) continue;
    const json& r = p["reads"][state];
    std::vector<std::string> where = {workers_text(r)};
    if (r.contains("pattern") && r["pattern"].is_string()) where.push_back(r["pattern"].get<std::string>());
    parts.push_back(format_rate(r.value("bytes_per_second", 0.0)) + " " + state + parenthesis(where));
  }
  if (parts.empty()) return "";
  return capitalised(subject(p, unverified)) + " reads at best " + joined(parts, ", ", " and ") + ".";
}

// "Source path keeps 2 simulated accelerators at AU ≥ 90%; cache path keeps 8."
std::string keeps_sentence(const json& paths, bool unverified) {
  std::string out;
  for (const json& p : paths) {
    if (!p.contains("keeps")) continue;
    const json& k = p["keeps"];
    if (out.empty())
      out = capitalised(subject(p, unverified)) + " keeps " + accelerators_text(k) + " at AU ≥ " +
            percent_text(k.value("target_au", 0.9));
    else
      out += "; " + subject(p, unverified) + " keeps " +
             (k.value("accelerators", std::int64_t{0}) > 0
                  ? std::to_string(k["accelerators"].get<std::int64_t>())
                  : std::string("none"));
  }
  return out.empty() ? out : out + ".";
}

// RETURNS: whether every part of stored answers that the formatters read has the type they
// read it as. A result file is text a person may have edited: answers that are not well formed
// are computed again rather than failing the report.
bool answers_well_formed(const json& a) {
  // `key` absent, or there and `is` of it holds.
  auto optional = [](const json& o, const char* key, bool (json::*is)() const noexcept) {
    return !o.contains(key) || (o[key].*is)();
  };
  auto states_well_formed = [&](const json& p, const char* part, std::initializer_list<const char*> numbers) {
    if (!optional(p, part, &json::is_object)) return false;
    if (!p.contains(part)) return true;
    for (const auto& [state, v] : p[part].items()) {
      if (!v.is_object() || !optional(v, "fed", &json::is_boolean) ||
          !optional(v, "pattern", &json::is_string))
        return false;
      for (const char* n : numbers)
        if (!optional(v, n, &json::is_number)) return false;
    }
    return true;
  };
  // A limit, where an answer has one: an object whose text and by are strings.
  auto limit_well_formed = [&](const json& v) {
    if (!optional(v, "limit", &json::is_object)) return false;
    return !v.contains("limit") || (v["limit"].contains("text") && v["limit"]["text"].is_string() &&
                                    optional(v["limit"], "by", &json::is_string));
  };
  // Every number a demand holds, where a feeds answer has one; its limit and storage alone.
  auto demands_well_formed = [&](const json& p) {
    if (!p.contains("feeds") || !p["feeds"].is_object()) return true;
    for (const auto& [state, v] : p["feeds"].items()) {
      if (!v.is_object() || !optional(v, "accelerators_fed_at_least", &json::is_boolean) ||
          !optional(v, "accelerators_fed_by_store", &json::is_number) ||
          !optional(v, "demand", &json::is_object) || !limit_well_formed(v) ||
          !optional(v, "storage_alone", &json::is_object))
        return false;
      if (v.contains("storage_alone")) {
        const json& s = v["storage_alone"];
        if (!optional(s, "fed", &json::is_boolean) || !optional(s, "au", &json::is_number) ||
            !optional(s, "target_au", &json::is_number) || !optional(s, "case", &json::is_string) ||
            !limit_well_formed(s))
          return false;
      }
      if (v.contains("demand"))
        for (const char* n : {"samples_per_second", "bytes_per_second", "transform_cores"})
          if (!optional(v["demand"], n, &json::is_number)) return false;
    }
    return true;
  };
  if (a.contains("node")) {
    const json& n = a["node"];
    if (!n.is_object() || !optional(n, "accelerators", &json::is_number_integer) ||
        !optional(n, "case", &json::is_string))
      return false;
    for (const char* k : {"target_au", "samples_per_second", "bytes_per_second", "transform_cores"})
      if (!optional(n, k, &json::is_number)) return false;
  }
  if (!a.is_object() || !optional(a, "paths", &json::is_array) ||
      !optional(a, "cache_helps", &json::is_array) || !optional(a, "stage", &json::is_object) ||
      !optional(a, "checkpoint", &json::is_object))
    return false;
  if (a.contains("checkpoint"))
    for (const char* k : {"bytes", "ranks", "write_s", "restore_s", "interval_s", "blocking_share",
                          "async_bytes_per_second", "generation_bytes_per_second"})
      if (!optional(a["checkpoint"], k, &json::is_number)) return false;
  for (const json& p : a.value("paths", json::array()))
    if (!p.is_object() || !optional(p, "path", &json::is_string) ||
        !states_well_formed(p, "feeds", {"au", "target_au", "workers", "accelerators_fed"}) ||
        !demands_well_formed(p) || !states_well_formed(p, "reads", {"bytes_per_second", "workers"}) ||
        !optional(p, "keeps", &json::is_object) ||
        (p.contains("keeps") && (!optional(p["keeps"], "accelerators", &json::is_number_integer) ||
                                 !optional(p["keeps"], "target_au", &json::is_number))))
      return false;
  for (const json& c : a.value("cache_helps", json::array()))
    if (!c.is_object() || !optional(c, "cache_state", &json::is_string) ||
        !optional(c, "ratio", &json::is_number) || !optional(c, "pairs", &json::is_number))
      return false;
  return !a.contains("stage") || (optional(a["stage"], "bytes_per_second", &json::is_number) &&
                                  optional(a["stage"], "workers", &json::is_number));
}

// The file_read part of the printed summary: the best throughput per path and cache state,
// where more workers stop paying, cold vs warm and source vs cache. A line of a figure read on
// the cache path ends with cache_note(unverified).
std::string file_read_lines(const json& fr, bool unverified) {
  std::string out;
  auto line = [&](const std::string& s) { out += "  " + s + "\n"; };
  auto note = [&](const std::string& path) { return cache_note(unverified && path == "cache"); };
  line("best throughput (median of achieved repetitions), per path and cache state:");
  for (const json& b : fr.value("best", json::array())) {
    char head[64];
    std::snprintf(head, sizeof head, "  %-7s %-7s %12s", b.value("path", "").c_str(),
                  b.value("cache_state", "").c_str(), format_rate(b.value("bytes_per_second", 0.0)).c_str());
    std::string where;
    if (b.contains("workers")) where += "  workers " + b["workers"].dump();
    where += "  " + case_text(b);
    line(head + where + note(b.value("path", "")));
  }
  const json scale = fr.value("scaling", json::array());
  if (!scale.empty()) line("more workers, deeper queues (knee: the smallest count within 5% of the best):");
  for (const json& sc : scale) {
    const std::string parameter = sc.value("parameter", "");
    const std::int64_t best_value = sc.value("best", std::int64_t{0});
    const std::int64_t knee = sc.value("knee", std::int64_t{0});
    std::string text = "  " + sc.value("description", "") + ": best at " + count_text(parameter, best_value) +
                       " (" + format_rate(sc.value("best_bytes_per_second", 0.0)) + ")";
    if (knee != best_value)
      text += "; " + count_text(parameter, knee) + (parameter == "workers" && knee != 1 ? " are" : " is") +
              " within 5% of the best (" + count_text(parameter, best_value) + ")";
    const json slower = sc.value("slower_than_best", json::array());
    for (std::size_t i = slower.size(); i-- > 0;)  // the largest first: the one a user would try
      text += std::string(i + 1 == slower.size() ? "; " : ", ") +
              count_text(parameter, slower[i].value("value", std::int64_t{0})) + " is " +
              percent_text(slower[i].value("slower_by", 0.0)) + " slower";
    if (sc.value("still_rising", false)) text += "; still rising at the largest count tried: more may help";
    else if (slower.empty() && knee == best_value && sc["points"].size() > 1 &&
             best_value != sc["points"].back().value("value", std::int64_t{0}))
      text += "; more gains nothing";
    const json group = sc.value("group", json::object());
    line(text + note(group.is_object() ? param_text(group, "path") : ""));
  }
  // Few matched pairs: one line each; many: the geometric mean and the extremes, per group.
  constexpr std::size_t kPairsShown = 4;
  auto pairs_lines = [&](const char* title, const char* pairs_key, const char* overall_key, const char* by,
                         const std::string& a, const std::string& b, const std::string& b_side) {
    const json pairs = fr.value(pairs_key, json::array());
    for (const json& o : fr.value(overall_key, json::array())) {
      const std::string group = o.value(by, "");
      // Pairs by path compare cold and warm on that path; the others each read the cache.
      const std::string qualifier = note(std::string(by) == "path" ? group : "cache");
      std::vector<const json*> mine;
      for (const json& p : pairs)
        if (p.value(by, "") == group) mine.push_back(&p);
      if (mine.size() <= kPairsShown) {
        for (const json* p : mine) {
          const double r = p->value("ratio", 0.0);
          line(std::string(title) + ", " +
               shape_text(*p, {std::string(by) == "path" ? "cache_state" : "path"}) + ": " + b_side +
               " was " + relative_text(r, a) + " (" + format_rate(p->value(a + "_bytes_per_second", 0.0)) +
               " " + a + ", " + format_rate(p->value(b + "_bytes_per_second", 0.0)) + " " + b + ")" +
               qualifier);
        }
        continue;
      }
      const double g = o.value("geomean_ratio", 0.0);
      line(std::string(title) + ", " + group + ": " + b_side + " was " + relative_text(g, a) +
           " (geometric mean of " + std::to_string(o.value("pairs", 0)) +
           " matched pairs, each the same pattern, block "
           "size, engine, queue depth and workers; from " +
           range_end_text(o.value("min_ratio", 0.0)) + " (" + shape_text(o["min_pair"], {}) + ") to " +
           range_end_text(o.value("max_ratio", 0.0)) + " (" + shape_text(o["max_pair"], {}) + "))" +
           qualifier);
    }
  };
  pairs_lines("cold vs warm", "cold_vs_warm", "cold_vs_warm_overall", "path", "cold", "warm", "warm");
  pairs_lines("source vs cache", "cache_vs_source", "cache_vs_source_overall", "cache_state", "source",
              "cache", "cache path");
  return out;
}

// The printed summary's lines of cases run across ranks: each host's rate, then each rank's
// (the first 16), medians over repetitions; then the stragglers. A case read on the cache path
// carries cache_note(unverified) on each of its lines.
std::string rank_lines(const json& summary, bool unverified) {
  std::string out;
  auto line = [&](const std::string& s) { out += "  " + s + "\n"; };
  for (const json& c : summary.value("ranks", json::array())) {
    const std::string note = cache_note(unverified && on_cache_path(c.value("case", "")));
    line("across ranks, " + c.value("case", "") + " (medians of " +
         std::to_string(c.value("repetitions", 0)) + " repetitions)" + note + ":");
    std::string h = "  hosts:";
    for (const json& x : c["hosts"]) {
      h.append(h.back() == ':' ? " " : ", ").append(x.value("host", ""));
      h.append(" ").append(format_rate(x.value("bytes_per_second", 0.0)));
    }
    line(h + note);
    std::string r = "  ranks:";
    std::size_t shown = 0;
    for (const json& x : c["ranks"]) {
      r.append(r.back() == ':' ? " " : ", ");
      if (++shown > 16) {
        r.append("and ")
            .append(std::to_string(c["ranks"].size() - 16))
            .append(" more (extra.ranks in the result)");
        break;
      }
      r.append(std::to_string(x.value("rank", 0))).append(" (").append(x.value("host", "")).append(") ");
      r.append(format_rate(x.value("bytes_per_second", 0.0)));
    }
    line(r + note);
  }
  for (const json& st : summary.value("stragglers", json::array())) {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.2f", st.value("vs_median", 0.0));
    line("straggler: rank " + std::to_string(st.value("rank", 0)) + " (host " + st.value("host", "") +
         ") in " + std::to_string(st.value("repetitions", 0)) + " of " +
         std::to_string(st.value("of_repetitions", 0)) + " repetitions of " + st.value("case", "") + ": " +
         format_rate(st.value("bytes_per_second", 0.0)) + " at its slowest, " + ratio +
         " of the median rank's rate" + cache_note(unverified && on_cache_path(st.value("case", ""))));
  }
  return out;
}

}  // namespace

std::vector<std::vector<std::string>> answer_table(const json& a) {
  std::vector<std::vector<std::string>> rows;
  if (!a.is_object() || !a.contains("paths") || !a["paths"].is_array()) return rows;
  const bool unverified = answers_cache_unverified(a);
  for (const json& p : a["paths"]) {
    if (!p.is_object()) continue;
    const std::string path = p.value("path", "");
    for (const char* state : kReadStates) {
      const json feeds = p.contains("feeds") ? p["feeds"].value(state, json()) : json();
      const json reads = p.contains("reads") ? p["reads"].value(state, json()) : json();
      if (!feeds.is_object() && !reads.is_object()) continue;
      const json limit = feeds.is_object() ? feeds.value("limit", json()) : json();
      std::string fed = "-", by = "-", rate = "-";
      if (feeds.is_object() && feeds.contains("accelerators_fed")) fed = fed_count_text(feeds, true);
      if (limit.is_object()) {
        const std::string b = limit.value("by", "");
        const bool met = limit.value("fed", feeds.value("fed", false));
        by = b == "cpu"          ? "transform CPU"
             : b == "job_waits"  ? "the job's waits"
             : b == "page_cache" ? "fed: page cache"
             : b.empty()         ? (met ? "fed" : "-")
                                 : (met ? "fed: " : "") + b;
      }
      const json device = limit.is_object() ? limit.value("device_bytes_per_second", json()) : json();
      const json memory = limit.is_object() ? limit.value("memory_share", json()) : json();
      if (reads.is_object() && reads.contains("bytes_per_second"))
        rate = format_rate(reads.value("bytes_per_second", 0.0)) + " read";
      else if (device.is_number() && !(memory.is_number() && memory.get<double>() >= 0.995))
        rate = format_rate(device.get<double>()) + " from the store";
      rows.push_back({path + cache_note(unverified && path == "cache"), state, fed, by, rate});
    }
  }
  if (!rows.empty()) rows.insert(rows.begin(), {"path", "state", "accelerators fed", "limit", "rate"});
  return rows;
}

std::vector<std::string> answer_sentences(const json& a) {
  std::vector<std::string> out;
  if (!a.is_object()) return out;
  if (a.contains("loader_not_judged"))
    out.push_back("Loader cases: too few steps measured to judge them (raise steps).");
  const bool unverified = answers_cache_unverified(a);
  if (std::string f = fed_line(a, unverified); !f.empty()) out.push_back(capitalised(f) + ".");
  for (const std::string& l : limit_lines(a.value("paths", json::array()), unverified, false))
    out.push_back(capitalised(l) + ".");
  for (const std::string& l : demand_lines(a.value("paths", json::array()), unverified))
    out.push_back(capitalised(l) + ".");
  if (a.contains("node")) out.push_back(capitalised(node_line(a["node"])) + ".");
  const json paths = a.value("paths", json::array());
  if (std::string k = keeps_sentence(paths, unverified); !k.empty()) out.push_back(k);
  for (const json& p : paths) {
    for (const char* state : {"cold", "warm"})
      if (p.contains("feeds") && p["feeds"].contains(state))
        out.push_back(feeds_sentence(p, state, unverified));
    if (p.contains("reads"))
      if (std::string r = reads_sentence(p, unverified); !r.empty()) out.push_back(r);
  }
  if (a.contains("cache_helps") && !a["cache_helps"].empty()) {
    std::vector<std::string> states;
    for (const json& c : a["cache_helps"])
      states.push_back(c.value("cache_state", "") + ": " + helps_text(c));
    out.push_back("Does the cache help? " + capitalised(joined(states, "; ")) +
                  "; like with like: each pair differs only in its path" + cache_note(unverified) + ".");
  }
  if (a.contains("stage"))
    out.push_back("Staging to the cache copies at best " +
                  format_rate(a["stage"].value("bytes_per_second", 0.0)) +
                  parenthesis({workers_text(a["stage"])}) + ".");
  if (a.contains("checkpoint")) {
    const std::vector<std::string> parts = checkpoint_sentences(a["checkpoint"]);
    out.push_back(capitalised(joined(parts, "; ")) + ".");
  }
  return out;
}

std::string format_answers(const json& a) {
  std::string out;
  if (!a.is_object()) return out;
  auto line = [&](const std::string& s) { out += "  " + s + "\n"; };
  if (a.contains("loader_not_judged"))
    line(
        "loader: too few steps measured to judge whether storage feeds the simulated trainers (raise steps)");
  const bool unverified = answers_cache_unverified(a);
  out += text_table(answer_table(a), 2);
  if (std::string f = fed_line(a, unverified); !f.empty()) line(f);
  for (const std::string& block : limit_lines(a.value("paths", json::array()), unverified, true))
    out += block;
  for (const std::string& l : demand_lines(a.value("paths", json::array()), unverified)) line(l);
  if (a.contains("node")) line(node_line(a["node"]));
  for (const json& p : a.value("paths", json::array()))
    if (std::string text = path_answer_line(p, unverified); !text.empty()) line(text);
  if (a.contains("cache_helps") && !a["cache_helps"].empty()) {
    std::vector<std::string> states;
    for (const json& c : a["cache_helps"])
      states.push_back(c.value("cache_state", "") + ": " + helps_text(c));
    line("does the cache help? " + joined(states, "; ") +
         "; like with like: each pair differs only in its path" + cache_note(unverified));
  }
  if (a.contains("stage"))
    line("staging to the cache copies at best " + format_rate(a["stage"].value("bytes_per_second", 0.0)) +
         parenthesis({workers_text(a["stage"])}));
  if (a.contains("checkpoint")) {
    const std::vector<std::string> parts = checkpoint_sentences(a["checkpoint"]);
    line(parts[0]);
    for (std::size_t i = 1; i < parts.size(); ++i) line("  " + parts[i]);
  }
  return out;
}

json summary_of(const ResultDocument& doc) {
  if (doc.summary.is_object()) {
    const auto answers = doc.summary.find("answers");
    if (answers != doc.summary.end() && answers->is_object()) {
      const auto version = answers->find("version");
      if (version != answers->end() && version->is_number_integer() &&
          version->get<std::int64_t>() >= kAnswersVersion && answers_well_formed(*answers)) {
        // The document's record of its cache decides, also for answers stored before they
        // carried it: a cache measured unverified is said so wherever these are printed.
        json stored = doc.summary;
        if (cache_unverified(doc)) stored["answers"]["cache_unverified"] = true;
        else stored["answers"].erase("cache_unverified");
        return stored;
      }
    }
  }
  json computed = summarize(doc);
  if (doc.summary.is_object() && doc.summary.contains("sizing")) computed["sizing"] = doc.summary["sizing"];
  return computed;
}

namespace {

// A judged replay in accelerators, as the loader's answers say a loader case (loader_demand.h,
// loader_summary.h): {target_au, accelerators_fed, accelerators_fed_at_least, demand, node} at
// the step the replay ran (a step_scale's), or {} when it cannot say.
json replay_in_accelerators(const CaseView& c, std::int64_t node) {
  const std::optional<double> au = c.counter("au");
  const std::optional<LoaderDemand> d = demand_of(c);
  if (!au || !d || !c.extra.value("judged", true)) return json::object();
  json out = {{"target_au", c.target_au()},
              {"accelerators_fed", accelerators_fed(c, *au)},
              {"accelerators_fed_at_least", *au >= c.target_au()},
              {"demand", demand_json(*d)}};
  if (json n = node_answer({&c}, node); !n.is_null()) out["node"] = n;
  return out;
}

}  // namespace

json summarize(const ResultDocument& doc) {
  json out = json::object();
  json excluded = json::array();
  json skipped = json::array();
  // Per storage file_read case: its fold's median over achieved repetitions.
  std::vector<Measured> measured;
  std::map<std::string, std::size_t> achieved;
  const std::vector<CaseView> views = fold_cases(doc);
  for (const CaseView& c : views) {
    if (!c.errors.empty()) skipped.push_back({{"case", c.name}, {"reason", c.errors.front()}});
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
      if (achieved.count(c.name)) continue;
      measured.push_back(Measured{c.name, c.params, *bps});
      achieved[c.name] = c.achieved;
    }
  }
  // Source before cache, cold before warm; otherwise the run's order.
  std::stable_sort(measured.begin(), measured.end(), [](const Measured& a, const Measured& b) {
    const std::string pa = param_text(a.params, "path"), pb = param_text(b.params, "path");
    if (pa != pb) return path_less(pa, pb);
    return state_less(param_text(a.params, "cache_state"), param_text(b.params, "cache_state"));
  });

  // Best median per path × cache state.
  std::map<std::pair<std::string, std::string>, Best> best;
  for (const Measured& m : measured) {
    Best& b = best[{param_text(m.params, "path"), param_text(m.params, "cache_state")}];
    if (m.bytes_per_second > b.bytes_per_second)
      b = Best{m.bytes_per_second, m.name, m.params, achieved[m.name]};
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
    json scale = scaling(measured, "workers");
    for (const json& q : scaling(measured, "queue_depth")) scale.push_back(q);
    if (!scale.empty()) fr["scaling"] = scale;
    // Like with like: a pair differs only in the cache state (or only in the path).
    json cold_warm = matched_pairs(measured, "cache_state", "cold", "warm");
    json cache_source = matched_pairs(measured, "path", "source", "cache");
    if (!cold_warm.empty()) {
      fr["cold_vs_warm"] = cold_warm;
      fr["cold_vs_warm_overall"] = overall(cold_warm, "path");
    }
    if (!cache_source.empty()) {
      fr["cache_vs_source"] = cache_source;
      fr["cache_vs_source_overall"] = overall(cache_source, "cache_state");
    }
    out["file_read"] = fr;
  }
  // Always kept, even when it says nothing: its version tells a reader it is this engine's.
  const json node = doc.config.is_object() ? doc.config.value("node_accelerators", json()) : json();
  const std::int64_t node_k =
      node.is_number_integer() ? std::max<std::int64_t>(node.get<std::int64_t>(), 0) : 0;
  out["answers"] = answers(views, out.value("file_read", json::object()), node_k);
  // Answers measured on a cache that failed its checks say so wherever they are printed.
  if (cache_unverified(doc)) out["answers"]["cache_unverified"] = true;
  if (!excluded.empty()) out["excluded"] = excluded;
  json outliers = json::array();
  for (const OutlierRepetition& o : outlier_repetitions(doc))
    outliers.push_back({{"case", o.case_name},
                        {"metric", o.metric},
                        {"repetition_index", o.repetition_index},
                        {"value", o.value},
                        {"median", o.median}});
  if (!outliers.empty()) out["outliers"] = outliers;
  if (!skipped.empty()) out["skipped"] = skipped;
  json loader = summarize_loader(doc);
  if (loader.is_object() && !loader.empty()) out["loader"] = loader;
  // Each replayed job: its AU against the one recorded, and its verdict.
  json replays = json::array();
  for (const CaseView& c : views) {
    if (c.family != "replay" || !c.measured()) continue;
    const json* rec = c.extra.contains("replay") ? &c.extra["replay"] : nullptr;
    replays.push_back(
        {{"case", c.name},
         {"au", c.counter("au") ? json(*c.counter("au")) : json(nullptr)},
         {"recorded_au", rec && rec->contains("recorded_au") ? (*rec)["recorded_au"] : json(nullptr)},
         {"verdict", c.extra.value("verdict", std::string())},
         {"verdict_line", c.extra.value("verdict_line", std::string())}});
    replays.back().update(replay_in_accelerators(c, node_k));
  }
  if (!replays.empty()) out["replay"] = replays;
  json across = summarize_ranks(doc);
  if (!across.empty()) out["ranks"] = across;
  json stragglers = summarize_stragglers(doc);
  if (!stragglers.empty()) out["stragglers"] = stragglers;
  add_case_labels(out, case_labels(views));
  return out;
}

std::vector<std::string> outlier_warning_lines(const json& summary) {
  std::vector<std::string> out;
  if (!summary.is_object() || !summary.contains("outliers") || !summary["outliers"].is_array()) return out;
  for (const json& o : summary["outliers"]) {
    if (!o.is_object()) continue;
    const OutlierRepetition r{o.value("case", ""), o.value("metric", ""),
                              o.value("repetition_index", std::int64_t{0}), o.value("value", 0.0),
                              o.value("median", 0.0)};
    out.push_back("outlier repetition: " + r.case_name + " " + outlier_text(r) + " (" + outlier_rule_text() +
                  "): diff judges without it; measure again before keeping this result as a baseline");
  }
  return out;
}

std::string format_summary(const json& summary) {
  if (!summary.is_object() || summary.empty()) return {};
  std::string out = "Summary\n";
  auto line = [&](const std::string& s) { out += "  " + s + "\n"; };
  // The answers record whether their cache was verified (summarize, summary_of): every line of
  // a cache figure below says so too.
  const bool unverified = summary.contains("answers") && answers_cache_unverified(summary["answers"]);
  if (summary.contains("answers")) out += format_answers(summary["answers"]);
  if (summary.contains("file_read")) out += file_read_lines(summary["file_read"], unverified);
  for (const json& n : summary.value("excluded", json::array()))
    line("excluded: " + case_text(n) + " repetition " + std::to_string(n.value("repetition_index", 0)) +
         ": " + n.value("reason", "") + " (not in the figures above)");
  for (const std::string& text : skipped_lines(summary.value("skipped", json::array()))) line(text);
  out += rank_lines(summary, unverified);
  if (summary.contains("loader")) out += format_loader_summary(summary["loader"], unverified);
  for (const json& r : summary.value("replay", json::array())) {
    if (!r.is_object() || !r.value("au", json()).is_number()) continue;
    std::string text = case_text(r) + ": AU " + format_percent(r["au"].get<double>());
    if (r.value("recorded_au", json()).is_number())
      text += " (the job recorded " + format_percent(r["recorded_au"].get<double>()) + ")";
    // The verdict's words after its AU: its short line's on the first line, the rest below it.
    const std::string dash = " \xe2\x80\x94 ";  // " — "
    const std::string verdict = r.value("verdict", ""), head = r.value("verdict_line", "");
    const std::size_t at = (head.empty() ? verdict : head).find(dash);
    if (at != std::string::npos) text += dash + (head.empty() ? verdict : head).substr(at + dash.size());
    out += verdict_block("replay " + text, head.empty() ? "" : verdict, 2);
    // In accelerators, as the loader's answers: how many its supply feeds, one's need, a node's.
    if (r.value("accelerators_fed", json()).is_number()) {
      line("  accelerators fed at AU ≥ " + au_text(r.value("target_au", 0.9)) + ": " +
           accelerators_fed_text(r["accelerators_fed"].get<double>(),
                                 r.value("accelerators_fed_at_least", false)));
      if (const std::optional<LoaderDemand> d = demand_from_json(r.value("demand", json())))
        line("  at " + step_text(*d) + ", one accelerator needs " + demand_text(*d));
      if (r.value("node", json()).is_object()) line("  " + node_line(r["node"]));
    }
  }
  if (summary.contains("sizing") && summary["sizing"].is_object())
    if (std::string note = summary["sizing"].value("note", ""); !note.empty()) line("sizing: " + note);
  return out == "Summary\n" ? std::string() : out;
}

}  // namespace feedbench
