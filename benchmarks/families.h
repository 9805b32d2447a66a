// The benchmark families. Each runs one repetition of a Case inside Google Benchmark's loop:
// untimed preparation first, then one timed round reported with SetIterationTime, counters
// on the State and a CaseRecord in the RunLog. A failure skips the case with its reason.
#pragma once

#include <benchmark/benchmark.h>

#include "feedbench/plan/plan.h"
#include "run_context.h"

namespace feedbench {

using FamilyFunction = void (*)(const Case&, RunContext&, benchmark::State&);

void run_file_read_case(const Case& c, RunContext& context, benchmark::State& state);  // file_read_family.cc
void run_loader_case(const Case& c, RunContext& context, benchmark::State& state);     // loader_family.cc
void run_stage_case(const Case& c, RunContext& context, benchmark::State& state);      // stage_family.cc

// RETURNS: the family's function; FB_CHECK-fails for a family the plan could not produce.
FamilyFunction family_function(const std::string& family);

}  // namespace feedbench
