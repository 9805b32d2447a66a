// Error channels (docs/ARCHITECTURE.md, "The harness, a folder per subsystem": base):
//   1. a bug            -> FB_CHECK aborts with a message;
//   2. bad input        -> throw InputError; the command prints it and exits 2, having run nothing;
//   3. failure in a run -> the case is skipped with its reason (SkipWithError), the run goes on.
#pragma once

#include <stdexcept>
#include <string>

namespace feedbench {

// Bad input: a config, a command-line option, a result file. `what()` names the place
// (file, JSON pointer or option) and what was expected. Exit code 2.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

// A failure of the system while doing real work (I/O error, unsupported O_DIRECT, refused
// io_uring). Recorded against the case that hit it; never a crash.
class RunError : public std::runtime_error {
 public:
  explicit RunError(const std::string& message) : std::runtime_error(message) {}
};

// RETURNS: "<prefix>: <strerror(errnum)>".
std::string errno_message(const std::string& prefix, int errnum);

[[noreturn]] void check_failed(const char* expr, const char* file, int line, const std::string& msg);

}  // namespace feedbench

// A bug in feedbench: abort with the failed condition and a message.
#define FB_CHECK(cond, msg)                                                   \
  do {                                                                        \
    if (!(cond)) ::feedbench::check_failed(#cond, __FILE__, __LINE__, (msg)); \
  } while (0)
