// What a watched job recorded (harness/watch/python/sitecustomize.py, record format version 4):
// one file of JSON lines per process under the watch folder, read back here into its DataLoader
// passes (each batch's ask and got), its workers' fetches, and what the probe could not do.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace feedbench {

// Version 2 added the pass's pid, iterator and workers, and each fetch's thread and batch;
// version 3 the trainer's CPU per batch and step, each fetch's process CPU, a worker's end;
// version 4 each record's process image ("img": a launcher and the job it exec'd share a pid).
inline constexpr int kJobLogVersion = 4;

// One pass of one DataLoader iterator over its loader (an epoch, as the job ran it).
struct JobEpoch {
  std::int64_t id = 0;                // from 1, in the order passes began (over processes and images)
  std::int64_t pid = 0;               // the training process
  std::uint64_t iter = 0;             // which iterator object (a persistent one makes several passes)
  std::vector<std::int64_t> workers;  // its worker processes' pids (none without workers)
  std::uint64_t loader = 0;           // which DataLoader object (its id() in the job)
  std::int64_t start_ns = 0;          // CLOCK_MONOTONIC
  std::int64_t batch_size = 0;        // 0: none (batch_size=None)
  std::int64_t num_workers = 0;
  std::optional<std::int64_t> prefetch_factor;  // none without workers
  bool pin_memory = false, persistent_workers = false;
  std::string start_method;  // fork, spawn, forkserver; "" for the default context
  struct Batch {
    std::int64_t index = 0, ask_ns = 0, got_ns = 0;
    // The trainer thread's CPU time from ask to got (taking the batch: unpickling it, and without
    // workers fetching it), and from got to the next ask of the pass (its step); -1: not recorded.
    std::int64_t cpu_ns = -1, step_cpu_ns = -1;
  };
  std::vector<Batch> batches;          // in the order the trainer got them
  std::optional<std::int64_t> end_ns;  // when the iterator said StopIteration; none if abandoned
};

// One batch (or sample, without batching) a worker fetched: the dataset's __getitem__ calls and
// the collate, with the worker thread's CPU time in them and its time runnable but waiting for a
// core (runqueue; 0 where the kernel keeps no schedstat): the rest of the fetch it was blocked,
// reading or asleep. worker -1: the training process itself.
struct JobFetch {
  std::int64_t pid = 0, worker = 0, start_ns = 0, end_ns = 0, cpu_ns = 0, runqueue_ns = 0, samples = 0;
  std::int64_t tid = 0;       // the fetching thread (0: not recorded)
  std::int64_t batch = -1;    // the batch's index in its pass (-1: not known)
  std::int64_t pass = -1;     // the pass (its JobEpoch::id), where the fetching process knows it (no workers)
  std::int64_t resumes = -1;  // a worker's count of passes resumed before this one (persistent)
  // The fetching process's CPU time, all its threads', when the fetch began (-1: not recorded).
  std::int64_t process_cpu_ns = -1;
};

// A DataLoader worker's loop ended: its process's CPU time then, all its threads'.
struct JobWorkerEnd {
  std::int64_t pid = 0, end_ns = 0, process_cpu_ns = 0;
};

struct JobLog {
  std::vector<JobEpoch> epochs;  // ordered by id
  std::vector<JobFetch> fetches;
  std::vector<JobWorkerEnd> worker_ends;
  std::vector<std::string> probe_errors;  // "<what>" the probe met patching this torch
  std::size_t processes = 0;              // record files read
  std::size_t torn_lines = 0;             // a last line cut short (a process killed mid-write)
};

// RETURNS: per fetch of `log`, the id of the pass it built a batch of: its own, else the pass
// whose workers include its process (the resumes-th of those for a persistent iterator's); -1
// when none.
std::vector<std::int64_t> fetch_passes(const JobLog& log);

// RETURNS: the records under `dir` (every "*.jsonl" file). A file's last line without its
// newline is a process killed mid-write: counted in torn_lines, not read. Throws InputError
// naming the file and line for any other malformed line, or for an unknown record kind.
JobLog read_job_log(const std::string& dir);

// One process's record file: its name (for messages) and text.
struct JobRecordFile {
  std::string name, text;
};

// RETURNS: the records of `files`, as read_job_log reads a folder's (which calls it). Throws
// InputError likewise.
JobLog parse_job_log(const std::vector<JobRecordFile>& files);

}  // namespace feedbench
