// The rest of a qualification beside the accelerator searches: what a path's storage reads of a
// workload's files at best, and a checkpoint's write and cold restore on it. Each is a child
// `feedbench run` of one config (file_read, checkpoint); the configs and the readings of their
// result files are pure, so unit tests check both.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "feedbench/results/card.h"
#include "feedbench/results/result.h"
#include "workload_profiles.h"

namespace feedbench {

// The reader counts a best-read sweep tries: one cold pass of shuffled whole files each.
inline constexpr int kReadsWorkers[] = {1, 4, 16};

// RETURNS: the experiment config that finds how fast `data` (a qualify data set's folder, its
// first `units` units) reads at best: file_read of shuffled whole files, cold, in 1 MiB reads,
// one pass per kReadsWorkers entry, each at most `pass_seconds` long.
nlohmann::json reads_config(const WorkloadProfile& profile, const std::string& data, int units,
                            double pass_seconds);

// RETURNS: the best pass of a reads_config run as a card's reads of `path`: its rate, readers,
// bytes and seconds, and the accelerators it feeds at `need_bytes_per_second` each (0 when that is 0).
// Throws InputError when the document holds no measured file_read case.
CardReads read_best_reads(const ResultDocument& document, const std::string& path,
                          double need_bytes_per_second);

// RETURNS: the limit of `cell` (its path's) told with that path's best reads `reads`: a cell
// limited by the host's CPU says what the storage alone would feed ("...; the store's reads
// alone would feed 6"), and a cold one whose storage feeds hardly more than the cell did (less
// than 1.25 times) is the storage's to limit: "the store's bandwidth: its best cold reads,
// 301 MiB/s, feed 0.096 (and <the CPU's limit>)". Any other cell's limit unchanged, as is every
// limit where reads.accelerators is 0 (the need unknown).
std::string limit_with_reads(const CardCell& cell, const CardReads& reads);

// The model whose checkpoint qualify writes: the tokens workload's (Llama 3 8B).
inline constexpr const char* kQualifyCheckpointModel = "llama3-8b";

// The checkpoint qualify writes: `model`'s, at `scale` of its size.
struct CheckpointPlan {
  std::string model = kQualifyCheckpointModel;
  double scale = 0.01;
  std::string source;   // a data set folder the run scans (a run needs one), never written
  std::string scratch;  // the folder the checkpoint family writes its own subfolder in
};

// RETURNS: the model's whole checkpoint in bytes and its writer ranks. Throws InputError for a
// model the checkpoint family does not know.
std::uint64_t checkpoint_full_bytes(const std::string& model, std::int64_t* ranks);

// RETURNS: the experiment config of one checkpoint written into plan.scratch, fsync'd, and
// restored cold (the checkpoint family, one repetition).
nlohmann::json checkpoint_config(const CheckpointPlan& plan);

// RETURNS: the checkpoint case of a checkpoint_config run as a card's checkpoint of `path`.
// Throws InputError when the document holds no measured checkpoint case.
CardCheckpoint read_checkpoint(const ResultDocument& document, const std::string& path,
                               const CheckpointPlan& plan);

}  // namespace feedbench
