// The run's progress on stderr, one concept in one place. On a terminal: one live line,
// rewritten in place about four times a second and cleared before anything else is printed:
//   [3/276 rep 2/3] 1.2 GiB read, 450.0 MiB/s, 0:12 elapsed, ~5:10 left  file_read/pattern:...
// (with what the case is doing before its round: "evicting 120/400 files"). Redirected (CI, a
// log file): no live line, one line per case when its last repetition ends:
//   [3/276] file_read/pattern:...: 3 repetitions, 1.2 GiB read at 450.0 MiB/s; 0:12 elapsed, ~5:10 left
// The time left is the mean time per repetition so far times the repetitions still to run.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "feedbench/io/page_cache.h"

namespace feedbench {

class RunProgress {
 public:
  using Clock = std::chrono::steady_clock;

  // `cases`: cases that will run; `repetitions`: their repetitions, all together. `live`: a
  // terminal (the live line), otherwise a line per case. Starts the clock.
  RunProgress(std::FILE* out, bool live, std::size_t cases, std::size_t repetitions);
  ~RunProgress();
  RunProgress(const RunProgress&) = delete;
  RunProgress& operator=(const RunProgress&) = delete;

  // A repetition of `case_name` starts (0-based `repetition` of `repetitions`); a new name is
  // the next case.
  void begin_repetition(const std::string& case_name, int repetition, int repetitions);
  // It ended, having read `bytes` in `seconds` of measured time. Redirected, the case's last
  // repetition prints the case's line (within 120 columns: a longer name ends in "...").
  void end_repetition(std::uint64_t bytes, double seconds);
  // RETURNS: a page-cache Progress callback that shows "<what> done/total files" in the live
  // line; none when not live.
  Progress phase(const char* what);

  // Shows each case under `names[case name]` (a short name) where it has one, else its name.
  void set_names(std::map<std::string, std::string> names);

  // The live line is cleared while other output is printed (the table's rows), then redrawn.
  void suspend();
  void resume();

  // RETURNS: "1:02:03" or "2:03" for a duration in seconds.
  static std::string clock_text(double seconds);

 private:
  std::string status_locked(Clock::time_point now) const;  // the numbers, without the name
  void draw_locked();
  void clear_locked();
  void tick();

  std::FILE* out_;
  const bool live_;
  const std::size_t cases_, repetitions_;
  const Clock::time_point start_ = Clock::now();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false, shown_ = false, suspended_ = false;
  std::size_t case_index_ = 0, repetitions_done_ = 0;
  std::string full_name_, case_name_, phase_;  // case_name_: as shown
  std::map<std::string, std::string> names_;
  int repetition_ = 0, case_repetitions_ = 0;
  std::uint64_t bytes_ = 0, case_bytes_ = 0;
  double case_seconds_ = 0, last_rate_ = 0;
  std::thread ticker_;
};

}  // namespace feedbench
