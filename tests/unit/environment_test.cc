// Environment capture: paths (mount, file system, device), the host block, same-device
// detection and the warning people read.
#include "feedbench/results/environment.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "feedbench/base/error.h"
#include "test_util.h"

namespace feedbench {
namespace {

using testing::TempDir;

// RETURNS: a mounted tmpfs we can stat, or "".
std::string find_tmpfs() {
  std::ifstream in("/proc/self/mounts");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string src, point, type;
    f >> src >> point >> type;
    struct stat st {};
    if (type == "tmpfs" && point.find("\\") == std::string::npos && ::stat(point.c_str(), &st) == 0)
      return point;
  }
  return {};
}

TEST(EnvironmentTest, DescribesTheRootFileSystem) {
  PathInfo p = describe_path("source", "/");
  EXPECT_EQ(p.role, "source");
  EXPECT_EQ(p.requested, "/");
  EXPECT_EQ(p.resolved, "/");
  EXPECT_EQ(p.mount_point, "/");
  EXPECT_FALSE(p.fs_type.empty());
  EXPECT_FALSE(p.mount_options.empty());
  struct stat st {};
  ASSERT_EQ(::stat("/", &st), 0);
  EXPECT_EQ(p.device_id, std::uint64_t(st.st_dev));
  nlohmann::json j = p.to_json();
  for (const char* key :
       {"role", "requested", "resolved", "fs_type", "mount_point", "mount_source", "mount_options", "device"})
    EXPECT_TRUE(j[key].is_string()) << key;
  EXPECT_TRUE(j["device_info"].is_object());
  if (!p.device.empty()) {
    // A real block device: the queue facts the kernel exposes, with their types.
    EXPECT_EQ(p.backing_disks.size(), 1u);
    if (j["device_info"].contains("rotational")) {
      EXPECT_TRUE(j["device_info"]["rotational"].is_boolean());
    }
    if (j["device_info"].contains("read_ahead_kb")) {
      EXPECT_TRUE(j["device_info"]["read_ahead_kb"].is_number_integer());
    }
    for (const char* key : {"max_sectors_kb", "max_segments"}) {
      if (j["device_info"].contains(key)) {
        EXPECT_GT(j["device_info"][key].get<std::int64_t>(), 0) << key;
      }
    }
    if (j["device_info"].contains("scheduler")) {
      std::string s = j["device_info"]["scheduler"];
      EXPECT_EQ(s.find('['), std::string::npos) << s;  // the active one, not the list
    }
  }
}

TEST(EnvironmentTest, ResolvesSymlinksAndNamesTheLongestMount) {
  TempDir dir;
  testing::write_file(dir / "data/a.bin", "x");
  ASSERT_EQ(::symlink((dir / "data").c_str(), (dir / "link").c_str()), 0);
  PathInfo p = describe_path("cache", dir / "link");
  EXPECT_EQ(p.resolved, std::filesystem::canonical(dir / "data").string());
  EXPECT_EQ(p.resolved.rfind(p.mount_point, 0), 0u) << p.mount_point;
}

TEST(EnvironmentTest, ATmpfsIsNamedAndHasNoBlockDevice) {
  std::string tmpfs = find_tmpfs();
  if (tmpfs.empty()) GTEST_SKIP() << "no tmpfs mounted here";
  PathInfo p = describe_path("cache", tmpfs);
  EXPECT_EQ(p.fs_type, "tmpfs");
  EXPECT_EQ(p.mount_point, std::filesystem::canonical(tmpfs).string());
  EXPECT_EQ(p.device, "");
  PathInfo root = describe_path("source", "/");
  EXPECT_FALSE(same_device(p, root));
}

TEST(EnvironmentTest, AMissingPathIsBadInput) {
  EXPECT_THROW(describe_path("source", "/nonexistent/feedbench/path"), InputError);
}

TEST(EnvironmentTest, HostFieldsArePresentAndTyped) {
  nlohmann::json h = describe_host();
  for (const char* key : {"cpu_model", "kernel", "distribution", "hostname", "instance_type",
                          "transparent_hugepages", "latency_clock"})
    EXPECT_TRUE(h[key].is_string()) << key;
  EXPECT_TRUE(h["latency_clock"] == "tsc" || h["latency_clock"] == "steady_clock") << h["latency_clock"];
  // The active THP mode alone ("madvise"), not the sysfs list around it.
  EXPECT_EQ(h["transparent_hugepages"].get<std::string>().find('['), std::string::npos);
  for (const char* key : {"cores", "sockets", "numa_nodes", "memory_total_bytes", "memory_available_bytes"})
    EXPECT_TRUE(h[key].is_number_integer()) << key;
  EXPECT_GE(h["cores"].get<int>(), 1);
  EXPECT_GE(h["numa_nodes"].get<int>(), 1);
  EXPECT_GT(h["memory_total_bytes"].get<std::int64_t>(), 0);
  EXPECT_LE(h["memory_available_bytes"].get<std::int64_t>(), h["memory_total_bytes"].get<std::int64_t>());
  EXPECT_FALSE(h["kernel"].get<std::string>().empty());
  ASSERT_TRUE(h["gpus"].is_array());
  for (const auto& g : h["gpus"]) {
    for (const char* key : {"name", "memory", "driver"}) EXPECT_TRUE(g[key].is_string()) << key;
  }
}

TEST(EnvironmentTest, TwoFoldersOnOneFileSystemShareADevice) {
  TempDir a, b;
  PathInfo pa = describe_path("source", a.path());
  PathInfo pb = describe_path("cache", b.path());
  EXPECT_TRUE(same_device(pa, pb));
  std::map<std::string, PathInfo> paths = {{"cache", pb}, {"source", pa}};
  std::string text = format_paths(paths);
  EXPECT_NE(text.find("warning: source and cache are on the same device ("), std::string::npos) << text;
  EXPECT_NE(text.find("a cache there cannot be faster than the source, except through the page "
                      "cache"),
            std::string::npos);
  nlohmann::json j = paths_to_json(paths);
  EXPECT_EQ(j["source"]["same_device_as"], nlohmann::json::array({"cache"}));
}

TEST(EnvironmentTest, SameDeviceByBackingDiskAndTheWarningNamesIt) {
  PathInfo src, cache;
  src.role = "source";
  src.resolved = "/data";
  src.device_id = 1;
  src.device = "dm-0";
  src.backing_disks = {"vda"};
  cache.role = "cache";
  cache.resolved = "/cache";
  cache.device_id = 2;
  cache.device = "dm-1";
  cache.backing_disks = {"vda"};
  EXPECT_TRUE(same_device(src, cache));  // two volumes on one disk
  cache.backing_disks = {"nvme0n1"};
  cache.device = "nvme0n1";
  EXPECT_FALSE(same_device(src, cache));
  EXPECT_EQ(format_paths({{"source", src}, {"cache", cache}}).find("warning"), std::string::npos);
  cache.device = "vda";
  cache.backing_disks = {"vda"};
  src.device = "vda";
  std::string text = format_paths({{"source", src}, {"cache", cache}});
  EXPECT_NE(text.find("warning: source and cache are on the same device (vda): a cache there "
                      "cannot be faster than the source, except through the page cache"),
            std::string::npos)
      << text;
}

TEST(EnvironmentTest, ToolNamesTheBuild) {
  nlohmann::json t = describe_tool();
  EXPECT_EQ(t["name"], "feedbench");
  for (const char* key : {"version", "git_commit", "compiler", "build_type", "benchmark_version"})
    EXPECT_TRUE(t[key].is_string()) << key;
  EXPECT_TRUE(t["git_dirty"].is_boolean());
  EXPECT_EQ(t["benchmark_version"].get<std::string>().rfind("1.", 0), 0u) << t;
}

TEST(EnvironmentTest, EnvironmentBlockHasHostAndPaths) {
  TempDir d;
  nlohmann::json env = describe_environment({{"source", describe_path("source", d.path())}});
  EXPECT_TRUE(env["host"].is_object());
  EXPECT_EQ(env["paths"]["source"]["resolved"], std::filesystem::canonical(d.path()).string());
}

// The host's load, sampled before and after a run: what lets diff tell a busier host from a
// slower system.
TEST(EnvironmentTest, HostLoadIsSampledAndRecordedBeforeAndAfter) {
  LoadSample before = sample_host_load();
  ASSERT_TRUE(before.ok) << "/proc/loadavg unreadable";
  EXPECT_GE(before.loadavg_1m, 0);
  EXPECT_GE(before.online_cores, 1);
  LoadSample after = before;
  after.loadavg_1m = before.loadavg_1m + 1.5;
  after.online_cores = before.online_cores + 1;  // a core came online: the fewer is recorded
  nlohmann::json j = load_to_json(before, after);
  EXPECT_EQ(j["loadavg_1m_before"].get<double>(), before.loadavg_1m);
  EXPECT_EQ(j["loadavg_1m_after"].get<double>(), before.loadavg_1m + 1.5);
  EXPECT_EQ(j["online_cores"].get<double>(), before.online_cores);
  LoadSample failed;
  EXPECT_TRUE(load_to_json(before, failed).is_null());
  // Other programs' cores, when known: a number under exactly this key (diff reads it).
  EXPECT_TRUE(j["other_programs_cores"].is_null());
  EXPECT_EQ(load_to_json(before, after, 0.7)["other_programs_cores"].get<double>(), 0.7);
}

// The host's busy time between two samples, less one's own CPU, over the time between them.
TEST(EnvironmentTest, OtherProgramsCoresComeFromTheSamplesTimes) {
  LoadSample before, after;
  before.cpu = HostCpuTimes{10, 20};
  after.cpu = HostCpuTimes{13, 24};  // 3 s busy over 2 s on 2 cores
  before.at_ns = 1'000'000'000;
  after.at_ns = 3'000'000'000;
  EXPECT_NEAR(*other_programs_cores(before, after, 1.6), 0.7, 1e-9);
  EXPECT_EQ(other_programs_text(0.7, 2, "the job"), "other programs took 0.7 of 2 cores during the job");
  after.cpu.reset();
  EXPECT_FALSE(other_programs_cores(before, after, 1.6));
}

}  // namespace
}  // namespace feedbench
