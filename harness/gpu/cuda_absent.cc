// A build without the CUDA toolkit: the GPU parameters are refused before anything runs
// (expand_plan), and these answers keep every other caller honest.
#include "feedbench/gpu/gpu.h"

namespace feedbench {

bool built_with_cuda() { return false; }

int cuda_device_count(std::string* why) {
  if (why) *why = "built without CUDA";
  return 0;
}

std::unique_ptr<CopyEngine> make_cuda_copy_engine(std::size_t, std::size_t, int, std::string* why) {
  if (why) *why = "built without CUDA";
  return nullptr;
}

std::unique_ptr<DeviceStep> make_cuda_device_step(std::uint64_t, bool, int, std::string* why) {
  if (why) *why = "built without CUDA";
  return nullptr;
}

}  // namespace feedbench
