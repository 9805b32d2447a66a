// The one file that registers cases with Google Benchmark: benchmark::internal stays out of every
// other file (docs/ARCHITECTURE.md, "The other folders").
#include "registration.h"

#include <benchmark/benchmark.h>

#include "families.h"
#include "progress.h"

namespace feedbench {

void register_plan(const Plan& plan, RunContext& context, bool repetitions_from_flag, int flag_repetitions) {
  for (const Case& c : plan.cases) {
    FamilyFunction run = family_function(c.family);
    RunContext* ctx = &context;
    // The Case is captured by value: the plan may go away, the registration stays.
    // Google Benchmark calls this once per repetition (Iterations(1)); the case's records in
    // the RunLog count the repetitions already run.
    const int repetitions = repetitions_from_flag ? flag_repetitions : c.repetitions;
    benchmark::internal::Benchmark* b =
        benchmark::RegisterBenchmark(c.name().c_str(), [c, ctx, run, repetitions](benchmark::State& state) {
          if (!ctx->progress) return run(c, *ctx, state);
          const std::string name = c.name();
          ctx->progress->begin_repetition(name, int(ctx->log.all(name).size()), repetitions);
          run(c, *ctx, state);
          std::vector<const CaseRecord*> records = ctx->log.all(name);
          const nlohmann::json extra = records.empty() ? nlohmann::json() : records.back()->extra;
          const double bytes = extra.is_object() ? extra.value("bytes_read", extra.value("bytes", 0.0)) : 0.0;
          // The line says what was read: a checkpoint's restore (its bytes_per_second is its write).
          const auto rate =
              state.counters.find(c.family == "checkpoint" ? "restore_bytes_per_second" : "bytes_per_second");
          const double bps = rate == state.counters.end() ? 0.0 : double(rate->second);
          ctx->progress->end_repetition(std::uint64_t(bytes), bps > 0 ? bytes / bps : 0.0);
        });
    // One iteration is one round over the selection; its time is what the family measured.
    b->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
    // --benchmark_repetitions= wins when given, as users of the library expect.
    if (!repetitions_from_flag) b->Repetitions(c.repetitions);
  }
}

}  // namespace feedbench
