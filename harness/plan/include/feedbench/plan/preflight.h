// Preflight: what a verb checks before its first case runs or its first byte is written, so an
// output path that cannot be written, or an O_DIRECT block size the device refuses, is bad input
// (InputError, exit 2) found in a second, not a failure found after the work was done.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "feedbench/plan/plan.h"

namespace feedbench {

// RETURNS: "" when a file can be written at `path` (by write_file_atomically: its folder exists
// and takes a new file, or the deepest folder of it that exists does, so the rest can be made),
// else why not, e.g. "/x/afile is not a folder", "it is a folder, expected a file name".
// NOTE: creates and removes a temporary file in the deepest existing folder; creates no folder.
std::string why_file_not_writable(const std::string& path);

// RETURNS: "" when files can be written into the folder `dir` (it exists and takes a new file,
// or the deepest folder of it that exists does), else why not. Same NOTE.
std::string why_folder_not_writable(const std::string& dir);

// Throw InputError "<option>: cannot write <path>: <why>" (for a folder, "cannot write into")
// when the check above fails. `option` names where the path came from, e.g. "--out".
void require_writable_file(const std::string& option, const std::string& path);
void require_writable_folder(const std::string& option, const std::string& dir);

// The offset and length alignment O_DIRECT reads need on one file system.
struct DirectAlignment {
  std::uint64_t bytes = 512;
  std::string how;       // where it came from, e.g. "statx stx_dio_offset_align of /data/a.bin"
  bool assumed = false;  // nothing said: 512, the smallest logical block size, is assumed
};

// RETURNS: the O_DIRECT alignment at `path` (a file, or a folder): statx's stx_dio_offset_align
// where the kernel and file system report it, else the logical block size of the block device
// holding `path` (BLKSSZGET, or sysfs queue/logical_block_size), else 512 with assumed set and
// `how` saying why.
DirectAlignment direct_io_alignment(const std::string& path);

// RETURNS: true when `c` reads with O_DIRECT (file_read with cache_state direct, or engine libaio).
bool reads_direct(const Case& c);

// Throws InputError "<config_file>: <where block_size was set>: block_size N of case NAME is not
// a multiple of A bytes, the O_DIRECT alignment of ROLE (how); expected a multiple of A" for the
// first O_DIRECT case whose block size its role's alignment does not divide.
// `alignment_of(role)` is called once per role an O_DIRECT case reads ("source", "cache").
void check_direct_block_sizes(const Plan& plan, const std::string& config_file,
                              const std::function<DirectAlignment(const std::string& role)>& alignment_of);

}  // namespace feedbench
