// PLACEHOLDER until its issue lands: replaced by the real verb.
#include <cstdio>
#include "verbs.h"
namespace feedbench {
int stage_main(int, char**) {
  std::fprintf(stderr, "feedbench stage: not built yet\n");
  return 1;
}
}  // namespace feedbench
