#include "feedbench/base/error.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace feedbench {

std::string errno_message(const std::string& prefix, int errnum) {
  return prefix + ": " + std::strerror(errnum);
}

void check_failed(const char* expr, const char* file, int line, const std::string& msg) {
  std::fprintf(stderr, "feedbench: internal error at %s:%d: check '%s' failed: %s\n", file, line, expr,
               msg.c_str());
  std::abort();
}

}  // namespace feedbench
