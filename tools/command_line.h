// What every verb does with its command line: strict parsing, --help, and for the long-running
// verbs a clean stop on Ctrl-C.
#pragma once

#include <atomic>
#include <csignal>

#include <boost/program_options.hpp>

namespace feedbench {

// Parses argv strictly: unknown options, missing values and abbreviations ("--fo" for
// --force) are errors, which main reports with exit code 2.
// RETURNS: true when --help was given: the caller prints its usage and returns 0.
bool parse_command_line(int argc, char** argv, const boost::program_options::options_description& options,
                        boost::program_options::variables_map& vm,
                        const boost::program_options::positional_options_description* positional = nullptr);

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
