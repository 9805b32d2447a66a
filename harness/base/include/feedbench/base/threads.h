// Starting threads when the system may refuse them: a container's pids limit or RLIMIT_NPROC
// makes std::thread throw std::system_error (EAGAIN), which uncaught ends the process with
// "terminate called". Every thread feedbench starts goes through start_thread, and each caller
// turns a refusal into a run error (the case skipped, stage failing cleanly) or works on with
// the threads it got.
#pragma once

#include <cerrno>
#include <cstddef>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace feedbench {

// NOTE: test hook: FEEDBENCH_TEST_THREAD_LIMIT=N refuses (EAGAIN) every start_thread after the
// first N of the process, as a pids limit would. RETURNS: true when this start is refused.
bool thread_start_refused_for_test();

// RETURNS: "cannot start <what> <index + 1> of <count>: <reason>".
std::string thread_refusal_message(const char* what, std::size_t index, std::size_t count, int err);

// Starts `fn` on a new thread appended to `threads`.
// RETURNS: "" when it started; otherwise the refusal (thread_refusal_message), nothing appended.
template <class F>
std::string start_thread(std::vector<std::thread>& threads, F&& fn, const char* what, std::size_t index,
                         std::size_t count) {
  if (thread_start_refused_for_test()) return thread_refusal_message(what, index, count, EAGAIN);
  try {
    threads.emplace_back(std::forward<F>(fn));
  } catch (const std::system_error& e) {
    return thread_refusal_message(what, index, count, e.code().value());
  }
  return "";
}

}  // namespace feedbench
