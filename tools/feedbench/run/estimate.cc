// What a run will cost, from each path's probed read rate: the estimate --budget fits and
// --dry-run prints.
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "benchmarks/families.h"
#include "feedbench/base/text.h"
#include "feedbench/base/units.h"
#include "run/run_steps.h"

namespace feedbench::run_steps {
namespace {

long max_rss_kib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

const char* role_of(const Case& c) {
  if (c.path()) return *c.path() == "cache" ? "cache" : "source";
  return "source";  // stage reads the source
}

}  // namespace

RunEstimate estimate_run(const Plan& plan, RunContext& context) {
  RunEstimate e;
  // Each case the run would skip, as it would skip it: priced at nothing but its overhead.
  for (const Case& c : plan.cases) e.refusals.push_back(planned_refusal(c, context));
  // A cold replay is priced from its recording alone (its loop's waits and steps, and the
  // eviction): a path whose every case is one needs no probe, which would read it.
  auto needs_rate = [&](const std::string& role) {
    for (std::size_t i = 0; i < plan.cases.size(); ++i) {
      const Case& c = plan.cases[i];
      if (!e.refusals[i].empty() || role_of(c) != role) continue;
      if (c.family != "replay" || c.cache_state() != "cold") return true;
    }
    return false;
  };
  for (std::size_t i = 0; i < plan.cases.size(); ++i) {
    const Case& c = plan.cases[i];
    if (!e.refusals[i].empty()) continue;
    const std::string role = role_of(c);
    if (e.rates.count(role)) continue;
    if (!needs_rate(role)) {
      PathRate unprobed;
      unprobed.how = "not probed: cold replays, priced from their recordings";
      e.rates.emplace(role, std::move(unprobed));
      continue;
    }
    const FileSet* files = context.files_for(role);
    if (!files || files->empty()) continue;
    PathRate r = probe_read_rate(*files);
    if (!r.error.empty()) {
      e.unavailable = "probing the " + role + " path: " + r.error;
      return e;
    }
    // A throttled path reads no faster than its throttle, from the page cache too.
    if (context.config)
      if (auto t = context.config->throttle.find(role); t != context.config->throttle.end()) {
        const double rate = double(t->second);
        r.cold_bytes_per_second = std::min(r.cold_bytes_per_second, rate);
        r.cached_bytes_per_second = std::min(r.cached_bytes_per_second, rate);
        r.random_read_s = std::max(r.random_read_s, 4096.0 / rate);
        r.how += ", capped by its throttle at " + format_rate(rate);
      }
    e.rates.emplace(role, std::move(r));
  }
  for (std::size_t i = 0; i < plan.cases.size(); ++i) {
    const Case& c = plan.cases[i];
    const std::string role = role_of(c);
    const FileSet* files = context.files_for(role);
    auto it = e.rates.find(role);
    e.costs.push_back(it == e.rates.end() || !files || !e.refusals[i].empty()
                          ? CaseCost{c.name(), c.family, c.repetitions}
                          : estimate_case(c, *files, it->second));
  }
  for (const auto& [role, r] : e.rates) e.how += (e.how.empty() ? "" : "; ") + role + ": " + r.how;
  return e;
}

void print_estimate_first(const RunSetup& run, const RunEstimate& estimate) {
  if (!estimate.unavailable.empty())
    say(run.options.human, "estimated duration: unknown (" + estimate.unavailable + ")\n");
  else
    say(run.options.human, "estimated duration: " + format_estimate(total_seconds(estimate.costs)) +
                               " (--budget DUR refuses a longer one; --dry-run prices it and stops)\n");
  std::fflush(run.options.human);
}

void print_dry_run(const RunSetup& run, const RunEstimate& estimate) {
  std::FILE* human = run.options.human;
  const Plan& plan = run.plan;
  const RunContext& context = run.context;
  if (!estimate.unavailable.empty())
    say(human, "estimated duration: unknown (" + estimate.unavailable + ")\n");
  else
    say(human, "estimated duration: " + format_estimate(total_seconds(estimate.costs)) +
                   " (probe: " + estimate.how +
                   "; rounds priced at those rates with one worker, preparation included; "
                   "more workers or a deeper queue finish sooner)\n");
  std::size_t skipped = 0;
  for (std::size_t i = 0; i < plan.cases.size(); ++i) {
    const std::string& refusal = estimate.refusals[i];
    if (!refusal.empty()) {
      // What the run would record for it (the result's error_message), in the same words.
      ++skipped;
      say(human, "  " + plan.cases[i].name() + "  skipped by the run: " + refusal + "\n");
      continue;
    }
    if (!estimate.unavailable.empty()) {
      std::fprintf(human, "  %s\n", printable(plan.cases[i].name()).c_str());
      continue;
    }
    const CaseCost& cost = estimate.costs[i];
    // Within the console's width: a long name's estimate goes whole on the next line.
    const std::string name = "  " + plan.cases[i].name();
    const std::string time = "(" + std::to_string(cost.repetitions) + " x " +
                             format_estimate(cost.prepare_s + cost.round_s + kRepetitionOverheadS) + ")";
    const bool fits = name.size() + 2 + time.size() <= kConsoleWidth;
    say(human, name + (fits ? "  " : "\n      ") + time + "\n");
  }
  if (skipped > 0)
    std::fprintf(human, "%s of %s would be skipped, with the reasons above\n",
                 plural(skipped, "case", "cases").c_str(), std::to_string(plan.cases.size()).c_str());
  std::fprintf(human, "source: %zu files, %s\n", context.source->size(),
               format_size(double(context.source->total_bytes())).c_str());
  if (context.cache)
    std::fprintf(human, "cache: %zu files, %s\n", context.cache->size(),
                 format_size(double(context.cache->total_bytes())).c_str());
  std::fprintf(human, "scan and plan: %.3f s, max resident memory %ld KiB\n", run.plan_seconds,
               max_rss_kib());
}

}  // namespace feedbench::run_steps
