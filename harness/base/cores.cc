// The host's CPU time from /proc/stat, over the CPUs this process may run on.
#include <fstream>
#include <sstream>
#include <string>

#include "feedbench/base/cores.h"

namespace feedbench {

std::optional<HostCpuTimes> host_cpu_times() {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  const bool masked = ::sched_getaffinity(0, sizeof(mine), &mine) == 0;
  std::ifstream in("/proc/stat");
  if (!in) return std::nullopt;
  const long hz = ::sysconf(_SC_CLK_TCK);
  if (hz <= 0) return std::nullopt;
  HostCpuTimes t;
  bool any = false;
  std::string line;
  while (std::getline(in, line)) {
    // "cpu3 user nice system idle iowait irq softirq steal guest guest_nice"; the first line
    // ("cpu ") is every CPU's sum, left out: only the usable ones count.
    if (line.size() < 4 || line.compare(0, 3, "cpu") != 0 || line[3] < '0' || line[3] > '9') continue;
    std::istringstream fields(line.substr(3));
    int cpu = -1;
    unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    if (!(fields >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq)) continue;
    fields >> steal;  // absent on old kernels
    if (masked && (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &mine))) continue;
    const double busy = double(user + nice + system + irq + softirq + steal) / double(hz);
    t.busy_s += busy;
    t.total_s += busy + double(idle + iowait) / double(hz);
    any = true;
  }
  if (!any) return std::nullopt;
  return t;
}

std::optional<double> host_cpu_busy(const std::optional<HostCpuTimes>& before,
                                    const std::optional<HostCpuTimes>& after) {
  if (!before || !after) return std::nullopt;
  const double total = after->total_s - before->total_s;
  if (total <= 0) return std::nullopt;
  const double busy = (after->busy_s - before->busy_s) / total;
  return busy < 0 ? 0 : busy > 1 ? 1 : busy;
}

std::optional<double> other_programs_cores(const std::optional<HostCpuTimes>& before,
                                           const std::optional<HostCpuTimes>& after, double own_cpu_s,
                                           double wall_s) {
  if (!before || !after || !(wall_s > 0)) return std::nullopt;
  const double others = (after->busy_s - before->busy_s - own_cpu_s) / wall_s;
  return others > 0 ? others : 0;
}

}  // namespace feedbench
