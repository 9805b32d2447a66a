// A data set root scanned once into a FileSet: the selected regular files, in a fixed
// (sorted) order, with sizes and mtimes. Compact: 24 bytes per file plus one arena holding
// every relative path, so ten million files cost about 50 bytes each.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "feedbench/base/pod_array.h"
#include "feedbench/base/unique_fd.h"

namespace feedbench {

// What one FileSet may hold. The defaults are what its packed entries and the workloads'
// 32-bit file indexes can address; tests pass smaller ones to reach the refusals.
struct FileSetLimits {
  std::uint64_t max_files = UINT32_MAX;
  std::uint64_t max_path_bytes = (std::uint64_t{1} << 40) - 1;  // all relative paths together
};

class FileSet {
 public:
  // The largest relative path an entry can hold (its length has 24 bits).
  static constexpr std::uint64_t kMaxPathLength = (std::uint64_t{1} << 24) - 1;

  const std::string& root() const { return root_; }  // absolute, symlinks resolved
  // RETURNS: the root folder opened (O_DIRECTORY), for opening its files relative to it: the
  // kernel then walks only their relative paths. -1 (errno set) when it cannot be opened.
  UniqueFd open_root() const;
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  std::uint64_t total_bytes() const { return total_bytes_; }

  std::string_view relative_path(std::size_t i) const {  // "class_001/img_000001.bin"
    return path_of(entries_[i]);
  }
  std::string absolute_path(std::size_t i) const;  // root + "/" + relative path
  std::uint64_t file_size(std::size_t i) const { return entries_[i].size; }
  std::int64_t mtime_ns(std::size_t i) const { return entries_[i].mtime_ns; }

  // The metadata fingerprint: SHA-256 (hex) over the sorted list of
  // "relative path\0size\0mtime_ns\n". Answers "same files?" without reading contents; an
  // edit that keeps size and mtime goes unseen (content_fingerprint reads samples).
  std::string fingerprint() const;

  // An entry of the root that the scan saw and did not keep (it is not a regular file, or it is
  // feedbench's own), within the selection. `kind`: "symlink", "FIFO", "socket", "device",
  // "feedbench temporary", "feedbench manifest", "feedbench metadata" (gen's record), "other".
  struct LeftOut {
    std::string path;  // relative, like relative_path()
    std::string kind;
  };
  const std::vector<LeftOut>& left_out() const { return left_out_; }

  // Builders (used by scan_dataset and tests).
  explicit FileSet(std::string root = {}, FileSetLimits limits = {})
      : root_(std::move(root)), limits_(limits) {}
  // Adds the file `prefix` + `name` (prefix "" or ending in '/'). Throws InputError naming the
  // root when the set would pass its limits (max_files, max_path_bytes, kMaxPathLength).
  void add(std::string_view prefix, std::string_view name, std::uint64_t size, std::int64_t mtime_ns);
  void add(std::string_view relative_path, std::uint64_t size, std::int64_t mtime_ns) {
    add({}, relative_path, size, mtime_ns);
  }
  void add_left_out(std::string_view relative_path, std::string kind);
  void sort();           // by relative path, byte order (left_out() too)
  void shrink_to_fit();  // gives back the arrays' unused capacity once the set is complete

 private:
  // 24 bytes: the path packed as offset (40 bits) << 24 | length (24 bits).
  struct Entry {
    std::uint64_t size;
    std::int64_t mtime_ns;
    std::uint64_t path;
  };
  static_assert(sizeof(Entry) == 24);
  // An entry's path: `path` is its offset in the arena << 24 | its length.
  std::string_view path_of(const Entry& e) const {
    return std::string_view(arena_.data() + (e.path >> 24), std::size_t(e.path & kMaxPathLength));
  }

  std::string root_;
  FileSetLimits limits_;
  PodArray<char> arena_;
  PodArray<Entry> entries_;
  std::uint64_t total_bytes_ = 0;
  std::vector<LeftOut> left_out_;
};

// RETURNS: "" when nothing was left out, else one line naming what was and why, e.g.
// "left out 3 entries that are not regular files or are feedbench's own: a.fifo (FIFO), ...",
// at most `shown` names, then "and N more". Kinds in `ignore` are neither counted nor named.
std::string left_out_note(const FileSet& files, const std::vector<std::string>& ignore = {},
                          std::size_t shown = 10);

// The content fingerprint reads these blocks of each file: the first, the middle (aligned
// down) and the last kContentSampleBytes, or the whole file when it is no larger than three.
inline constexpr std::uint64_t kContentSampleBytes = 4096;
inline constexpr const char* kContentSampleDescription =
    "SHA-256 of the first, middle and last 4 KiB of each file (whole files up to 12 KiB)";

// RETURNS: hex SHA-256 of the sampled blocks of `files`' file i as it is now (with the bytes
// each pread returned, so a file that shrank gives another digest). Opens with O_NOATIME where
// allowed; never writes. Throws RunError naming the file when it cannot be opened or read.
std::string sampled_content_digest(const FileSet& files, std::size_t i);

// The content fingerprint: SHA-256 (hex) over "relative path\0size\0sampled digest\n" per
// file, in order. Independent of mtimes, so a faithful copy has its source's; reads about
// 12 KiB per file (the reads populate the page cache: cold and warm cases set their state
// afterwards, per case). Throws RunError as sampled_content_digest.
std::string content_fingerprint(const FileSet& files);

// True when `relative_path` matches `glob` ("*" and "?" stay inside one folder, "**" spans
// folders: "validation/**", "**/*.jpg").
bool glob_match(std::string_view glob, std::string_view relative_path);

// Scans `root` recursively: regular files only; symlinks are not followed (a data set never
// leads out of its root). Files whose relative path matches any of `include` are kept (all
// when `include` is empty). Files named like feedbench's own cache metadata
// (MANIFEST.sha256, feedbench-manifest.json and gen's feedbench-gen.json at the root, *.fbtmp
// anywhere) and folders named
// *.fbtmp (another run's scratch staging) are skipped; every selected entry skipped is listed
// in left_out(). A folder or file that vanishes while it is scanned is not an error.
//
// Folders are read by several threads at once (each lists a folder, stats its files relative
// to the folder's descriptor in inode order, and sorts its entries); the result is the same
// sorted set whatever the threads' timing. When folders fail to read, the error is the one of
// the folder first in path order.
// RETURNS: sorted FileSet. Throws InputError when root is missing or not a directory, when a
// folder cannot be read, or when the selection passes `options.limits`.
struct ScanOptions {
  // Threads reading folders; 0: FEEDBENCH_SCAN_THREADS from the environment, else
  // kDefaultScanThreads. More threads than cores help when the metadata is not cached.
  unsigned threads = 0;
  FileSetLimits limits;
};
inline constexpr unsigned kDefaultScanThreads = 4;
FileSet scan_dataset(const std::string& root, const std::vector<std::string>& include = {},
                     const ScanOptions& options = {});

}  // namespace feedbench
