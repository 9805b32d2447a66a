// The benchmark families. Each runs one repetition of a Case inside Google Benchmark's loop:
// untimed preparation first, then one timed round reported with SetIterationTime, counters
// on the State and a CaseRecord in the RunLog. A failure skips the case with its reason.
#pragma once

#include <benchmark/benchmark.h>

#include <string>

#include "feedbench/plan/plan.h"
#include "run_context.h"

namespace feedbench {

using FamilyFunction = void (*)(const Case&, RunContext&, benchmark::State&);

void run_file_read_case(const Case& c, RunContext& context, benchmark::State& state);  // file_read_family.cc
void run_loader_case(const Case& c, RunContext& context, benchmark::State& state);     // loader_family.cc
void run_stage_case(const Case& c, RunContext& context, benchmark::State& state);      // stage_family.cc
void run_replay_case(const Case& c, RunContext& context, benchmark::State& state);     // replay_family.cc
void run_checkpoint_case(const Case& c, RunContext& context,
                         benchmark::State& state);  // checkpoint_family.cc

// RETURNS: why the run would skip case `c` before measuring anything, from what is known before
// any case runs (its selection, the config, O_DIRECT on its path, a CUDA device, the loader's
// schedule over its samples), in the family's own words; "" when it would run it
// (case_refusals.cc). Collective checks across ranks are the run's alone.
std::string planned_refusal(const Case& c, RunContext& context);

// RETURNS: loader_schedule's refusal of loader case `c` over `files` (this rank's trainers of
// the run's, as the case would run them), "" when it can run. Throws what the case's source
// throws in its set-up (loader_family.cc).
std::string loader_schedule_refusal(const Case& c, RunContext& context, const FileSet& files);

// RETURNS: the family's function; FB_CHECK-fails for a family the plan could not produce.
FamilyFunction family_function(const std::string& family);

}  // namespace feedbench
