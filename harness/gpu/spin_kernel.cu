// The device's training step: one thread spins on the GPU's global timer (nanoseconds, the same
// on every SM) for the step time, so the step occupies the device for a known time on its own
// clock. Kept to one small file: nvcc's compile time is paid by every build preset.
#include <cstdint>

#include <cuda_runtime.h>

#include "spin_kernel.h"

namespace feedbench::gpu {
namespace {

__device__ __forceinline__ std::uint64_t global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(std::uint64_t ns, const unsigned char* batch, std::uint64_t bytes,
                            unsigned long long* sink) {
  const std::uint64_t start = global_timer_ns();
  // Touch the batch's first byte so the step depends on the copied data.
  unsigned long long acc = bytes > 0 ? batch[0] : 0;
  while (global_timer_ns() - start < ns) ++acc;
  *sink = acc;
}

}  // namespace

cudaError_t launch_spin(std::uint64_t ns, const void* batch, std::uint64_t bytes, unsigned long long* sink,
                        cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(ns, static_cast<const unsigned char*>(batch), bytes, sink);
  return cudaGetLastError();
}

}  // namespace feedbench::gpu
