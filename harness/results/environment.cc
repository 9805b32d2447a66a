// What was measured on: read from /proc, /sys, uname and (when present) nvidia-smi. Every
// probe is best effort: a missing /sys entry leaves a field empty, never an error.
#include "feedbench/results/environment.h"
#include "feedbench/base/file_system.h"
#include "feedbench/base/latency_clock.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "feedbench/base/clock.h"
#include "feedbench/base/cores.h"
#include "feedbench/base/error.h"
#include "feedbench/base/text.h"
#include "feedbench/base/units.h"
#include "feedbench/build_info.h"
#include "feedbench/git_info.h"

#ifndef FEEDBENCH_BENCHMARK_VERSION
#define FEEDBENCH_BENCHMARK_VERSION "unknown"
#endif

namespace feedbench {

namespace {

namespace fs = std::filesystem;

std::optional<std::int64_t> read_int(const std::string& path) {
  std::string s = read_first_line(path);
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (end == s.c_str()) return std::nullopt;
  return v;
}

// /proc/self/mountinfo escapes space, tab, newline and backslash as octal (\040).
std::string unescape_mount(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && std::isdigit((unsigned char)s[i + 1]) &&
        std::isdigit((unsigned char)s[i + 2]) && std::isdigit((unsigned char)s[i + 3])) {
      out += char((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

// RETURNS: true when `path` is `mount` or lies below it.
bool is_under(const std::string& path, const std::string& mount) {
  if (mount == "/") return true;
  return path == mount || (path.size() > mount.size() && path.compare(0, mount.size(), mount) == 0 &&
                           path[mount.size()] == '/');
}

struct Mount {
  std::string point, fs_type, source, options;
};

// RETURNS: the mount holding `path`: the longest mount point that is a prefix; of mounts on the
// same point the last (it hides the earlier ones).
std::optional<Mount> find_mount(const std::string& path) {
  std::ifstream in("/proc/self/mountinfo");
  std::optional<Mount> best;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, majmin, root, point, options, field;
    if (!(fields >> id >> parent >> majmin >> root >> point >> options)) continue;
    while (fields >> field && field != "-") {
    }  // optional fields end at "-"
    std::string fs_type, source, super_options;
    fields >> fs_type >> source >> super_options;
    point = unescape_mount(point);
    if (!is_under(path, point)) continue;
    if (best && point.size() < best->point.size()) continue;
    // Per-mount options first, then the file system's own that are not already there.
    std::set<std::string> seen;
    std::string all;
    for (const std::string* list : {&options, &super_options}) {
      std::istringstream opts(*list);
      std::string opt;
      while (std::getline(opts, opt, ','))
        if (!opt.empty() && seen.insert(opt).second) all += (all.empty() ? "" : ",") + opt;
    }
    best = Mount{point, fs_type, unescape_mount(source), all};
  }
  return best;
}

// RETURNS: the active choice of a sysfs list such as "none [mq-deadline] kyber" (the bracketed
// one), or the text itself when nothing is bracketed.
std::string active_choice(std::string list) {
  if (auto open = list.find('['); open != std::string::npos) {
    auto close = list.find(']', open);
    if (close != std::string::npos) return list.substr(open + 1, close - open - 1);
  }
  return list;
}

// RETURNS: the /sys folder of the whole disk behind a block device folder (a partition's
// parent), e.g. /sys/devices/.../block/vda for vda1.
fs::path whole_disk(const fs::path& dev_dir) {
  std::error_code ec;
  if (fs::exists(dev_dir / "partition", ec)) return dev_dir.parent_path();
  return dev_dir;
}

void add_queue_info(const fs::path& disk, nlohmann::json& info) {
  std::string model = read_first_line((disk / "device/model").string());
  if (model.empty()) model = read_first_line((disk / "device/name").string());  // mmc, some nvme
  if (!model.empty()) info["model"] = model;
  std::string vendor = read_first_line((disk / "device/vendor").string());
  if (!vendor.empty() && vendor.rfind("0x", 0) != 0) info["vendor"] = vendor;  // not PCI ids
  if (auto rot = read_int((disk / "queue/rotational").string())) info["rotational"] = *rot != 0;
  if (auto ra = read_int((disk / "queue/read_ahead_kb").string())) info["read_ahead_kb"] = *ra;
  std::string sched = active_choice(read_first_line((disk / "queue/scheduler").string()));
  if (!sched.empty()) info["scheduler"] = sched;
  if (auto nr = read_int((disk / "queue/nr_requests").string())) info["nr_requests"] = *nr;
  // What splits a large O_DIRECT read into several requests: its size above max_sectors_kb,
  // or a buffer in more physically separate pieces than max_segments (aligned_buffer.h).
  if (auto kb = read_int((disk / "queue/max_sectors_kb").string())) info["max_sectors_kb"] = *kb;
  if (auto segs = read_int((disk / "queue/max_segments").string())) info["max_segments"] = *segs;
  if (auto sectors = read_int((disk / "size").string())) info["size_bytes"] = *sectors * 512;
  std::string dm_name = read_first_line((disk / "dm/name").string());
  if (!dm_name.empty()) info["dm_name"] = dm_name;
}

// Fills device, device_info and backing_disks from a block device number.
void describe_block_device(dev_t dev, PathInfo& info) {
  std::string majmin = std::to_string(major(dev)) + ":" + std::to_string(minor(dev));
  std::error_code ec;
  fs::path link = fs::path("/sys/dev/block") / majmin;
  fs::path dev_dir = fs::canonical(link, ec);
  if (ec) return;  // not a block device (tmpfs, nfs, overlay): no device
  fs::path disk = whole_disk(dev_dir);
  info.device = disk.filename().string();
  info.device_info["major_minor"] = majmin;
  if (dev_dir != disk) info.device_info["partition"] = dev_dir.filename().string();
  add_queue_info(disk, info.device_info);
  // Device-mapper, md: the disks underneath, so two volumes on one disk count as one device.
  std::set<std::string> backing;
  for (const auto& slave : fs::directory_iterator(disk / "slaves", ec)) {
    fs::path slave_dir = fs::canonical(slave.path(), ec);
    if (!ec) backing.insert(whole_disk(slave_dir).filename().string());
  }
  if (backing.empty()) backing.insert(info.device);
  info.backing_disks.assign(backing.begin(), backing.end());
  if (!info.device_info.contains("model") && backing.size() == 1 && *backing.begin() != info.device)
    add_queue_info(fs::path("/sys/block") / *backing.begin(), info.device_info["backing"]);
}

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

// RETURNS: the command's standard output ("" when it cannot run).
std::string capture(const std::string& command) {
  std::FILE* p = ::popen(command.c_str(), "r");
  if (!p) return {};
  std::string out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

nlohmann::json describe_gpus() {
  nlohmann::json gpus = nlohmann::json::array();
  std::string smi = find_on_path("nvidia-smi");
  if (smi.empty()) return gpus;
  // A wedged driver can hang nvidia-smi: bound it where coreutils' timeout exists.
  std::string timeout = find_on_path("timeout");
  std::string cmd = (timeout.empty() ? "" : "'" + timeout + "' 20 ") + "'" + smi +
                    "' --query-gpu=name,memory.total,driver_version --format=csv,noheader "
                    "2>/dev/null";
  std::istringstream lines(capture(cmd));
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> cols;
    std::istringstream parts(line);
    std::string col;
    while (std::getline(parts, col, ',')) cols.push_back(trim_space(col));
    if (cols.size() < 3 || cols[0].empty()) continue;
    nlohmann::json gpu = {{"name", cols[0]}, {"memory", cols[1]}, {"driver", cols[2]}};
    // "143771 MiB" -> bytes, for readers that compare.
    char* end = nullptr;
    long long mib = std::strtoll(cols[1].c_str(), &end, 10);
    if (end != cols[1].c_str() && cols[1].find("MiB") != std::string::npos)
      gpu["memory_bytes"] = std::int64_t(mib) * 1024 * 1024;
    gpus.push_back(gpu);
  }
  return gpus;
}

std::string os_release_pretty_name() {
  std::ifstream in("/etc/os-release");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("PRETTY_NAME=", 0) != 0) continue;
    std::string v = line.substr(12);
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
      v = v.substr(1, v.size() - 2);
    return v;
  }
  return {};
}

}  // namespace

nlohmann::json PathInfo::to_json() const {
  return {{"role", role},
          {"requested", requested},
          {"resolved", resolved},
          {"fs_type", fs_type},
          {"mount_point", mount_point},
          {"mount_source", mount_source},
          {"mount_options", mount_options},
          {"device", device},
          {"device_id", device_id},
          {"device_info", device_info},
          {"backing_disks", backing_disks}};
}

PathInfo describe_path(const std::string& role, const std::string& path) {
  PathInfo info;
  info.role = role;
  info.requested = path;
  char resolved[PATH_MAX];
  if (!::realpath(path.c_str(), resolved)) throw InputError(errno_message(role + " path " + path, errno));
  info.resolved = resolved;
  struct stat st {};
  if (::stat(resolved, &st) != 0) throw InputError(errno_message(role + " path " + path, errno));
  info.device_id = std::uint64_t(st.st_dev);
  if (auto m = find_mount(info.resolved)) {
    info.fs_type = m->fs_type;
    info.mount_point = m->point;
    info.mount_source = m->source;
    info.mount_options = m->options;
  }
  if (info.fs_type.empty()) {
    // No mountinfo (unusual sandboxes): at least the magic number.
    struct statfs sfs {};
    if (::statfs(resolved, &sfs) == 0) {
      char hex[32];
      std::snprintf(hex, sizeof hex, "0x%lx", (unsigned long)sfs.f_type);
      info.fs_type = hex;
    }
  }
  describe_block_device(st.st_dev, info);
  // btrfs and some others report an anonymous st_dev: try the mount source's device.
  struct stat src {};
  if (info.device.empty() && info.mount_source.rfind("/dev/", 0) == 0 &&
      ::stat(info.mount_source.c_str(), &src) == 0 && S_ISBLK(src.st_mode))
    describe_block_device(src.st_rdev, info);
  return info;
}

nlohmann::json describe_host() {
  nlohmann::json host;
  // CPU model: x86 says "model name"; some ARM kernels only "Hardware" or nothing.
  std::string cpu_model;
  {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string key = trim_space(line.substr(0, colon));
      if (key == "model name" || (cpu_model.empty() && key == "Hardware")) {
        cpu_model = trim_space(line.substr(colon + 1));
        if (key == "model name") break;
      }
    }
  }
  host["cpu_model"] = cpu_model;
  host["cores"] = std::int64_t(online_cpus());
  std::set<std::int64_t> packages;
  std::set<std::pair<std::int64_t, std::int64_t>> physical;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/sys/devices/system/cpu", ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("cpu", 0) != 0 || name.size() < 4 || !std::isdigit((unsigned char)name[3])) continue;
    auto pkg = read_int((e.path() / "topology/physical_package_id").string());
    auto core = read_int((e.path() / "topology/core_id").string());
    if (pkg) packages.insert(*pkg);
    if (pkg && core) physical.emplace(*pkg, *core);
  }
  host["sockets"] = std::int64_t(std::max<std::size_t>(1, packages.size()));
  host["physical_cores"] = physical.empty() ? host["cores"] : nlohmann::json(physical.size());
  std::int64_t nodes = 0;
  for (const auto& e : fs::directory_iterator("/sys/devices/system/node", ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("node", 0) == 0 && name.size() > 4 && std::isdigit((unsigned char)name[4])) ++nodes;
  }
  host["numa_nodes"] = std::max<std::int64_t>(1, nodes);
  const auto mem_total = std::int64_t(meminfo_bytes("MemTotal"));
  const auto mem_available = std::int64_t(meminfo_bytes("MemAvailable"));
  host["memory_total_bytes"] = mem_total;
  host["memory_available_bytes"] = mem_available;
  struct utsname u {};
  if (::uname(&u) == 0) {
    host["kernel"] = std::string(u.release);
    host["kernel_version"] = std::string(u.version);
    host["arch"] = std::string(u.machine);
  } else {
    host["kernel"] = "";
  }
  host["distribution"] = os_release_pretty_name();
  char name[HOST_NAME_MAX + 1] = {};
  host["hostname"] = ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : "";
  // Cloud providers put the instance type in DMI (e.g. "p4d.24xlarge" on AWS,
  // "Google Compute Engine" + machine type elsewhere).
  host["instance_type"] = read_first_line("/sys/class/dmi/id/product_name");
  host["system_vendor"] = read_first_line("/sys/class/dmi/id/sys_vendor");
  // Read buffers of 1 MiB and more ask for huge pages (aligned_buffer.h); with THP "never" a
  // large O_DIRECT read may reach the device in two requests, which changes its figure.
  host["transparent_hugepages"] =
      active_choice(read_first_line("/sys/kernel/mm/transparent_hugepage/enabled"));
  // What times per-read latency here, the time-stamp counter or steady_clock (latency_clock.h).
  host["latency_clock"] = LatencyClock::host_clock_name();
  host["gpus"] = describe_gpus();
  return host;
}

LoadSample sample_host_load() {
  LoadSample s;
  std::ifstream in("/proc/loadavg");
  s.ok = static_cast<bool>(in >> s.loadavg_1m);
  s.online_cores = double(online_cpus());
  s.cpu = host_cpu_times();
  s.at_ns = now_ns();
  return s;
}

std::optional<double> other_programs_cores(const LoadSample& before, const LoadSample& after,
                                           double own_cpu_s) {
  return other_programs_cores(before.cpu, after.cpu, own_cpu_s, double(after.at_ns - before.at_ns) / 1e9);
}

nlohmann::json load_to_json(const LoadSample& before, const LoadSample& after, std::optional<double> other) {
  if (!before.ok || !after.ok) return nullptr;
  // Cores can go offline during a run: the fewer is what the run had at some point.
  return {
      {"loadavg_1m_before", before.loadavg_1m},
      {"loadavg_1m_after", after.loadavg_1m},
      {"online_cores", std::int64_t(std::min(before.online_cores, after.online_cores))},
      {"other_programs_cores", other ? nlohmann::json(std::round(*other * 1000) / 1000) : nlohmann::json()}};
}

std::string other_programs_text(double other, unsigned usable, const std::string& during) {
  return "other programs took " + format_printf("%.1f", other) + " of " + plural(usable, "core", "cores") +
         " during " + during;
}

bool same_device(const PathInfo& a, const PathInfo& b) {
  if (a.device_id == b.device_id) return true;
  for (const std::string& disk : a.backing_disks)
    if (std::find(b.backing_disks.begin(), b.backing_disks.end(), disk) != b.backing_disks.end()) return true;
  return !a.device.empty() && a.device == b.device;
}

std::string format_paths(const std::map<std::string, PathInfo>& paths) {
  std::size_t width = 4;
  for (const auto& [role, _] : paths) width = std::max(width, role.size());
  std::string out;
  for (const auto& [role, p] : paths) {
    std::string line = role + std::string(width + 2 - role.size(), ' ') + p.resolved + "  " +
                       (p.fs_type.empty() ? "?" : p.fs_type) + " " +
                       (p.mount_source.empty() ? "?" : p.mount_source) + " on " +
                       (p.mount_point.empty() ? "?" : p.mount_point);
    if (!p.device.empty()) {
      line += "  device " + p.device;
      std::string details;
      if (p.device_info.contains("model")) details = p.device_info["model"].get<std::string>();
      if (p.device_info.contains("rotational"))
        details += std::string(details.empty() ? "" : ", ") +
                   (p.device_info["rotational"].get<bool>() ? "rotational" : "non-rotational");
      if (!details.empty()) line += " (" + details + ")";
    } else {
      line += "  no block device";
    }
    out += line + "\n";
  }
  for (auto a = paths.begin(); a != paths.end(); ++a) {
    for (auto b = std::next(a); b != paths.end(); ++b) {
      if (!same_device(a->second, b->second)) continue;
      // Name source before cache whatever the map order, as people read it.
      const PathInfo* first = &a->second;
      const PathInfo* second = &b->second;
      if (second->role == "source") std::swap(first, second);
      std::string what = !first->device.empty()         ? first->device
                         : !first->mount_source.empty() ? first->mount_source
                                                        : first->mount_point;
      out += "warning: " + first->role + " and " + second->role + " are on the same device (" + what +
             "): a cache there cannot be faster than the source, except through the page "
             "cache\n";
    }
  }
  return out;
}

nlohmann::json paths_to_json(const std::map<std::string, PathInfo>& paths) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [role, p] : paths) {
    nlohmann::json j = p.to_json();
    nlohmann::json shared = nlohmann::json::array();
    for (const auto& [other, q] : paths)
      if (other != role && same_device(p, q)) shared.push_back(other);
    j["same_device_as"] = shared;
    out[role] = j;
  }
  return out;
}

nlohmann::json describe_environment(const std::map<std::string, PathInfo>& paths) {
  return {{"host", describe_host()}, {"paths", paths_to_json(paths)}};
}

nlohmann::json describe_tool() {
  return {{"name", "feedbench"},
          {"version", build::kVersion},
          {"git_commit", build::kGitCommit},
          {"git_dirty", build::kGitDirty},
          {"compiler", build::kCompiler},
          {"build_type", build::kBuildType},
          {"benchmark_version", FEEDBENCH_BENCHMARK_VERSION}};
}

}  // namespace feedbench
