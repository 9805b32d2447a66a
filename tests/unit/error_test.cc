#include <gtest/gtest.h>

#include "feedbench/base/error.h"

TEST(ErrorTest, ErrnoMessageNamesPrefixAndReason) {
  EXPECT_EQ(feedbench::errno_message("open x", 2), "open x: No such file or directory");
}

TEST(ErrorTest, CheckAbortsWithMessage) {
  EXPECT_DEATH(FB_CHECK(1 == 2, "arithmetic broke"), "arithmetic broke");
}
