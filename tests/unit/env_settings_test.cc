// The A/B switches in the environment: each known value, unset and empty as the default, and
// anything else bad input naming the variable (a typo must not measure the other side).
#include "feedbench/base/env_settings.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "feedbench/base/error.h"
#include "test_util.h"

namespace feedbench {
namespace {

using testing::input_error_of;
using testing::ScopedVariable;

TEST(EnvSettingsTest, IoUringChainTakesZeroOrOne) {
  {
    ScopedVariable v("FEEDBENCH_IO_URING_CHAIN", nullptr);
    EXPECT_TRUE(io_uring_chain_setting());
  }
  {
    ScopedVariable v("FEEDBENCH_IO_URING_CHAIN", "");
    EXPECT_TRUE(io_uring_chain_setting());
  }
  {
    ScopedVariable v("FEEDBENCH_IO_URING_CHAIN", "0");
    EXPECT_FALSE(io_uring_chain_setting());
  }
  {
    ScopedVariable v("FEEDBENCH_IO_URING_CHAIN", "1");
    EXPECT_TRUE(io_uring_chain_setting());
  }
  for (const char* bad : {"false", "off", "00", " 0", "2"}) {
    ScopedVariable v("FEEDBENCH_IO_URING_CHAIN", bad);
    EXPECT_EQ(
        input_error_of([] { io_uring_chain_setting(); }),
        std::string("environment variable FEEDBENCH_IO_URING_CHAIN: expected 0 or 1, got '") + bad + "'");
    EXPECT_NE(input_error_of([] { check_env_settings(); }), "") << bad;
  }
}

TEST(EnvSettingsTest, ScanThreadsIsAWholeNumberFromOneTo64) {
  {
    ScopedVariable v("FEEDBENCH_SCAN_THREADS", nullptr);
    EXPECT_EQ(scan_threads_setting(4), 4u);
  }
  {
    ScopedVariable v("FEEDBENCH_SCAN_THREADS", "1");
    EXPECT_EQ(scan_threads_setting(4), 1u);
  }
  {
    ScopedVariable v("FEEDBENCH_SCAN_THREADS", "64");
    EXPECT_EQ(scan_threads_setting(4), 64u);
  }
  for (const char* bad : {"0", "65", "four", "2x", "-1"}) {
    ScopedVariable v("FEEDBENCH_SCAN_THREADS", bad);
    EXPECT_EQ(
        input_error_of([] { scan_threads_setting(4); }),
        std::string("environment variable FEEDBENCH_SCAN_THREADS: expected a whole number from 1 to 64, "
                    "got '") +
            bad + "'");
  }
}

TEST(EnvSettingsTest, ResidencyMethodIsAutoCachestatOrMincore) {
  {
    ScopedVariable v("FEEDBENCH_RESIDENCY_METHOD", nullptr);
    EXPECT_FALSE(residency_mincore_setting());
  }
  for (const char* prefer : {"auto", "cachestat"}) {
    ScopedVariable v("FEEDBENCH_RESIDENCY_METHOD", prefer);
    EXPECT_FALSE(residency_mincore_setting()) << prefer;
  }
  {
    ScopedVariable v("FEEDBENCH_RESIDENCY_METHOD", "mincore");
    EXPECT_TRUE(residency_mincore_setting());
  }
  ScopedVariable v("FEEDBENCH_RESIDENCY_METHOD", "mincor");
  EXPECT_EQ(
      input_error_of([] { residency_mincore_setting(); }),
      "environment variable FEEDBENCH_RESIDENCY_METHOD: expected auto, cachestat or mincore, got 'mincor'");
  EXPECT_EQ(
      input_error_of([] { check_env_settings(); }),
      "environment variable FEEDBENCH_RESIDENCY_METHOD: expected auto, cachestat or mincore, got 'mincor'");
}

TEST(EnvSettingsTest, LatencyClockIsAutoOrSteadyClock) {
  for (const char* automatic : {static_cast<const char*>(nullptr), "", "auto"}) {
    ScopedVariable v("FEEDBENCH_LATENCY_CLOCK", automatic);
    EXPECT_FALSE(latency_steady_clock_setting());
  }
  {
    ScopedVariable v("FEEDBENCH_LATENCY_CLOCK", "steady_clock");
    EXPECT_TRUE(latency_steady_clock_setting());
  }
  for (const char* bad : {"tsc", "steady", "0"}) {
    ScopedVariable v("FEEDBENCH_LATENCY_CLOCK", bad);
    EXPECT_EQ(
        input_error_of([] { check_env_settings(); }),
        std::string("environment variable FEEDBENCH_LATENCY_CLOCK: expected auto or steady_clock, got '") +
            bad + "'");
  }
}

TEST(EnvSettingsTest, OpenBeneathIsAutoOpenat2OrWalk) {
  for (const char* automatic : {static_cast<const char*>(nullptr), "", "auto", "openat2"}) {
    ScopedVariable v("FEEDBENCH_OPEN_BENEATH", automatic);
    EXPECT_FALSE(open_beneath_walk_setting());
  }
  {
    ScopedVariable v("FEEDBENCH_OPEN_BENEATH", "walk");
    EXPECT_TRUE(open_beneath_walk_setting());
  }
  for (const char* bad : {"fallback", "Walk", "1"}) {
    ScopedVariable v("FEEDBENCH_OPEN_BENEATH", bad);
    EXPECT_EQ(
        input_error_of([] { check_env_settings(); }),
        std::string("environment variable FEEDBENCH_OPEN_BENEATH: expected auto, openat2 or walk, got '") +
            bad + "'");
  }
}

}  // namespace
}  // namespace feedbench
