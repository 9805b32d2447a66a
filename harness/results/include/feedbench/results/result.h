// The result document ("feedbench-result/1", revision 2): one struct, written by the reporters
// and read by diff and report. It keeps Google Benchmark's `context` and `benchmarks` keys, so
// tools written for that library's JSON still read it. Layout documented in results/README.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "feedbench/base/file_system.h"
#include "feedbench/base/histogram.h"
#include "feedbench/results/stored_histogram.h"

namespace feedbench {

inline constexpr const char* kResultSchema = "feedbench-result/1";
// What this writer adds to the schema, in keys a reader of an earlier revision ignores (so the
// `schema` string, which every reader compares exactly, stays the same). Revision 2: latency
// histograms compressed under `latency_hist`, no `latency` bins, no aggregate entries where
// repetitions are present, one entry per line. A file without `schema_revision` is revision 1.
inline constexpr int kResultRevision = 2;

// RETURNS: `value`, a time in `unit` (Google Benchmark's "ns", "us", "ms" or "s"), in
// nanoseconds; an unknown unit is taken as nanoseconds.
double time_to_ns(double value, const std::string& unit);

// One entry of `benchmarks`: a repetition (run_type "iteration") or an aggregate.
struct BenchmarkEntry {
  // Google Benchmark's per-run fields, as its JSON reporter writes them.
  std::string name;            // "file_read/.../iterations:1/repeats:3/manual_time[_mean]"
  std::string run_name;        // name without the aggregate suffix
  std::string run_type;        // "iteration" or "aggregate"
  std::string aggregate_name;  // "mean", "median", "stddev", "cv"; empty for iterations
  std::int64_t family_index = 0;
  std::int64_t per_family_instance_index = 0;
  std::int64_t repetitions = 1;
  std::int64_t repetition_index = 0;
  std::int64_t threads = 1;
  std::int64_t iterations = 1;
  double real_time = 0;
  double cpu_time = 0;
  std::string time_unit = "ms";
  std::map<std::string, double> counters;  // user counters, flattened into the entry in JSON
  bool error_occurred = false;             // the case was skipped or failed
  std::string error_message;               // why
  std::string label;                       // State::SetLabel's text; written when non-empty

  // feedbench's additions.
  std::string case_name;          // canonical identity: family/key:value/... (what diff matches on)
  nlohmann::ordered_json params;  // {"family": ..., every resolved parameter as typed values}
  nlohmann::json cache;           // {"requested": "cold", "residency_before": 0.003, "achieved": true,
                                  //  "method": "cachestat"}; null for aggregates
  // Per-read latency (loader: per-step data wait), ns; held compact, decoded when read.
  StoredHistogram latency;
  nlohmann::json extra = nlohmann::json::object();  // family-specific (verdicts, AU, ...)

  // RETURNS: the counter, or nullopt.
  std::optional<double> counter(const std::string& key) const;

  // Field-by-field equality (latency compared by its bins); what a round trip preserves.
  friend bool operator==(const BenchmarkEntry& a, const BenchmarkEntry& b);
};

struct ResultDocument {
  std::string schema = kResultSchema;
  nlohmann::json context = nlohmann::json::object();  // Google Benchmark's context (date,
                                                      // host_name, num_cpus, library_version..)
  nlohmann::json tool = nlohmann::json::object();     // version, git_commit, git_dirty,
                                                      // compiler, build_type, benchmark_version
  std::vector<std::string> command_line;
  std::map<std::string, std::string> environment_variables;  // BENCHMARK_*, expanded ${VAR}s
  nlohmann::json config = nlohmann::json::object();          // {"file", "name", "sha256", "resolved"}
  nlohmann::json dataset = nlohmann::json::object();         // {"source": {root, files, bytes,
                                                             //  fingerprint}, "cache": {..., "manifest"}}
  nlohmann::json environment = nlohmann::json::object();     // {"host": {...}, "paths": {...}}
  nlohmann::json summary = nlohmann::json::object();         // the run's closing summary/verdicts
  std::vector<BenchmarkEntry> benchmarks;

  nlohmann::json to_json() const;
  // Same content with keys in Google Benchmark's order (schema first, entries as its JSON
  // reporter writes them); what save() writes.
  nlohmann::ordered_json to_ordered_json() const;
  // Throws InputError naming `where` (the file) and the JSON pointer of what is wrong, and
  // for a schema other than feedbench-result/1. NOTE: from a plain json, `params` comes back
  // in alphabetical key order; the ordered_json overload (used by load) keeps the file's order.
  static ResultDocument from_json(const nlohmann::json& j, const std::string& where);
  static ResultDocument from_json(const nlohmann::ordered_json& j, const std::string& where);
  // Parses result-file text. Throws InputError "<where>: malformed JSON at line L, column C: ...",
  // and "<where>: <pointer>: ..." for text past kResultLimits (size, nesting, string length) or a
  // number no double holds, checked while parsing (json_limits.h).
  static ResultDocument parse(const std::string& text, const std::string& where);

  // Reads a result file of any revision. Throws InputError (unreadable, larger than
  // kResultLimits allow, refused before reading; malformed JSON, wrong schema).
  static ResultDocument load(const std::string& path);
  // RETURNS: the text save() writes: the top level indented, each `benchmarks` entry on one
  // line (small, and a diff of two files shows changed entries line by line).
  std::string dump() const;
  // Writes dump() through a temporary beside `path` (created exclusively) renamed into place:
  // a crash never leaves half a file. Creates missing parent folders. With kNeverReplace no file
  // is replaced: a taken `path` gives "STEM-2.json", ... (a default name). Throws RunError when
  // it cannot write. RETURNS: the path written.
  std::string save(const std::string& path,
                   AtomicFile::Existing existing = AtomicFile::Existing::kReplace) const;

  friend bool operator==(const ResultDocument& a, const ResultDocument& b);
};

// The rules of trust every reader of a result applies to one repetition (an "iteration"
// entry): the one place they are written, so the reporters, the HTML page and diff agree.

// RETURNS: whether the entry belongs to a calibration case (the loader with samples from
// memory, or extra.calibration): it measures the harness, not storage, and is kept apart.
bool is_calibration(const BenchmarkEntry& e);

// RETURNS: why the repetition's figures are not what its case asks for, "" when they are:
// its cache state was not achieved (cache.achieved false; moot for a calibration case, which
// does no I/O), the round read less than it planned (extra.round_complete false, with
// extra.bytes_read and extra.bytes_planned), or O_DIRECT was served from memory
// (extra.direct_reaches_device false: tmpfs). Errors are not exclusions: see error_occurred.
std::string exclusion_reason(const BenchmarkEntry& e);

// Writes `text` to `path` through a temporary name and rename (shared by every writer); with
// kNeverReplace onto the first free numbered name when `path` exists. RETURNS: the path written.
std::string write_file_atomically(const std::string& path, const std::string& text,
                                  AtomicFile::Existing existing = AtomicFile::Existing::kReplace);

}  // namespace feedbench
