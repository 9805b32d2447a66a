// The GPU end of the pipeline: a read's last hop into device memory, and a training step on a
// device. Two small interfaces the rest of the harness sees (CopyEngine behind a StagingRing as
// a read sink, DeviceStep for the loader), each with a host stand-in that runs anywhere, and a
// CUDA implementation compiled only when the build found the CUDA toolkit (harness/gpu/). No
// file outside harness/gpu/ includes a CUDA header. GPU telemetry comes from NVML, loaded at run
// time, so the binary never depends on the driver.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "feedbench/base/histogram.h"

namespace feedbench {

// RETURNS: true when this binary was built with the CUDA toolkit (FEEDBENCH_CUDA).
bool built_with_cuda();

// RETURNS: the number of CUDA devices this process can use; 0 with *why set ("no CUDA device:
// <the runtime's reason>", or "built without CUDA") when there is none.
int cuda_device_count(std::string* why);

// ---------------------------------------------------------------------------------------------
// Host-to-device copies.

// Moves the bytes of one staging slot to the device, asynchronously. One producer thread;
// slots are used in any order, at most one copy in flight per slot.
class CopyEngine {
 public:
  virtual ~CopyEngine() = default;
  virtual std::size_t slots() const = 0;
  virtual std::size_t slot_bytes() const = 0;
  // RETURNS: the host staging buffer of `slot` (pinned for CUDA), slot_bytes() long.
  virtual std::byte* host_slot(std::size_t slot) = 0;
  // Starts copying the first `bytes` of host_slot(slot) to the device. REQUIRES: no copy of
  // `slot` in flight; bytes <= slot_bytes().
  virtual void start_copy(std::size_t slot, std::size_t bytes) = 0;
  // Blocks until the copy of `slot` (if any) has finished. RETURNS: how long that copy took on
  // the copy engine in ns (its own clock: CUDA events, or the stand-in's thread), 0 when none
  // was in flight. Throws RunError when the copy failed.
  virtual std::int64_t wait(std::size_t slot) = 0;
  // RETURNS: true when no copy of `slot` is in flight (never blocks).
  virtual bool idle(std::size_t slot) = 0;
};

// The stand-in: one thread plays the copy engine, copying each slot into a host "device"
// buffer in submission order, each copy taking at least `delay_ns` plus bytes / `bytes_per_second`
// (0: no rate limit). `device_log`, when given, receives each copied slot's first byte in the
// order the copies ran (tests check ordering with it).
std::unique_ptr<CopyEngine> make_host_copy_engine(std::size_t slots, std::size_t slot_bytes,
                                                  std::int64_t delay_ns = 0, double bytes_per_second = 0,
                                                  std::vector<std::byte>* device_log = nullptr);

// RETURNS: a copy engine on CUDA device `device` (pinned staging with cudaHostAlloc, one device
// buffer per slot, one stream, a pair of events per slot), or nullptr with *why set (no CUDA
// device, built without CUDA, an allocation the driver refused).
std::unique_ptr<CopyEngine> make_cuda_copy_engine(std::size_t slots, std::size_t slot_bytes, int device,
                                                  std::string* why);

// What a ring moved, and what it cost the producer.
struct SinkStats {
  std::uint64_t bytes = 0;  // copied to the device
  std::uint64_t copies = 0;
  Histogram copy_ns;            // per copy, on the copy engine's clock
  std::int64_t blocked_ns = 0;  // producer time waiting for a free slot: the copy engine was the limit
  void merge(const SinkStats& other);
  // RETURNS: the copies' total time on the copy engine's clock, in seconds.
  double copy_seconds() const { return copy_ns.mean() * double(copy_ns.count()) * 1e-9; }
};

// A ring of staging slots over a CopyEngine: each push copies the data into the oldest slot
// (waiting for that slot's previous copy when every slot is busy: back-pressure) and starts its
// copy. Slots are reused strictly in order, so copies complete in the order they were pushed.
// One producer thread; not shared.
class StagingRing {
 public:
  // REQUIRES: engine.slots() >= 1; `engine` outlives the ring.
  explicit StagingRing(CopyEngine& engine);
  ~StagingRing();
  // Copies `data` (in pieces of slot_bytes() when longer) to the device. Throws RunError when
  // a copy failed.
  void push(std::span<const std::byte> data);
  // Waits for every copy in flight, so the stats are complete.
  void drain();
  // Forgets the figures so far (copies in flight are counted when they are waited for).
  void reset_stats();
  const SinkStats& stats() const { return stats_; }

 private:
  void retire(std::size_t slot, bool blocking);
  CopyEngine& engine_;
  std::size_t next_ = 0;
  std::vector<bool> busy_;
  SinkStats stats_;
};

// ---------------------------------------------------------------------------------------------
// The loader's step on a device.

// One trainer's device: each step copies its batch to the device and occupies the device for
// the step time. Without overlap a step returns when its own work is done; with overlap it
// starts the copy of this batch while the previous step's kernel still runs, waits for that
// kernel, launches its own and returns, so the trainer fetches the next batch while the device
// computes (a pinned-memory loader's prefetch). finish() waits for the last kernel.
class DeviceStep {
 public:
  virtual ~DeviceStep() = default;
  // REQUIRES: batch_bytes <= the capacity given at creation.
  virtual void step(std::uint64_t batch_bytes, std::int64_t step_ns) = 0;
  virtual void finish() = 0;
  // Copy and step figures so far (copy time on the device's clock).
  virtual const SinkStats& copy_stats() const = 0;
  // RETURNS: the device time the steps' kernels ran, ns.
  virtual std::int64_t device_busy_ns() const = 0;
};

// The stand-in: a thread plays the device (memcpy into a host buffer, then a spin of step_ns).
std::unique_ptr<DeviceStep> make_host_device_step(std::uint64_t max_batch_bytes, bool overlap);

// RETURNS: a step on CUDA device `device`: pinned batch buffers (two with overlap), a copy
// stream and a compute stream, a kernel that spins on the device's global timer for the step
// time; nullptr with *why set when unavailable.
std::unique_ptr<DeviceStep> make_cuda_device_step(std::uint64_t max_batch_bytes, bool overlap, int device,
                                                  std::string* why);

// ---------------------------------------------------------------------------------------------
// NVML telemetry (libnvidia-ml.so.1 through dlopen).

struct GpuInfo {
  int index = 0;
  std::string name;
  std::string bus_id;  // "00000000:17:00.0"
  std::uint64_t memory_total = 0;
  int pcie_generation = 0;  // current link
  int pcie_width = 0;
  int pcie_max_generation = 0;
  int pcie_max_width = 0;
  int numa_node = -1;  // from sysfs; -1 unknown
  nlohmann::json to_json() const;
};

struct GpuInventory {
  bool driver = false;  // NVML loaded and initialised
  std::string why;      // when not: "no NVIDIA driver (libnvidia-ml.so.1 not found)"
  std::vector<GpuInfo> gpus;
};

// RETURNS: the GPUs NVML reports, or driver false with why. `library` is what dlopen loads
// (tests name one that does not exist). Never throws.
GpuInventory list_gpus(const std::string& library = "libnvidia-ml.so.1");

// RETURNS: a warning when the CPUs this process may run on (its affinity) lie outside
// `gpu_node`'s CPUs ("reading threads may run on NUMA node(s) 0,1; GPU 0 is on node 1"), "" when
// they do not or the node is unknown. `node_cpus` maps each node to its CPU list (sysfs when
// empty); `allowed` lists the allowed CPUs (the affinity when empty).
std::string numa_warning(const GpuInfo& gpu, const std::vector<std::vector<int>>& node_cpus = {},
                         const std::vector<int>& allowed = {});

// Samples every GPU's utilisation, memory used and PCIe throughput every `interval_ns` on its own
// thread between start() and stop(). Does nothing without a driver.
class GpuSampler {
 public:
  explicit GpuSampler(std::int64_t interval_ns = 100'000'000);
  ~GpuSampler();
  void start();
  // RETURNS: per GPU {"index", "samples", "util_percent": {"mean","max"}, "memory_used_bytes":
  // {"max"}, "pcie_rx_bytes_per_second": {"mean","max"}, "pcie_tx_bytes_per_second": {...}};
  // null when no driver or no sample.
  nlohmann::json stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace feedbench
