// Registers a Plan with Google Benchmark. The only file that may touch benchmark::internal.
#pragma once

#include "feedbench/plan/plan.h"
#include "run_context.h"

namespace feedbench {

// Registers each case under its canonical name with UseManualTime, Iterations(1) and
// Repetitions(case.repetitions). `context` must outlive RunSpecifiedBenchmarks.
// REQUIRES: repetitions_from_flag is true when --benchmark_repetitions= was given (then the
// flag decides, not the config; `flag_repetitions` is its value, for context.progress).
void register_plan(const Plan& plan, RunContext& context, bool repetitions_from_flag,
                   int flag_repetitions = 1);

}  // namespace feedbench
