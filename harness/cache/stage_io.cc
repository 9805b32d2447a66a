// The file primitives shared by the stage's phases (see stage_io.h).
#include "stage_io.h"

#include <cstdio>
#include <filesystem>
#include <vector>

#include <fcntl.h>

#include "feedbench/base/error.h"
#include "feedbench/base/threads.h"
#include "feedbench/dataset/data_file.h"

namespace feedbench {

namespace fs = std::filesystem;

double seconds_since(StageClock::time_point start) {
  return std::chrono::duration<double>(StageClock::now() - start).count();
}

bool is_within(const std::string& inner, const std::string& outer) {
  if (inner == outer) return true;
  if (outer == "/") return true;
  return inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 &&
         inner[outer.size()] == '/';
}

std::string resolve_maybe_missing(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  if (ec) throw InputError("cannot resolve '" + path + "': " + ec.message());
  fs::path resolved = fs::weakly_canonical(p, ec);
  if (ec) throw InputError("cannot resolve '" + path + "': " + ec.message());
  std::string s = resolved.string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

int open_source(const std::string& path, std::string* why, bool direct) {
  const DataFile f = open_data_file(AT_FDCWD, path, {.direct = direct});
  if (!f.ok()) {
    if (why) *why = f.reason(path);
    errno = f.kind ? ENXIO : f.error;
  }
  return f.fd;
}

int open_cached(int cache_fd, const std::string& relative, bool direct) {
  const DataFile f = open_data_file(cache_fd, relative, {.direct = direct, .beneath = true});
  if (!f.ok()) errno = f.kind ? ENXIO : f.error;
  return f.fd;
}

ProgressTicker::ProgressTicker(bool enabled, std::function<void()> print) {
  if (!enabled) return;
  std::vector<std::thread> one;
  // A progress line is not worth failing for: refused (a pids limit), there is none.
  if (start_thread(
          one,
          [this, print = std::move(print)] {
            std::unique_lock lock(mutex_);
            while (!cv_.wait_for(lock, std::chrono::milliseconds(250), [this] { return done_; })) print();
          },
          "progress", 0, 1)
          .empty())
    thread_ = std::move(one.front());
}

ProgressTicker::~ProgressTicker() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
  std::fprintf(stderr, "\r\033[K");
}

}  // namespace feedbench
