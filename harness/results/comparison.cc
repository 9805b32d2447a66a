// BASE against NEW: match cases by identity, judge each metric on the median of repetitions
// and a Mann-Whitney U test, and say where the two runs are not comparable.
#include "feedbench/results/comparison.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "feedbench/base/error.h"
#include "feedbench/base/statistics.h"
#include "feedbench/base/text.h"
#include "feedbench/base/units.h"

namespace feedbench {

std::vector<const CounterInfo*> judged_metrics() {
  std::vector<const CounterInfo*> out;
  for (const CounterInfo& c : known_counters())
    if (c.judged) out.push_back(&c);
  return out;
}

const CounterInfo* find_metric(const std::string& name) {
  const CounterInfo* c = find_counter(name);
  return c && c->judged ? c : nullptr;
}

bool CaseComparison::regressed() const {
  return std::any_of(metrics.begin(), metrics.end(),
                     [](const MetricComparison& m) { return m.verdict == Verdict::kRegression; });
}

bool CaseComparison::noisy() const {
  return !regressed() && std::any_of(metrics.begin(), metrics.end(),
                                     [](const MetricComparison& m) { return m.verdict == Verdict::kNoisy; });
}

bool CaseComparison::improved() const {
  return !regressed() && std::any_of(metrics.begin(), metrics.end(), [](const MetricComparison& m) {
    return m.verdict == Verdict::kImprovement;
  });
}

std::size_t Comparison::regressions() const {
  return static_cast<std::size_t>(
      std::count_if(cases.begin(), cases.end(), [](const CaseComparison& c) { return c.regressed(); }));
}

std::size_t Comparison::improvements() const {
  return static_cast<std::size_t>(
      std::count_if(cases.begin(), cases.end(), [](const CaseComparison& c) { return c.improved(); }));
}

std::size_t Comparison::noisy() const {
  return static_cast<std::size_t>(
      std::count_if(cases.begin(), cases.end(), [](const CaseComparison& c) { return c.noisy(); }));
}

bool Comparison::any_weak() const {
  for (const CaseComparison& c : cases)
    for (const MetricComparison& m : c.metrics)
      if (m.weak) return true;
  return false;
}

double HostLoad::per_core() const { return cores > 0 ? (before + after) / 2 / cores : 0; }

double HostLoad::other_share() const {
  return other_known && cores > 0 ? std::clamp(other_cores / cores, 0.0, 1.0) : 0;
}

HostLoad host_load(const ResultDocument& doc) {
  HostLoad load;
  auto host = doc.environment.find("host");
  if (host == doc.environment.end() || !host->is_object()) return load;
  auto l = host->find("load");
  if (l == host->end() || !l->is_object()) return load;
  auto number = [&](const char* key, double* out) {
    auto it = l->find(key);
    if (it == l->end() || !it->is_number()) return false;
    *out = it->get<double>();
    return true;
  };
  // Each read on its own line: all three are read even when one is missing.
  const bool before = number("loadavg_1m_before", &load.before);
  const bool after = number("loadavg_1m_after", &load.after);
  const bool cores = number("online_cores", &load.cores);
  load.known = before && after && cores && load.cores > 0;
  // Older files, and runs whose host could not tell, have no other_programs_cores: only the
  // load average counts for them.
  load.other_known =
      number("other_programs_cores", &load.other_cores) && cores && load.cores > 0 && load.other_cores >= 0;
  return load;
}

HostLoad mean_host_load(const std::vector<HostLoad>& runs) {
  HostLoad mean;
  if (runs.empty()) return mean;
  mean.known = mean.other_known = true;
  for (const HostLoad& l : runs) {
    mean.known = mean.known && l.known;
    mean.other_known = mean.other_known && l.other_known;
    mean.before += l.before / double(runs.size());
    mean.after += l.after / double(runs.size());
    mean.cores += l.cores / double(runs.size());
    mean.other_cores += l.other_cores / double(runs.size());
  }
  if (!mean.known && !mean.other_known) return HostLoad{};
  return mean;
}

bool loads_differ(const HostLoad& base, const HostLoad& next) {
  if (!base.known || !next.known) return false;
  const double a = base.per_core(), b = next.per_core();
  return std::fabs(a - b) > std::max(kLoadToleranceFloor, kLoadTolerance * std::max(a, b));
}

bool CaseComparison::missing() const {
  return status == CaseStatus::kRemoved || status == CaseStatus::kNotMeasured || !missing_metrics.empty();
}

std::size_t Comparison::missing() const {
  return static_cast<std::size_t>(
      std::count_if(cases.begin(), cases.end(), [](const CaseComparison& c) { return c.missing(); }));
}

std::size_t Comparison::compared() const {
  return static_cast<std::size_t>(std::count_if(
      cases.begin(), cases.end(), [](const CaseComparison& c) { return c.status == CaseStatus::kCompared; }));
}

int Comparison::exit_code(bool strict) const {
  if (regressions() > 0) return 1;
  if (missing() > 0 && !options.allow_missing) return 1;
  if (compared() == 0) return 1;  // a diff that compared nothing says nothing is fine
  if (strict && !warnings.empty()) return 1;
  return 0;
}

namespace {

std::vector<std::string> split_segments(const std::string& name) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(name);
  while (std::getline(in, part, '/')) out.push_back(part);
  return out;
}

// Google Benchmark's decorations, which change with how a run was invoked, not what it measured.
bool is_decoration(const std::string& seg) {
  if (seg == "manual_time" || seg == "real_time" || seg == "process_time") return true;
  for (const char* prefix : {"iterations:", "repeats:", "min_time:", "min_warmup_time:"})
    if (seg.rfind(prefix, 0) == 0) return true;
  return false;
}

std::string segment_key(const std::string& seg) {
  auto colon = seg.find(':');
  return colon == std::string::npos ? std::string() : seg.substr(0, colon);
}

}  // namespace

std::string replay_as_job(const std::string& identity) {
  const std::vector<std::string> segs = split_segments(identity);
  if (segs.size() < 2 || segs[0] != "replay" || !segs[1].starts_with("job:")) return identity;
  // The job's own conditions: read cold from where it read (the recording was the job's first
  // read of its data unless the watch said otherwise).
  std::string out = "job/" + segs[1].substr(4);
  for (std::size_t i = 2; i < segs.size(); ++i)
    if (segs[i] != "state:cold" && segs[i] != "path:source") out += "/" + segs[i];
  return out;
}

std::string case_identity(const BenchmarkEntry& entry, const std::vector<std::string>& ignore) {
  const bool canonical = !entry.case_name.empty() && entry.case_name != entry.run_name;
  std::string name = !entry.case_name.empty()  ? entry.case_name
                     : !entry.run_name.empty() ? entry.run_name
                                               : entry.name;
  std::string out;
  for (const std::string& seg : split_segments(name)) {
    if (!canonical && is_decoration(seg)) continue;
    std::string key = segment_key(seg);
    if (!key.empty() && std::find(ignore.begin(), ignore.end(), key) != ignore.end()) continue;
    out += out.empty() ? seg : "/" + seg;
  }
  return replay_as_job(out);
}

namespace {

double direction_gain(Direction d, double change) {
  return d == Direction::kHigherIsBetter ? change : -change;
}

// Every entry of one case in one document; its repetitions sorted by whether they count.
struct CaseEntries {
  std::string name;
  std::vector<const BenchmarkEntry*> iterations, aggregates;
  std::vector<const BenchmarkEntry*> counted;  // neither errored nor excluded
  std::vector<std::string> excluded;           // "repetition 2: cold not achieved: ..."
  std::vector<const BenchmarkEntry*> errored;
};

struct Grouped {
  std::vector<std::string> order;
  std::map<std::string, CaseEntries> cases;
};

Grouped group(const ResultDocument& doc, const std::vector<std::string>& ignore) {
  Grouped g;
  for (const BenchmarkEntry& e : doc.benchmarks) {
    std::string id = case_identity(e, ignore);
    auto [it, inserted] = g.cases.try_emplace(id);
    if (inserted) {
      g.order.push_back(id);
      it->second.name = e.case_name.empty() ? e.run_name : e.case_name;
    }
    CaseEntries& c = it->second;
    if (e.run_type == "aggregate") {
      c.aggregates.push_back(&e);
      continue;
    }
    c.iterations.push_back(&e);
    if (e.error_occurred) {
      c.errored.push_back(&e);
    } else if (std::string why = exclusion_reason(e); !why.empty()) {
      c.excluded.push_back("repetition " + std::to_string(e.repetition_index) + ": " + why);
    } else {
      c.counted.push_back(&e);
    }
  }
  return g;
}

std::optional<double> metric_value(const BenchmarkEntry& e, const std::string& metric) {
  if (metric == "real_time") return time_to_ns(e.real_time, e.time_unit);
  auto it = e.counters.find(metric);
  if (it == e.counters.end()) return std::nullopt;
  return it->second;
}

// The entries a case is judged on: its repetitions, or, when a file holds only aggregates,
// its median (else mean) aggregate as a single value.
std::vector<const BenchmarkEntry*> judged_entries(const CaseEntries& c, bool* from_aggregates) {
  *from_aggregates = false;
  if (!c.iterations.empty()) return c.counted;
  for (const char* which : {"median", "mean"})
    for (const BenchmarkEntry* e : c.aggregates)
      if (e->aggregate_name == which) {
        *from_aggregates = true;
        return {e};
      }
  return {};
}

// One side's values of a metric with the outlier rule applied: what is judged, what is set aside.
struct SideValues {
  std::vector<double> kept;
  std::vector<OutlierRepetition> set_aside;
  std::size_t count() const { return kept.size() + set_aside.size(); }
};

// RETURNS: the values of `metric` in `entries` (those that have it), split by outlier_indices
// with the metric's floor.
SideValues split_outliers(const std::string& case_name, const std::vector<const BenchmarkEntry*>& entries,
                          const CounterInfo& metric) {
  std::vector<double> values;
  std::vector<std::int64_t> repetitions;
  for (const BenchmarkEntry* e : entries)
    if (auto v = metric_value(*e, metric.name)) {
      values.push_back(*v);
      repetitions.push_back(e->repetition_index);
    }
  SideValues out;
  const std::vector<std::size_t> outliers = outlier_indices(values, metric.floor);
  if (outliers.empty()) {
    out.kept = std::move(values);
    return out;
  }
  const double all_median = median(values);
  for (std::size_t i = 0, next = 0; i < values.size(); ++i) {
    if (next < outliers.size() && outliers[next] == i) {
      out.set_aside.push_back({case_name, metric.name, repetitions[i], values[i], all_median});
      ++next;
    } else {
      out.kept.push_back(values[i]);
    }
  }
  return out;
}

// RETURNS: the family's name, the first segment of a case name.
std::string family_of(const std::string& case_name) { return case_name.substr(0, case_name.find('/')); }

// RETURNS: whether `info` gates `family` by default (the table's `gates`).
bool gates_family(const CounterInfo& info, const std::string& family) {
  return std::find(info.gates.begin(), info.gates.end(), family) != info.gates.end();
}

// RETURNS: "BASE measured 3 steps per trainer, 10 needed to judge its figures (raise steps)"
// when a counted repetition of `c` is a loader run that says it measured too few steps to be
// judged (extra.judged false), else "".
std::string too_few_steps_note(const CaseEntries& c, const char* side) {
  for (const BenchmarkEntry* e : c.counted) {
    const nlohmann::json& x = e->extra;  // types checked when the file was read
    if (x.value("judged", true)) continue;
    auto count = [&](const char* key) -> std::optional<std::int64_t> {
      if (x.contains(key) && x[key].is_number_integer()) return x[key].get<std::int64_t>();
      return std::nullopt;
    };
    const auto measured = count("measured_steps_first_epoch"), needed = count("min_measured_steps");
    if (!measured || !needed)
      return std::string(side) + " measured too few steps to judge its figures (raise steps)";
    return std::string(side) + " measured " + std::to_string(*measured) + " steps per trainer, " +
           std::to_string(*needed) + " needed to judge its figures (raise steps)";
  }
  return "";
}

// RETURNS: why nothing of the case counts in this file ("" when something does).
std::string nothing_counted_note(const CaseEntries& c, const char* side) {
  if (!c.counted.empty() || (c.iterations.empty() && !c.aggregates.empty())) return "";
  if (c.iterations.empty()) return std::string("no entries in ") + side;
  if (!c.errored.empty() && c.excluded.empty()) {
    const BenchmarkEntry* e = c.errored.front();
    return std::string("errored in ") + side + (e->error_message.empty() ? "" : ": " + e->error_message);
  }
  std::string why;
  for (const std::string& x : c.excluded) why += (why.empty() ? "" : "; ") + x;
  if (!c.errored.empty())
    why += "; " + std::to_string(c.errored.size()) + " errored (" + c.errored.front()->error_message + ")";
  return std::string("every repetition excluded in ") + side + " (" + why + ")";
}

// RETURNS: "2 of 3 repetitions counted in NEW (repetition 1: ...)" when some did not count.
std::string partial_note(const CaseEntries& c, const char* side) {
  if (c.iterations.empty() || c.counted.size() == c.iterations.size()) return "";
  std::string why;
  for (const std::string& x : c.excluded) why += (why.empty() ? "" : "; ") + x;
  for (const BenchmarkEntry* e : c.errored)
    why += (why.empty() ? "" : "; ") +
           ("repetition " + std::to_string(e->repetition_index) + " errored: " + e->error_message);
  return std::to_string(c.counted.size()) + " of " + std::to_string(c.iterations.size()) +
         " repetitions counted in " + side + " (" + why + ")";
}

// Sample coefficient of variation; 0 for fewer than two values or a zero mean.
double coefficient_of_variation(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double mean = 0;
  for (double x : v) mean += x;
  mean /= double(v.size());
  if (mean == 0) return 0;
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / double(v.size() - 1)) / std::fabs(mean);
}

// What the noise rule knows beyond a metric's own values.
struct NoiseContext {
  // The case is served from memory (page-cached, or samples from memory): its speed is the
  // CPU's share, which the host's load sets; a cold read waits on the device.
  bool from_memory = false;
  double load_delta = 0;  // |BASE - NEW| load per online core; 0 when either is unknown
  std::string load_text;  // "load per core 0.61 BASE, 1.48 NEW"
  // Either run had more runnable (or disk-waiting) tasks than cores: Linux's load average
  // counts both. Tails then measure the scheduler, not the storage.
  bool oversubscribed = false;
  double max_per_core = 0;  // the larger of the two runs' load per core
  // The two loads differ beyond the tolerance (loads_differ): equal loads, however high, were
  // the same on both sides and cannot explain a difference between them.
  bool loads_differ = false;
  double typical_cv = 0;  // the metric's median CV over the compared cases
  // Each BASE run's median of the metric, when several runs of BASE were given.
  std::vector<double> run_medians;
  // The case's figures depend on the CPU it gets (served from memory, or a loader, job or
  // replay, whose workers decode): other programs' share of the cores then sets them too.
  bool cpu_bound = false;
  // Both files recorded other_programs_cores: the share of the cores other programs took.
  bool other_known = false;
  double other_base_share = 0, other_new_share = 0;
  std::string other_text;  // "other programs took 0.1 of 2 cores BASE, 1.8 NEW"
};

// A share of the cores taken above this is counted as this: a figure that lost 90% of its CPU
// may have lost anything, and a band must stay finite to be read.
constexpr double kMaxOtherShare = 0.9;

// RETURNS: the band (log of a factor) other programs' share of the cores explains for a change
// that is `worse` (in the metric's direction) in NEW: a CPU-bound figure loses up to the share
// of the cores taken, so the busier side may be worse by up to (1 - lesser) / (1 - larger); a
// change the other way (the busier side better) is not explained. 0 when not known.
double other_programs_band(const NoiseContext& noise, bool worse) {
  if (!noise.cpu_bound || !noise.other_known) return 0;
  const double b = std::min(noise.other_base_share, kMaxOtherShare);
  const double n = std::min(noise.other_new_share, kMaxOtherShare);
  if (worse != (n > b)) return 0;
  return std::log((1 - std::min(b, n)) / (1 - std::max(b, n)));
}

// RETURNS: the band (log of a factor) the spread between BASE's runs explains: kRunSpreadFactor
// times the log of the largest ratio between two runs' medians; 0 with fewer than two.
double run_spread_band(const std::vector<double>& medians) {
  if (medians.size() < 2) return 0;
  const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
  if (!(*lo > 0)) return 0;
  return kRunSpreadFactor * std::log(*hi / *lo);
}

// The standard error of a median is about 1.25 sigma / sqrt(n); a difference of two medians
// within this many of them is what repetitions of an unchanged system show.
constexpr double kNoiseStandardErrors = 3;

MetricComparison judge(const CounterInfo& info, std::vector<double> base, std::vector<double> next,
                       const CompareOptions& options, const NoiseContext& noise) {
  MetricComparison m;
  m.metric = info.name;
  m.direction = info.direction;
  m.base_values = std::move(base);
  m.new_values = std::move(next);
  m.base_median = median(m.base_values);
  m.new_median = median(m.new_values);
  if (m.base_median != 0) m.change = (m.new_median - m.base_median) / std::fabs(m.base_median);
  else if (m.new_median != 0) m.change = std::copysign(std::numeric_limits<double>::infinity(), m.new_median);
  MannWhitneyResult test = mann_whitney_u(m.base_values, m.new_values);
  m.p = test.p;
  m.exact = test.exact;
  m.base_cv = coefficient_of_variation(m.base_values);
  m.new_cv = coefficient_of_variation(m.new_values);
  // When even complete separation cannot reach alpha the test has no say: threshold alone.
  m.weak = mann_whitney_min_p(m.base_values.size(), m.new_values.size()) > options.alpha;
  if (m.weak) m.repetitions_needed = repetitions_to_reach(options.alpha);
  // Below the floor a percentage says nothing (0.001 -> 0.013 is "+1200%" and 1.2 points).
  if (std::fabs(m.new_median - m.base_median) < info.floor) {
    m.below_floor = true;
    return m;
  }
  const bool significant = m.weak || m.p < options.alpha;
  const double signed_gain = direction_gain(info.direction, m.change);
  if (significant && signed_gain < -options.threshold) m.verdict = Verdict::kRegression;
  else if (significant && signed_gain > options.threshold) m.verdict = Verdict::kImprovement;
  m.base_run_medians = noise.run_medians;
  const double run_band = run_spread_band(noise.run_medians);
  m.run_spread = std::expm1(run_band / kRunSpreadFactor);
  if (!options.noise_rule) return m;
  // Bands are ratios, compared on a log scale: rates and times are positive and vary by
  // factors, so a 94% drop is a factor of 18 however wide the spread in percent.
  const double nb = double(m.base_values.size()), nn = double(m.new_values.size());
  m.typical_cv = noise.typical_cv;
  const double spread_band = kNoiseStandardErrors * 1.25 * std::max({m.base_cv, m.new_cv, m.typical_cv}) *
                             std::sqrt(1 / nb + 1 / nn);
  // Served from memory, a case runs at the CPU share the host leaves it: a load per core that
  // changed by d moves it by up to a factor 1 + d; on an oversubscribed host (L per core) by
  // up to a factor L. Only when the loads differ: a significant change between two equally
  // loaded runs is not the load's doing. A weak verdict has no test to go on, so there the
  // load still counts.
  const bool load_counts = noise.loads_differ || m.weak;
  double load_band = 0;
  if (noise.from_memory && load_counts) {
    load_band = std::log1p(noise.load_delta);
    if (noise.max_per_core > 1) load_band = std::max(load_band, std::log(noise.max_per_core));
  }
  const double other_band = other_programs_band(noise, signed_gain < 0);
  const double band = std::max({spread_band, load_band, run_band, other_band});
  m.noise_band = std::expm1(band);
  const double log_change = m.base_median > 0 && m.new_median > 0 ? std::log(m.new_median / m.base_median)
                                                                  : std::numeric_limits<double>::infinity();
  if (m.verdict == Verdict::kUnchanged) return m;
  char text[200];
  if (info.tail && noise.oversubscribed && load_counts) {
    std::snprintf(text, sizeof text, "a tail on an oversubscribed host (%s): it measures the scheduler",
                  noise.load_text.c_str());
  } else if (std::fabs(log_change) <= band) {
    if (band == spread_band)
      std::snprintf(text, sizeof text,
                    "spread: CV %.1f%% BASE, %.1f%% NEW, typical %.1f%% explains up to x%.2f",
                    100 * m.base_cv, 100 * m.new_cv, 100 * m.typical_cv, std::exp(spread_band));
    else if (band == run_band)
      std::snprintf(text, sizeof text,
                    "run to run: the %zu BASE runs' medians differ by up to x%.2f, so up to x%.2f",
                    noise.run_medians.size(), 1 + m.run_spread, std::exp(run_band));
    else if (band == other_band)
      std::snprintf(text, sizeof text, "%s: a CPU-bound figure loses up to that share, x%.2f",
                    noise.other_text.c_str(), std::exp(other_band));
    else
      std::snprintf(text, sizeof text, "host load (%s) explains up to x%.2f for a case served from memory",
                    noise.load_text.c_str(), std::exp(load_band));
  } else {
    return m;
  }
  m.why_noisy = text;
  m.verdict = Verdict::kNoisy;
  return m;
}

std::optional<nlohmann::json> lookup(const nlohmann::json& j, const std::string& pointer) {
  try {
    nlohmann::json::json_pointer ptr(pointer);
    if (!j.contains(ptr)) return std::nullopt;
    const nlohmann::json& v = j.at(ptr);
    if (v.is_null() || (v.is_string() && v.get<std::string>().empty())) return std::nullopt;
    return v;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

std::string show(const std::optional<nlohmann::json>& v) {
  if (!v) return "(absent)";
  return v->is_string() ? "\"" + v->get<std::string>() + "\"" : v->dump();
}

void compare_field(std::vector<std::string>* out, const std::string& label,
                   const std::optional<nlohmann::json>& a, const std::optional<nlohmann::json>& b) {
  if (!a && !b) return;
  if (a && b && *a == *b) return;
  out->push_back(label + " differs: BASE " + show(a) + ", NEW " + show(b));
}

std::optional<nlohmann::json> benchmark_version(const ResultDocument& d) {
  if (auto v = lookup(d.tool, "/benchmark_version")) return v;
  return lookup(d.context, "/library_version");
}

}  // namespace

namespace {

// Changes that make a run read other data, or in another order, and so look like a change of
// speed: each is named in its own line with what it means.

std::string short_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::optional<nlohmann::json> seed_of(const ResultDocument& d) {
  if (auto v = lookup(d.config, "/seed")) return v;
  if (!lookup(d.config, "/resolved")) return std::nullopt;
  if (auto v = lookup(d.config, "/resolved/defaults/seed")) return v;
  return nlohmann::json(42);  // what the plan uses when a config sets none
}

// RETURNS: the selection's globs (config.selection as run, else the config's dataset.include),
// or nullopt when the document says neither.
std::optional<std::vector<std::string>> selection_of(const ResultDocument& d) {
  std::optional<nlohmann::json> v = lookup(d.config, "/selection/include");
  if (!v) v = lookup(d.config, "/resolved/dataset/include");
  if (!v && lookup(d.config, "/resolved/dataset")) v = nlohmann::json::array();
  if (!v || !v->is_array()) return std::nullopt;
  std::vector<std::string> globs;
  for (const auto& g : *v)
    if (g.is_string()) globs.push_back(g.get<std::string>());
  return globs;
}

void named_change(std::vector<std::string>* out, const std::string& what,
                  const std::optional<nlohmann::json>& a, const std::optional<nlohmann::json>& b,
                  const std::string& meaning, const std::function<std::string(const nlohmann::json&)>& text) {
  if (!a || !b || *a == *b) return;
  out->push_back(what + ": " + text(*a) + " → " + text(*b) + ": " + meaning);
}

void data_changes(std::vector<std::string>* w, const ResultDocument& base, const ResultDocument& next) {
  named_change(w, "shuffle seed differs", seed_of(base), seed_of(next), "access order changed", short_text);
  if (auto a = selection_of(base), b = selection_of(next); a && b && *a != *b)
    w->push_back("selection differs: " + selection_text(*a) + " → " + selection_text(*b) +
                 ": another part of the data set was read");
  auto fingerprint = [](const nlohmann::json& v) { return short_text(v).substr(0, 12); };
  auto quoted = [](const nlohmann::json& v) { return "\"" + short_text(v) + "\""; };
  auto size = [](const nlohmann::json& v) {
    return v.is_number() ? format_size(v.get<double>()) : short_text(v);
  };
  named_change(w, "manifest label differs", lookup(base.dataset, "/cache/manifest/label"),
               lookup(next.dataset, "/cache/manifest/label"), "the cache holds another data version", quoted);
  for (const char* role : {"source", "cache"}) {
    const std::string r = std::string("/") + role;
    named_change(w, std::string(role) + " data set fingerprint differs",
                 lookup(base.dataset, r + "/fingerprint"), lookup(next.dataset, r + "/fingerprint"),
                 "different files were read (names, sizes or mtimes)", fingerprint);
    named_change(w, std::string(role) + " file count differs", lookup(base.dataset, r + "/files"),
                 lookup(next.dataset, r + "/files"), "a different amount of data was read", short_text);
    named_change(w, std::string(role) + " total bytes differ", lookup(base.dataset, r + "/bytes"),
                 lookup(next.dataset, r + "/bytes"), "a different amount of data was read", size);
    std::string sizes;
    for (const char* p : {"p50", "p90", "p99"}) {
      auto a = lookup(base.dataset, r + "/file_size/" + p);
      auto b = lookup(next.dataset, r + "/file_size/" + p);
      if (a && b && *a != *b)
        sizes += (sizes.empty() ? "" : ", ") + std::string(p) + " " + size(*a) + " → " + size(*b);
    }
    if (!sizes.empty())
      w->push_back(std::string(role) + " file sizes differ: " + sizes + ": reads per file changed");
    // Absent means not throttled, so a throttle added or removed is named too.
    auto ta = lookup(base.dataset, r + "/throttle_bytes_per_second");
    auto tb = lookup(next.dataset, r + "/throttle_bytes_per_second");
    if (ta != tb) {
      auto rate = [&](const std::optional<nlohmann::json>& v) {
        return v && v->is_number() ? format_rate(v->get<double>()) : std::string("none");
      };
      w->push_back(std::string(role) + " throttle differs: " + rate(ta) + " → " + rate(tb) +
                   ": a simulated storage speed changed, not the storage");
    }
  }
}

}  // namespace

std::vector<std::string> comparability_warnings(const ResultDocument& base, const ResultDocument& next) {
  std::vector<std::string> w;
  compare_field(&w, "config sha256", lookup(base.config, "/sha256"), lookup(next.config, "/sha256"));
  compare_field(&w, "feedbench version", lookup(base.tool, "/version"), lookup(next.tool, "/version"));
  compare_field(&w, "Google Benchmark version", benchmark_version(base), benchmark_version(next));
  compare_field(&w, "CPU model", lookup(base.environment, "/host/cpu_model"),
                lookup(next.environment, "/host/cpu_model"));
  compare_field(&w, "kernel", lookup(base.environment, "/host/kernel"),
                lookup(next.environment, "/host/kernel"));
  compare_field(&w, "instance type", lookup(base.environment, "/host/instance_type"),
                lookup(next.environment, "/host/instance_type"));
  std::set<std::string> roles;
  for (const ResultDocument* d : {&base, &next}) {
    auto paths = d->environment.find("paths");
    if (paths != d->environment.end() && paths->is_object())
      for (auto it = paths->begin(); it != paths->end(); ++it) roles.insert(it.key());
  }
  for (const std::string& role : roles)
    for (const char* field : {"fs_type", "device"}) {
      std::string ptr = "/paths/" + role + "/" + field;
      compare_field(&w, role + " path " + field, lookup(base.environment, ptr),
                    lookup(next.environment, ptr));
    }
  // A watched job that read its data from another folder (the store, then a cache of it): both
  // named, since the device and file system alone may not differ.
  for (const std::string& role : roles) {
    if (!role.starts_with("data")) continue;
    const std::string ptr = "/paths/" + role + "/resolved";
    const auto a = lookup(base.environment, ptr), b = lookup(next.environment, ptr);
    if (a && b && *a != *b)
      w.push_back(role + " path changed: " + short_text(*a) + " BASE, " + short_text(*b) + " NEW");
  }
  data_changes(&w, base, next);
  return w;
}

namespace {

void check_options(const CompareOptions& o) {
  if (!(o.threshold >= 0) || !std::isfinite(o.threshold))
    throw InputError("--threshold: expected a percentage >= 0");
  if (!(o.alpha > 0 && o.alpha < 1)) throw InputError("--alpha: expected a value in (0, 1)");
  for (const std::string& m : o.metrics)
    if (!find_metric(m)) {
      std::string known;
      for (const CounterInfo* k : judged_metrics()) known += std::string(known.empty() ? "" : ", ") + k->name;
      throw InputError("--metric " + m + ": unknown metric (known: " + known + ")");
    }
}

std::regex compile_case_pattern(const char* option, const std::string& text) {
  try {
    return std::regex(text, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw InputError(std::string(option) + " " + text + ": not a regular expression (" + e.what() + ")");
  }
}

// Drops, from both sides, the cases --include/--exclude leave out (matched on the case names).
// RETURNS: how many distinct cases were left out.
std::size_t filter_cases(Grouped* b, Grouped* n, const CompareOptions& o) {
  std::vector<std::regex> include, exclude;
  for (const std::string& x : o.include) include.push_back(compile_case_pattern("--include", x));
  for (const std::string& x : o.exclude) exclude.push_back(compile_case_pattern("--exclude", x));
  if (include.empty() && exclude.empty()) return 0;
  auto keep = [&](const std::string& name) {
    for (const std::regex& r : exclude)
      if (std::regex_search(name, r)) return false;
    if (include.empty()) return true;
    for (const std::regex& r : include)
      if (std::regex_search(name, r)) return true;
    return false;
  };
  std::set<std::string> dropped;
  for (Grouped* g : {b, n}) {
    std::vector<std::string> order;
    for (const std::string& id : g->order) {
      if (keep(g->cases.at(id).name)) {
        order.push_back(id);
      } else {
        dropped.insert(id);
        g->cases.erase(id);
      }
    }
    g->order = order;
  }
  return dropped.size();
}

// RETURNS: whether the case reads from memory: page-cached rounds, or the loader's samples
// from memory. Such a case measures the CPU's share as much as storage.
bool served_from_memory(const std::string& name) {
  for (const std::string& seg : split_segments(name))
    if (seg == "state:warm" || seg == "samples:memory") return true;
  return false;
}

// RETURNS: whether the case's figures depend on the CPU it gets: served from memory, or a
// loader, a watched job or a replay, whose workers decode what they read.
bool cpu_share_matters(const std::string& name) {
  const std::string family = family_of(name);
  return served_from_memory(name) || family == "loader" || family == "job" || family == "replay";
}

void check_match_ignore(const ResultDocument& base, const ResultDocument& next,
                        const std::vector<std::string>& ignore) {
  std::set<std::string> keys;
  for (const ResultDocument* d : {&base, &next})
    for (const BenchmarkEntry& e : d->benchmarks)
      for (const std::string& seg : split_segments(case_identity(e, {}))) {
        std::string k = segment_key(seg);
        if (!k.empty()) keys.insert(k);
      }
  for (const std::string& key : ignore)
    if (!keys.count(key)) {
      std::string seen;
      for (const std::string& k : keys) seen += (seen.empty() ? "" : ", ") + k;
      throw InputError("--match-ignore " + key + ": no case name has a key '" + key +
                       "' (keys in the case names: " + (seen.empty() ? "none" : seen) + ")");
    }
}

}  // namespace

std::vector<OutlierRepetition> outlier_repetitions(const ResultDocument& doc) {
  std::vector<OutlierRepetition> out;
  const Grouped g = group(doc, {});
  for (const std::string& id : g.order) {
    const CaseEntries& c = g.cases.at(id);
    bool from_aggregates = false;
    const std::vector<const BenchmarkEntry*> entries = judged_entries(c, &from_aggregates);
    const std::string family = family_of(c.name);
    for (const CounterInfo* info : judged_metrics()) {
      if (!gates_family(*info, family)) continue;
      for (OutlierRepetition& o : split_outliers(c.name, entries, *info).set_aside)
        out.push_back(std::move(o));
    }
  }
  return out;
}

ResultDocument replace_cases(ResultDocument next, const ResultDocument& rerun,
                             const std::vector<std::string>& ignore, std::vector<std::string>* replaced) {
  std::set<std::string> in_next, in_rerun;
  for (const BenchmarkEntry& e : next.benchmarks) in_next.insert(case_identity(e, ignore));
  for (const BenchmarkEntry& e : rerun.benchmarks) in_rerun.insert(case_identity(e, ignore));
  replaced->clear();
  for (const std::string& id : in_rerun)
    if (in_next.count(id)) replaced->push_back(id);
  if (replaced->empty())
    throw InputError("--rerun-result: the re-run has no case of NEW (" + std::to_string(in_rerun.size()) +
                     " cases in it)");
  // NEW's entries move, not copied: NEW may be as large as a result gets.
  std::vector<BenchmarkEntry> entries;
  for (BenchmarkEntry& e : next.benchmarks)
    if (!in_rerun.count(case_identity(e, ignore))) entries.push_back(std::move(e));
  for (const BenchmarkEntry& e : rerun.benchmarks)
    if (in_next.count(case_identity(e, ignore))) entries.push_back(e);
  next.benchmarks = std::move(entries);
  return next;
}

namespace {

// Per metric, the NEW/BASE ratio of medians of every compared case: the geometric means' input.
using MedianRatios = std::map<std::string, std::vector<double>>;

// RETURNS: `metrics` with repeats dropped, in the order given.
std::vector<std::string> without_repeats(const std::vector<std::string>& metrics) {
  std::vector<std::string> unique;
  for (const std::string& m : metrics)
    if (std::find(unique.begin(), unique.end(), m) == unique.end()) unique.push_back(m);
  return unique;
}

// RETURNS: what the noise rule knows of the two runs' host load: nothing unless both files
// recorded it.
NoiseContext load_noise_of(const HostLoad& base, const HostLoad& next) {
  NoiseContext load_noise;
  if (base.known && next.known) {
    load_noise.load_delta = std::fabs(base.per_core() - next.per_core());
    char text[96];
    std::snprintf(text, sizeof text, "load per core %.2f BASE, %.2f NEW", base.per_core(), next.per_core());
    load_noise.load_text = text;
    load_noise.max_per_core = std::max(base.per_core(), next.per_core());
    load_noise.oversubscribed = load_noise.max_per_core >= 1;
    load_noise.loads_differ = loads_differ(base, next);
  }
  if (base.other_known && next.other_known) {
    load_noise.other_known = true;
    load_noise.other_base_share = base.other_share();
    load_noise.other_new_share = next.other_share();
    load_noise.other_text =
        "other programs took " + format_printf("%.1f", base.other_cores) + " of " +
        format_printf("%g", base.cores) + " cores BASE, " + format_printf("%.1f", next.other_cores) +
        (next.cores == base.cores ? "" : " of " + format_printf("%g", next.cores)) + " NEW";
  }
  return load_noise;
}

// A diff with no case in common has nothing to judge: refused, with an example of each side.
void check_common_case(const Grouped& b, const Grouped& n, const std::string& base_file,
                       const std::string& new_file) {
  std::size_t common = 0;
  for (const std::string& id : b.order) common += n.cases.count(id);
  if (common == 0)
    throw InputError(base_file + " and " + new_file + " have no case in common (BASE: " +
                     std::to_string(b.order.size()) + " cases, e.g. " + b.order.front() +
                     "; NEW: " + std::to_string(n.order.size()) + " cases, e.g. " + n.order.front() + ")");
}

// BASE's case `bc` is not in NEW: removed, or, when BASE measured nothing of it either, errored
// or cache not achieved, not in NEW.
void mark_removed(const CaseEntries& bc, CaseComparison* c) {
  c->status = CaseStatus::kRemoved;
  if (std::string note = nothing_counted_note(bc, "BASE"); !note.empty()) {
    c->status = bc.excluded.empty() ? CaseStatus::kErrored : CaseStatus::kCacheNotAchieved;
    c->note = note + "; not in NEW";
  }
}

// RETURNS: whether a case both files hold cannot be judged (nothing counted on a side, or a
// loader run too short); c's status and note then say why.
bool mark_unjudgeable(const CaseEntries& bc, const CaseEntries& nc, CaseComparison* c) {
  // BASE measured nothing: there is no baseline to judge against, nor to miss.
  if (std::string note = nothing_counted_note(bc, "BASE"); !note.empty()) {
    c->status = bc.excluded.empty() ? CaseStatus::kErrored : CaseStatus::kCacheNotAchieved;
    c->note = note;
    return true;
  }
  // NEW measured nothing where BASE has a figure: as missing as an absent case.
  if (std::string note = nothing_counted_note(nc, "NEW"); !note.empty()) {
    c->status = CaseStatus::kNotMeasured;
    c->note = note;
    return true;
  }
  // A loader run too short to judge (its console said so): its AU is no figure to gate on.
  std::string short_run = too_few_steps_note(bc, "BASE");
  if (short_run.empty()) short_run = too_few_steps_note(nc, "NEW");
  if (!short_run.empty()) {
    c->status = CaseStatus::kTooFewSteps;
    c->note = short_run;
    return true;
  }
  return false;
}

// Per case identity and metric, each BASE run's median (with several runs of BASE).
using RunMedians = std::map<std::string, std::map<std::string, std::vector<double>>>;

// RETURNS: per case identity and judged metric, each run's median of its counted repetitions
// (outliers set aside), in run order; nothing with fewer than two runs.
RunMedians run_medians_of(const std::vector<const ResultDocument*>& runs,
                          const std::vector<std::string>& ignore) {
  RunMedians out;
  if (runs.size() < 2) return out;
  for (const ResultDocument* run : runs) {
    const Grouped g = group(*run, ignore);
    for (const std::string& id : g.order) {
      const CaseEntries& c = g.cases.at(id);
      bool from_aggregates = false;
      const std::vector<const BenchmarkEntry*> entries = judged_entries(c, &from_aggregates);
      for (const CounterInfo* info : judged_metrics())
        if (SideValues v = split_outliers(c.name, entries, *info); !v.kept.empty())
          out[id][info->name].push_back(median(v.kept));
    }
  }
  return out;
}

// What judging one case needs besides its entries: the same for every case of a comparison.
struct JudgingContext {
  const std::vector<std::string>& all_metrics;  // every metric a case may be judged on, in order
  const CompareOptions& options;
  const NoiseContext& load_noise;
  const RunMedians& run_medians;  // empty with one run of BASE
  const std::string& base_file;   // the files, as messages name them
  const std::string& new_file;
};

void add_note(CaseComparison* c, const std::string& note) {
  if (!note.empty()) c->note += (c->note.empty() ? "" : "; ") + note;
}

// RETURNS: "bytes_per_second missing in NEW (new.json)", or "... missing in 1 of 3 repetitions
// of NEW (new.json)" when `lacking` of the `judged` entries lack it.
std::string missing_metric_note(const std::string& metric, std::size_t lacking, std::size_t judged,
                                const std::string& new_file) {
  if (lacking == judged) return metric + " missing in NEW (" + new_file + ")";
  return metric + " missing in " + std::to_string(lacking) + " of " + std::to_string(judged) +
         " repetitions of NEW (" + new_file + ")";
}

// Judges a case both files measured on each of ctx.all_metrics that gates its family (or that
// options.metrics names), into c->metrics; notes repetitions that did not count, a side judged
// on its aggregate, and a metric one side lacks: BASE's that NEW lacks (absent, or null as a
// NaN is written) go to c->missing_metrics, as missing as an absent case; one only NEW has is
// not judged. Adds each metric's ratio of medians to `ratios`.
void judge_case(const CaseEntries& bc, const CaseEntries& nc, const JudgingContext& ctx, CaseComparison* c,
                MedianRatios* ratios) {
  for (const std::string& note : {partial_note(bc, "BASE"), partial_note(nc, "NEW")}) add_note(c, note);
  bool base_agg = false, new_agg = false;
  auto be = judged_entries(bc, &base_agg);
  auto ne = judged_entries(nc, &new_agg);
  if (base_agg || new_agg)
    add_note(c, std::string("judged on the ") + (base_agg ? "BASE" : "") +
                    (base_agg && new_agg ? " and " : "") + (new_agg ? "NEW" : "") +
                    " aggregate: no per-repetition values");
  const std::string family = family_of(bc.name);
  NoiseContext noise = ctx.load_noise;
  noise.from_memory = served_from_memory(bc.name);
  noise.cpu_bound = cpu_share_matters(bc.name);
  const auto run_medians = ctx.run_medians.find(c->identity);
  // The family's primary counter (the loader's AU) leads its case's lines.
  std::vector<std::string> metrics = ctx.all_metrics;
  std::stable_partition(metrics.begin(), metrics.end(),
                        [&](const std::string& m) { return m == primary_counter(family); });
  for (const std::string& metric : metrics) {
    const CounterInfo& info = *find_metric(metric);
    if (ctx.options.metrics.empty() && !gates_family(info, family)) continue;
    SideValues bv = split_outliers(bc.name, be, info), nv = split_outliers(nc.name, ne, info);
    if (bv.count() > 0 && nv.count() < ne.size()) {
      c->missing_metrics.push_back(metric);
      add_note(c, missing_metric_note(metric, ne.size() - nv.count(), ne.size(), ctx.new_file));
    } else if (bv.count() == 0 && nv.count() > 0) {
      add_note(c, metric + " not in BASE (" + ctx.base_file + "): not judged");
    }
    if (bv.count() == 0 || nv.count() == 0) continue;
    noise.run_medians.clear();
    if (run_medians != ctx.run_medians.end())
      if (auto r = run_medians->second.find(metric); r != run_medians->second.end())
        noise.run_medians = r->second;
    MetricComparison m = judge(info, std::move(bv.kept), std::move(nv.kept), ctx.options, noise);
    m.base_set_aside = std::move(bv.set_aside);
    m.new_set_aside = std::move(nv.set_aside);
    if (m.base_median > 0 && m.new_median > 0) (*ratios)[metric].push_back(m.new_median / m.base_median);
    c->metrics.push_back(std::move(m));
  }
  if (c->metrics.empty() && !c->missing_metrics.empty()) {
    c->status = CaseStatus::kNotMeasured;  // NEW has none of what BASE judges the case on
  } else if (c->metrics.empty()) {
    c->status = CaseStatus::kNoMetrics;
    add_note(c, "none of the judged metrics is in both files");
  }
}

// RETURNS: the comparison of BASE's case `id` (entries `bc`) with NEW's of the same identity.
CaseComparison compare_case(const std::string& id, const CaseEntries& bc, const Grouped& n,
                            const JudgingContext& ctx, MedianRatios* ratios) {
  CaseComparison c;
  c.identity = id;
  c.base_name = bc.name;
  auto found = n.cases.find(id);
  if (found == n.cases.end()) {
    mark_removed(bc, &c);
    return c;
  }
  const CaseEntries& nc = found->second;
  c.new_name = nc.name;
  if (!mark_unjudgeable(bc, nc, &c)) judge_case(bc, nc, ctx, &c, ratios);
  return c;
}

// Second look, with each metric's typical spread over all compared cases: three repetitions
// can look tight by chance; the run's other cases say how much rounds vary here.
void judge_with_typical_spread(const NoiseContext& load_noise, Comparison* out) {
  std::map<std::string, std::vector<double>> cvs;
  for (const CaseComparison& c : out->cases)
    for (const MetricComparison& m : c.metrics)
      if (m.base_values.size() > 1 && m.new_values.size() > 1) {
        cvs[m.metric].push_back(m.base_cv);
        cvs[m.metric].push_back(m.new_cv);
      }
  for (CaseComparison& c : out->cases) {
    NoiseContext noise = load_noise;
    noise.from_memory = served_from_memory(c.base_name);
    noise.cpu_bound = cpu_share_matters(c.base_name);
    for (MetricComparison& m : c.metrics) {
      noise.run_medians = m.base_run_medians;
      auto it = cvs.find(m.metric);
      noise.typical_cv = it == cvs.end() ? 0 : median(it->second);
      MetricComparison again =
          judge(*find_metric(m.metric), m.base_values, m.new_values, out->options, noise);
      again.base_set_aside = std::move(m.base_set_aside);
      again.new_set_aside = std::move(m.new_set_aside);
      m = std::move(again);
    }
  }
}

// RETURNS: NEW's cases that BASE lacks, as added, in NEW's order.
std::vector<CaseComparison> added_cases(const Grouped& b, const Grouped& n) {
  std::vector<CaseComparison> out;
  for (const std::string& id : n.order) {
    if (b.cases.count(id)) continue;
    CaseComparison c;
    c.identity = id;
    c.new_name = n.cases.at(id).name;
    c.status = CaseStatus::kAdded;
    out.push_back(std::move(c));
  }
  return out;
}

// RETURNS: per metric with a ratio, in `all_metrics` order, the geometric mean of its ratios.
std::vector<GeomeanSummary> geomeans_of(const std::vector<std::string>& all_metrics,
                                        const MedianRatios& ratios) {
  std::vector<GeomeanSummary> out;
  for (const std::string& metric : all_metrics) {
    auto it = ratios.find(metric);
    if (it == ratios.end()) continue;
    out.push_back({metric, find_metric(metric)->direction, geometric_mean(it->second), it->second.size()});
  }
  return out;
}

}  // namespace

Comparison compare_results(const ResultDocument& base, const ResultDocument& next,
                           const CompareOptions& options, const std::string& base_file,
                           const std::string& new_file) {
  return compare_results(std::vector<const ResultDocument*>{&base}, next, options, {base_file}, new_file);
}

namespace {

// RETURNS: the runs of BASE as one document: the first's, with every later run's entries after
// its own; `pooled` holds it when there are several, else the first run is used as it is.
const ResultDocument& pool_runs(const std::vector<const ResultDocument*>& runs, ResultDocument* pooled) {
  if (runs.size() == 1) return *runs.front();
  *pooled = *runs.front();
  for (std::size_t i = 1; i < runs.size(); ++i)
    pooled->benchmarks.insert(pooled->benchmarks.end(), runs[i]->benchmarks.begin(),
                              runs[i]->benchmarks.end());
  return *pooled;
}

// Adds the warnings that a later run of BASE is not comparable with the first, each named so.
void base_runs_warnings(const std::vector<const ResultDocument*>& runs, const std::vector<std::string>& files,
                        std::vector<std::string>* out) {
  for (std::size_t i = 1; i < runs.size(); ++i)
    for (const std::string& w : comparability_warnings(*runs.front(), *runs[i]))
      out->push_back("BASE run " + std::to_string(i + 1) + " (" + files[i] + ") against BASE run 1: " + w);
}

}  // namespace

Comparison compare_results(const std::vector<const ResultDocument*>& base_runs, const ResultDocument& next,
                           const CompareOptions& options, const std::vector<std::string>& base_files,
                           const std::string& new_file) {
  FB_CHECK(!base_runs.empty() && base_runs.size() == base_files.size(), "one file name per BASE run");
  check_options(options);
  ResultDocument pooled;
  const ResultDocument& base = pool_runs(base_runs, &pooled);
  check_match_ignore(base, next, options.match_ignore);
  for (std::size_t i = 0; i < base_runs.size(); ++i)
    if (base_runs[i]->benchmarks.empty())
      throw InputError(base_files[i] + ": /benchmarks: no benchmark entries");
  if (next.benchmarks.empty()) throw InputError(new_file + ": /benchmarks: no benchmark entries");

  Comparison out;
  out.base_file = base_files.front();
  out.base_files = base_files;
  out.new_file = new_file;
  out.options = options;
  out.options.metrics = without_repeats(out.options.metrics);
  out.warnings = comparability_warnings(*base_runs.front(), next);
  base_runs_warnings(base_runs, base_files, &out.warnings);

  Grouped b = group(base, options.match_ignore);
  Grouped n = group(next, options.match_ignore);
  out.excluded_cases = filter_cases(&b, &n, options);
  if (b.order.empty() || n.order.empty())
    throw InputError("--include/--exclude left no case to compare (" + std::to_string(out.excluded_cases) +
                     " left out)");
  std::vector<HostLoad> loads;
  for (const ResultDocument* run : base_runs) loads.push_back(host_load(*run));
  out.base_load = mean_host_load(loads);
  out.new_load = host_load(next);
  const NoiseContext load_noise = load_noise_of(out.base_load, out.new_load);
  // Without --metric: per family, the metrics the table says gate it, in table order.
  std::vector<std::string> all_metrics = out.options.metrics;
  if (all_metrics.empty())
    for (const CounterInfo* m : judged_metrics()) all_metrics.push_back(m->name);
  check_common_case(b, n, base_files.front(), new_file);

  MedianRatios ratios;
  const RunMedians run_medians = run_medians_of(base_runs, options.match_ignore);
  const JudgingContext ctx{all_metrics, out.options, load_noise, run_medians, base_files.front(), new_file};
  for (const std::string& id : b.order)
    out.cases.push_back(compare_case(id, b.cases.at(id), n, ctx, &ratios));
  if (out.options.noise_rule) judge_with_typical_spread(load_noise, &out);
  for (CaseComparison& c : added_cases(b, n)) out.cases.push_back(std::move(c));
  out.geomeans = geomeans_of(all_metrics, ratios);
  return out;
}

}  // namespace feedbench
