// The cases run: the plan registered with Google Benchmark and run, shown as it goes (the
// compact table or the library's own, a progress line), until every rank ran every case.
#include <unistd.h>

#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "benchmarks/collecting_reporter.h"
#include "benchmarks/progress.h"
#include "benchmarks/registration.h"
#include "command_line.h"
#include "feedbench/base/clock.h"
#include "reporters/console_table.h"
#include "run/run_steps.h"

namespace feedbench::run_steps {

std::pair<std::size_t, std::size_t> cases_to_run(const Plan& plan, const std::string& filter,
                                                 bool repetitions_from_flag, int flag_repetitions,
                                                 std::vector<Case>* matched) {
  std::string spec = filter.empty() || filter == "all" ? "." : filter;
  const bool negative = spec[0] == '-';
  if (negative) spec.erase(0, 1);
  std::optional<std::regex> re;
  try {
    re.emplace(spec, std::regex::extended);
  } catch (const std::regex_error&) {
    // The library reports a bad filter itself; count every case meanwhile.
  }
  std::size_t cases = 0, repetitions = 0;
  for (const Case& c : plan.cases) {
    const int reps = repetitions_from_flag ? flag_repetitions : c.repetitions;
    const std::string name = c.name() + "/iterations:1" +
                             (repetitions_from_flag ? "" : "/repeats:" + std::to_string(reps)) +
                             "/manual_time";
    if (re && std::regex_search(name, *re) == negative) continue;
    if (matched) matched->push_back(c);
    ++cases;
    repetitions += std::size_t(reps);
  }
  return {cases, repetitions};
}

MeasuredCases run_cases(RunSetup& run) {
  const RunOptions& o = run.options;
  RunContext& context = run.context;
  register_plan(run.plan, context, o.repetitions_from_flag, o.flag_repetitions);
  // Progress: a live line on a terminal, a line per case elsewhere; nothing with --quiet.
  // The compact display labels cases by what varies among those that run.
  std::optional<RunProgress> progress;
  std::vector<Case> running;
  if (!o.quiet) {
    const auto [cases, repetitions] =
        cases_to_run(run.plan, o.filter, o.repetitions_from_flag, o.flag_repetitions, &running);
    progress.emplace(stderr, interactive_terminal(STDERR_FILENO), cases, repetitions);
    context.progress = &*progress;
  }
  const CaseLabels labels = label_cases(running);
  std::unique_ptr<benchmark::BenchmarkReporter> display;
  std::optional<CaseTable> table;
  if (!o.quiet && o.compact) {
    table.emplace(std::cout, labels, o.colour);
    std::map<std::string, std::string> names;
    for (const auto& [name, label] : labels.by_name) names[name] = label.brief;
    progress->set_names(std::move(names));
  } else if (!o.quiet) {
    display = make_display_reporter(o.format.empty() ? "console" : o.format, o.colour);
  }
  CollectingReporter reporter(std::move(display), context.log);
  reporter.set_progress(context.progress);
  if (table)
    reporter.set_entries_view([&table](const std::vector<BenchmarkEntry>& entries) { table->add(entries); });
  MeasuredCases measured;
  const double own_cpu_before = own_processes_cpu_seconds();
  measured.load_before = sample_host_load();
  measured.cases_run = benchmark::RunSpecifiedBenchmarks(&reporter);
  measured.load_after = sample_host_load();
  measured.own_cpu_s = own_processes_cpu_seconds() - own_cpu_before;
  benchmark::Shutdown();
  // Every rank ran every case (a rank killed on the way ends mpirun instead): only then does
  // rank 0 write the result, and the others are done.
  if (o.many) run.cluster.barrier();
  run.together.finished = true;
  measured.context = reporter.context();
  measured.entries = reporter.take_entries();
  context.progress = nullptr;
  progress.reset();  // clears the live line before the summary
  return measured;
}

}  // namespace feedbench::run_steps
