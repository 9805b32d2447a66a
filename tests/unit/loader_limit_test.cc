#include "feedbench/loader/limit.h"

#include <gtest/gtest.h>

#include <fstream>

#include "feedbench/base/cores.h"
#include "feedbench/io/device_reads.h"
#include "test_util.h"

namespace feedbench {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

// A round of 10 s that read 400 MiB, its workers reading 9 s and transforming 1 s on 2 cores.
SupplyFigures round_of(double au) {
  SupplyFigures f;
  f.au = au, f.stall_fraction = 1 - au, f.target_au = 0.9;
  f.wall_s = 10;
  f.read_bytes = 400 * kMiB;
  f.samples_read = 1000;
  f.read_s = 9, f.transform_s = 1;
  f.transform = "none";
  f.host_cpu_busy = 0.30, f.cpu_util = 0.25, f.cores = 2;
  return f;
}

TEST(LoaderLimitTest, StorageFedWhenTheDeviceReadWhatTheWorkersRead) {
  SupplyFigures f = round_of(0.96);
  f.device_bytes = 400 * kMiB;
  const LoaderLimit l = loader_limit(f);
  EXPECT_TRUE(l.fed);
  EXPECT_EQ(l.by, "storage");
  EXPECT_DOUBLE_EQ(*l.memory_share, 0.0);
  EXPECT_DOUBLE_EQ(*l.device_bytes_per_second, 40.0 * kMiB);
  EXPECT_EQ(loader_verdict(f, l),
            "AU 96.0% — storage keeps up: the device delivered 40 MiB/s; the page cache served 0% of the "
            "bytes read");
}

TEST(LoaderLimitTest, FedByThePageCacheWhenMemoryServedAFifthOrMore) {
  // The case of the issue: 58 MiB/s read from a 40 MiB/s store, hot files read again.
  SupplyFigures f = round_of(0.95);
  f.read_bytes = 580 * kMiB;
  f.device_bytes = 232 * kMiB;  // 40% from the device
  f.rereads = 640;
  const LoaderLimit l = loader_limit(f);
  EXPECT_TRUE(l.fed);
  EXPECT_EQ(l.by, "page_cache");
  EXPECT_NEAR(*l.memory_share, 0.6, 1e-9);
  EXPECT_NEAR(l.reread_share, 0.64, 1e-9);
  EXPECT_EQ(l.text,
            "fed by the page cache, not storage: 60% of the bytes read came from memory (64% of the samples "
            "read were re-reads); the store alone delivered 23.2 MiB/s");
}

TEST(LoaderLimitTest, TheHandOverWhenTheFrameworksChargeIsMostOfTheWait) {
  // The batches were ready: most of the wait was PyTorch's own next() on them (8 tensors a
  // batch), so storage is not the limit, though the device read what the workers read.
  SupplyFigures f = round_of(0.80);
  f.device_bytes = 400 * kMiB;
  f.charged_share = 0.75;
  const LoaderLimit l = loader_limit(f);
  EXPECT_FALSE(l.fed);
  EXPECT_EQ(l.by, "handover");
  EXPECT_TRUE(
      l.text.starts_with("limit: the hand-over — 75% of the wait is the framework's own cost of taking "
                         "ready batches"))
      << l.text;
  EXPECT_NE(l.text.find("then storage: the device delivered 40 MiB/s"), std::string::npos) << l.text;
  // The verdict's first line names the limit as every other limit's does, not by its key.
  EXPECT_EQ(
      loader_verdict_line(0.80, l),
      "AU 80.0% — limit: the hand-over, 75% of the wait the framework's own cost of taking ready batches");
  f.charged_share = 0.40;  // a charge beside a supply that falls short: storage still leads
  EXPECT_EQ(loader_limit(f).by, "storage");
}

TEST(LoaderLimitTest, CpuBoundWhenTheCoresAreSaturatedAndTheTransformDominates) {
  SupplyFigures f = round_of(0.54);
  f.transform = "decode";
  f.read_s = 0.3, f.transform_s = 9.7;
  f.host_cpu_busy = 0.98, f.cpu_util = 0.58;  // 40 points of another program's load
  f.device_bytes = 380 * kMiB;
  const LoaderLimit l = loader_limit(f);
  EXPECT_FALSE(l.fed);
  EXPECT_EQ(l.by, "cpu");
  EXPECT_EQ(
      l.text,
      "limit: the decode's CPU — 2 cores saturated (98% busy; this run 58%, other programs 40%), 97% of "
      "the workers' time in the decode: a cheaper transform or more cores; then storage: the device "
      "delivered 38 MiB/s; the page cache served 5% of the bytes read");
  EXPECT_EQ(loader_verdict(f, l).rfind("AU 54.0% — training waits for data 46.0% of the time — limit: ", 0),
            0u);
  // One round cannot say whether more workers help: that is its worker sweep's to show.
  EXPECT_EQ(l.text.find("more workers"), std::string::npos);
  EXPECT_EQ(loader_verdict_line(f.au, l), "AU 54.0% — limit: the decode's CPU, 2 cores saturated (98% busy)");
}

TEST(LoaderLimitTest, WithNoTransformTheWorkersCpuIsTheFrameworksNotATransform) {
  // No transform: what the workers spend beyond reading is the framework's own work in them.
  SupplyFigures f = round_of(0.54);
  f.read_s = 0.3, f.transform_s = 9.7;
  f.host_cpu_busy = 0.98, f.cpu_util = 0.58;
  f.device_bytes = 380 * kMiB;
  const LoaderLimit l = loader_limit(f);
  EXPECT_EQ(l.by, "cpu");
  EXPECT_EQ(l.text.rfind("limit: the framework's CPU", 0), 0u) << l.text;
  EXPECT_EQ(l.text.find("transform's"), std::string::npos) << l.text;
}

TEST(LoaderLimitTest, StorageBoundSuggestsWorkersOnlyWithIdleCores) {
  SupplyFigures f = round_of(0.60);
  f.device_bytes = 400 * kMiB;
  LoaderLimit l = loader_limit(f);
  EXPECT_EQ(l.by, "storage");
  EXPECT_EQ(l.text,
            "limit: storage — the device delivered 40 MiB/s; the page cache served 0% of the bytes read");
  // The transform dominates and a core and more stand idle: more workers may help.
  f.read_s = 2, f.transform_s = 8, f.host_cpu_busy = 0.40;
  l = loader_limit(f);
  EXPECT_EQ(l.by, "storage");
  EXPECT_NE(l.text.find("1.2 of 2 cores stood idle: more workers may help"), std::string::npos) << l.text;
  // Saturated cores: CPU-bound, no more workers.
  f.host_cpu_busy = 0.90;
  l = loader_limit(f);
  EXPECT_EQ(l.by, "cpu");
  EXPECT_EQ(l.text.find("more workers may help"), std::string::npos);
  // Busy, not saturated, and too little idle to suggest anything.
  f.host_cpu_busy = 0.80;
  l = loader_limit(f);
  EXPECT_EQ(l.by, "storage");
  EXPECT_EQ(l.text.find("more workers"), std::string::npos) << l.text;
}

TEST(LoaderLimitTest, UnknownDeviceSaysWhyAndCountsReReads) {
  SupplyFigures f = round_of(0.97);
  f.device_why = "overlay has no block device to count (/data, device 0:52)";
  LoaderLimit l = loader_limit(f);
  EXPECT_EQ(l.by, "");
  EXPECT_FALSE(l.memory_share.has_value());
  EXPECT_EQ(
      l.text,
      "storage keeps up (where the bytes came from is not measured: overlay has no block device to count "
      "(/data, device 0:52))");
  f.rereads = 500;
  l = loader_limit(f);
  EXPECT_EQ(l.text.rfind("fed, perhaps by the page cache: 50% of the samples read were re-reads", 0), 0u)
      << l.text;
}

TEST(LoaderLimitTest, ReadAheadBeyondWhatWasReadIsNoNegativeShare) {
  SupplyFigures f = round_of(0.96);
  f.device_bytes = 450 * kMiB;
  EXPECT_DOUBLE_EQ(*loader_limit(f).memory_share, 0.0);
}

TEST(LoaderLimitTest, AReplaysResidencySplitsTheBytesTheDevicesCountOnlyBoundsThem) {
  // The case of the issue: a replay's warm epoch read 400 MiB, every byte found in the page cache
  // before it was read, while other programs made the device read 2.3 GiB.
  SupplyFigures f = round_of(0.96);
  f.resident_bytes = 400 * kMiB;
  f.device_bytes = 2376 * kMiB;
  LoaderLimit l = loader_limit(f);
  EXPECT_EQ(l.by, "page_cache");
  EXPECT_EQ(l.memory_share_from, "residency");
  EXPECT_DOUBLE_EQ(*l.memory_share, 1.0);
  EXPECT_DOUBLE_EQ(*l.device_bytes_per_second, 0.0);
  EXPECT_EQ(l.text,
            "fed by the page cache, not storage: 100% of the bytes read came from memory; the store alone "
            "delivered 0 B/s; the device read 2.32 GiB in that time, other programs' reads included");
  // A cold one: a tenth found in memory, the rest from the device at 36 MiB/s of its 237.6 MiB/s.
  f.resident_bytes = 40 * kMiB;
  l = loader_limit(f);
  EXPECT_EQ(l.by, "storage");
  EXPECT_NEAR(*l.memory_share, 0.1, 1e-9);
  EXPECT_DOUBLE_EQ(*l.device_bytes_per_second, 36.0 * kMiB);
  EXPECT_EQ(l.text,
            "storage keeps up: the device delivered 36 MiB/s; the page cache served 10% of the bytes read; "
            "the device read 2.32 GiB in that time, other programs' reads included");
  // Without the device's count: the residency alone, no bound said.
  f.device_bytes.reset();
  EXPECT_EQ(loader_limit(f).text,
            "storage keeps up: the device delivered 36 MiB/s; the page cache served 10% of the bytes read");
}

TEST(DeviceReadsTest, SumsTheSectorsReadOfEachCounter) {
  testing::TempDir dir;
  testing::write_file(dir / "a", "   10  2  2048 7 0 0 0 0 0 0 0\n");  // 2048 sectors: 1 MiB
  testing::write_file(dir / "b", "1 0 8 1 0 0 0 0 0 0 0\n");
  DeviceReads d({dir / "a", dir / "b"}, {"8:0 (sda)", "7:0 (loop0)"});
  ASSERT_TRUE(d.available());
  EXPECT_EQ(d.bytes_read(), std::optional<std::uint64_t>(kMiB + 8 * 512));
  testing::write_file(dir / "b", "garbage\n");
  EXPECT_FALSE(d.bytes_read().has_value());
}

TEST(DeviceReadsTest, AFileSystemWithoutABlockDeviceSaysWhy) {
  // /proc has no block device: its st_dev is an anonymous one.
  FileSet files("/proc");
  files.add("", "uptime", 0, 0);
  DeviceReads d(files);
  EXPECT_FALSE(d.available());
  EXPECT_NE(d.why().find("has no block device to count (/proc, device 0:"), std::string::npos) << d.why();
  EXPECT_FALSE(d.bytes_read().has_value());
}

TEST(HostCpuTest, BusyShareIsBetweenZeroAndOne) {
  const auto a = host_cpu_times();
  ASSERT_TRUE(a.has_value());
  volatile double x = 0;
  for (int i = 0; i < 20'000'000; ++i) x = x + 1;
  const auto b = host_cpu_times();
  EXPECT_GE(b->total_s, a->total_s);
  const std::optional<double> busy = host_cpu_busy(a, b);
  if (busy) {
    EXPECT_GE(*busy, 0.0);
    EXPECT_LE(*busy, 1.0);
  }
  EXPECT_FALSE(host_cpu_busy(std::nullopt, b).has_value());
  EXPECT_FALSE(host_cpu_busy(a, a).has_value());  // no time passed
}

}  // namespace
}  // namespace feedbench
