#include "csv_writer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "case_view.h"
#include "feedbench/results/counters.h"

namespace feedbench {

namespace {

// Every parameter of file_read, loader and stage, in the order a reader scans them.
const std::vector<std::string> kParamOrder = {
    "pattern",          "block_size",  "engine",     "queue_depth", "workers",
    "cache_state",      "path",        "batch_size", "prefetch",    "step_time",
    "transform",        "samples",     "epochs",     "steps",       "warmup_steps",
    "accelerators",     "target_au",   "verify",     "sink",        "shuffle_buffer",
    "verify_crc",       "accelerator", "overlap",    "handover",    "next_cost",
    "next_cost_per_mib"};

// The counters' columns in the counter table's order (feedbench/results/counters.h); real_time has a
// column of its own.
const std::vector<std::string>& counter_order() {
  static const std::vector<std::string> order = [] {
    std::vector<std::string> out;
    for (const CounterInfo& c : known_counters())
      if (c.unit != CounterUnit::kNanoseconds) out.push_back(c.name);
    return out;
  }();
  return order;
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// Numbers as JSON writes them (shortest text that reads back exactly), strings quoted.
std::string cell(const nlohmann::json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return quote(v.get<std::string>());
  if (v.is_number() || v.is_boolean()) return v.dump();
  return quote(v.dump());  // a structured parameter (a transform spec)
}

// NaN and infinities have no JSON text: an empty cell, as a missing value.
std::string number(double v) { return std::isfinite(v) ? nlohmann::json(v).dump() : std::string(); }

std::vector<std::string> with_extras(const std::vector<std::string>& fixed,
                                     const std::set<std::string>& seen) {
  std::vector<std::string> out = fixed;
  for (const std::string& key : seen)
    if (std::find(fixed.begin(), fixed.end(), key) == fixed.end()) out.push_back(key);
  return out;
}

}  // namespace

std::vector<std::string> param_columns(const ResultDocument& doc) {
  std::set<std::string> seen;
  for (const BenchmarkEntry& e : doc.benchmarks)
    if (e.params.is_object())
      for (const auto& [key, _] : e.params.items())
        if (key != "family") seen.insert(key);
  return with_extras(kParamOrder, seen);
}

std::vector<std::string> counter_columns(const ResultDocument& doc) {
  std::set<std::string> seen;
  for (const BenchmarkEntry& e : doc.benchmarks)
    for (const auto& [key, _] : e.counters) seen.insert(key);
  return with_extras(counter_order(), seen);
}

std::string format_csv(const ResultDocument& doc) {
  const std::vector<std::string> params = param_columns(doc);
  const std::vector<std::string> counters = counter_columns(doc);
  std::string out = "case,family";
  for (const std::string& p : params) out += "," + p;
  out += ",repetition_index,run_type,aggregate_name,real_time,time_unit";
  for (const std::string& c : counters) out += "," + c;
  out += ",error,excluded,achieved_repetitions\n";

  auto leading = [&](const std::string& name, const std::string& family, const auto& values) {
    std::string row = quote(name) + "," + quote(family);
    for (const std::string& p : params)
      row +=
          "," + (values.is_object() && values.contains(p) ? cell(nlohmann::json(values[p])) : std::string());
    return row;
  };
  std::map<std::string, std::vector<const BenchmarkEntry*>> repetitions;
  for (const BenchmarkEntry& e : doc.benchmarks)
    if (e.run_type != "aggregate") repetitions[case_key(e)].push_back(&e);

  // Per case: its repetitions as they ran, then one "case" row with the fold's figures (the
  // median of the achieved repetitions). Google Benchmark's aggregates are left out: they
  // are computed over every repetition, excluded ones included.
  for (const CaseView& c : fold_cases(doc)) {
    for (const BenchmarkEntry* e : repetitions[c.name]) {
      std::string row = leading(c.name, c.family, e->params);
      row += "," + std::to_string(e->repetition_index);
      row += "," + quote(e->run_type) + "," + quote(e->aggregate_name);
      row += "," + number(e->real_time) + "," + quote(e->time_unit);
      for (const std::string& k : counters) {
        auto v = e->counter(k);
        row += "," + (v ? number(*v) : std::string());
      }
      row += "," + (e->error_occurred ? quote(e->error_message) : std::string());
      const std::string why = e->error_occurred ? std::string() : exclusion_reason(*e);
      row += "," + (why.empty() ? std::string() : quote(why)) + ",";
      out += row + "\n";
    }
    std::string row = leading(c.name, c.family, c.params);
    row += ",," + quote("case") + "," + quote(c.from_aggregate ? "median" : "median_of_achieved");
    row += "," + (c.measured() ? number(c.real_time) : std::string()) + "," + quote(c.time_unit);
    for (const std::string& k : counters) {
      auto v = c.counter(k);
      row += "," + (v ? number(*v) : std::string());
    }
    row += "," + (c.errors.empty() ? std::string() : quote(c.errors.front()));
    row += "," + (c.excluded.empty() ? std::string() : quote(c.exclusion_note()));
    row += "," + std::to_string(c.achieved);
    out += row + "\n";
  }
  return out;
}

void write_csv(const ResultDocument& doc, const std::string& path) {
  write_file_atomically(path, format_csv(doc));
}

}  // namespace feedbench
