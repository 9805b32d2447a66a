// How many CPUs: one definition each, so every family's cpu_util has the same denominator.
#pragma once

#include <sched.h>
#include <unistd.h>

#include <optional>
#include <thread>

namespace feedbench {

// RETURNS: the CPUs this process may run on (its affinity mask: a cpuset, taskset or an MPI
// binding), at least 1. The denominator of every cpu_util, and the ceiling on useful threads:
// the machine's online count overstates both under a cpuset.
inline unsigned usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return unsigned(n);
  }
  const unsigned n = std::thread::hardware_concurrency();
  return n ? n : 1;
}

// RETURNS: the machine's online CPUs (sysconf), at least 1: what the host has, for the
// environment record and its load average; not what this process may use.
inline unsigned online_cpus() {
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? unsigned(n) : 1;
}

// The time the CPUs this process may use (usable_cores) spent busy and in all, every process
// counted: /proc/stat's per-CPU lines, so another program's load on those cores shows. Busy is
// user, nice, system, irq, softirq and steal; all adds idle and iowait.
struct HostCpuTimes {
  double busy_s = 0, total_s = 0;
};

// RETURNS: the times so far, or nullopt where /proc/stat cannot be read (not Linux, a sandbox).
std::optional<HostCpuTimes> host_cpu_times();

// RETURNS: the share of the usable cores' time busy between two samples (0 to 1), or nullopt
// when either is missing or no time passed.
std::optional<double> host_cpu_busy(const std::optional<HostCpuTimes>& before,
                                    const std::optional<HostCpuTimes>& after);

// RETURNS: the cores that programs other than one's own took on average between two samples
// taken `wall_s` apart: the usable cores' busy time less `own_cpu_s` (the CPU time one's own
// processes took meanwhile: a watched job's tree, feedbench itself), over `wall_s`; at least 0
// (own processes that ran on cores outside the usable ones are not in the busy time); nullopt
// when either sample is missing or no time passed.
std::optional<double> other_programs_cores(const std::optional<HostCpuTimes>& before,
                                           const std::optional<HostCpuTimes>& after, double own_cpu_s,
                                           double wall_s);

}  // namespace feedbench
