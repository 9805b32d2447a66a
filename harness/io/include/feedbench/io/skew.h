// Skewed access, as fio's random_distribution: a few files take most reads. Files are ranked by
// a seeded hash of their relative path, so the same files are hot on the source and in a cache
// of it (whatever else either holds), and `stage --hot-set` can select them without reading.
//   zipf:θ           the file of rank k (from 1) is read with probability ∝ 1 / k^θ
//   hot_set:F%:R%    the top F% of files by rank take R% of reads, uniformly within each part
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "feedbench/dataset/dataset.h"

namespace feedbench {

struct Skew {
  enum class Kind { none, zipf, hot_set };
  Kind kind = Kind::none;
  double theta = 0;      // zipf: 0 < θ <= 10
  double hot_files = 0;  // hot_set: fraction of files that are hot, 0 < f < 1
  double hot_reads = 0;  // hot_set: fraction of reads they take, 0 < r <= 1
};

// RETURNS: true when `text` starts like a skewed pattern ("zipf:" or "hot_set:").
bool is_skew_pattern(std::string_view text);
// Parses "zipf:1.1" or "hot_set:10%:90%". Throws InputError naming `what`.
Skew parse_skew(std::string_view text, const std::string& what = "pattern");
// RETURNS: the canonical text: "zipf:1.1", "hot_set:10%:90%".
std::string format_skew(const Skew& skew);

// RETURNS: the indices of `files` from hottest to coldest: ordered by a hash of (seed, relative
// path), so a file's rank among any set of files depends only on its path and the seed.
std::vector<std::uint32_t> hot_ranking(const FileSet& files, std::uint64_t seed);

// RETURNS: the number of hot files of a data set of n files at `fraction` (at least 1 when n > 0).
std::size_t hot_count(std::size_t n, double fraction);

// RETURNS: the relative paths of the hot files of `files` (the first hot_count(size, fraction) of
// hot_ranking(files, seed)), sorted: the selection `stage --hot-set` caches.
std::vector<std::string> hot_set_paths(const FileSet& files, double fraction, std::uint64_t seed);

// A cache that holds part of a selection (dataset.partial_cache: a hot set staged with
// stage --hot-set). RETURNS: per file of `source`, whether `cache` holds its relative path.
std::vector<bool> held_by(const FileSet& source, const FileSet& cache);
// RETURNS: `source`'s files in its order, each at its cache path when `cache` holds it, else at
// its source path (relative_path() is then the absolute path without its leading '/'; rank such
// a set by the source's paths: WorkloadSpec::rank_by).
FileSet tiered_files(const FileSet& source, const FileSet& cache);

// Draws file indices by a skew over a ranking. Deterministic for the random numbers it is fed.
class SkewSampler {
 public:
  // REQUIRES: skew.kind != none, ranking non-empty.
  SkewSampler(const Skew& skew, std::vector<std::uint32_t> ranking);
  // RETURNS: a file index, given a uniform 64-bit random number.
  std::uint32_t draw(std::uint64_t random) const;
  // RETURNS: the probability of the file of rank k (0-based): for tests and expectations.
  double probability(std::size_t rank) const;
  const std::vector<std::uint32_t>& ranking() const { return ranking_; }

 private:
  Skew skew_;
  std::vector<std::uint32_t> ranking_;
  std::vector<double> cdf_;  // zipf: cumulative probability up to and including rank k
  std::size_t hot_ = 0;      // hot_set: files in the hot part
};

// RETURNS: `n` draws from the sampler with a stream seeded by (seed, round).
std::vector<std::uint32_t> skewed_order(const SkewSampler& sampler, std::size_t n, std::uint64_t seed,
                                        std::uint64_t round);

}  // namespace feedbench
