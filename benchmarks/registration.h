// Registers a Plan with Google Benchmark. The only file that may touch benchmark::internal.
#pragma once

#include "feedbench/plan.h"
#include "run_context.h"

namespace feedbench {

// Registers each case under its canonical name with UseManualTime, Iterations(1) and
// Repetitions(case.repetitions). `context` must outlive RunSpecifiedBenchmarks.
void register_plan(const Plan& plan, RunContext& context);

}  // namespace feedbench
