// The GPU component without a GPU: the staging ring over the host stand-in (slot reuse, order,
// back-pressure, accounting), the runner and the loader driving the stand-ins, the refusal of
// GPU parameters in a build without CUDA, NVML's absence and the NUMA warning.
#include "feedbench/gpu/gpu.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "feedbench/base/clock.h"
#include "feedbench/base/error.h"
#include "feedbench/base/units.h"
#include "feedbench/io/runner.h"
#include "feedbench/loader/loader.h"
#include "feedbench/plan/plan.h"
#include "test_util.h"

namespace feedbench {
namespace {

using json = nlohmann::json;
constexpr std::int64_t kMs = 1'000'000;

std::vector<std::byte> bytes_of(std::size_t n, int first) {
  std::vector<std::byte> v(n, std::byte{0x5a});
  if (n > 0) v[0] = std::byte(first);
  return v;
}

TEST(GpuRingTest, CopiesRunInPushOrderThroughReusedSlots) {
  std::vector<std::byte> log;
  auto engine = make_host_copy_engine(3, 8, 0, 0, &log);
  {
    StagingRing ring(*engine);
    for (int i = 0; i < 10; ++i) ring.push(bytes_of(5, i));
    ring.drain();
    EXPECT_EQ(ring.stats().copies, 10u);
    EXPECT_EQ(ring.stats().bytes, 50u);
    EXPECT_EQ(ring.stats().copy_ns.count(), 10u);  // every copy timed once, slots reused
  }
  ASSERT_EQ(log.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(log[std::size_t(i)], std::byte(i)) << "copy " << i;
}

TEST(GpuRingTest, DataLongerThanASlotGoesInSlotSizedCopies) {
  std::vector<std::byte> log;
  auto engine = make_host_copy_engine(2, 8, 0, 0, &log);
  StagingRing ring(*engine);
  std::vector<std::byte> data(20);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = std::byte(i);
  ring.push(data);
  ring.push({});  // an empty read copies nothing
  ring.drain();
  EXPECT_EQ(ring.stats().copies, 3u);
  EXPECT_EQ(ring.stats().bytes, 20u);
  EXPECT_EQ(log, (std::vector<std::byte>{std::byte(0), std::byte(8), std::byte(16)}));
}

TEST(GpuRingTest, ProducerWaitsWhenEverySlotIsBusy) {
  // Two slots, 20 ms per copy, six pushes at once: the copy engine sets the pace, and the
  // producer's waits for a free slot are counted as such.
  auto engine = make_host_copy_engine(2, 64, 20 * kMs);
  StagingRing ring(*engine);
  const std::int64_t t0 = now_ns();
  for (int i = 0; i < 6; ++i) ring.push(bytes_of(64, i));
  const std::int64_t pushed = now_ns() - t0;
  ring.drain();
  EXPECT_GE(pushed, 3 * 20 * kMs);  // the 3rd..6th pushes each waited for a copy to finish
  EXPECT_GE(ring.stats().blocked_ns, 3 * 20 * kMs);
  EXPECT_LE(ring.stats().blocked_ns, pushed);
  EXPECT_EQ(ring.stats().copy_ns.count(), 6u);
  EXPECT_GE(double(ring.stats().copy_ns.min()), 0.99 * 20 * kMs);
}

TEST(GpuRingTest, ProducerSlowerThanTheCopiesNeverWaits) {
  auto engine = make_host_copy_engine(2, 64, 0);
  StagingRing ring(*engine);
  for (int i = 0; i < 5; ++i) {
    ring.push(bytes_of(64, i));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ring.drain();
  EXPECT_EQ(ring.stats().blocked_ns, 0);
  EXPECT_EQ(ring.stats().copies, 5u);
}

TEST(GpuRingTest, ResetForgetsWhatCameBefore) {
  auto engine = make_host_copy_engine(2, 64, 0);
  StagingRing ring(*engine);
  ring.push(bytes_of(64, 1));
  ring.drain();
  ring.reset_stats();
  ring.push(bytes_of(32, 2));
  ring.drain();
  EXPECT_EQ(ring.stats().copies, 1u);
  EXPECT_EQ(ring.stats().bytes, 32u);
  EXPECT_EQ(ring.stats().copy_ns.count(), 1u);
}

struct SmallSet {
  testing::TempDir dir;
  FileSet files{dir.path()};
  std::uint64_t bytes = 0;
  SmallSet() {
    const std::vector<std::uint64_t> sizes = {0, 1, 4096, 70000, 9};
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const std::string rel = "f" + std::to_string(i);
      testing::write_file(dir / rel, std::string(sizes[i], 'x'));
      files.add(rel, sizes[i], 0);
      bytes += sizes[i];
    }
    files.sort();
  }
};

TEST(GpuRingTest, RunnerSendsEveryByteReadThroughItsWorkersRings) {
  SmallSet set;
  WorkloadSpec spec;
  spec.block_size = 16384;
  spec.workers = 2;
  Workload workload(set.files, spec);
  RoundOptions options;
  options.engine = "io_uring";
  options.engine_options.queue_depth = 4;
  options.engine_options.block_size = spec.block_size;
  options.workers = 2;
  std::atomic<unsigned> made{0};  // each worker thread makes its own
  options.copy_engine = [&](unsigned, std::string*) {
    ++made;
    return make_host_copy_engine(4, 16384, 0);
  };
  RoundStats stats = run_round(set.files, workload, options);
  if (!stats.error.empty() && stats.error.find("io_uring") != std::string::npos) GTEST_SKIP() << stats.error;
  ASSERT_EQ(stats.error, "");
  EXPECT_EQ(made, 2u);
  ASSERT_TRUE(stats.sink.has_value());
  EXPECT_EQ(stats.bytes, set.bytes);
  EXPECT_EQ(stats.sink->bytes, stats.bytes);
  EXPECT_EQ(stats.sink->copies, stats.reads - 1);  // the empty file's read copies nothing
  EXPECT_EQ(stats.sink->copy_ns.count(), stats.sink->copies);
}

TEST(GpuRingTest, RunnerFailsTheRoundWhenACopyEngineCannotBeMade) {
  SmallSet set;
  WorkloadSpec spec;
  spec.block_size = 16384;
  Workload workload(set.files, spec);
  RoundOptions options;
  options.engine_options.block_size = spec.block_size;
  options.copy_engine = [](unsigned, std::string* why) -> std::unique_ptr<CopyEngine> {
    *why = "no CUDA device: no driver";
    return nullptr;
  };
  RoundStats stats = run_round(set.files, workload, options);
  EXPECT_EQ(stats.error, "no CUDA device: no driver");
  EXPECT_EQ(stats.bytes, 0u);
}

// Samples that each take `delay_ns` of sleep to read, however long since the last read (the
// library's delay source paces a steady rate instead): a load that sleeps, not burns CPU, stays
// accurate on a loaded machine.
class SleepSource : public SampleSource {
 public:
  SleepSource(std::size_t count, std::int64_t delay_ns) : count_(count), delay_ns_(delay_ns) {}
  std::size_t count() const override { return count_; }
  std::unique_ptr<SampleReader> make_reader() const override {
    struct Reader : SampleReader {
      std::int64_t delay_ns;
      explicit Reader(std::int64_t d) : delay_ns(d) {}
      std::uint64_t read(std::size_t) override {
        std::this_thread::sleep_for(std::chrono::nanoseconds(delay_ns));
        return 4096;
      }
      std::uint64_t planned_bytes(std::size_t) const override { return 4096; }
    };
    return std::make_unique<Reader>(delay_ns_);
  }

 private:
  std::size_t count_;
  std::int64_t delay_ns_;
};

// A loader run of `steps` steps of one sample each, `delay_ms` of sleep to load a sample, `step`
// on the stand-in device.
LoaderResult run_on_host_device(bool overlap, int steps, std::int64_t delay_ms, const char* step) {
  SleepSource source(std::size_t(steps), delay_ms * kMs);
  LoaderOptions o;
  o.workers = 0;  // the trainer reads each batch itself: nothing prefetched but what overlap gives
  o.warmup_steps = 0;
  o.step_time = parse_distribution(step, "step_time");
  o.device_step = [overlap](int) { return make_host_device_step(4096, overlap); };
  LoaderSim sim(o, source);
  return sim.run();
}

TEST(GpuStepTest, EveryStepCopiesItsBatchAndRunsOnTheDevice) {
  const LoaderResult r = run_on_host_device(false, 12, 0, "5ms");
  ASSERT_TRUE(r.device_copy.has_value());
  EXPECT_EQ(r.device_copy->copies, 12u);
  EXPECT_EQ(r.device_copy->bytes, 12u * 4096);
  EXPECT_GE(r.device_busy_s, 12 * 0.005 * 0.99);
  EXPECT_GE(r.compute_s, 12 * 0.005 * 0.99);  // without overlap the trainer waits for each step
}

TEST(GpuStepTest, OverlapFetchesTheNextBatchWhileTheDeviceComputes) {
  // 6 ms to load a batch, 6 ms to compute it: one after the other 12 ms a step, overlapped 6.
  const LoaderResult serial = run_on_host_device(false, 16, 6, "6ms");
  const LoaderResult overlapped = run_on_host_device(true, 16, 6, "6ms");
  ASSERT_TRUE(overlapped.device_copy.has_value());
  EXPECT_EQ(overlapped.device_copy->copies, 16u);
  EXPECT_GE(overlapped.device_busy_s, 16 * 0.006 * 0.99);  // every step still ran in full
  EXPECT_LT(overlapped.measured_s, 0.8 * serial.measured_s)
      << "serial " << serial.measured_s << " s, overlapped " << overlapped.measured_s << " s";
}

TEST(GpuStepTest, ABatchLargerThanTheDeviceBuffersFailsTheRun) {
  auto step = make_host_device_step(100, false);
  EXPECT_THROW(step->step(101, 0), RunError);
  // In a run with loader workers: the run fails with the reason, its workers stopped and joined.
  auto source = make_delay_source(8, 4096, 0);
  LoaderOptions o;
  o.workers = 2;
  o.step_time = parse_distribution("1ms", "step_time");
  o.device_step = [](int) { return make_host_device_step(100, false); };
  LoaderSim sim(o, *source);
  try {
    sim.run();
    ADD_FAILURE() << "the run did not fail";
  } catch (const RunError& e) {
    EXPECT_STREQ(e.what(), "a batch of 4096 bytes is larger than the device step's buffers");
  }
}

class GpuPlanTest : public ::testing::Test {
 protected:
  testing::TempDir dir;
  Config config_of(const json& families, const json& defaults = json::object()) {
    std::filesystem::create_directories(dir / "source");
    json doc = {{"name", "t"}, {"dataset", {{"source", dir / "source"}}}, {"families", families}};
    if (!defaults.empty()) doc["defaults"] = defaults;
    return parse_config(doc.dump(), "g.json");
  }
  std::string refusal(const Config& c, bool cuda_built) {
    try {
      expand_plan(c, kDefaultMaxCases, cuda_built);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(GpuPlanTest, GpuParametersAreRefusedWhereWrittenInABuildWithoutCuda) {
  EXPECT_EQ(
      refusal(config_of({{{"family", "file_read"}, {"sink", "gpu"}}}), false),
      "g.json: /families/0/sink: sink gpu needs the GPU component, but this feedbench was built without "
      "CUDA (rebuild with the CUDA toolkit and -DFEEDBENCH_CUDA=ON)");
  EXPECT_TRUE(refusal(config_of({{{"family", "file_read"}, {"sink", {"host", "gpu"}}}}), false)
                  .starts_with("g.json: /families/0/sink/1: sink gpu needs the GPU component"));
  EXPECT_TRUE(
      refusal(config_of({{{"family", "loader"}}}, {{"accelerator", "cuda"}}), false)
          .starts_with("g.json: /defaults/accelerator: accelerator cuda needs the GPU component, but this "
                       "feedbench was built without CUDA"));
  // Host sinks and CPU accelerators need nothing.
  EXPECT_EQ(refusal(config_of({{{"family", "file_read"}, {"sink", "host"}},
                               {{"family", "loader"}, {"accelerator", "cpu"}}}),
                    false),
            "");
}

TEST_F(GpuPlanTest, ABuildWithCudaPlansGpuCasesUnderTheirOwnNames) {
  const Plan p = expand_plan(config_of({{{"family", "file_read"}, {"sink", "gpu"}},
                                        {{"family", "loader"}, {"accelerator", "cuda"}, {"overlap", true}}}),
                             kDefaultMaxCases, true);
  ASSERT_EQ(p.cases.size(), 2u);
  EXPECT_TRUE(p.cases[0].name().ends_with("/path:source/sink:gpu")) << p.cases[0].name();
  EXPECT_TRUE(p.cases[1].name().ends_with("/path:source/accel:cuda/overlap:true")) << p.cases[1].name();
}

TEST_F(GpuPlanTest, OverlapWithoutACudaAcceleratorIsRefused) {
  EXPECT_EQ(
      refusal(config_of({{{"family", "loader"}, {"overlap", true}}}), true),
      "g.json: /families/0/overlap: expected accelerator \"cuda\" as well (overlap copies batch k+1 to the "
      "device during step k), got overlap without it");
}

TEST(GpuCudaTest, NoDeviceIsSaidNotFailed) {
  std::string why;
  const int n = cuda_device_count(&why);
  if (n > 0) GTEST_SKIP() << n << " CUDA device(s) here";
  EXPECT_TRUE(why.starts_with(built_with_cuda() ? "no CUDA device" : "built without CUDA")) << why;
  std::string engine_why;
  EXPECT_EQ(make_cuda_copy_engine(4, 4096, 0, &engine_why), nullptr);
  EXPECT_EQ(engine_why, why);
  std::string step_why;
  EXPECT_EQ(make_cuda_device_step(4096, true, 0, &step_why), nullptr);
  EXPECT_EQ(step_why, why);
}

TEST(GpuNvmlTest, WithoutTheLibraryThereIsNoDriver) {
  const GpuInventory inv = list_gpus("libfeedbench-no-such-nvml.so.1");
  EXPECT_FALSE(inv.driver);
  EXPECT_EQ(inv.why, "no NVIDIA driver (libfeedbench-no-such-nvml.so.1 not found)");
  EXPECT_TRUE(inv.gpus.empty());
}

TEST(GpuNvmlTest, WarnsWhenReadingThreadsMayRunOffTheGpusNode) {
  GpuInfo gpu;
  gpu.numa_node = 1;
  const std::vector<std::vector<int>> nodes = {{0, 1}, {2, 3}};
  EXPECT_EQ(
      numa_warning(gpu, nodes, {0, 1, 2, 3}),
      "reading threads may run on NUMA node(s) 0,1; GPU 0 is on node 1: host-to-device copies from another "
      "node cross the socket link (bind with numactl --cpunodebind=1 --membind=1)");
  EXPECT_EQ(numa_warning(gpu, nodes, {2, 3}), "");
  EXPECT_TRUE(numa_warning(gpu, nodes, {0}).starts_with("reading threads may run on NUMA node(s) 0; GPU 0"));
  gpu.numa_node = -1;  // unknown (sysfs says -1 on one-node machines)
  EXPECT_EQ(numa_warning(gpu, nodes, {0}), "");
}

}  // namespace
}  // namespace feedbench
