// A watched job's data loading as a replay needs it, built from its trace (trace_reader.h): the
// data files it read (by their path under the folder it read them from), every read call a batch's
// fetch made, grouped into samples (a file's consecutive reads in one batch) and batches, with
// each batch's worker, CPU time and trainer step; the passes' workers, prefetch and start-up;
// the trainer's own cost of taking a batch. Then what-ifs applied to it, and its files found
// under another root, as a replay runs it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "feedbench/dataset/dataset.h"
#include "feedbench/loader/loader.h"

namespace feedbench {

struct RecordedBatch {
  std::uint64_t first = 0;  // its samples [first, first + count) of RecordedJob::samples
  std::uint32_t count = 0;
  std::int32_t worker = -1;   // the worker that fetched it (-1: not recorded, or the trainer)
  std::int64_t cpu_ns = 0;    // the fetch's CPU time
  std::int64_t step_ns = -1;  // the trainer's step after it (< 0: none, a pass's last)
  std::int64_t wait_ns = 0;   // the trainer's wait for it, as recorded
  std::int64_t samples = 0;   // the samples the fetch says it made (the job's batch size)
  // The fetch's wall neither in its reads, on the CPU nor waiting for a core (recorded_job.h's
  // RecordedLoading::Batch::idle_ns).
  std::int64_t idle_ns = 0;
  // CPU time outside the fetch (0 where the trace has none): its worker process's after it (the
  // loop, pickling the batch into shared memory); the trainer thread's taking it (unpickling)
  // and in its step.
  std::int64_t after_cpu_ns = 0, take_cpu_ns = 0, step_cpu_ns = 0;
};

struct RecordedPass {
  std::int64_t id = 0;
  std::vector<RecordedBatch> batches;  // in the order the trainer took them
  int workers = 0, prefetch = 2;
  std::int64_t batch_size = 0;
  std::int64_t start_ns = 0;  // its first ask to its workers' first fetch
  // A worker's CPU before its first fetch (process start, imports) after the pass's first ask
  // (at most the wall from the ask to that fetch), the mean of those started for this pass (0:
  // none, or not in the trace).
  std::int64_t startup_cpu_ns = 0;
};

struct RecordedFile {
  std::string path;  // relative to RecordedJob::data_root
  std::uint64_t size = 0;
  int width = 0, height = 0;  // a JPEG's, as the trace carries them; 0 × 0: none
};

struct RecordedJob {
  std::string trace;      // the file it was read from
  std::string name;       // the watched job's name ("job" when the trace has none)
  std::string data_root;  // the deepest folder holding every file its batches read; "" for a
                          // trace of relative paths (watch --trace-paths relative): not named
  std::vector<RecordedFile> files;
  std::vector<RecordedRead> reads;      // RecordedRead::file indexes `files`
  std::vector<RecordedSample> samples;  // in the job's order, pass after pass
  std::vector<RecordedPass> passes;     // with a batch, by id
  // The trainer's cost of taking a batch once its worker had it: the median over batches of
  // got − max(ask, the fetch's end) (PyTorch's unpickling, descriptor passing, pinning).
  std::int64_t handover_ns = 0;
  // Recorded, left out of the replay: reads outside every fetch (a dataset's __init__), reads of
  // 0 bytes (at a file's end), reads of batches the trainer never took (a pass abandoned).
  std::uint64_t reads_outside = 0, reads_empty = 0, reads_untaken = 0;
  // The recording's AU the watch's way: Σstep ÷ Σ(step + wait) over batches with a step.
  double au = 0;

  // RETURNS: the bytes its reads hold.
  std::uint64_t bytes() const;
  // RETURNS: the memory it holds, per read (its reads, samples, batches and files together).
  double bytes_per_read() const;
};

// RETURNS: the job recorded in the trace at `path`, its reads in `reads` order. Throws InputError
// for a trace read_trace refuses, one without a batch, a read of a file with no open event,
// files read in batches that share no folder, and a read file's path that is not plain (an
// empty, "." or ".." component): nothing is opened but the trace.
RecordedJob load_recorded_job(const std::string& path);
// As load_recorded_job, from `in`, named `where` in messages.
RecordedJob read_recorded_job(std::istream& in, const std::string& where);

// What a replay changes from the recording (unset: as recorded).
struct ReplayKnobs {
  double step_scale = 1;                   // each step × this (0.5: an accelerator twice as fast)
  std::optional<int> workers;              // every pass's
  std::optional<std::int64_t> batch_size;  // the recorded samples regrouped, in order
  std::optional<int> epochs;               // passes replayed: the recorded ones, over again as needed
  // The cores cpu_scale times as fast: every recorded CPU time of the job (its workers' fetches,
  // start-up and hand-overs, its trainer's taking batches and stepping) × 1 / cpu_scale.
  double cpu_scale = 1;
};

// RETURNS: the replay's loading of `job` with `knobs`: its passes as epochs, sample indices
// those of job.samples; each pass built once (at most knobs.epochs of them), the epochs beyond
// going over them again, so that it holds no more for 1,000 epochs than for the passes. A regrouped batch's
// CPU time and step are its samples' shares of those of the batches they were recorded in. REQUIRES: knobs in
// range (step_scale > 0, workers >= 0, batch_size >= 1, epochs >= 1, cpu_scale > 0).
RecordedLoading replay_loading(const RecordedJob& job, const ReplayKnobs& knobs);

// RETURNS: the system folder (/etc, /proc, /usr, /var/lib, ...) that is or holds `folder` (an
// absolute path without links), "/" for "/" itself; "" for any other: where a replay without
// --source, which reads the folder a trace names, refuses to read.
std::string system_folder_holding(const std::string& folder);

// RETURNS: the recorded files as a replay reads them: entry i is job.files[i] (so job.reads
// index it as they are), found by its path under data_root in `lookup` (a scanned root), taken
// from `from` at that index (`lookup` itself, or a partial cache's tiered set, index for index
// with its source). Throws InputError naming the trace and the root, with a count and examples,
// when files are missing, or differ in size unless `allow_resized` (then a replay cuts each read
// at its file's end as the set has it); it says nothing of the files found (no size): a trace
// may name any file.
FileSet recorded_file_set(const RecordedJob& job, const FileSet& lookup, const FileSet& from,
                          bool allow_resized);

}  // namespace feedbench
