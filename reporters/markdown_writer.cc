#include "markdown_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "csv_writer.h"
#include "feedbench/statistics.h"
#include "feedbench/units.h"
#include "summary.h"

namespace feedbench {

namespace {

using json = nlohmann::json;

// Counters left out of the tables to keep them narrow (they stay in the JSON and CSV).
const std::set<std::string> kVerbose = {"files_per_second", "lat_p90_us", "lat_p999_us",
                                        "wait_p90_ms"};

std::string cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

std::string str(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key)) return {};
  const json& v = obj[key];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string figure(const std::string& counter, double v) {
  if (!std::isfinite(v)) return "–";
  if (counter == "bytes_per_second") return format_rate(v);
  char buf[32];
  if (counter == "residency_before" || counter == "cpu_util" || counter == "stall_fraction" ||
      counter == "au")
    std::snprintf(buf, sizeof buf, "%.1f%%", 100 * v);
  else if (std::fabs(v) >= 1000)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string family_of(const BenchmarkEntry& e) {
  if (e.params.is_object() && e.params.contains("family") && e.params["family"].is_string())
    return e.params["family"].get<std::string>();
  return e.case_name.substr(0, e.case_name.find('/'));
}

void environment_lines(const ResultDocument& doc, std::string& out) {
  const json host = doc.environment.value("host", json::object());
  if (!host.empty()) {
    std::string line = "- **Host**: `" + str(host, "hostname") + "`, " + str(host, "cpu_model") +
                       ", " + str(host, "cores") + " cores (" + str(host, "sockets") +
                       " sockets, " + str(host, "numa_nodes") + " NUMA nodes), " +
                       format_size(host.value("memory_total_bytes", 0.0)) + " memory, " +
                       str(host, "distribution") + ", kernel " + str(host, "kernel");
    if (!str(host, "instance_type").empty())
      line += ", instance type " + str(host, "instance_type");
    std::string gpus;
    for (const json& g : host.value("gpus", json::array()))
      gpus += (gpus.empty() ? "" : ", ") + str(g, "name") + " (" + str(g, "memory") + ")";
    line += gpus.empty() ? ", no GPU seen" : ", GPUs: " + gpus;
    out += cell(line) + "\n";
  }
  if (!doc.tool.empty()) {
    std::string commit = str(doc.tool, "git_commit").substr(0, 12);
    out += "- **Tool**: feedbench " + str(doc.tool, "version") + " (" +
           (commit.empty() ? "unknown commit" : commit) +
           (doc.tool.value("git_dirty", false) ? ", dirty tree" : "") + "), " +
           str(doc.tool, "build_type") + " build, " + str(doc.tool, "compiler") +
           ", Google Benchmark " + str(doc.tool, "benchmark_version") + "\n";
  }
  if (!doc.config.empty())
    out += "- **Config**: `" + str(doc.config, "name") + "` (" + str(doc.config, "file") +
           ", sha256 `" + str(doc.config, "sha256").substr(0, 16) + "`)\n";
  for (const auto& [role, d] : doc.dataset.items()) {
    if (!d.is_object()) continue;
    out += "- **Dataset " + role + "**: " + str(d, "files") + " files, " +
           format_size(d.value("bytes", 0.0)) + ", fingerprint `" +
           str(d, "fingerprint").substr(0, 16) + "`\n";
  }
  if (doc.context.contains("date")) out += "- **Date**: " + str(doc.context, "date") + "\n";
}

void paths_table(const ResultDocument& doc, std::string& out) {
  const json paths = doc.environment.value("paths", json::object());
  if (paths.empty()) return;
  out += "\n## Paths\n\n| role | path | file system | mount | device | model | rotational | "
         "shares device with |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& [role, p] : paths.items()) {
    const json info = p.value("device_info", json::object());
    std::string shared;
    for (const json& r : p.value("same_device_as", json::array()))
      if (r.is_string()) shared += (shared.empty() ? "" : ", ") + r.get<std::string>();
    if (shared.empty()) shared = str(p, "shares_device_with");  // older writers' single role
    std::string rot = info.contains("rotational") ? (info["rotational"].get<bool>() ? "yes" : "no")
                                                  : "";
    out += "| " + cell(role) + " | `" + cell(str(p, "resolved")) + "` | " +
           cell(str(p, "fs_type")) + " | " + cell(str(p, "mount_source")) + " on " +
           cell(str(p, "mount_point")) + " | " + cell(str(p, "device")) + " | " +
           cell(str(info, "model")) + " | " + rot + " | " + (shared.empty() ? "–" : cell(shared)) +
           " |\n";
  }
}

struct CaseRows {
  std::vector<const BenchmarkEntry*> reps;  // iteration entries
};

void family_tables(const ResultDocument& doc, std::string& out) {
  std::vector<std::string> families;
  std::map<std::string, std::vector<std::string>> cases;  // family -> cases in order
  std::map<std::string, CaseRows> rows;
  for (const BenchmarkEntry& e : doc.benchmarks) {
    if (e.run_type != "iteration") continue;
    std::string fam = family_of(e);
    if (std::find(families.begin(), families.end(), fam) == families.end()) families.push_back(fam);
    auto& list = cases[fam];
    if (std::find(list.begin(), list.end(), e.case_name) == list.end()) list.push_back(e.case_name);
    rows[e.case_name].reps.push_back(&e);
  }
  const std::vector<std::string> all_counters = counter_columns(doc);
  for (const std::string& fam : families) {
    std::vector<std::string> counters;
    for (const std::string& c : all_counters) {
      if (kVerbose.count(c)) continue;
      bool present = false;
      for (const std::string& name : cases[fam])
        for (const BenchmarkEntry* e : rows[name].reps) present = present || e->counter(c);
      if (present) counters.push_back(c);
    }
    out += "\n## " + fam + " (median of repetitions)\n\n| case | reps |";
    for (const std::string& c : counters) out += " " + c + " |";
    out += " notes |\n|---|---|";
    for (std::size_t i = 0; i < counters.size(); ++i) out += "---|";
    out += "---|\n";
    for (const std::string& name : cases[fam]) {
      const CaseRows& r = rows[name];
      std::size_t ok = 0, not_achieved = 0;
      double worst_residency = -1;
      std::string requested, error;
      for (const BenchmarkEntry* e : r.reps) {
        if (e->error_occurred) {
          error = e->error_message;
          continue;
        }
        ++ok;
        if (e->cache.is_object() && e->cache.contains("achieved") &&
            e->cache["achieved"].is_boolean() && !e->cache["achieved"].get<bool>()) {
          ++not_achieved;
          requested = e->cache.value("requested", "");
          double res = e->cache.value("residency_before", 0.0);
          if (requested == "warm" ? (worst_residency < 0 || res < worst_residency)
                                  : res > worst_residency)
            worst_residency = res;
        }
      }
      out += "| `" + cell(name) + "` | " + std::to_string(ok) + " |";
      for (const std::string& c : counters) {
        std::vector<double> values;
        for (const BenchmarkEntry* e : r.reps)
          if (!e->error_occurred)
            if (auto v = e->counter(c)) values.push_back(*v);
        out += " " + (values.empty() ? std::string("–") : figure(c, median(values))) + " |";
      }
      std::string notes;
      if (not_achieved) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "**%s NOT achieved** in %zu/%zu (%.1f%% resident)",
                      requested.c_str(), not_achieved, ok, 100 * worst_residency);
        notes = buf;
      }
      if (!error.empty()) notes += (notes.empty() ? "" : "; ") + ("skipped: " + error);
      out += " " + cell(notes) + " |\n";
    }
  }
}

}  // namespace

std::string format_markdown(const ResultDocument& doc) {
  std::string name = str(doc.config, "name");
  std::string out = "# feedbench" + (name.empty() ? std::string() : ": " + name) + "\n\n";
  environment_lines(doc, out);
  paths_table(doc, out);
  family_tables(doc, out);

  const json summary = doc.summary.empty() ? summarize(doc) : doc.summary;
  std::set<std::string> skipped_seen;
  std::string skipped;
  for (const BenchmarkEntry& e : doc.benchmarks)
    if (e.error_occurred && skipped_seen.insert(e.case_name).second)
      skipped += "- `" + e.case_name + "`: " + e.error_message + "\n";
  if (!skipped.empty()) out += "\n## Skipped\n\n" + skipped;
  std::string text = format_summary(summary);
  if (!text.empty()) out += "\n## Summary\n\n```text\n" + text + "```\n";
  return out;
}

void write_markdown(const ResultDocument& doc, const std::string& path) {
  write_file_atomically(path, format_markdown(doc));
}

}  // namespace feedbench
