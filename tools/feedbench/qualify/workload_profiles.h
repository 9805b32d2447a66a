// The built-in workloads `feedbench qualify` measures: each a data shape (what `gen` writes), a
// pipeline (the loader's samples, transform, workers) and one accelerator's compute per batch.
// Every figure's source is in `source` and in docs/qualify.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "feedbench/dataset/generator.h"

namespace feedbench {

struct WorkloadProfile {
  std::string name;    // "images", "volumes", "records", "tokens"; a --like trace's job name
  std::string like;    // what it stands for, in a few words
  std::string source;  // where its step, batch and sizes come from
  int batch_size = 1;
  std::chrono::nanoseconds step{0};  // one accelerator's compute per batch (an H100's)
  double target_au = 0.9;            // the AU a fed accelerator keeps
  int workers = 1;                   // DataLoader workers per accelerator
  int prefetch = 2;                  // batches each worker prepares ahead
  std::string samples;               // the loader's "samples"
  std::string transform;             // the loader's "transform"
  // The data set gen writes: files (records for the shards and tfrecord layouts) of min..max
  // bytes, in `layout` and `format`.
  GenLayout layout = GenLayout::kFlat;
  GenFormat format = GenFormat::kBin;
  std::uint64_t min_size = 0, max_size = 0;
  std::uint64_t shards = 0;  // kShards and kTfrecord
  // Steps of one accelerator's epoch at the least, beyond what the loader needs to judge it: a
  // step of a few milliseconds needs more of them for an epoch long enough to measure.
  std::int64_t min_epoch_steps = 0;
  // The accelerators the data set holds an epoch of, by default: the search's cap unless
  // --max-accelerators raises it (the data set grows with it).
  int default_max_accelerators = 8;
  // A --like trace: the job's own files, each unit a copy of them at their recorded paths, and
  // its trials K replays of it at once (trial.h); the fields above describe it for the card.
  std::string trace;
  std::shared_ptr<const GenListing> listing;
  std::chrono::nanoseconds recorded_epoch{0};  // its recorded steps and waits of one pass
};

// RETURNS: the built-in profiles, in the order a card lists them.
std::span<const WorkloadProfile> workload_profiles();

// RETURNS: the profile named `name`. Throws InputError "--workload: unknown workload 'X'
// (images, volumes, records or tokens)".
const WorkloadProfile& find_workload_profile(const std::string& name);

// RETURNS: the steps of one accelerator's epoch the loader needs to judge it: its warm-up
// (prefetch × workers) and the fewest measured steps (kMinMeasuredSteps, at least 2 × workers).
std::int64_t steps_to_judge(const WorkloadProfile& p);

// RETURNS: the steps of one accelerator's epoch in a trial: steps_to_judge, or the profile's
// min_epoch_steps where more.
std::int64_t epoch_steps(const WorkloadProfile& p);

// RETURNS: the samples a data set needs for `accelerators` of the profile to each run an
// epoch: epoch_steps × batch_size × accelerators.
std::uint64_t samples_for(const WorkloadProfile& p, int accelerators);

// RETURNS: the glob of a unit's data files, relative to the unit ("**/*.jpg", "*.tfrecord"):
// not gen's record beside them.
std::string data_files_glob(const WorkloadProfile& p);

// RETURNS: gen's options for the profile's data set of `samples` samples at `out` (seed `seed`).
GenOptions gen_options_for(const WorkloadProfile& p, const std::string& out, std::uint64_t samples,
                           std::uint64_t seed);

}  // namespace feedbench
