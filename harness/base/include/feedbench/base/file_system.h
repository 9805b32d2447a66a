// The name of the file system a path lies on, for messages and for the cases that depend on it
// (O_DIRECT served from memory on tmpfs). One table, so every message names a file system alike.
// And the one reader of a one-line kernel file (/sys, /proc).
#pragma once

#include <cstdint>
#include <string>

namespace feedbench {

// RETURNS: the name of a statfs(2) f_type ("ext4", "xfs", "tmpfs", "nfs", "lustre", ...), or
// "fs type 0x…" for one not in the table.
std::string file_system_name(long f_type);

// RETURNS: the name of the file system at `path` (a file or a folder), or "an unknown file
// system" when statfs(2) fails.
std::string file_system_at(const std::string& path);

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

}  // namespace feedbench
