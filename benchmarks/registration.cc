// The one file that registers cases with Google Benchmark (DESIGN.md: keep benchmark::internal
// out of every other file).
#include "registration.h"

#include <benchmark/benchmark.h>

#include "families.h"

namespace feedbench {

void register_plan(const Plan& plan, RunContext& context, bool repetitions_from_flag) {
  for (const Case& c : plan.cases) {
    FamilyFunction run = family_function(c.family);
    RunContext* ctx = &context;
    // The Case is captured by value: the plan may go away, the registration stays.
    benchmark::internal::Benchmark* b = benchmark::RegisterBenchmark(
        c.name().c_str(), [c, ctx, run](benchmark::State& state) { run(c, *ctx, state); });
    // One iteration is one round over the selection; its time is what the family measured.
    b->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
    // --benchmark_repetitions= wins when given, as users of the library expect.
    if (!repetitions_from_flag) b->Repetitions(c.repetitions);
  }
}

}  // namespace feedbench
