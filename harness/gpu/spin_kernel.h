// The one kernel feedbench launches (spin_kernel.cu).
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace feedbench::gpu {

// Launches a single-thread kernel on `stream` that reads batch[0] and spins `ns` nanoseconds on
// the device's global timer, writing a value to *sink. RETURNS: the launch's error.
cudaError_t launch_spin(std::uint64_t ns, const void* batch, std::uint64_t bytes, unsigned long long* sink,
                        cudaStream_t stream);

}  // namespace feedbench::gpu
