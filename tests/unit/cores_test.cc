// usable_cores is the affinity mask, not the machine: under a cpuset (or an MPI binding) every
// family's cpu_util is relative to the CPUs the process may use.
#include "feedbench/cores.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <thread>

#include "feedbench/aligned_buffer.h"
#include "feedbench/unique_fd.h"

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

}  // namespace
}  // namespace feedbench
