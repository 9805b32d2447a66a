#include "progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>

#include "feedbench/base/text.h"
#include "feedbench/base/units.h"

namespace feedbench {

namespace {

// Columns of the terminal behind `out`: a longer line would wrap, and "\r" would then
// rewrite only its last row.
std::size_t columns(std::FILE* out) {
  winsize ws{};
  if (::ioctl(::fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20) return ws.ws_col;
  return 100;
}

}  // namespace

RunProgress::RunProgress(std::FILE* out, bool live, std::size_t cases, std::size_t repetitions)
    : out_(out), live_(live), cases_(cases), repetitions_(repetitions) {
  // The elapsed time and the estimate move during a long round, not only between rounds.
  if (live_) ticker_ = std::thread([this] { tick(); });
}

RunProgress::~RunProgress() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    clear_locked();
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

std::string RunProgress::clock_text(double seconds) {
  const long s = seconds > 0 ? std::lround(seconds) : 0;
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

void RunProgress::begin_repetition(const std::string& case_name, int repetition, int repetitions) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (case_name != full_name_ || case_index_ == 0) {
    full_name_ = case_name;
    ++case_index_;
    auto shown = names_.find(case_name);
    // A replay's name carries its trace's job name: escaped, as every console line is.
    case_name_ = printable(shown == names_.end() ? case_name : shown->second);
    case_bytes_ = 0;
    case_seconds_ = 0;
  }
  repetition_ = repetition;
  case_repetitions_ = repetitions;
  phase_.clear();
  if (live_) draw_locked();
}

void RunProgress::end_repetition(std::uint64_t bytes, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++repetitions_done_;
  bytes_ += bytes;
  case_bytes_ += bytes;
  case_seconds_ += seconds;
  if (seconds > 0) last_rate_ = double(bytes) / seconds;
  phase_.clear();
  if (live_) {
    draw_locked();
  } else if (repetition_ + 1 >= case_repetitions_) {
    const std::string rate = case_seconds_ > 0 ? format_rate(double(case_bytes_) / case_seconds_) : "-";
    const std::string head = "[" + std::to_string(case_index_) + "/" + std::to_string(cases_) + "] ";
    const std::string tail = ": " + std::to_string(case_repetitions_) +
                             (case_repetitions_ == 1 ? " repetition, " : " repetitions, ") +
                             format_size(double(case_bytes_)) + " read at " + rate + "; " +
                             status_locked(Clock::now());
    // Within a console's 120 columns: a name too long for them ends in "...".
    std::string name = case_name_;
    constexpr std::size_t kWidth = 120;
    if (head.size() + name.size() + tail.size() > kWidth && head.size() + tail.size() + 3 < kWidth)
      name = name.substr(0, kWidth - head.size() - tail.size() - 3) + "...";
    std::fprintf(out_, "%s%s%s\n", head.c_str(), name.c_str(), tail.c_str());
    std::fflush(out_);
  }
}

Progress RunProgress::phase(const char* what) {
  if (!live_) return {};
  return [this, what](std::size_t done, std::size_t total) {
    std::lock_guard<std::mutex> lock(mutex_);
    phase_ = std::string(what) + " " + std::to_string(done) + "/" + std::to_string(total) + " files";
    draw_locked();
  };
}

void RunProgress::set_names(std::map<std::string, std::string> names) {
  std::lock_guard<std::mutex> lock(mutex_);
  names_ = std::move(names);
}

void RunProgress::suspend() {
  std::lock_guard<std::mutex> lock(mutex_);
  suspended_ = true;
  clear_locked();
}

void RunProgress::resume() {
  std::lock_guard<std::mutex> lock(mutex_);
  suspended_ = false;
  if (live_ && case_index_ > 0) draw_locked();
}

std::string RunProgress::status_locked(Clock::time_point now) const {
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  std::string left = "?";
  if (repetitions_done_ > 0) {
    const std::size_t to_run = repetitions_ > repetitions_done_ ? repetitions_ - repetitions_done_ : 0;
    left = "~" + clock_text(elapsed / double(repetitions_done_) * double(to_run));
  }
  return clock_text(elapsed) + " elapsed, " + left + " left";
}

void RunProgress::draw_locked() {
  if (!live_ || suspended_ || stop_) return;
  std::string line = "[" + std::to_string(case_index_) + "/" + std::to_string(cases_) + " rep " +
                     std::to_string(repetition_ + 1) + "/" + std::to_string(case_repetitions_) + "] " +
                     format_size(double(bytes_)) + " read, ";
  if (last_rate_ > 0) line += format_rate(last_rate_) + ", ";
  line += status_locked(Clock::now()) + "  ";
  if (!phase_.empty()) line += phase_ + "  ";
  line += case_name_;
  const std::size_t width = columns(out_) - 1;
  if (line.size() > width) line.resize(width);
  std::fprintf(out_, "\r%s\033[K", line.c_str());
  std::fflush(out_);
  shown_ = true;
}

void RunProgress::clear_locked() {
  if (!shown_) return;
  std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
  shown_ = false;
}

void RunProgress::tick() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::milliseconds(250));
    if (!stop_ && case_index_ > 0) draw_locked();
  }
}

}  // namespace feedbench
