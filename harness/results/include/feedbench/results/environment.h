// What was measured on: the host, and for each path role the file system, mount and block
// device behind it. Printed at the start of a run, recorded in every result, and by
// `feedbench env`.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "feedbench/base/cores.h"

namespace feedbench {

struct PathInfo {
  std::string role;       // "source", "cache", or what the user named
  std::string requested;  // as given
  std::string resolved;   // realpath
  std::string fs_type;    // "ext4", "xfs", "tmpfs", "nfs4", ...
  std::string mount_point;
  std::string mount_source;  // "/dev/nvme0n1p1", "server:/export"
  std::string mount_options;
  std::string device;           // block device name, "nvme0n1" (whole disk), "" when none
  std::uint64_t device_id = 0;  // st_dev of the resolved path
  nlohmann::json device_info = nlohmann::json::object();  // model, rotational, read_ahead_kb,
                                                          // scheduler, nr_requests (where exposed)
  std::vector<std::string> backing_disks;                 // whole disks under it (device-mapper: its slaves)
  nlohmann::json to_json() const;
};

// REQUIRES: path exists (else InputError naming it). RETURNS: what is known of it (fields
// empty where the system says nothing). Never throws for missing /sys entries.
PathInfo describe_path(const std::string& role, const std::string& path);

// RETURNS: {"cpu_model", "cores", "sockets", "numa_nodes", "memory_total_bytes",
//  "memory_available_bytes", "kernel", "distribution", "hostname", "instance_type",
//  "gpus": [{"name", "memory", "driver"}]}.
nlohmann::json describe_host();

// The host's load at one moment: what a run, a replay and a watched job record before and after
// themselves, so that diff can tell a slower host from a slower system.
struct LoadSample {
  double loadavg_1m = 0;  // /proc/loadavg's first field
  double online_cores = 0;
  bool ok = false;                  // /proc/loadavg was read
  std::optional<HostCpuTimes> cpu;  // the usable cores' busy and total time (cores.h)
  std::int64_t at_ns = 0;           // when (now_ns)
};

// RETURNS: the load now (ok false where /proc/loadavg cannot be read).
LoadSample sample_host_load();

// RETURNS: the cores programs other than one's own took on average from `before` to `after`
// (cores.h's other_programs_cores, `own_cpu_s` the CPU time one's own processes took meanwhile);
// nullopt where a sample could not read /proc/stat.
std::optional<double> other_programs_cores(const LoadSample& before, const LoadSample& after,
                                           double own_cpu_s);

// RETURNS: {"loadavg_1m_before", "loadavg_1m_after", "online_cores", "other_programs_cores"}:
// environment.host.load of a result file, the last `other` (null when not known); null when
// either sample failed.
nlohmann::json load_to_json(const LoadSample& before, const LoadSample& after,
                            std::optional<double> other = std::nullopt);

// RETURNS: the console's line on `other` cores of the `usable` taken by other programs "during"
// what was measured ("the job", "the replay"): "other programs took 0.7 of 2 cores during the job".
std::string other_programs_text(double other, unsigned usable, const std::string& during);

// RETURNS: true when both paths live on the same device (st_dev or same backing disk).
bool same_device(const PathInfo& a, const PathInfo& b);

// Human-readable block: one line per role "source  /data/x  ext4 on /dev/vda (/)" and the
// same-device warning where it applies.
std::string format_paths(const std::map<std::string, PathInfo>& paths);

// RETURNS: {role: PathInfo::to_json() plus "same_device_as": [other roles]}: the
// `environment.paths` block of a result file.
nlohmann::json paths_to_json(const std::map<std::string, PathInfo>& paths);

// RETURNS: {"host": describe_host(), "paths": paths_to_json(paths)}: the `environment` block of
// a result file, and what `feedbench env --json` prints.
nlohmann::json describe_environment(const std::map<std::string, PathInfo>& paths);

// RETURNS: {"name": "feedbench", "version", "git_commit", "git_dirty", "compiler",
//  "build_type", "benchmark_version"}: the `tool` block of a result file.
nlohmann::json describe_tool();

}  // namespace feedbench
