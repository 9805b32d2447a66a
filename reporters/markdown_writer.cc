#include "markdown_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "cache_trust.h"
#include "case_view.h"
#include "csv_writer.h"
#include "feedbench/base/units.h"
#include "feedbench/results/counters.h"
#include "markup.h"
#include "summary.h"

namespace feedbench {

namespace {

using json = nlohmann::json;

// Counters left out of the tables to keep them narrow (they stay in the JSON and CSV).
const std::set<std::string> kVerbose = {"files_per_second", "lat_p90_us", "lat_p999_us", "wait_p90_ms"};

std::string str(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key)) return {};
  const json& v = obj[key];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string figure(const std::string& counter, double v) {
  if (!std::isfinite(v)) return "–";
  const CounterInfo* info = find_counter(counter);
  if (info && info->unit == CounterUnit::kBytesPerSecond) return format_rate(v);
  char buf[32];
  if (info && info->unit == CounterUnit::kFraction) std::snprintf(buf, sizeof buf, "%.1f%%", 100 * v);
  else if (std::fabs(v) >= 1000) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

void environment_lines(const ResultDocument& doc, std::string& out) {
  const json host = doc.environment.value("host", json::object());
  if (!host.empty()) {
    // "1 socket", "2 sockets": a count read from the document, with its noun.
    auto counted = [&](const char* key, const std::string& noun) {
      const std::string n = str(host, key);
      return n + " " + noun + (n == "1" ? "" : "s");
    };
    std::string line = "- **Host**: `" + str(host, "hostname") + "`, " + str(host, "cpu_model") + ", " +
                       counted("cores", "core") + " (" + counted("sockets", "socket") + ", " +
                       counted("numa_nodes", "NUMA node") + "), " +
                       format_size(host.value("memory_total_bytes", 0.0)) + " memory, " +
                       str(host, "distribution") + ", kernel " + str(host, "kernel");
    if (!str(host, "instance_type").empty()) line += ", instance type " + str(host, "instance_type");
    std::string gpus;
    for (const json& g : host.value("gpus", json::array()))
      gpus += (gpus.empty() ? "" : ", ") + str(g, "name") + " (" + str(g, "memory") + ")";
    line += gpus.empty() ? ", no GPU seen" : ", GPUs: " + gpus;
    out += escape_markdown_cell(line) + "\n";
  }
  if (!doc.tool.empty()) {
    std::string commit = str(doc.tool, "git_commit").substr(0, 12);
    out += "- **Tool**: feedbench " + str(doc.tool, "version") + " (" +
           (commit.empty() ? "unknown commit" : commit) +
           (doc.tool.value("git_dirty", false) ? ", dirty tree" : "") + "), " + str(doc.tool, "build_type") +
           " build, " + str(doc.tool, "compiler") + ", Google Benchmark " +
           str(doc.tool, "benchmark_version") + "\n";
  }
  if (!doc.config.empty())
    out += "- **Config**: `" + str(doc.config, "name") + "` (" + str(doc.config, "file") + ", sha256 `" +
           str(doc.config, "sha256").substr(0, 16) + "`)\n";
  for (const auto& [role, d] : doc.dataset.items()) {
    if (!d.is_object()) continue;
    out += "- **Dataset " + role + "**: " + str(d, "files") + " files, " +
           format_size(d.value("bytes", 0.0)) + ", fingerprint `" + str(d, "fingerprint").substr(0, 16) +
           "`" +
           (d.contains("manifest") && d["manifest"].is_object() && !str(d["manifest"], "label").empty()
                ? ", manifest label `" + str(d["manifest"], "label") + "`"
                : std::string()) +
           "\n";
  }
  if (!doc.environment_variables.empty()) {
    std::string set;
    for (const auto& [k, v] : doc.environment_variables)
      set += (set.empty() ? "`" : ", `") + k + "=" + v + "`";
    out += "- **Environment variables set**: " + escape_markdown_cell(set) + "\n";
  }
  // The config's ${VAR:-default} fallbacks, apart: the user did not set these.
  const json defaults = doc.config.value("defaults_used", json::object());
  if (defaults.is_object() && !defaults.empty()) {
    std::string list;
    for (const auto& [k, v] : defaults.items())
      list += (list.empty() ? "`" : ", `") + k + "` unset, default `" + str(defaults, k.c_str()) + "`";
    out += "- **Config defaults applied**: " + escape_markdown_cell(list) + "\n";
  }
  if (doc.context.contains("date")) out += "- **Date**: " + str(doc.context, "date") + "\n";
}

void paths_table(const ResultDocument& doc, std::string& out) {
  const json paths = doc.environment.value("paths", json::object());
  if (paths.empty()) return;
  out +=
      "\n## Paths\n\n| role | path | file system | mount | device | model | rotational | "
      "shares device with |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& [role, p] : paths.items()) {
    const json info = p.value("device_info", json::object());
    std::string shared;
    for (const json& r : p.value("same_device_as", json::array()))
      if (r.is_string()) shared += (shared.empty() ? "" : ", ") + r.get<std::string>();
    if (shared.empty()) shared = str(p, "shares_device_with");  // older writers' single role
    std::string rot = info.contains("rotational") ? (info["rotational"].get<bool>() ? "yes" : "no") : "";
    out += "| " + escape_markdown_cell(role) + " | `" + escape_markdown_cell(str(p, "resolved")) + "` | " +
           escape_markdown_cell(str(p, "fs_type")) + " | " + escape_markdown_cell(str(p, "mount_source")) +
           " on " + escape_markdown_cell(str(p, "mount_point")) + " | " +
           escape_markdown_cell(str(p, "device")) + " | " + escape_markdown_cell(str(info, "model")) + " | " +
           rot + " | " + (shared.empty() ? "–" : escape_markdown_cell(shared)) + " |\n";
  }
}

void family_tables(const ResultDocument& doc, std::string& out) {
  const std::vector<CaseView> all = fold_cases(doc);
  std::vector<std::string> families;
  for (const CaseView& c : all)
    if (std::find(families.begin(), families.end(), c.family) == families.end()) families.push_back(c.family);
  const std::vector<std::string> all_counters = counter_columns(doc);
  // A row of figures read on a cache that failed its checks says so beside its name.
  const bool unverified = cache_unverified(doc);
  for (const std::string& fam : families) {
    std::vector<std::string> counters;
    for (const std::string& c : all_counters) {
      if (kVerbose.count(c)) continue;
      bool present = false;
      for (const CaseView& v : all) present = present || (v.family == fam && v.counter(c));
      if (present) counters.push_back(c);
    }
    out += "\n## " + fam + " (median of achieved repetitions)\n\n| case | reps |";
    for (const std::string& c : counters) out += " " + c + " |";
    out += " notes |\n|---|---|";
    for (std::size_t i = 0; i < counters.size(); ++i) out += "---|";
    out += "---|\n";
    for (const CaseView& v : all) {
      if (v.family != fam) continue;
      // reps: those the figures are the median of, out of all that ran.
      out += "| `" + escape_markdown_cell(v.name) + "`" +
             cache_note(unverified && v.measured() && v.param("path") == "cache") + " | " +
             std::to_string(v.achieved) +
             (v.achieved == v.repetitions() ? "" : " of " + std::to_string(v.repetitions())) + " |";
      for (const std::string& c : counters) {
        auto m = v.counter(c);
        out += " " + (m ? figure(c, *m) : std::string("–")) + " |";
      }
      std::string notes;
      if (v.calibration) notes = "calibration (no storage figure)";
      if (!v.excluded.empty()) notes += (notes.empty() ? "**" : "; **") + v.exclusion_note() + "**";
      if (!v.errors.empty()) notes += (notes.empty() ? "" : "; ") + ("skipped: " + v.errors.front());
      out += " " + escape_markdown_cell(notes) + " |\n";
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

  // The summary the run stored, which its console printed; recomputed only for a file from an
  // older feedbench, whose answers this engine would not give (summary_of).
  const json summary = summary_of(doc);
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
