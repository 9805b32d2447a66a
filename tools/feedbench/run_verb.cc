// feedbench run --config FILE: expand the config into cases, say which paths are measured,
// run every case through Google Benchmark, write the result file and print the summary.
// The steps up to the cases' end live in run/, one file each (run/run_steps.h); the result's
// is here.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "benchmarks/cluster_launch.h"
#include "command_line.h"
#include "feedbench/base/cores.h"
#include "feedbench/base/text.h"
#include "feedbench/cluster/cluster.h"
#include "feedbench/results/environment.h"
#include "feedbench/results/recorded_variables.h"
#include "feedbench/results/result.h"
#include "reporters/case_view.h"
#include "reporters/csv_writer.h"
#include "reporters/markdown_writer.h"
#include "reporters/result_builder.h"
#include "reporters/summary.h"
#include "run/run_request.h"
#include "run/run_steps.h"
#include "verbs.h"

namespace feedbench {
namespace run_steps {
namespace {

// Nothing measured is never a success: a case counts when one of its repetitions is a figure
// (case_view.h's fold: achieved, neither skipped nor excluded).
// RETURNS: "" when some case counts; else why none does: nothing_measured's "every case was
// skipped (...)", or "every case was skipped or excluded (N cases; the result file records
// why): REASON; REASON", naming at most three reasons.
std::string why_nothing_counts(const ResultDocument& doc) {
  if (std::string skipped = nothing_measured(doc); !skipped.empty()) return skipped;
  std::vector<std::string> reasons;
  const std::vector<CaseView> cases = fold_cases(doc);
  auto note = [&reasons](const std::string& why) {
    if (std::find(reasons.begin(), reasons.end(), why) == reasons.end()) reasons.push_back(why);
  };
  for (const CaseView& c : cases) {
    if (c.measured()) return "";
    for (const ExcludedRepetition& e : c.excluded) note(e.reason);
    for (const std::string& e : c.errors) note(e);
  }
  std::string why;
  for (std::size_t i = 0; i < reasons.size() && i < 3; ++i) why += (i ? "; " : "") + reasons[i];
  if (reasons.size() > 3) why += "; and " + std::to_string(reasons.size() - 3) + " more";
  return "every case was skipped or excluded (" + plural(cases.size(), "case", "cases") +
         "; the result file records why): " + why;
}

int run_ranks(RunSetup& run, bool estimate_first);
int write_results(const RunSetup& run, MeasuredCases measured);

// Runs `steps` (the run's parsing and steps on this rank) on every rank of `cluster`, together:
// a rank that fails before the start fails them all with its reason (agree_to_start), one that
// fails alone after it ends them all. RETURNS: what `steps` returns.
template <typename Steps>
int run_together(Cluster& cluster, const Steps& steps) {
  // Rank 0 alone prints; the others' reasons reach it through the agreements below.
  if (!cluster.is_root() && !std::getenv("FEEDBENCH_RANK_OUTPUT")) {
    silence_output();
  }
  RankProgress together;
  try {
    const int rc = steps(together);
    if (!together.started) agree_to_start(cluster, together, nullptr);  // --help, --dry-run
    return rc;
  } catch (...) {
    if (!together.started) agree_to_start(cluster, together, std::current_exception());
    if (together.started && !together.finished && cluster.size() > 1) {
      // Failed alone while the others run cases: end them all rather than leave them waiting.
      try {
        throw;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "feedbench run: rank %d: error: %s\n", cluster.rank(),
                     printable(e.what()).c_str());
      }
      cluster.abort(1);
    }
    throw;
  }
}

}  // namespace
}  // namespace run_steps

int run_main(int argc, char** argv) {
  std::unique_ptr<Cluster> cluster = start_cluster(&argc, &argv);
  return run_steps::run_together(*cluster, [&](run_steps::RankProgress& together) {
    run_steps::RunSetup run(*cluster, together);
    if (!run_steps::parse_run_options(argc, argv, *cluster, run.options)) return 0;  // --help
    return run_steps::run_ranks(run, /*estimate_first=*/false);
  });
}

int run_request(RunRequest request) {
  // The ranks start from a command line of the program alone: the request holds the rest.
  char program[] = "feedbench";
  char* args[] = {program, nullptr};
  int argc = 1;
  char** argv = args;
  std::unique_ptr<Cluster> cluster = start_cluster(&argc, &argv);
  return run_steps::run_together(*cluster, [&](run_steps::RankProgress& together) {
    run_steps::RunSetup run(*cluster, together);
    run.options = std::move(request.options);
    run_steps::take_benchmark_flags(argc, argv, run.options);
    run_steps::settle_run_options(run.options, *cluster, /*display_given=*/false);
    if (request.config) run.config_document = &*request.config;
    run.context.recorded_jobs = std::move(request.recorded_jobs);
    return run_steps::run_ranks(run, request.estimate_first);
  });
}

namespace run_steps {
namespace {

// One rank's run, step by step (run/run_steps.h), its options set: every refusal before the
// first case. `estimate_first`: RunRequest::estimate_first.
int run_ranks(RunSetup& run, bool estimate_first) {
  Cluster& cluster = run.cluster;
  load_plan(run);
  check_output_files(run);
  scan_roots(run);
  print_plan(run);
  check_measured_cache(run);

  // --budget and --dry-run price the plan from each path's probed rate; a budget the plan
  // cannot fit is refused like bad input, before anything is measured.
  std::optional<RunEstimate> estimate;
  if (run.options.budget_ns > 0 || run.options.dry_run || estimate_first)
    estimate = estimate_run(run.plan, run.context);
  // A verb's estimate first, over budget or not: a refusal then follows what it refuses.
  if (estimate_first && !run.options.dry_run) print_estimate_first(run, *estimate);
  if (run.options.budget_ns > 0) fit_to_budget(run, *estimate);
  // --dry-run stops here: every refusal above is the run's own, so a dry run that passes is
  // a run that starts (the cache was checked by listing, not re-hashed).
  if (run.options.dry_run) {
    print_dry_run(run, *estimate);
    return 0;
  }

  fingerprint_contents(run);
  announce_run(run);
  start_together(run);
  MeasuredCases measured = run_cases(run);
  if (!cluster.is_root()) return 0;
  recheck_measured_cache(run);
  return write_results(run, std::move(measured));
}

// Rank 0 builds the result from what the steps gathered, writes its files and prints the
// summary. RETURNS: the run's exit code: 1 when nothing was measured.
int write_results(const RunSetup& run, MeasuredCases measured) {
  const Plan& plan = run.plan;
  const RunContext& context = run.context;
  const std::string& filter = run.options.filter;
  const std::string& csv_path = run.options.csv_path;
  const std::string& markdown_path = run.options.markdown_path;
  std::FILE* human = run.options.human;
  if (measured.cases_run == 0) {
    // Nothing measured: no result file, and not a success.
    std::fprintf(stderr,
                 "feedbench run: nothing measured: no case matches --benchmark_filter=%s "
                 "(%zu cases in the plan; --dry-run lists them)\n",
                 printable(filter).c_str(), plan.cases.size());
    return 1;
  }

  RunFacts facts;
  facts.context = std::move(measured.context);
  facts.benchmarks = std::move(measured.entries);
  facts.tool = describe_tool();
  facts.command_line = run.options.command_line;
  RecordedVariables vars = recorded_variables(run.config.expanded_env, run.options.redact, environ);
  facts.environment_variables = std::move(vars.recorded);
  facts.withheld = std::move(vars.withheld);
  facts.config = &run.config;
  facts.plan = &plan;
  facts.budget = run.budget_record;
  facts.node_accelerators = run.options.node_accelerators;
  facts.source = &*context.source;
  facts.source_content = run.source_content;
  facts.cache = context.cache ? &*context.cache : nullptr;
  facts.cache_content = run.cache_content;
  facts.manifest = run.manifest;
  facts.verification = run.verification;
  facts.cache_verified = run.cache_verified;
  facts.allow_unverified_cache = context.allow_unverified_cache;
  facts.environment = describe_environment(run.paths);
  const std::optional<double> others =
      other_programs_cores(measured.load_before, measured.load_after, measured.own_cpu_s);
  facts.load = load_to_json(measured.load_before, measured.load_after, others);
  facts.cluster = &run.cluster;
  facts.cpu_affinity = run.affinity_record;
  facts.sizing = run.size_check;
  ResultDocument doc = build_result(std::move(facts));
  // The cache as the cases left it, beside its check before the first case.
  if (!run.cache_recheck.is_null() && doc.dataset.contains("cache"))
    doc.dataset["cache"]["verification_after_run"] = run.cache_recheck;

  // A default name never replaces a file (another run's of the same second); --out may.
  const std::string out_path =
      doc.save(run.options.out_path, run.options.default_out ? AtomicFile::Existing::kNeverReplace
                                                             : AtomicFile::Existing::kReplace);
  if (!csv_path.empty()) write_csv(doc, csv_path);
  if (!markdown_path.empty()) write_markdown(doc, markdown_path);

  say(human, "\n" + format_summary(doc.summary));
  // A replay says what else ran on its cores: a change between two replays may be the host's.
  if (others && !run.context.recorded_jobs.empty())
    say(human, other_programs_text(*others, usable_cores(), "the replay") + "\n");
  std::fprintf(human, "result: %s\n", printable(out_path).c_str());
  // A baseline with a wild repetition hides changes (diff sets it aside; a re-run is better).
  std::fflush(human);
  for (const std::string& line : outlier_warning_lines(doc.summary))
    say(stderr, "feedbench run: warning: " + line + "\n");

  // Every case skipped or excluded, or a cache that changed under the cases: the result file
  // records why, and the run is not a success.
  std::fflush(human);
  const std::string why = why_nothing_counts(doc);
  if (!why.empty()) std::fprintf(stderr, "feedbench run: nothing measured: %s\n", printable(why).c_str());
  if (!run.cache_changed.empty())
    std::fprintf(stderr, "feedbench run: %s\n", printable(run.cache_changed).c_str());
  return why.empty() && run.cache_changed.empty() ? 0 : 1;
}

}  // namespace
}  // namespace run_steps

}  // namespace feedbench
