// PLACEHOLDER until the file_read family lands.
#include "families.h"
namespace feedbench {
void run_file_read_case(const Case&, RunContext&, benchmark::State& state) {
  for (auto _ : state) state.SkipWithError("not built yet");
}
}  // namespace feedbench
