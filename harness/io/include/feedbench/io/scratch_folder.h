// A folder feedbench writes in beneath a scratch root (dataset.scratch) and removes whole: the
// checkpoint family's. It is made by mkdir, never one that exists (a name someone else holds is
// passed over, never entered), and marked as feedbench's by a marker file; files are created in
// it exclusively, through no symbolic link, and only the files it created are ever removed.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "feedbench/base/unique_fd.h"

namespace feedbench {

class ScratchFolder {
 public:
  // The marker in every folder a ScratchFolder made: its first line names feedbench.
  static constexpr const char* kMarker = ".feedbench-scratch";

  // Creates "<root>/<prefix>-<pid>-<n>" (the first n whose name is free; mode 0700) and its
  // marker. Throws RunError naming the root when it cannot (no such folder, no permission, no
  // room for the marker); nothing is left behind then.
  ScratchFolder(const std::string& root, const std::string& prefix);
  // remove(), its failure ignored: a folder left is named by remove()'s callers, never silently.
  ~ScratchFolder();
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;

  const std::string& path() const { return path_; }
  // RETURNS: the folder, opened (O_DIRECTORY): files are created and removed relative to it.
  int fd() const { return dir_.get(); }

  // Creates the file `name` (a plain name: no '/') in the folder for writing (O_WRONLY, plus
  // `extra_flags` such as O_DIRECT), exclusively and without following a link; it is then one
  // of the files remove() removes. Thread-safe. RETURNS: the descriptor, or -1 with errno set.
  int create(const std::string& name, int extra_flags);
  // RETURNS: the names of the files created so far, in creation order.
  std::vector<std::string> files() const;

  // Removes the files this object created so far (each by its name, beneath the folder) and
  // forgets them; the folder and its marker stay. RETURNS: "" or what could not be removed.
  std::string remove_files();

  // Removes the files this object created (each by its name, beneath the folder), then the
  // marker and the folder; a folder someone else put a file in stays, with that file.
  // RETURNS: "" when the folder is gone, else what is left and why. Idempotent.
  std::string remove_all();

  // RETURNS: "" when `folder` holds a marker a ScratchFolder wrote, else why it is not one of
  // feedbench's ("no .feedbench-scratch marker", "its marker was not written by feedbench").
  static std::string why_not_ours(const std::string& folder);

 private:
  std::string root_, name_, path_;
  UniqueFd root_fd_, dir_;
  mutable std::mutex mutex_;
  std::vector<std::string> files_;
  bool removed_ = false;

  std::string remove_files_locked();  // REQUIRES: mutex_ held
};

}  // namespace feedbench
