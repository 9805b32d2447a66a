#include "feedbench/base/units.h"

#include <gtest/gtest.h>

#include "feedbench/base/error.h"

namespace feedbench {
namespace {

TEST(UnitsTest, ParsesSizes) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("0"), 0u);
  EXPECT_EQ(parse_size("4KiB"), 4096u);
  EXPECT_EQ(parse_size("4 KiB"), 4096u);
  EXPECT_EQ(parse_size("1MiB"), 1048576u);
  EXPECT_EQ(parse_size("1M"), 1048576u);
  EXPECT_EQ(parse_size("2GiB"), 2147483648u);
  EXPECT_EQ(parse_size("1TiB"), 1099511627776u);
  EXPECT_EQ(parse_size("1kB"), 1000u);
  EXPECT_EQ(parse_size("1MB"), 1000000u);
  EXPECT_EQ(parse_size("3GB"), 3000000000u);
  EXPECT_EQ(parse_size("1.5KiB"), 1536u);
  EXPECT_EQ(parse_size("0.5MiB"), 524288u);
  EXPECT_EQ(parse_size("512B"), 512u);
}

TEST(UnitsTest, RejectsBadSizes) {
  for (const char* bad : {"", "KiB", "4XB", "-4KiB", "4 KiB/s", "1.5", "0.3B", "1.KiB", "4kib",
                          "99999999999999999999", "20000000TiB", "4 4KiB"}) {
    EXPECT_THROW(parse_size(bad), InputError) << bad;
  }
}

TEST(UnitsTest, SizeErrorNamesWhatAndValue) {
  try {
    parse_size("4XB", "block_size");
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "block_size: expected a size such as 4KiB, 1MiB or 4096 (bytes), got \"4XB\" (unknown unit)");
  }
}

TEST(UnitsTest, ParsesDurations) {
  EXPECT_EQ(parse_duration_ns("50ms"), 50'000'000);
  EXPECT_EQ(parse_duration_ns("200us"), 200'000);
  EXPECT_EQ(parse_duration_ns("200\xC2\xB5s"), 200'000);
  EXPECT_EQ(parse_duration_ns("7ns"), 7);
  EXPECT_EQ(parse_duration_ns("1.5s"), 1'500'000'000);
  EXPECT_EQ(parse_duration_ns("2min"), 120'000'000'000);
  EXPECT_EQ(parse_duration_ns("1h"), 3'600'000'000'000);
  EXPECT_EQ(parse_duration_ns("0ms"), 0);
  EXPECT_EQ(parse_duration_ns(" 10 ms "), 10'000'000);
}

TEST(UnitsTest, RejectsBadDurations) {
  for (const char* bad : {"50", "", "ms", "-5ms", "5 parsecs", "0.5ns", "5MS", "10000000h"}) {
    EXPECT_THROW(parse_duration_ns(bad), InputError) << bad;
  }
  try {
    parse_duration_ns("50", "step_time");
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("step_time: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("missing unit"), std::string::npos) << e.what();
  }
}

TEST(UnitsTest, FormatsHumanValues) {
  EXPECT_EQ(format_size(512), "512 B");
  EXPECT_EQ(format_size(4096), "4 KiB");
  EXPECT_EQ(format_size(1.5 * 1024 * 1024), "1.5 MiB");
  EXPECT_EQ(format_size(812.0 * 1024 * 1024), "812 MiB");
  EXPECT_EQ(format_size(1023.9 * 1024), "1 MiB");  // rounds up into the next unit, never "1020 KiB"
  EXPECT_EQ(format_rate(812.0 * 1024 * 1024), "812 MiB/s");
  EXPECT_EQ(format_duration_ns(35.2e6), "35.2 ms");
  EXPECT_EQ(format_duration_ns(1.2e9), "1.20 s");
  EXPECT_EQ(format_duration_ns(850), "850 ns");
  EXPECT_EQ(format_duration_ns(12.34e3), "12.3 us");
}

TEST(UnitsTest, FormatsExactDurations) {
  EXPECT_EQ(format_duration_exact(50'000'000), "50ms");
  EXPECT_EQ(format_duration_exact(1'500'000), "1500us");
  EXPECT_EQ(format_duration_exact(2'000'000'000), "2s");
  EXPECT_EQ(format_duration_exact(120'000'000'000), "2min");
  EXPECT_EQ(format_duration_exact(7), "7ns");
  EXPECT_EQ(format_duration_exact(0), "0ns");
  for (std::int64_t ns : {1LL, 999LL, 1000LL, 61'000'000'000LL, 3'600'000'000'000LL})
    EXPECT_EQ(parse_duration_ns(format_duration_exact(ns)), ns);
}

TEST(UnitsTest, ParsesDistributions) {
  Distribution d = parse_distribution("50ms");
  EXPECT_EQ(d.kind, Distribution::Kind::fixed);
  EXPECT_EQ(d.a_ns, 50'000'000);
  EXPECT_EQ(format_distribution(d), "50ms");
  EXPECT_EQ(format_distribution(parse_distribution("fixed:0.05s")), "50ms");

  d = parse_distribution("normal:50ms:5ms");
  EXPECT_EQ(d.kind, Distribution::Kind::normal);
  EXPECT_EQ(d.a_ns, 50'000'000);
  EXPECT_EQ(d.b_ns, 5'000'000);
  EXPECT_EQ(format_distribution(d), "normal:50ms:5ms");

  d = parse_distribution("uniform:40ms:0.06s");
  EXPECT_EQ(d.kind, Distribution::Kind::uniform);
  EXPECT_EQ(d.a_ns, 40'000'000);
  EXPECT_EQ(d.b_ns, 60'000'000);
  EXPECT_EQ(format_distribution(d), "uniform:40ms:60ms");
}

TEST(UnitsTest, RejectsBadDistributions) {
  for (const char* bad : {"", "50", "normal:50ms", "normal:50ms:", "uniform:60ms:40ms", "gamma:1ms:2ms",
                          "normal:50ms:5ms:1ms", "fixed:"}) {
    EXPECT_THROW(parse_distribution(bad, "step_time"), InputError) << bad;
  }
}

TEST(UnitsTest, ParsesTransforms) {
  TransformCost t = parse_transform("none");
  EXPECT_EQ(t.per, TransformCost::Per::none);
  t = parse_transform("200us/sample");
  EXPECT_EQ(t.per, TransformCost::Per::sample);
  EXPECT_EQ(t.ns, 200'000);
  EXPECT_EQ(format_transform(t), "200us/sample");
  t = parse_transform("5ms/MiB");
  EXPECT_EQ(t.per, TransformCost::Per::mib);
  EXPECT_EQ(t.ns, 5'000'000);
  EXPECT_EQ(format_transform(t), "5ms/MiB");
  EXPECT_EQ(format_transform(parse_transform("0us/sample")), "none");
  for (const char* bad : {"", "None", "200us", "200/sample", "5ms/GiB", "/sample", "fast"}) {
    EXPECT_THROW(parse_transform(bad), InputError) << bad;
  }
}

TEST(UnitsTest, ParsesDecodeTransforms) {
  TransformCost t = parse_transform("decode");
  EXPECT_EQ(t.per, TransformCost::Per::decode);
  EXPECT_EQ(t.size, 0);
  EXPECT_EQ(format_transform(t), "decode");
  t = parse_transform(" decode:224 ");
  EXPECT_EQ(t.per, TransformCost::Per::decode);
  EXPECT_EQ(t.size, 224);
  EXPECT_EQ(format_transform(t), "decode:224");
  for (const char* bad : {"decode:", "decode:0", "decode:-1", "decode:9000", "decode:2x",
                          "decode:99999999999", "decoder", "decode/MiB"}) {
    EXPECT_THROW(parse_transform(bad), InputError) << bad;
  }
}

TEST(UnitsTest, ParsesRandomResizedCrop) {
  TransformCost t = parse_transform(" random_resized_crop:224 ");
  EXPECT_EQ(t.per, TransformCost::Per::decode);  // a real decode, recorded as decode is
  EXPECT_EQ(t.crop, TransformCost::Crop::random_resized);
  EXPECT_EQ(t.size, 224);
  EXPECT_EQ(format_transform(t), "random_resized_crop:224");
  EXPECT_EQ(parse_transform("decode:224").crop, TransformCost::Crop::centre);
  for (const char* bad : {"random_resized_crop", "random_resized_crop:", "random_resized_crop:0",
                          "random_resized_crop:9000", "random_resized_crop:22x", "random_crop:224"}) {
    try {
      parse_transform(bad, "/families/0/transform");
      ADD_FAILURE() << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("/families/0/transform: expected"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("random_resized_crop:SIZE"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace feedbench
