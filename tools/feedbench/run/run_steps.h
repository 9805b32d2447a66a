// The steps of `feedbench run`, private to the verb: what they share (RunSetup: each step reads
// what the steps before it set) and the steps, in the order run_verb.cc's run_ranks takes them.
// A step that refuses throws, InputError for bad input (exit 2), RunError otherwise (exit 1);
// every refusal comes before the first case runs, and those of the command line before anything
// is read or written.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarks/run_context.h"
#include "feedbench/base/text.h"
#include "feedbench/cluster/cluster.h"
#include "feedbench/plan/config.h"
#include "feedbench/plan/estimator.h"
#include "feedbench/plan/plan.h"
#include "feedbench/results/environment.h"
#include "feedbench/results/result.h"
#include "reporters/console_table.h"

namespace feedbench::run_steps {

// The command line as parsed and checked on its own (before the config is read).
struct RunOptions {
  std::vector<std::string> command_line;  // "feedbench run ...", as the result records it
  // --config; for a verb that runs a config of its own (RunRequest::config), what names it.
  std::string config_path, out_path, csv_path, markdown_path, emit_fio_dir;
  // No --out: out_path is the default name, which never replaces a file (another run's result of
  // the same second): saved under the first free "-N" name, which the run then prints.
  bool default_out = false;
  std::string max_cases_text = std::to_string(kDefaultMaxCases);
  std::string fingerprint_kind = "metadata";
  std::string budget_text;
  std::string node_accelerators_text;  // --node-accelerators as given
  std::string display_kind = "compact";
  std::vector<std::string> sets, throttles;
  std::vector<std::string> redact;                    // --redact NAME: recorded as set, never by value
  std::optional<std::string> source, cache, scratch;  // --source, --cache, --scratch
  bool include_from_cache = false;                    // --include-from-cache
  bool allow_unverified_cache = false;
  bool verify_cache = false;
  bool record_latency = true;  // no --no-latency
  bool dry_run = false;
  bool quiet = false;  // --quiet, or a rank other than 0
  // Google Benchmark's flags, read before benchmark::Initialize removes them.
  std::string format, colour_flag, repetitions_flag, filter, benchmark_out;
  bool repetitions_from_flag = false;
  int flag_repetitions = 1;
  std::int64_t budget_ns = 0;          // --budget, 0 without
  std::int64_t node_accelerators = 0;  // --node-accelerators, 0 without: the most a case runs
  bool many = false;                   // more than one rank
  bool compact = true;                 // the compact display rather than Google Benchmark's
  bool colour = false;
  // With --benchmark_format=json or csv, stdout carries that format alone: feedbench's own
  // lines (paths, summary, result path) go to stderr so `> out.json` stays parseable.
  std::FILE* human = stdout;
};

// How far the ranks of a run went together: past the start (every rank ready to run its cases)
// and past the end (every rank ran every case).
struct RankProgress {
  bool started = false;
  bool finished = false;  // or failed together, every rank with the same reason
};

// What the steps of one run share; each step reads what the steps before it set.
struct RunSetup {
  RunSetup(Cluster& ranks, RankProgress& progress) : cluster(ranks), together(progress) {}
  RunSetup(const RunSetup&) = delete;
  RunSetup& operator=(const RunSetup&) = delete;

  Cluster& cluster;
  RankProgress& together;
  RunOptions options;
  // A verb's config in memory (RunRequest::config), read in place of --config's file; null for run.
  const nlohmann::json* config_document = nullptr;
  std::chrono::steady_clock::time_point started;  // before the config is read: --budget counts from here
  Config config;
  Plan plan;
  RunContext context;       // points at `config` and `cluster`
  double plan_seconds = 0;  // the scans and the plan
  // The cache's checks (path:cache cases only).
  nlohmann::json manifest = nullptr;
  nlohmann::json verification = nullptr;
  bool cache_verified = false;  // false too when the cache changed during the run
  // After the cases: the cache's files looked at again (CacheVerification::to_json(), null when
  // no case read the cache), and why the cache is not the one verified ("" when it is).
  nlohmann::json cache_recheck = nullptr;
  std::string cache_changed;
  nlohmann::json budget_record = nullptr;     // --budget's choice
  std::string source_content, cache_content;  // --fingerprint content
  std::map<std::string, PathInfo> paths;      // the measured paths, as printed
  nlohmann::json size_check;                  // sizing()
  nlohmann::json affinity_record = nullptr;   // launched by MPI: the ranks' cores
};

// The estimate of a run: each path's probed rate and each case's cost (estimator.h).
struct RunEstimate {
  std::map<std::string, PathRate> rates;  // by path role
  std::vector<CaseCost> costs;            // per case, in plan order
  std::string how;
  std::string unavailable;  // why a probe could not read (then there is no estimate)
  // Per case, in plan order: why the run would skip it (planned_refusal), "" when it runs.
  std::vector<std::string> refusals;
};

// What Google Benchmark ran, for the result file.
struct MeasuredCases {
  std::size_t cases_run = 0;
  nlohmann::json context;  // Google Benchmark's
  std::vector<BenchmarkEntry> entries;
  LoadSample load_before, load_after;
  double own_cpu_s = 0;  // this process's CPU time and its children's over the cases
};

// Prints feedbench's own lines within the console's width (console_table.h), what they quote (a
// path, a job's name, a label) with its control characters escaped (text.h's printable_lines).
inline void say(std::FILE* out, const std::string& text) {
  std::fputs(wrap_text(printable_lines(text)).c_str(), out);
}

// RETURNS: true when a case of `plan` reads path `role` ("source" or "cache").
bool uses_path(const Plan& plan, const std::string& role);

// RETURNS: the --budget in nanoseconds: a duration such as 20m, 90s or 1.5h ("m" is minutes
// here, as people write a budget). Throws InputError naming --budget.
std::int64_t parse_budget(const std::string& text);

// RETURNS: how many cases, and how many repetitions in all, Google Benchmark will run:
// those whose name matches --benchmark_filter as the library matches it (an extended regex
// searched in "<case>/iterations:1[/repeats:N]/manual_time"; a leading '-' negates it).
// `matched`, when given, receives those cases.
std::pair<std::size_t, std::size_t> cases_to_run(const Plan& plan, const std::string& filter,
                                                 bool repetitions_from_flag, int flag_repetitions,
                                                 std::vector<Case>* matched = nullptr);

// Every rank says whether it is ready to run the cases (`error` null when it is). A failure on
// any rank fails all of them with that rank's reason, exit code and all, before any case: no
// rank waits for one that left. One process: its own error, unchanged.
// `plan`: a digest of what this rank will run (cases, repetitions, filter): ranks that would run
// different cases would wait for each other in different places, so they are refused.
void agree_to_start(Cluster& cluster, RankProgress& progress, const std::exception_ptr& error,
                    const std::string& plan = "");

// The steps, in order (run_verb.cc's run_ranks).

// options.cc: parses and checks the command line into `options`; `argv` loses Google
// Benchmark's flags. RETURNS: false when --help was printed (the run ends there, exit 0).
bool parse_run_options(int argc, char** argv, const Cluster& cluster, RunOptions& options);
// options.cc: reads Google Benchmark's flags (argv's --benchmark_NAME=VALUE, else the
// BENCHMARK_NAME variables) into `options`, checks them and removes them from argv
// (benchmark::Initialize). Part of parse_run_options; run_request's first step.
void take_benchmark_flags(int& argc, char** argv, RunOptions& options);
// options.cc: checks what depends on the ranks and on Google Benchmark's flags (a budget across
// ranks or with --benchmark_repetitions=, the display) and sets many, compact, colour, human and,
// on a rank other than 0, quiet. `display_given`: --display was given. Part of parse_run_options.
void settle_run_options(RunOptions& options, const Cluster& cluster, bool display_given);
// plan.cc: reads the config and expands the plan (REQUIRES: options parsed); refuses a throttle
// of a cache the config does not have; reads every trace a replay case names (once each, into
// context.recorded_jobs: a bad one refused here), each case named after its job.
void load_plan(RunSetup& run);
// plan.cc: fixes the result file's default path; checks every file the run will write, and
// that none is the config, lies in the source or the cache, or is another of them.
void check_output_files(RunSetup& run);
// scan.cc: sets up the run's context and scans each root once (REQUIRES: the plan); refuses a
// replay whose recorded files are missing under its root, or resized unless allowed.
void scan_roots(RunSetup& run);
// plan.cc: prints the plan's first line and its dropped combinations.
void print_plan(const RunSetup& run);
// cache_check.cc: refuses a cache that fails its checks, unless allowed (REQUIRES: the scans).
void check_measured_cache(RunSetup& run);
// estimate.cc: probes each path the plan reads (a few MiB, evicted first) and prices every
// case. A probe that cannot read leaves `unavailable` set (a run error for --budget).
RunEstimate estimate_run(const Plan& plan, RunContext& context);
// budget.cc: chooses repetitions and runtimes that fit --budget, or refuses the plan.
void fit_to_budget(RunSetup& run, RunEstimate& estimate);
// estimate.cc: one line, the run's estimated duration (or why it is unknown), before anything
// is measured, for a verb that asks for it (RunRequest::estimate_first).
void print_estimate_first(const RunSetup& run, const RunEstimate& estimate);
// estimate.cc: what --dry-run prints: the estimate, the cases, the selections.
void print_dry_run(const RunSetup& run, const RunEstimate& estimate);
// scan.cc: --fingerprint content: hashes samples of every file (rank 0).
void fingerprint_contents(RunSetup& run);
// announce.cc: says which paths are measured, and what to expect of them, before anything runs.
void announce_run(RunSetup& run);
// start.cc: every rank agrees to start the same plan; their cores are checked and recorded.
void start_together(RunSetup& run);
// measure.cc: registers the plan and runs it through Google Benchmark, every rank to its end.
MeasuredCases run_cases(RunSetup& run);
// cache_check.cc: after the cases, the files of the cache they read are looked at again
// (present, size, mtime; not re-hashed): a cache changed under the run (a stage --prune, a
// copy rewritten) sets `cache_changed` and clears `cache_verified`; `cache_recheck` records
// the check either way (REQUIRES: the cases ran).
void recheck_measured_cache(RunSetup& run);

}  // namespace feedbench::run_steps
