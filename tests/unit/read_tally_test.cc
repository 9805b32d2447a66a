#include "feedbench/io/read_tally.h"

#include <gtest/gtest.h>

namespace feedbench {
namespace {

TEST(ReadTallyTest, CompleteOnlyWhenEveryPlannedByteWasRead) {
  ReadTally t;
  EXPECT_TRUE(t.complete()) << "nothing planned, nothing missing";
  t.bytes_planned = 100;
  t.bytes = 99;
  EXPECT_FALSE(t.complete());
  t.bytes = 120;  // a file that grew gives more
  EXPECT_TRUE(t.complete());
  t.short_reads = 1;  // even when another read made up for it
  EXPECT_FALSE(t.complete());
  t.short_reads = 0;
  t.files_vanished = 1;
  EXPECT_FALSE(t.complete());
}

TEST(ReadTallyTest, MergeAddsCountsAndKeepsTheFirstShortfall) {
  ReadTally a;
  a.bytes = 10;
  a.bytes_planned = 10;
  a.files_opened = 2;
  a.noatime_opens = 2;
  ReadTally b;
  b.bytes = 5;
  b.bytes_planned = 8;
  b.short_reads = 1;
  b.incomplete = "/data/b: read 5 of 8 bytes at offset 0 (it shrank since the scan)";
  b.files_opened = 1;
  ReadTally c;
  c.bytes_planned = 4;
  c.files_vanished = 1;
  c.incomplete = "/data/c: removed since the scan";
  c.reads_files = false;

  ReadTally total;
  for (const ReadTally* part : {&a, &b, &c}) total.merge(*part);
  EXPECT_EQ(total.bytes, 15u);
  EXPECT_EQ(total.bytes_planned, 22u);
  EXPECT_EQ(total.short_reads, 1u);
  EXPECT_EQ(total.files_vanished, 1u);
  EXPECT_EQ(total.files_opened, 3u);
  EXPECT_EQ(total.noatime_opens, 2u);
  EXPECT_EQ(total.incomplete, b.incomplete);
  EXPECT_TRUE(total.reads_files) << "the whole's own, not a part's";
  EXPECT_FALSE(total.complete());
}

}  // namespace
}  // namespace feedbench
