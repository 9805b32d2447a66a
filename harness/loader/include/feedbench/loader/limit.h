// What limited a loader round, named in order, and what fed it: the answer a qualification is
// for. From a round's own measurements only:
// - where the bytes came from: what the data's block devices read (DeviceReads) against what the
//   workers read, the rest served by the page cache; re-reads of a sample within the round (a
//   skewed pattern's hot files) counted apart, since those are what the page cache serves. Where
//   the reads asked the page cache file by file before reading (a replay's), that count splits
//   them, and the device's count (every reader of the device) is said only as a bound;
// - the CPU: every process's use of the cores this process may run on (/proc/stat), ours among
//   it, and the workers' time in the transform against their time reading.
// The rules:
// - CPU-bound: AU below target, the cores saturated (at least kCpuSaturated busy, any process's
//   work counted: another program's load takes cores from the workers just as well) and the
//   workers spending more time in the transform than reading. Whether more workers help is the
//   worker sweep's to say (loader_summary.h), not one round's: a round names the saturated cores.
// - otherwise, below target: storage limits. More workers are suggested only when the workers
//   spend most of their time in the transform and at least half a core stood idle.
// - at or above target: fed by the page cache when at least kMemoryFedShare of the bytes read
//   came from memory (the store alone delivered less than the trainers took), else by storage.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace feedbench {

inline constexpr double kCpuSaturated = 0.85;
inline constexpr double kMemoryFedShare = 0.20;

// A round's figures, as the limit needs them.
struct SupplyFigures {
  double au = 0, stall_fraction = 0, target_au = 0.9;
  double wall_s = 0;             // the round's epochs, warm-up included: what the device counts span
  std::uint64_t read_bytes = 0;  // what the workers read in that time
  std::optional<std::uint64_t> device_bytes;  // what the data's devices read meanwhile
  std::string device_why;                     // why device_bytes is not known
  // Of read_bytes, those the page cache held as they were read, asked file by file (nullopt:
  // not asked). Where known it says where the bytes came from; device_bytes only bounds it.
  std::optional<std::uint64_t> resident_bytes;
  std::uint64_t samples_read = 0, rereads = 0;  // reads of samples, and of those already read this round
  double read_s = 0, transform_s = 0;           // worker wall time reading, transforming
  // The workers' wall time in the transform not on the CPU nor waiting for one: a recorded job's
  // own waits in its fetches (a sleep, a lock, a remote call), which a replay waits out.
  double transform_idle_s = 0;
  std::string transform;                // "decode", "random_resized_crop:224", "5ms", "none"
  std::optional<double> host_cpu_busy;  // share of the usable cores busy, every process
  double cpu_util = 0;                  // ours alone
  unsigned cores = 1;
  // Of the trainers' wait for data, the share that was the framework's charge for taking ready
  // batches (LoaderCounters::charged_ns): PyTorch's own next(), not the supply.
  double charged_share = 0;
};

struct LoaderLimit {
  // "cpu", "storage", "job_waits" (a replayed job's own waits in its fetches), "handover" (most
  // of the wait the framework's own cost of taking ready batches) below target;
  // "page_cache", "storage" when fed; "" when fed and the device's share is not known.
  std::string by;
  bool fed = false;
  std::optional<double> memory_share;             // of the bytes read; nullopt: not measured
  std::optional<double> device_bytes_per_second;  // device bytes ÷ wall
  // "residency" (memory_share from the reads' own residency, file by file; the device's bytes
  // the rest of those read), "device" (from the device's count), "" (not measured).
  std::string memory_share_from;
  double reread_share = 0;     // of the samples read
  double transform_share = 0;  // of the workers' reading + transform time
  double cpu_busy = 0;         // host_cpu_busy, or ours where not known
  double idle_cores = 0;
  std::string text;  // "limit: the decode's CPU — ...", "fed by the page cache: ...", "storage keeps up: ..."
  // The limit in a few words and its deciding figure, for a verdict's first line: "limit: storage,
  // the device delivered 38.0 MiB/s", "limit: the decode's CPU, 2 cores saturated", "fed by the
  // page cache; the store alone delivered 24.0 MiB/s". `text` holds the whole of it.
  std::string line;
};

// RETURNS: the limit of the round `f` (see the rules above).
LoaderLimit loader_limit(const SupplyFigures& f);

// RETURNS: "AU 96.1% — storage keeps up: the device delivered 58.0 MiB/s", "AU 54.0% — training
// waits for data 46.0% of the time — limit: the decode's CPU — ...".
std::string loader_verdict(const SupplyFigures& f, const LoaderLimit& limit);

// RETURNS: the verdict's first line, short (under 120 columns for any figures): "AU 96.1% —
// storage keeps up: the device delivered 58.0 MiB/s", "AU 54.0% — limit: the decode's CPU, 2 cores
// saturated"; loader_verdict's text is its details.
std::string loader_verdict_line(double au, const LoaderLimit& limit);

}  // namespace feedbench
