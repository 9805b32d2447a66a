#include "csv_writer.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace feedbench {

namespace {

// Every parameter of file_read, loader and stage, in the order a reader scans them.
const std::vector<std::string> kParamOrder = {
    "pattern",  "block_size", "engine",  "queue_depth", "workers",      "cache_state",
    "path",     "batch_size", "prefetch", "step_time",  "transform",    "samples",
    "epochs",   "steps",      "warmup_steps", "accelerators", "target_au", "verify"};

const std::vector<std::string> kCounterOrder = {
    "bytes_per_second", "items_per_second", "files_per_second", "lat_p50_us",  "lat_p90_us",
    "lat_p99_us",       "lat_p999_us",      "lat_max_us",       "residency_before", "cpu_util",
    "samples_per_second", "steps",          "epoch_s",          "wait_p50_ms", "wait_p90_ms",
    "wait_p99_ms",      "wait_max_ms",      "stall_fraction",   "au"};

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
  return with_extras(kCounterOrder, seen);
}

std::string format_csv(const ResultDocument& doc) {
  const std::vector<std::string> params = param_columns(doc);
  const std::vector<std::string> counters = counter_columns(doc);
  std::string out = "case,family";
  for (const std::string& p : params) out += "," + p;
  out += ",repetition_index,run_type,aggregate_name,real_time,time_unit";
  for (const std::string& c : counters) out += "," + c;
  out += ",error\n";
  for (const BenchmarkEntry& e : doc.benchmarks) {
    std::string family;
    if (e.params.is_object() && e.params.contains("family") && e.params["family"].is_string())
      family = e.params["family"].get<std::string>();
    else
      family = e.case_name.substr(0, e.case_name.find('/'));
    std::string row = quote(e.case_name) + "," + quote(family);
    for (const std::string& p : params)
      row += "," + (e.params.is_object() && e.params.contains(p)
                        ? cell(nlohmann::json(e.params[p]))
                        : std::string());
    row += "," + (e.run_type == "iteration" ? std::to_string(e.repetition_index) : std::string());
    row += "," + quote(e.run_type) + "," + quote(e.aggregate_name);
    row += "," + number(e.real_time) + "," + quote(e.time_unit);
    for (const std::string& c : counters) {
      auto v = e.counter(c);
      row += "," + (v ? number(*v) : std::string());
    }
    row += "," + (e.error_occurred ? quote(e.error_message) : std::string());
    out += row + "\n";
  }
  return out;
}

void write_csv(const ResultDocument& doc, const std::string& path) {
  write_file_atomically(path, format_csv(doc));
}

}  // namespace feedbench
