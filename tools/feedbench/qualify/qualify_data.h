// The data sets `feedbench qualify` writes: one folder per workload beneath --store
// ("feedbench-qualify-<workload>", made by qualify and marked by .feedbench-qualify) holding
// one unit per accelerator (unit_000 ...: one accelerator's epoch each, trial.h), and its staged
// copy beneath --cache. A folder without the marker is never entered; only the files qualify
// wrote are removed; a kept folder whose marker says the same workload, units and seed is reused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "feedbench/io/page_cache.h"
#include "workload_profiles.h"

namespace feedbench {

inline constexpr const char* kQualifyMarker = ".feedbench-qualify";

// One workload's data set: where it is and what it holds.
struct QualifyDataSet {
  const WorkloadProfile* profile = nullptr;
  int units = 1;  // accelerators' epochs it holds
  std::uint64_t seed = 42;
  std::string store_dir;  // <store>/feedbench-qualify-<name>
  std::string cache_dir;  // <cache>/feedbench-qualify-<name>, "" without --cache

  // RETURNS: gen's options of unit `i`.
  GenOptions unit_options(int i) const;
  // RETURNS: the bytes the data set holds (every unit), on each path.
  std::uint64_t bytes() const;
  // RETURNS: every file qualify writes in the store folder, relative to it (the units' files and
  // gen's records), and in the cache folder (the same, then the stage's manifests).
  std::vector<std::string> store_files() const;
  std::vector<std::string> cache_files() const;
  // RETURNS: the marker's text: the workload, units, seed and whether the folder is complete.
  std::string marker(bool complete) const;
};

// Evicts the store's copy of `data` from the page cache (every file qualify wrote there, those
// present): written a moment ago, it would otherwise be read from memory by the stage into the
// cache, whose rate is meant to be the store's. RETURNS: what stayed resident, measured after.
Residency evict_store_copy(const QualifyDataSet& data);

// RETURNS: the data set of `profile` beneath `store` and `cache` ("" for none).
QualifyDataSet qualify_data_set(const WorkloadProfile& profile, int units, std::uint64_t seed,
                                const std::string& store, const std::string& cache);

// What a folder holds, as qualify sees it.
enum class FolderState {
  kMissing,   // nothing at that name
  kComplete,  // ours, complete, for this very data set: reused
  kOurs,      // ours, but another data set or unfinished: its files are removed, then written again
  kNotOurs,   // something else: refused
};

// RETURNS: the state of `dir` for `data` (`dir` is its store_dir or cache_dir); `why` says why
// kNotOurs ("exists without a .feedbench-qualify marker").
FolderState folder_state(const std::string& dir, const QualifyDataSet& data, std::string* why);

// Makes `dir` (mode 0755; its parent must exist) with an unfinished marker. Throws RunError.
void make_qualify_folder(const std::string& dir, const QualifyDataSet& data);
// Marks `dir` complete. Throws RunError.
void mark_complete(const std::string& dir, const QualifyDataSet& data);

// Removes `files` (relative to `dir`, each a file qualify wrote; missing ones skipped), then
// every folder beneath `dir` left empty, the marker and `dir`. RETURNS: "" when `dir` is gone,
// else what stays and why (a file qualify did not write keeps its folder).
std::string remove_qualify_folder(const std::string& dir, const std::vector<std::string>& files);

}  // namespace feedbench
