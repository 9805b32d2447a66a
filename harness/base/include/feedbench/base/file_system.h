// The name of the file system a path lies on, for messages and for the cases that depend on it
// (O_DIRECT served from memory on tmpfs). One table, so every message names a file system alike.
// And the one reader of a one-line kernel file (/sys, /proc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace feedbench {

// RETURNS: the name of a statfs(2) f_type ("ext4", "xfs", "tmpfs", "nfs", "lustre", ...), or
// "fs type 0x…" for one not in the table.
std::string file_system_name(long f_type);

// RETURNS: the name of the file system at `path` (a file or a folder), or "an unknown file
// system" when statfs(2) fails.
std::string file_system_at(const std::string& path);

// RETURNS: "7:0 (loop0)" for a device number as st_dev holds it, named by sysfs
// (/sys/dev/block/MAJ:MIN); "MAJ:MIN" alone where sysfs names no block device (tmpfs, overlay).
std::string block_device_label(std::uint64_t dev);

// RETURNS: the folder of the absolute `path` ("/a/b" for "/a/b/c"; "/" for "/c").
std::string folder_of(const std::string& path);

// RETURNS: the deepest folder holding both absolute folders `a` and `b` (no trailing '/'): "/a"
// for "/a/b" and "/a/c", "/" when they share none below it.
std::string common_folder(const std::string& a, const std::string& b);

// RETURNS: the first line of the file at `path` without surrounding white space ("" when it
// cannot be read): a /sys or /proc value such as "tsc" or "[madvise] never".
std::string read_first_line(const std::string& path);

// Reads `fd` from its offset to its end into *out (replacing what it held), retrying EINTR.
// RETURNS: 0, or the errno of the read that failed.
int read_to_end(int fd, std::string* out);

// RETURNS: the page cache that could hold this data: MemAvailable from /proc/meminfo, bytes.
std::uint64_t available_memory_bytes();
// RETURNS: /proc/meminfo's `field` ("MemTotal", "MemAvailable") in bytes, 0 when absent.
std::uint64_t meminfo_bytes(const std::string& field);
// RETURNS: MemTotal in bytes, 0 when unknown.
std::uint64_t total_memory_bytes();

// RETURNS: the bytes an unprivileged writer may still use on the file system holding `path`
// (statvfs: f_bavail x f_frsize), or -1 (errno set) when statvfs fails.
std::int64_t free_bytes_at(const std::string& path);

// Creates the temporary `name` (beneath the folder `dir_fd`, or a path with AT_FDCWD) for
// writing with `mode`, exclusively (O_CREAT|O_EXCL|O_NOFOLLOW): what is already there — another
// user's file, a link, a FIFO — is never opened, so it can neither own our output nor block us.
// A regular file of this user's there (left by an interrupted run of ours) is removed and the name
// created again, once. For temporaries whose name must stay fixed (a scan knows it as ours).
// RETURNS: the descriptor, or -1 with errno set (EEXIST: the name holds what is not ours).
int create_temporary(int dir_fd, const std::string& name, unsigned mode);

// RETURNS: why create_temporary could not create `shown` (errno `err`), for a message: for
// EEXIST, that something this user did not write is at the temporary name (not opened) and
// should be removed; else errno's text.
std::string temporary_refusal(const std::string& shown, int err);

// A file written through a temporary name beside it and renamed into place when complete: a
// reader sees the old file or the whole new one, never half of it. For output too large to hold
// (a trace); write_file_atomically (results/result.h) writes a string with it.
// The temporary (PATH.tmp.PID, or PATH.tmp.PID.RANDOM when that name is taken) is created
// exclusively: a file, link or FIFO someone planted there is left alone, never opened.
class AtomicFile {
 public:
  // kReplace: commit() renames over a file at `path` (an explicit --out: what the user asked).
  // kNeverReplace: commit() never replaces a file; when `path` is taken the first free name of
  // "STEM-2.EXT", "STEM-3.EXT", ... is used (a default name that two runs in a second share).
  enum class Existing { kReplace, kNeverReplace };
  // Creates the temporary (and `path`'s folder). Throws RunError when it cannot.
  explicit AtomicFile(std::string path, Existing existing = Existing::kReplace);
  // Removes the temporary when commit() was not reached.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Appends `text` (buffered). Throws RunError when it cannot be written.
  void write(std::string_view text);
  // Syncs, renames into place, syncs the folder. Throws RunError when it cannot.
  void commit();
  // RETURNS: the path written (after commit(); before it, the path asked for): with
  // kNeverReplace, the name it found free.
  const std::string& path() const { return path_; }

 private:
  void flush();
  void place_without_replacing();
  [[noreturn]] void give_up(const std::string& what, int err);
  std::string path_, tmp_, buffer_;
  Existing existing_;
  int fd_ = -1;
};

}  // namespace feedbench
