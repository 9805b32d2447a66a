// usable_cores is the affinity mask, not the machine: under a cpuset (or an MPI binding) every
// family's cpu_util is relative to the CPUs the process may use.
#include "feedbench/base/cores.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "feedbench/base/aligned_buffer.h"
#include "feedbench/base/unique_fd.h"

#include <fcntl.h>

namespace feedbench {
namespace {

TEST(CoresTest, UsableCoresFollowTheAffinityMask) {
  EXPECT_GE(online_cpus(), 1u);
  EXPECT_LE(usable_cores(), online_cpus());
  unsigned seen = 0;
  // Affinity is per thread: restrict a new one to one CPU, as taskset -c 0 would the process.
  std::thread t([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    if (::pthread_setaffinity_np(::pthread_self(), sizeof(one), &one) == 0) seen = usable_cores();
  });
  t.join();
  EXPECT_EQ(seen, 1u);
}

// Other programs' cores: the usable cores' busy time less one's own CPU, over the wall time.
TEST(CoresTest, OtherProgramsAreTheHostsBusyTimeLessOnesOwn) {
  const HostCpuTimes before{100, 400}, after{106, 408};  // 6 s busy of 8 over 4 s on 2 cores
  // Our processes took 3.2 s of the 6: the others 2.8 s in 4 s, 0.7 cores.
  EXPECT_NEAR(*other_programs_cores(before, after, 3.2, 4), 0.7, 1e-9);
  // Our own counts more than the usable cores saw (a child ran on a core outside them): 0.
  EXPECT_EQ(*other_programs_cores(before, after, 7, 4), 0);
  EXPECT_FALSE(other_programs_cores(std::nullopt, after, 1, 4));
  EXPECT_FALSE(other_programs_cores(before, after, 1, 0));
}

TEST(UniqueFdTest, ClosesOnScopeExitAndMovesOwnership) {
  int raw = -1;
  {
    UniqueFd a(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(a);
    raw = a.get();
    UniqueFd b(std::move(a));
    EXPECT_FALSE(a);
    EXPECT_EQ(b.get(), raw);
    EXPECT_NE(::fcntl(raw, F_GETFD), -1);
  }
  EXPECT_EQ(::fcntl(raw, F_GETFD), -1);  // closed once, by its last owner
}

TEST(AlignedBufferTest, IsAlignedForDirectIoAndMoves) {
  AlignedBuffer a(10000);
  ASSERT_TRUE(a);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.get()) % kDirectAlignment, 0u);
  EXPECT_EQ(a.size(), 10000u);
  AlignedBuffer b = std::move(a);
  EXPECT_FALSE(a);
  EXPECT_EQ(b.size(), 10000u);
}

// RETURNS: the VmFlags line of the mapping in /proc/self/smaps holding `addr`, "" if none.
std::string vm_flags_of(const void* addr) {
  std::ifstream in("/proc/self/smaps");
  const auto a = reinterpret_cast<std::uintptr_t>(addr);
  bool inside = false;
  std::string line;
  while (std::getline(in, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find('-') < line.find(' ')) {
      inside = a >= lo && a < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

TEST(AlignedBufferTest, LargeBuffersAreHugePageAlignedAndAdvised) {
  // A 1 MiB O_DIRECT read into scattered 4 KiB pages can exceed a queue's max_segments and be
  // split in two at the device; a huge page keeps a slot in one physical piece.
  AlignedBuffer big(std::size_t(1) << 20);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(big.get()) % kHugePageSize, 0u);
  EXPECT_EQ(big.size(), std::size_t(1) << 20);  // the size asked for, whatever was rounded
  std::memset(big.get(), 1, big.size());        // usable to its end
  if (std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled")) {
    const std::string flags = vm_flags_of(big.get());
    EXPECT_NE(flags.find(" hg"), std::string::npos) << "MADV_HUGEPAGE not applied: " << flags;
  }
  // Small buffers stay small: 4 KiB alignment, no rounding to 2 MiB.
  AlignedBuffer small(64 * 1024);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(small.get()) % kDirectAlignment, 0u);
}

}  // namespace
}  // namespace feedbench
