// Helpers shared by the unit tests: a temporary folder removed at the end, small files, the
// message of an expected InputError.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <sys/vfs.h>
#include <unistd.h>

#include "feedbench/base/error.h"

namespace feedbench::testing {

// A fresh folder under $TMPDIR (or /var/tmp, which is disk-backed where /tmp is tmpfs), removed
// by the destructor.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/var/tmp") + "/feedbench-test-XXXXXX";
    char* made = ::mkdtemp(pattern.data());
    if (!made) std::abort();
    path_ = made;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

// Writes `content` to `path`, creating parent folders.
// RETURNS: whether `path` is on tmpfs, where a file lives in the page cache and cannot be evicted.
inline bool on_tmpfs(const std::string& path) {
  constexpr long kTmpfsMagic = 0x01021994;
  struct statfs s;
  return ::statfs(path.c_str(), &s) == 0 && s.f_type == kTmpfsMagic;
}

inline void write_file(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// RETURNS: the InputError message `fn` throws, or "" when it throws none.
template <class Fn>
std::string input_error_of(Fn&& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Sets (or, with nullptr, unsets) one variable for the scope of a test, then restores it.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) {
      old_ = old;
      had_ = true;
    }
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedVariable() {
    if (had_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

}  // namespace feedbench::testing
