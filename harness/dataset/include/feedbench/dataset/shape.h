// The shape of a real data set, for `gen --like`: the folders its files sit in (depth, files per
// folder, folder count), its file count and its file-size distribution, taken from a scan (names
// and sizes only: no file is opened), scaled. The generator (generator.h) writes a synthetic data
// set of that shape; gen records where the shape came from in the written folder's
// feedbench-gen.json, which a run's result carries with the data set it describes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "feedbench/dataset/dataset.h"

namespace feedbench {

// The written data set's record of how it was made, at its root (the scan leaves it out).
inline constexpr const char* kGenRecordName = "feedbench-gen.json";
inline constexpr const char* kGenRecordSchema = "feedbench-gen/1";

// Sizes at evenly spaced probabilities: points[k] is the size at p = k / (points.size() - 1).
struct SizeDistribution {
  std::vector<std::uint64_t> points;  // sorted, non-empty

  // RETURNS: the size at probability u in [0, 1]: linear interpolation between the neighbouring
  // points, rounded down (so never beyond the largest real size).
  std::uint64_t at(double u) const;
};

// At most this many points: the distribution of a tree of millions of files in 32 KiB, and a
// generated sample's distance from the real one grows by at most 1 / (points - 1) for it.
inline constexpr std::size_t kMaxSizePoints = 4097;

// REQUIRES: `sizes` non-empty, max_points >= 2. RETURNS: every size, sorted, when there are at
// most max_points; else max_points quantiles (linear interpolation between order statistics),
// the smallest and largest sizes included.
SizeDistribution size_distribution(std::vector<std::uint64_t> sizes, std::size_t max_points = kMaxSizePoints);

struct ShapeFolder {
  std::string path;         // synthetic, relative to the written root ("" for the root itself)
  std::uint64_t files = 0;  // files directly in it
  std::uint64_t first = 0;  // the index of its first file: folders hold consecutive files
};

struct DataShape {
  std::vector<std::string> dirs;     // every folder to create, parents first (the root not listed)
  std::vector<ShapeFolder> folders;  // the folders holding files, in write order
  std::uint64_t files = 0;           // the sum over `folders`
  SizeDistribution sizes;
  nlohmann::ordered_json origin;  // where it came from: like_origin's object
};

// RETURNS: the shape of `real` at `scale`: max(1, round(scale × files)) files in
// max(1, round(scale × folders holding files)) folders (at most one per file). Folders are
// chosen by systematic sampling over the real ones ordered by (depth, files, path), so depths
// and files per folder keep their distribution; each keeps its real chain of parent folders
// (names are synthetic: dir_000 by its place among its siblings), and the counts are scaled to
// the file total by largest remainder. `origin` holds like_origin(real, scale, where, kind).
// REQUIRES: real non-empty, 0 < scale <= 1.
DataShape data_shape(const FileSet& real, double scale, const std::string& where, const std::string& kind);

// RETURNS: {"path", "kind" ("folder" or "manifest"), "files", "bytes", "folders" (holding files),
// "max_depth", "size_quantiles" {min, p01, p10, p25, p50, p75, p90, p99, max}, "fingerprint" (the
// real selection's metadata fingerprint), "scale"}.
nlohmann::ordered_json like_origin(const FileSet& real, double scale, const std::string& where,
                                   const std::string& kind);

// RETURNS: the size of file `index` of a data set of `files` files drawn from `sizes`: stratified
// (file i takes the stratum perm(i) of `files` equal strata of probability, perm a seeded
// permutation, at a seeded point within it), so the written sizes' distribution is within
// 1 / files of `sizes`' (Kolmogorov-Smirnov distance), not only close on average.
// REQUIRES: index < files.
std::uint64_t shape_file_size(const SizeDistribution& sizes, std::uint64_t files, std::uint64_t seed,
                              std::uint64_t index);

// RETURNS: a seeded permutation of [0, n) evaluated at i (a Feistel network with cycle walking:
// no table, O(1) expected per call). REQUIRES: i < n.
std::uint64_t seeded_permutation(std::uint64_t n, std::uint64_t seed, std::uint64_t i);

// RETURNS: the "like" object of `root`'s feedbench-gen.json when there is a valid one, else
// nullopt (a folder gen did not write with --like, a record that cannot be parsed, or one that
// is not a regular file of `root` itself: a symbolic link, a FIFO).
std::optional<nlohmann::json> read_gen_like(const std::string& root);

}  // namespace feedbench
