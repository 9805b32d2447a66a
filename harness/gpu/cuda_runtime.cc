// The CUDA implementations of CopyEngine and DeviceStep (built only with the CUDA toolkit).
// The runtime is linked statically: it loads the driver (libcuda.so.1) when first called, so
// the binary starts on machines without one and says "no CUDA device".
#include <dlfcn.h>

#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "feedbench/base/error.h"
#include "feedbench/gpu/gpu.h"
#include "spin_kernel.h"

namespace feedbench {
namespace {

std::string cuda_message(const char* what, cudaError_t e) {
  return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw RunError(cuda_message(what, e));
}

// Device `device` current on this thread. RETURNS: "" or why not.
std::string use_device(int device) {
  std::string why;
  const int n = cuda_device_count(&why);
  if (n == 0) return why;
  if (device < 0 || device >= n)
    return "no CUDA device " + std::to_string(device) + " (" + std::to_string(n) + " present)";
  if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess) return cuda_message("cudaSetDevice", e);
  return "";
}

float elapsed_ms(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
  return ms;
}

class CudaCopyEngine final : public CopyEngine {
 public:
  CudaCopyEngine(std::size_t slots, std::size_t slot_bytes) : slot_bytes_(slot_bytes), slots_(slots) {
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    for (Slot& s : slots_) {
      check(cudaHostAlloc(&s.host, slot_bytes, cudaHostAllocDefault), "cudaHostAlloc (pinned staging)");
      check(cudaMalloc(&s.device, slot_bytes), "cudaMalloc");
      check(cudaEventCreate(&s.begin), "cudaEventCreate");
      check(cudaEventCreate(&s.end), "cudaEventCreate");
    }
  }
  ~CudaCopyEngine() override {
    if (stream_) cudaStreamSynchronize(stream_);
    for (Slot& s : slots_) {
      if (s.begin) cudaEventDestroy(s.begin);
      if (s.end) cudaEventDestroy(s.end);
      if (s.device) cudaFree(s.device);
      if (s.host) cudaFreeHost(s.host);
    }
    if (stream_) cudaStreamDestroy(stream_);
  }
  std::size_t slots() const override { return slots_.size(); }
  std::size_t slot_bytes() const override { return slot_bytes_; }
  std::byte* host_slot(std::size_t slot) override { return static_cast<std::byte*>(slots_[slot].host); }
  void start_copy(std::size_t slot, std::size_t bytes) override {
    Slot& s = slots_[slot];
    check(cudaEventRecord(s.begin, stream_), "cudaEventRecord");
    check(cudaMemcpyAsync(s.device, s.host, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync");
    check(cudaEventRecord(s.end, stream_), "cudaEventRecord");
    s.in_flight = true;
  }
  std::int64_t wait(std::size_t slot) override {
    Slot& s = slots_[slot];
    if (!s.in_flight) return 0;
    check(cudaEventSynchronize(s.end), "cudaEventSynchronize (host-to-device copy)");
    s.in_flight = false;
    return std::int64_t(double(elapsed_ms(s.begin, s.end)) * 1e6);
  }
  bool idle(std::size_t slot) override {
    Slot& s = slots_[slot];
    return !s.in_flight || cudaEventQuery(s.end) == cudaSuccess;
  }

 private:
  struct Slot {
    void* host = nullptr;
    void* device = nullptr;
    cudaEvent_t begin = nullptr, end = nullptr;
    bool in_flight = false;
  };
  std::size_t slot_bytes_;
  std::vector<Slot> slots_;
  cudaStream_t stream_ = nullptr;
};

class CudaDeviceStep final : public DeviceStep {
 public:
  CudaDeviceStep(std::uint64_t max_batch_bytes, bool overlap) : overlap_(overlap), buffers_(overlap ? 2 : 1) {
    check(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaStreamCreateWithFlags(&compute_stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaMalloc(&sink_, sizeof(unsigned long long)), "cudaMalloc");
    for (Buffer& b : buffers_) {
      const std::size_t n = std::max<std::uint64_t>(1, max_batch_bytes);
      check(cudaHostAlloc(&b.host, n, cudaHostAllocDefault), "cudaHostAlloc (pinned batch)");
      check(cudaMalloc(&b.device, n), "cudaMalloc");
      check(cudaEventCreate(&b.copy_begin), "cudaEventCreate");
      check(cudaEventCreate(&b.copied), "cudaEventCreate");
      check(cudaEventCreate(&b.kernel_begin), "cudaEventCreate");
      check(cudaEventCreate(&b.kernel_end), "cudaEventCreate");
    }
    capacity_ = max_batch_bytes;
  }
  ~CudaDeviceStep() override {
    cudaStreamSynchronize(copy_stream_);
    cudaStreamSynchronize(compute_stream_);
    for (Buffer& b : buffers_) {
      for (cudaEvent_t e : {b.copy_begin, b.copied, b.kernel_begin, b.kernel_end})
        if (e) cudaEventDestroy(e);
      if (b.device) cudaFree(b.device);
      if (b.host) cudaFreeHost(b.host);
    }
    if (sink_) cudaFree(sink_);
    cudaStreamDestroy(copy_stream_);
    cudaStreamDestroy(compute_stream_);
  }
  void step(std::uint64_t batch_bytes, std::int64_t step_ns) override {
    if (batch_bytes > capacity_)
      throw RunError("a batch of " + std::to_string(batch_bytes) +
                     " bytes is larger than the device step's buffers");
    Buffer& b = buffers_[next_];
    next_ = (next_ + 1) % buffers_.size();
    // This buffer's previous kernel read it: it must be done before the copy overwrites it.
    if (b.kernel_pending) collect(b);
    check(cudaEventRecord(b.copy_begin, copy_stream_), "cudaEventRecord");
    check(cudaMemcpyAsync(b.device, b.host, batch_bytes, cudaMemcpyHostToDevice, copy_stream_),
          "cudaMemcpyAsync");
    check(cudaEventRecord(b.copied, copy_stream_), "cudaEventRecord");
    // The previous step's kernel (the other buffer with overlap) ends before this one starts.
    if (overlap_) {
      Buffer& prev = buffers_[next_];  // with two buffers, the other one
      if (prev.kernel_pending) collect(prev);
    }
    check(cudaStreamWaitEvent(compute_stream_, b.copied, 0), "cudaStreamWaitEvent");
    check(cudaEventRecord(b.kernel_begin, compute_stream_), "cudaEventRecord");
    check(gpu::launch_spin(std::uint64_t(std::max<std::int64_t>(0, step_ns)), b.device, batch_bytes,
                           static_cast<unsigned long long*>(sink_), compute_stream_),
          "spin kernel launch");
    check(cudaEventRecord(b.kernel_end, compute_stream_), "cudaEventRecord");
    b.kernel_pending = true;
    b.bytes = batch_bytes;
    if (!overlap_) collect(b);
  }
  void finish() override {
    for (Buffer& b : buffers_)
      if (b.kernel_pending) collect(b);
  }
  const SinkStats& copy_stats() const override { return stats_; }
  std::int64_t device_busy_ns() const override { return busy_ns_; }

 private:
  struct Buffer {
    void* host = nullptr;
    void* device = nullptr;
    cudaEvent_t copy_begin = nullptr, copied = nullptr, kernel_begin = nullptr, kernel_end = nullptr;
    bool kernel_pending = false;
    std::uint64_t bytes = 0;
  };
  void collect(Buffer& b) {
    check(cudaEventSynchronize(b.kernel_end), "cudaEventSynchronize (device step)");
    b.kernel_pending = false;
    stats_.bytes += b.bytes;
    ++stats_.copies;
    stats_.copy_ns.record(std::uint64_t(double(elapsed_ms(b.copy_begin, b.copied)) * 1e6));
    busy_ns_ += std::int64_t(double(elapsed_ms(b.kernel_begin, b.kernel_end)) * 1e6);
  }
  bool overlap_;
  std::vector<Buffer> buffers_;
  std::size_t next_ = 0;
  std::uint64_t capacity_ = 0;
  void* sink_ = nullptr;
  cudaStream_t copy_stream_ = nullptr, compute_stream_ = nullptr;
  SinkStats stats_;
  std::int64_t busy_ns_ = 0;
};

}  // namespace

bool built_with_cuda() { return true; }

int cuda_device_count(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why) {
      // Without a driver the runtime says its driver is "insufficient": say what is missing.
      void* driver =
          e == cudaErrorInsufficientDriver ? ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD) : nullptr;
      if (e == cudaErrorInsufficientDriver && !driver && !(driver = ::dlopen("libcuda.so.1", RTLD_LAZY)))
        *why = "no CUDA device: no NVIDIA driver (libcuda.so.1 not found)";
      else *why = "no CUDA device: " + std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
      if (driver) ::dlclose(driver);
    }
    return 0;
  }
  if (n == 0 && why) *why = "no CUDA device: the driver lists none";
  return n;
}

std::unique_ptr<CopyEngine> make_cuda_copy_engine(std::size_t slots, std::size_t slot_bytes, int device,
                                                  std::string* why) {
  if (std::string e = use_device(device); !e.empty()) {
    if (why) *why = e;
    return nullptr;
  }
  try {
    return std::make_unique<CudaCopyEngine>(slots, slot_bytes);
  } catch (const RunError& e) {
    if (why) *why = e.what();
    return nullptr;
  }
}

std::unique_ptr<DeviceStep> make_cuda_device_step(std::uint64_t max_batch_bytes, bool overlap, int device,
                                                  std::string* why) {
  if (std::string e = use_device(device); !e.empty()) {
    if (why) *why = e;
    return nullptr;
  }
  try {
    return std::make_unique<CudaDeviceStep>(max_batch_bytes, overlap);
  } catch (const RunError& e) {
    if (why) *why = e.what();
    return nullptr;
  }
}

}  // namespace feedbench
