// A data set root scanned once into a FileSet: the selected regular files, in a fixed
// (sorted) order, with sizes and mtimes. Compact: one string arena for all paths, so a
// million files cost well under 200 bytes each.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace feedbench {

class FileSet {
 public:
  struct Entry {
    std::uint64_t path_offset;  // into the arena
    std::uint32_t path_length;
    std::uint64_t size;
    std::int64_t mtime_ns;
  };

  const std::string& root() const { return root_; }  // absolute, symlinks resolved
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  std::uint64_t total_bytes() const { return total_bytes_; }

  std::string_view relative_path(std::size_t i) const;  // "class_001/img_000001.bin"
  std::string absolute_path(std::size_t i) const;       // root + "/" + relative path
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
  explicit FileSet(std::string root = {}) : root_(std::move(root)) {}
  void add(std::string_view relative_path, std::uint64_t size, std::int64_t mtime_ns);
  void add_left_out(std::string_view relative_path, std::string kind);
  void sort();  // by relative path, byte order (left_out() too)

 private:
  std::string root_;
  std::string arena_;
  std::vector<Entry> entries_;
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
// RETURNS: sorted FileSet. Throws InputError when root is missing or not a directory.
FileSet scan_dataset(const std::string& root, const std::vector<std::string>& include = {});

}  // namespace feedbench
