// Stopping cleanly on SIGINT and SIGTERM: long work (a stage, a verify, a checkpoint's write)
// polls a flag instead of dying half way, so no half-written file stays under a real name and
// what it wrote in a scratch folder is removed.
#pragma once

#include <atomic>
#include <csignal>

namespace feedbench {

// While alive, SIGINT and SIGTERM do not kill the process: they set flag(), which long-running
// work polls to stop cleanly (no half-written file under a real name). The previous handlers
// come back on destruction, also when the work throws.
class StopOnSignals {
 public:
  StopOnSignals();
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

  // The signal number that asked to stop, 0 while none did.
  std::atomic<int>* flag();

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace feedbench
