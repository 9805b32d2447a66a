// Each family's parameters as typed fields, filled once by the plan (plan.cc) from a config's
// canonical values, and read by field everywhere after: the families, preflight, the estimator,
// the fio job writer and the run's steps. A misspelt field is a compile error.
//
// Adding a parameter takes three steps: (1) its entry in the family's definition in
// configs/schema/experiment.schema.json (type, default, description); (2) its field here; (3) its
// row in plan.cc's family_specs(), which names the field (`at<&LoaderParameters::name>`), its short
// key in case names and its kind. The row fixes where the field sits in case names; the plan
// fills the field from the canonical value, and a unit test checks every row against the schema.
//
// Choices stay the strings the schema allows (listed beside each field); sizes are bytes,
// durations std::chrono::nanoseconds. An optional parameter unset in the config is an empty
// std::optional (and absent from the case's name).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "feedbench/base/units.h"
#include "feedbench/io/runner.h"
#include "feedbench/io/skew.h"
#include "feedbench/io/workload.h"

namespace feedbench {

// A file_read case's read order: `pattern` sequential, random or shuffled_files; or skewed, with
// `skew` drawing the files ("zipf:1.1", "hot_set:10%:90%" in a config).
struct ReadPattern {
  Pattern pattern = Pattern::sequential;
  Skew skew;  // pattern skewed only
};

// What a loader sample is ("samples" in a config).
struct SampleFormat {
  enum class Kind {
    files,     // one sample per file
    memory,    // the files' bytes held in memory: the loop's own cost, no reads (calibration)
    tfrecord,  // TFRecord shards read as streams, record by record
    records,   // fixed-size records of `record_bytes` read by index ("records:4KiB")
  };
  Kind kind = Kind::files;
  std::uint64_t record_bytes = 0;  // records only
};

struct FileReadParameters {
  ReadPattern pattern;
  std::uint64_t block_size = 0;  // bytes per read
  std::string engine;            // psync, mmap, libaio, io_uring
  int queue_depth = 1;           // reads in flight per worker
  int workers = 1;               // reader threads
  std::string cache_state;       // cold (evicted first), warm (read once first), direct (O_DIRECT)
  std::string path;              // source or cache: which root the case reads
  // A time-based round: reads for this long (looping over the selection); unset: one pass.
  std::optional<std::chrono::nanoseconds> runtime;
  std::optional<std::uint64_t> max_bytes;  // a round stops after this many bytes
  // Reads this long before the figures start (with `runtime` only).
  std::optional<std::chrono::nanoseconds> ramp_time;
  // Stops a time-based round once its rate holds still by this criterion (with `runtime` only).
  std::optional<SteadyStateSpec> steady_state;
  std::optional<std::string> sink;  // host (unset too) or gpu: each block copied to the device
};

struct LoaderParameters {
  int batch_size = 32;                     // samples per batch
  int workers = 1;                         // DataLoader workers per accelerator
  int prefetch = 2;                        // batches each worker prepares ahead
  Distribution step_time;                  // one accelerator step
  TransformCost transform;                 // a sample's CPU work after its read
  SampleFormat samples;                    // what a sample is
  int epochs = 1;                          // passes over the selection
  std::int64_t steps = 0;                  // 0: every batch of every epoch; else at most this many steps
  int warmup_steps = 1;                    // steps left out of the figures
  int accelerators = 1;                    // simulated accelerators, each its own trainer and workers
  double target_au = 0.9;                  // the AU a verdict calls fed
  std::string engine;                      // psync, mmap, io_uring
  std::string cache_state;                 // cold or warm
  std::string path;                        // source or cache
  std::optional<Skew> pattern;             // a skewed draw of samples; unset: a seeded shuffle of all
  std::optional<int> shuffle_buffer;       // tfrecord: records shuffled in a buffer this deep
  std::optional<bool> verify_crc;          // tfrecord: check each record's CRC (unset: yes)
  std::optional<std::string> accelerator;  // cpu (unset too) or cuda: a real device step
  std::optional<bool> overlap;             // cuda: copy batch k+1 during step k
  // thread or process (PyTorch's workers); unset: the framework's (pytorch: process)
  std::optional<std::string> handover;
  // The trainer's cost of taking a batch, whole (the framework's per-batch and per-tensor costs
  // replaced); unset: the framework's
  std::optional<std::chrono::nanoseconds> next_cost;
  std::optional<std::chrono::nanoseconds> next_cost_per_mib;  // ... and per MiB of it (unset: 0)
  // pytorch or none: whose hand-over and next() costs the loader pays; unset: pytorch (none
  // for samples memory, the harness's own calibration)
  std::optional<std::string> framework;
  std::optional<std::string> collate;  // stack (unset too: one tensor a batch) or list (one a sample)
};

struct ReplayParameters {
  std::string trace;                  // the trace `feedbench watch --trace` wrote (not in the name)
  std::optional<std::string> job;     // the job's name in the case's name (the run fills it in)
  std::optional<double> step_scale;   // every recorded step times this
  std::optional<int> workers;         // DataLoader workers (0: loaded in the trainer's process)
  std::optional<int> batch_size;      // the samples regrouped, in order, into batches of this size
  std::optional<int> epochs;          // passes (the recorded ones, over again)
  std::string cache_state;            // cold or warm
  std::string path;                   // source or cache
  std::optional<double> target_au;    // the AU a verdict calls fed (unset: 0.9)
  std::optional<bool> allow_resized;  // replay files whose sizes differ from the recording
  std::optional<double> cpu_scale;    // cores this many times as fast: every recorded CPU time ÷ this
  // Not parameters: the recorded loop as the run read it from the trace, for the estimator.
  double recorded_wait_s = 0;       // the job's waits for data
  double recorded_step_s = 0;       // its steps
  std::size_t recorded_passes = 1;  // its passes
};

struct StageParameters {
  int workers = 4;          // copying threads
  std::string cache_state;  // cold or warm: the source before the copy
  bool verify = true;       // re-read and hash the copy
};

// A checkpoint written into dataset.scratch and restored cold (docs/method.md, "Checkpoints").
// Its bytes and ranks follow from size or model, scale and ranks: checkpoint_layout() (plan.h).
struct CheckpointParameters {
  std::optional<std::uint64_t> size;  // bytes, all ranks together; or model
  // llama3-8b, llama3-70b, llama3-405b, llama3-1t: MLPerf Storage v2.0's checkpoints; or size
  std::optional<std::string> model;
  std::optional<double> scale;         // the fraction of the size written (unset: 1)
  std::optional<int> ranks;            // writers (unset: the model's ranks, or 1)
  int files_per_rank = 1;              // files each rank writes its shard as
  std::uint64_t block_size = 1 << 20;  // bytes per write and per read of the restore
  std::string engine;                  // psync, io_uring or libaio: the write's and the restore's
  // Writes (and the restore's reads) in flight per rank, io_uring and libaio only; unset: 1, as
  // fio's iodepth. Not taken from defaults.queue_depth (the reads' of other families), and
  // 1 written is 1 unset: neither is in the case's name.
  std::optional<int> queue_depth;
  bool direct = false;                   // O_DIRECT for the write and the restore
  bool fsync = true;                     // each file before its close, then the folder
  int checkpoints = 1;                   // write-and-restore pairs per repetition
  std::chrono::nanoseconds interval{0};  // a checkpoint every so often (training terms)
  // Not a parameter: the restore's page-cache state, always cold (Case::cache_state()).
  std::string cache_state = "cold";
};

// One case's parameters: the alternative of its family.
using FamilyParameters = std::variant<FileReadParameters, LoaderParameters, ReplayParameters, StageParameters,
                                      CheckpointParameters>;

}  // namespace feedbench
