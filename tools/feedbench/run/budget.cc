// --budget: a run fitted into a time by choosing each case's repetitions and rounds from the
// probed estimate; a budget the plan cannot fit is refused like bad input, before anything is
// measured.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <string>

#include "feedbench/base/error.h"
#include "feedbench/base/units.h"
#include "run/run_steps.h"

namespace feedbench::run_steps {

std::int64_t parse_budget(const std::string& text) {
  std::string t = text;
  if (t.size() >= 2 && t.back() == 'm' &&
      (std::isdigit((unsigned char)t[t.size() - 2]) || t[t.size() - 2] == ' '))
    t += "in";
  std::int64_t ns = 0;
  try {
    ns = parse_duration_ns(t, "--budget");
  } catch (const InputError&) {
    throw InputError("--budget: expected a duration such as 20m, 90s or 1.5h, got '" + text + "'");
  }
  if (ns <= 0) throw InputError("--budget: expected a duration above zero, got '" + text + "'");
  return ns;
}

void fit_to_budget(RunSetup& run, RunEstimate& estimate) {
  const std::string& budget_text = run.options.budget_text;
  std::FILE* human = run.options.human;
  Plan& plan = run.plan;
  if (!estimate.unavailable.empty())
    throw RunError("--budget " + budget_text + ": cannot estimate the run: " + estimate.unavailable);
  const double budget_s = double(run.options.budget_ns) / 1e9;
  // The cases get 90% of what is left of the budget after the scan and the probe: the rest
  // is headroom for an estimate from a short probe, and for writing the results.
  const double spent_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - run.started).count();
  const double usable_s = std::max(0.0, 0.9 * budget_s - spent_s);
  const BudgetFit fit = fit_budget(estimate.costs, usable_s);
  if (!fit.fits)
    throw InputError(
        "--budget " + budget_text + ": the plan cannot fit: it needs at least " +
        format_estimate(fit.minimum_s / 0.9 + spent_s) + " (" + std::to_string(plan.cases.size()) +
        " cases at " + std::to_string(kBudgetMinRepetitions) +
        " repetitions or fewer and file_read rounds of 1s or their steady-state window, at the probed "
        "read rates, with 10% headroom); raise --budget or sweep fewer cases");
  bool changed = false;
  for (std::size_t i = 0; i < plan.cases.size(); ++i) {
    Case& c = plan.cases[i];
    const BudgetChoice& choice = fit.choices[i];
    changed = changed || choice.repetitions != c.repetitions || choice.runtime_ns > 0;
    c.repetitions = choice.repetitions;
    c.budget_runtime_ns = choice.runtime_ns;
    estimate.costs[i].repetitions = choice.repetitions;
    if (choice.runtime_ns > 0)
      estimate.costs[i].round_s = estimate.costs[i].ramp_s + double(choice.runtime_ns) * 1e-9;
  }
  std::fprintf(human, "budget %s: %s; estimated %s\n", budget_text.c_str(),
               changed ? "chose the repetitions and runtimes below" : "fits as planned",
               format_estimate(fit.estimated_s).c_str());
  if (changed)
    for (std::size_t i = 0; i < plan.cases.size(); ++i) {
      const Case& c = plan.cases[i];
      std::string runtime =
          c.budget_runtime_ns > 0
              ? "runtime " + format_duration_exact(c.budget_runtime_ns)
              : std::string(c.family == "file_read" && c.file_read().runtime
                                ? "runtime " + format_duration_exact(c.file_read().runtime->count())
                                : "whole selection");
      std::fprintf(human, "  %s: %d repetitions, %s\n", printable(c.name()).c_str(), c.repetitions,
                   runtime.c_str());
    }
  run.budget_record = {{"budget_s", budget_s},
                       {"estimated_s", fit.estimated_s},
                       {"minimum_s", fit.minimum_s},
                       {"probe", estimate.how}};
}

}  // namespace feedbench::run_steps
