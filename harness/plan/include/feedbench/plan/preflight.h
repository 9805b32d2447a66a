// Preflight: what a verb checks before its first case runs or its first byte is written, so an
// output path that cannot be written, or an O_DIRECT block size the device refuses, is bad input
// (InputError, exit 2) found in a second, not a failure found after the work was done; and an
// output that would land on what the verb reads is refused before it destroys it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

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

// A path a verb reads or writes, with what named it, for messages: {"--out", "r.json"},
// {"BASE", "a.json"}, {"dataset.source", "/data"}, {"the --like data set", "/data"}.
struct NamedPath {
  std::string option;
  std::string path;
  bool folder = false;  // an output folder that files are written into (--emit-fio), not a file
};

// Refuses what would destroy a verb's input, before anything is written: an output that is one
// of `inputs` (the files the verb reads); an output that is one of `data_roots` or lies inside
// one (for a file, the folder it goes into; for an output still to be made, the deepest folder
// of its path that exists, where its folders would be made); two outputs that are one file.
// Compared by device and inode, never by path strings, so a symlink or a bind mount of an input
// or of a data folder counts. Inputs and roots that do not exist are left to their readers.
// Throws InputError naming both sides, e.g. "--out c.json: the same file as --config c.json
// (compared by device and inode): ...", "--csv /data/r.csv: inside dataset.source /data (...)".
// NOTE: an output where no file or folder can go (under a file) is left to require_writable_*.
// NOTE: a data root is walked folder by folder only where the kernel's parents cannot tell (an
// output on the root's file system, through another mount of it: a bind mount).
void check_outputs_apart(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs,
                         const std::vector<NamedPath>& data_roots);

// RETURNS: whether the folder `outer` holds the folder `inner` below it, at any depth (compared
// by device and inode, as check_outputs_apart compares, so symlinks and bind mounts count);
// false where either is not a folder.
bool folder_holds(const std::string& outer, const std::string& inner);

// The checkpoint family's scratch (dataset.scratch), before any case runs. Throws InputError
// naming `scratch_option` when the plan has a checkpoint case and the scratch is one of
// `data_roots` (the source, the cache), lies inside one or holds one (compared by device and
// inode), or has fewer bytes free than the plan's largest checkpoint needs (naming both counts).
// Nothing is written. No checkpoint case: nothing is checked.
void check_checkpoint_scratch(const Plan& plan, const NamedPath& scratch,
                              const std::vector<NamedPath>& data_roots);

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
