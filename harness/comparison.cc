// BASE against NEW: match cases by identity, judge each metric on the median of repetitions
// and a Mann-Whitney U test, and say where the two runs are not comparable.
#include "feedbench/comparison.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "feedbench/error.h"
#include "feedbench/statistics.h"

namespace feedbench {

const std::vector<MetricInfo>& known_metrics() {
  using D = Direction;
  static const std::vector<MetricInfo> metrics = {
      {"bytes_per_second", D::kHigherIsBetter, true},
      {"items_per_second", D::kHigherIsBetter, true},
      {"files_per_second", D::kHigherIsBetter, false},
      {"samples_per_second", D::kHigherIsBetter, true},
      {"au", D::kHigherIsBetter, false},
      {"lat_p50_us", D::kLowerIsBetter, false},
      {"lat_p90_us", D::kLowerIsBetter, false},
      {"lat_p99_us", D::kLowerIsBetter, true},
      {"lat_p999_us", D::kLowerIsBetter, false},
      {"lat_max_us", D::kLowerIsBetter, false},
      {"real_time", D::kLowerIsBetter, false},
      {"wait_p50_ms", D::kLowerIsBetter, false},
      {"wait_p90_ms", D::kLowerIsBetter, false},
      {"wait_p99_ms", D::kLowerIsBetter, false},
      {"stall_fraction", D::kLowerIsBetter, true},
      {"epoch_s", D::kLowerIsBetter, false},
  };
  return metrics;
}

const MetricInfo* find_metric(const std::string& name) {
  for (const MetricInfo& m : known_metrics())
    if (name == m.name) return &m;
  return nullptr;
}

bool CaseComparison::regressed() const {
  return std::any_of(metrics.begin(), metrics.end(),
                     [](const MetricComparison& m) { return m.verdict == Verdict::kRegression; });
}

bool CaseComparison::improved() const {
  return !regressed() &&
         std::any_of(metrics.begin(), metrics.end(),
                     [](const MetricComparison& m) { return m.verdict == Verdict::kImprovement; });
}

std::size_t Comparison::regressions() const {
  return static_cast<std::size_t>(
      std::count_if(cases.begin(), cases.end(), [](const CaseComparison& c) { return c.regressed(); }));
}

std::size_t Comparison::improvements() const {
  return static_cast<std::size_t>(
      std::count_if(cases.begin(), cases.end(), [](const CaseComparison& c) { return c.improved(); }));
}

bool CaseComparison::missing() const {
  return status == CaseStatus::kRemoved || status == CaseStatus::kNotMeasured;
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

std::string case_identity(const BenchmarkEntry& entry, const std::vector<std::string>& ignore) {
  const bool canonical = !entry.case_name.empty() && entry.case_name != entry.run_name;
  std::string name = !entry.case_name.empty() ? entry.case_name
                     : !entry.run_name.empty() ? entry.run_name
                                               : entry.name;
  std::string out;
  for (const std::string& seg : split_segments(name)) {
    if (!canonical && is_decoration(seg)) continue;
    std::string key = segment_key(seg);
    if (!key.empty() && std::find(ignore.begin(), ignore.end(), key) != ignore.end()) continue;
    out += out.empty() ? seg : "/" + seg;
  }
  return out;
}

namespace {

// Every entry of one case in one document; its repetitions sorted by whether they count.
struct CaseEntries {
  std::string name;
  std::vector<const BenchmarkEntry*> iterations, aggregates;
  std::vector<const BenchmarkEntry*> counted;        // neither errored nor excluded
  std::vector<std::string> excluded;                 // "repetition 2: cold not achieved: ..."
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

double time_to_ns(double value, const std::string& unit) {
  if (unit == "ns") return value;
  if (unit == "us") return value * 1e3;
  if (unit == "ms") return value * 1e6;
  if (unit == "s") return value * 1e9;
  return value;
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

std::vector<double> values_of(const std::vector<const BenchmarkEntry*>& entries,
                              const std::string& metric) {
  std::vector<double> out;
  for (const BenchmarkEntry* e : entries)
    if (auto v = metric_value(*e, metric)) out.push_back(*v);
  return out;
}

// RETURNS: why nothing of the case counts in this file ("" when something does).
std::string nothing_counted_note(const CaseEntries& c, const char* side) {
  if (!c.counted.empty() || (c.iterations.empty() && !c.aggregates.empty())) return "";
  if (c.iterations.empty()) return std::string("no entries in ") + side;
  if (!c.errored.empty() && c.excluded.empty()) {
    const BenchmarkEntry* e = c.errored.front();
    return std::string("errored in ") + side +
           (e->error_message.empty() ? "" : ": " + e->error_message);
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
    why += (why.empty() ? "" : "; ") + ("repetition " + std::to_string(e->repetition_index) +
                                        " errored: " + e->error_message);
  return std::to_string(c.counted.size()) + " of " + std::to_string(c.iterations.size()) +
         " repetitions counted in " + side + " (" + why + ")";
}

MetricComparison judge(const std::string& metric, Direction direction, std::vector<double> base,
                       std::vector<double> next, const CompareOptions& options) {
  MetricComparison m;
  m.metric = metric;
  m.direction = direction;
  m.base_values = std::move(base);
  m.new_values = std::move(next);
  m.base_median = median(m.base_values);
  m.new_median = median(m.new_values);
  if (m.base_median != 0)
    m.change = (m.new_median - m.base_median) / std::fabs(m.base_median);
  else if (m.new_median != 0)
    m.change = std::copysign(std::numeric_limits<double>::infinity(), m.new_median);
  MannWhitneyResult test = mann_whitney_u(m.base_values, m.new_values);
  m.p = test.p;
  m.exact = test.exact;
  // When even complete separation cannot reach alpha the test has no say: threshold alone.
  m.weak = mann_whitney_min_p(m.base_values.size(), m.new_values.size()) > options.alpha;
  if (m.weak) m.repetitions_needed = repetitions_to_reach(options.alpha);
  const bool significant = m.weak || m.p < options.alpha;
  const double signed_gain = direction == Direction::kHigherIsBetter ? m.change : -m.change;
  if (significant && signed_gain < -options.threshold)
    m.verdict = Verdict::kRegression;
  else if (significant && signed_gain > options.threshold)
    m.verdict = Verdict::kImprovement;
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

std::vector<std::string> comparability_warnings(const ResultDocument& base,
                                                const ResultDocument& next) {
  std::vector<std::string> w;
  compare_field(&w, "config sha256", lookup(base.config, "/sha256"), lookup(next.config, "/sha256"));
  compare_field(&w, "source dataset fingerprint", lookup(base.dataset, "/source/fingerprint"),
                lookup(next.dataset, "/source/fingerprint"));
  compare_field(&w, "cache dataset fingerprint", lookup(base.dataset, "/cache/fingerprint"),
                lookup(next.dataset, "/cache/fingerprint"));
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
      for (const MetricInfo& k : known_metrics()) known += std::string(known.empty() ? "" : ", ") + k.name;
      throw InputError("--metric " + m + ": unknown metric (known: " + known + ")");
    }
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

Comparison compare_results(const ResultDocument& base, const ResultDocument& next,
                           const CompareOptions& options, const std::string& base_file,
                           const std::string& new_file) {
  check_options(options);
  check_match_ignore(base, next, options.match_ignore);
  for (auto [doc, file] : {std::pair{&base, &base_file}, std::pair{&next, &new_file}})
    if (doc->benchmarks.empty()) throw InputError(*file + ": /benchmarks: no benchmark entries");

  Comparison out;
  out.base_file = base_file;
  out.new_file = new_file;
  out.options = options;
  if (out.options.metrics.empty())
    for (const MetricInfo& m : known_metrics())
      if (m.judged_by_default) out.options.metrics.push_back(m.name);
  {  // drop duplicates, keep the order given
    std::vector<std::string> unique;
    for (const std::string& m : out.options.metrics)
      if (std::find(unique.begin(), unique.end(), m) == unique.end()) unique.push_back(m);
    out.options.metrics = unique;
  }
  out.warnings = comparability_warnings(base, next);

  Grouped b = group(base, options.match_ignore);
  Grouped n = group(next, options.match_ignore);
  std::size_t common = 0;
  for (const std::string& id : b.order) common += n.cases.count(id);
  if (common == 0)
    throw InputError(base_file + " and " + new_file + " have no case in common (BASE: " +
                     std::to_string(b.order.size()) + " cases, e.g. " + b.order.front() +
                     "; NEW: " + std::to_string(n.order.size()) + " cases, e.g. " +
                     n.order.front() + ")");

  std::map<std::string, std::vector<double>> ratios;
  for (const std::string& id : b.order) {
    const CaseEntries& bc = b.cases.at(id);
    CaseComparison c;
    c.identity = id;
    c.base_name = bc.name;
    auto found = n.cases.find(id);
    if (found == n.cases.end()) {
      c.status = CaseStatus::kRemoved;
      if (std::string note = nothing_counted_note(bc, "BASE"); !note.empty()) {
        c.status = bc.excluded.empty() ? CaseStatus::kErrored : CaseStatus::kCacheNotAchieved;
        c.note = note + "; not in NEW";
      }
      out.cases.push_back(std::move(c));
      continue;
    }
    const CaseEntries& nc = found->second;
    c.new_name = nc.name;
    // BASE measured nothing: there is no baseline to judge against, nor to miss.
    if (std::string note = nothing_counted_note(bc, "BASE"); !note.empty()) {
      c.status = bc.excluded.empty() ? CaseStatus::kErrored : CaseStatus::kCacheNotAchieved;
      c.note = note;
      out.cases.push_back(std::move(c));
      continue;
    }
    // NEW measured nothing where BASE has a figure: as missing as an absent case.
    if (std::string note = nothing_counted_note(nc, "NEW"); !note.empty()) {
      c.status = CaseStatus::kNotMeasured;
      c.note = note;
      out.cases.push_back(std::move(c));
      continue;
    }
    for (const std::string& note : {partial_note(bc, "BASE"), partial_note(nc, "NEW")})
      if (!note.empty()) c.note += (c.note.empty() ? "" : "; ") + note;
    bool base_agg = false, new_agg = false;
    auto be = judged_entries(bc, &base_agg);
    auto ne = judged_entries(nc, &new_agg);
    if (base_agg || new_agg)
      c.note += std::string(c.note.empty() ? "" : "; ") + "judged on the " + (base_agg ? "BASE" : "") +
                (base_agg && new_agg ? " and " : "") + (new_agg ? "NEW" : "") +
                " aggregate: no per-repetition values";
    for (const std::string& metric : out.options.metrics) {
      std::vector<double> bv = values_of(be, metric), nv = values_of(ne, metric);
      if (bv.empty() || nv.empty()) continue;
      MetricComparison m =
          judge(metric, find_metric(metric)->direction, std::move(bv), std::move(nv), out.options);
      if (m.base_median > 0 && m.new_median > 0) ratios[metric].push_back(m.new_median / m.base_median);
      c.metrics.push_back(std::move(m));
    }
    if (c.metrics.empty()) {
      c.status = CaseStatus::kNoMetrics;
      c.note += std::string(c.note.empty() ? "" : "; ") + "none of the judged metrics is in both files";
    }
    out.cases.push_back(std::move(c));
  }
  for (const std::string& id : n.order) {
    if (b.cases.count(id)) continue;
    CaseComparison c;
    c.identity = id;
    c.new_name = n.cases.at(id).name;
    c.status = CaseStatus::kAdded;
    out.cases.push_back(std::move(c));
  }
  for (const std::string& metric : out.options.metrics) {
    auto it = ratios.find(metric);
    if (it == ratios.end()) continue;
    out.geomeans.push_back(
        {metric, find_metric(metric)->direction, geometric_mean(it->second), it->second.size()});
  }
  return out;
}

}  // namespace feedbench
