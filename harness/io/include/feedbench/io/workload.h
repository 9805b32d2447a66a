// What a round reads, as per-worker streams of (file, offset, length): the access pattern
// alone, no I/O. Deterministic for a seed. No allocation or lock per item.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "feedbench/dataset/dataset.h"
#include "feedbench/io/skew.h"

namespace feedbench {

enum class Pattern {
  sequential,      // each file start to end, files in sorted order, handed to free workers
  random,          // aligned random blocks across all files (weighted by size); as many reads
                   // as one pass over the data takes, split evenly over workers
  shuffled_files,  // whole files in a seeded shuffled order (one epoch over an image folder)
  skewed,          // whole files drawn with replacement by a Skew (skew.h): as many draws as
                   // files, so a round is one epoch's worth of reads, most of them of hot files
};

// Throws InputError for an unknown name. RETURNS: the pattern ("zipf:…" and "hot_set:…" are
// Pattern::skewed; parse_skew reads their parameters).
Pattern parse_pattern(std::string_view name);
std::string_view pattern_name(Pattern pattern);

struct WorkItem {
  std::uint32_t file = 0;    // index into the FileSet
  std::uint32_t length = 0;  // bytes asked for (may run past the end of the file; the read is short)
  std::uint64_t offset = 0;
  bool first_of_file = false;  // the worker should open the file before this read
  bool last_of_file = false;   // ...and may close it after this read
  // random: both flags stay false; any item may name any file, so the runner keeps a small
  // per-worker cache of open files instead.
};

struct WorkloadSpec {
  Pattern pattern = Pattern::sequential;
  std::uint64_t block_size = 1 << 20;
  unsigned workers = 1;
  std::uint64_t seed = 42;
  std::uint64_t round = 0;  // mixed into the seed: each round (epoch) gets its own shuffle
  // Bytes a round reads at most (0: the whole selection). Whole-file patterns read a prefix of
  // their order, the last file up to the block at or past the cap; random makes
  // ceil(max_bytes / block_size) reads. Either may pass the cap by less than one block.
  std::uint64_t max_bytes = 0;
  Skew skew;  // Pattern::skewed: the distribution; files ranked by hot_ranking(files, seed)
  // Pattern::skewed: rank by this set's paths instead (index for index the same files): a
  // tiered set is ranked by its source's paths, so the same files are hot.
  const FileSet* rank_by = nullptr;
};

class Workload {
 public:
  // REQUIRES: files outlives the workload; spec.block_size > 0; spec.workers >= 1.
  Workload(const FileSet& files, const WorkloadSpec& spec);
  ~Workload();

  // Next read for `worker`. Thread-safe across distinct workers.
  // RETURNS: false when this worker has nothing more to read this round.
  bool next(unsigned worker, WorkItem& item);

  std::uint64_t planned_bytes() const;    // bytes a complete round asks for (max_bytes applied)
  std::uint64_t full_pass_bytes() const;  // ...and without max_bytes
  const WorkloadSpec& spec() const { return spec_; }
  // RETURNS: the files a whole-file round reads, in order, repeats included (empty for
  // sequential and random): for a skewed round, what its reads fell on.
  const std::vector<std::uint32_t>& order() const;

 private:
  struct Impl;
  const FileSet& files_;
  WorkloadSpec spec_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace feedbench
