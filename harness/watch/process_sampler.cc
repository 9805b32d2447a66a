// The watched job's process tree, sampled from /proc (see process_sampler.h).
#include "feedbench/watch/process_sampler.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "feedbench/base/clock.h"
#include "feedbench/base/file_system.h"
#include "feedbench/base/threads.h"

namespace feedbench {
namespace {

// RETURNS: the whole of a small /proc file, "" when it cannot be read.
std::string slurp(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string text;
  const int err = read_to_end(fd, &text);
  ::close(fd);
  return err == 0 ? text : "";
}

std::vector<std::int64_t> numbers_in(const std::string& text) {
  std::vector<std::int64_t> out;
  std::istringstream in(text);
  std::int64_t v = 0;
  while (in >> v) out.push_back(v);
  return out;
}

// RETURNS: every process whose parent is in `tree`, found by reading each process's stat: for
// kernels without /proc/PID/task/TID/children.
std::vector<std::int64_t> children_by_scan(const std::set<std::int64_t>& tree) {
  std::vector<std::int64_t> out;
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    const std::string stat = slurp("/proc/" + std::string(e->d_name) + "/stat");
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream in(stat.substr(close + 1));
    std::string state;
    std::int64_t ppid = 0;
    if (in >> state >> ppid && tree.count(ppid)) out.push_back(pid);
  }
  ::closedir(d);
  return out;
}

}  // namespace

std::optional<ProcessCounts> parse_process_counts(const std::string& stat, const std::string& io) {
  // The command name (field 2) is in parentheses and may hold spaces or ')': fields are counted
  // from the last ')'. utime and stime are fields 14 and 15 (proc(5)).
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream in(stat.substr(close + 1));
  std::string field;
  std::uint64_t utime = 0, stime = 0;
  std::int64_t ppid = 0;
  for (int f = 3; f <= 13; ++f) {
    if (!(in >> field)) return std::nullopt;
    if (f == 4) ppid = std::strtoll(field.c_str(), nullptr, 10);
  }
  if (!(in >> utime >> stime)) return std::nullopt;
  ProcessCounts c;
  c.cpu_ticks = utime + stime;
  c.ppid = ppid;
  std::istringstream lines(io);
  std::string key;
  std::uint64_t v = 0;
  while (lines >> key >> v) {
    if (key == "rchar:") c.rchar = v;
    if (key == "read_bytes:") c.read_bytes = v;
  }
  return c;
}

ProcessSamples halve_samples(const ProcessSamples& s) {
  ProcessSamples h;
  h.interval_ns = s.interval_ns * 2;
  h.ticks_per_second = s.ticks_per_second;
  h.io_why = s.io_why;
  // New sample k stands for old 2k-1 and 2k: it keeps old 2k's time (old 0 stays 0).
  for (std::size_t i = 0; i < s.t_ns.size(); i += 2) {
    h.t_ns.push_back(s.t_ns[i]);
    h.devices.push_back(s.devices[i]);
  }
  if (s.t_ns.size() % 2 == 0 && !s.t_ns.empty()) {  // an odd last one: its time and counts kept
    h.t_ns.push_back(s.t_ns.back());
    h.devices.push_back(s.devices.back());
  }
  for (const ProcessSeries& p : s.processes) {
    ProcessSeries q;
    q.pid = p.pid;
    for (std::size_t j = 0; j < p.at.size(); ++j) {
      const std::uint32_t k = (p.at[j] + 1) / 2;
      if (!q.at.empty() && q.at.back() == k) {
        q.counts.back() = p.counts[j];  // the later of the two
      } else {
        q.at.push_back(k);
        q.counts.push_back(p.counts[j]);
      }
    }
    h.processes.push_back(std::move(q));
  }
  return h;
}

namespace {

// What a parent's read counts took over from a child it reaped: the child's last counts, from
// the sample the child was first missing in.
struct Reaped {
  std::uint32_t at = 0;
  std::uint64_t rchar = 0, read_bytes = 0;
};

// RETURNS: per process of `s` (by index), the children it reaped while sampled, by sample.
std::vector<std::vector<Reaped>> reaped_children(const ProcessSamples& s) {
  std::map<std::int64_t, std::size_t> index;
  for (std::size_t i = 0; i < s.processes.size(); ++i) index[s.processes[i].pid] = i;
  std::vector<std::vector<Reaped>> out(s.processes.size());
  const std::uint32_t last = s.t_ns.empty() ? 0 : std::uint32_t(s.t_ns.size() - 1);
  for (const ProcessSeries& child : s.processes) {
    if (child.at.empty() || child.at.back() >= last) continue;  // seen to the end: not reaped
    const ProcessCounts& final_seen = child.counts.back();
    const auto parent = index.find(final_seen.ppid);
    if (parent == index.end()) continue;  // reaped outside the tree: its counts went there
    const ProcessSeries& p = s.processes[parent->second];
    // The parent's counts hold the child's from the sample the child is gone from.
    if (p.at.empty() || p.at.back() <= child.at.back()) continue;
    out[parent->second].push_back({child.at.back() + 1, final_seen.rchar, final_seen.read_bytes});
  }
  for (auto& list : out)
    std::sort(list.begin(), list.end(), [](const Reaped& a, const Reaped& b) { return a.at < b.at; });
  return out;
}

}  // namespace

RateSeries rate_series(const ProcessSamples& s, const std::function<bool(std::int64_t pid)>& in_group,
                       std::int64_t origin_ns) {
  RateSeries r;
  if (s.t_ns.size() < 2) return r;
  const std::size_t n = s.t_ns.size() - 1;
  std::vector<double> ticks(n, 0), rchar(n, 0), rbytes(n, 0);
  const std::vector<std::vector<Reaped>> reaped = reaped_children(s);
  for (std::size_t i = 0; i < s.processes.size(); ++i) {
    const ProcessSeries& p = s.processes[i];
    if (!in_group(p.pid)) continue;
    ProcessCounts prev;  // a process first seen counts from its start
    std::size_t next_reaped = 0;
    std::uint64_t owe_rchar = 0, owe_bytes = 0;  // reaped children's counts, counted in their series
    for (std::size_t j = 0; j < p.at.size(); ++j) {
      const ProcessCounts& c = p.counts[j];
      for (; next_reaped < reaped[i].size() && reaped[i][next_reaped].at <= p.at[j]; ++next_reaped)
        owe_rchar += reaped[i][next_reaped].rchar, owe_bytes += reaped[i][next_reaped].read_bytes;
      // What a process did before the first sample belongs to the first interval.
      const std::size_t k = p.at[j] == 0 ? 0 : p.at[j] - 1;
      ticks[k] += double(c.cpu_ticks - std::min(c.cpu_ticks, prev.cpu_ticks));
      std::uint64_t read = c.rchar - std::min(c.rchar, prev.rchar);
      std::uint64_t fetched = c.read_bytes - std::min(c.read_bytes, prev.read_bytes);
      const std::uint64_t paid = std::min(read, owe_rchar), paid_bytes = std::min(fetched, owe_bytes);
      read -= paid, owe_rchar -= paid, fetched -= paid_bytes, owe_bytes -= paid_bytes;
      rchar[k] += double(read);
      rbytes[k] += double(fetched);
      prev = c;
    }
  }
  for (std::size_t k = 0; k < n; ++k) {
    const double dt = double(s.t_ns[k + 1] - s.t_ns[k]) / 1e9;
    r.t_s.push_back(double(s.t_ns[k + 1] - origin_ns) / 1e9);
    const double cpu = ticks[k] / double(s.ticks_per_second);
    r.cores.push_back(dt > 0 ? cpu / dt : 0);
    r.read_bps.push_back(dt > 0 ? rchar[k] / dt : 0);
    r.storage_bps.push_back(dt > 0 ? rbytes[k] / dt : 0);
    r.cpu_s += cpu;
    r.read_bytes += rchar[k];
    r.storage_bytes += rbytes[k];
  }
  return r;
}

std::vector<DeviceCount> parse_diskstats(const std::string& text) {
  // Documented in the kernel's Documentation/admin-guide/iostats.rst: major, minor, name, reads
  // completed, reads merged, sectors read (512 bytes each, whatever the device's block size), ...
  std::vector<DeviceCount> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    unsigned major_no = 0, minor_no = 0;
    std::string name;
    std::uint64_t ios = 0, merges = 0, sectors = 0;
    if (in >> major_no >> minor_no >> name >> ios >> merges >> sectors)
      out.push_back({std::uint64_t(makedev(major_no, minor_no)), sectors * 512});
  }
  return out;
}

namespace {

std::optional<std::uint64_t> count_of(const std::vector<DeviceCount>& at, std::uint64_t dev) {
  for (const DeviceCount& d : at)
    if (d.dev == dev) return d.bytes;
  return std::nullopt;
}

}  // namespace

std::vector<double> device_rate_series(const ProcessSamples& s, std::uint64_t dev) {
  std::vector<double> out;
  bool any = false;
  for (std::size_t k = 0; k + 1 < s.t_ns.size(); ++k) {
    const auto a = count_of(s.devices[k], dev), b = count_of(s.devices[k + 1], dev);
    const double dt = double(s.t_ns[k + 1] - s.t_ns[k]) / 1e9;
    any = any || (a && b);
    out.push_back(a && b && *b >= *a && dt > 0 ? double(*b - *a) / dt : 0);
  }
  if (!any) out.clear();
  return out;
}

std::optional<double> device_bytes_read(const ProcessSamples& s, std::uint64_t dev) {
  std::optional<std::uint64_t> first, last;
  for (const auto& at : s.devices)
    if (const auto b = count_of(at, dev)) {
      if (!first) first = b;
      last = b;
    }
  if (!first || *last < *first) return std::nullopt;
  return double(*last - *first);
}

struct ProcessSampler::Impl {
  pid_t root;
  std::int64_t interval_ns;
  std::size_t max_samples;
  bool use_children_files = true;
  ProcessSamples samples;
  std::map<std::int64_t, std::size_t> index_of;  // pid -> samples.processes index
  std::mutex mu;
  std::condition_variable wake;
  bool stopping = false;
  std::vector<std::thread> thread;

  // RETURNS: the root and every descendant alive now.
  std::vector<std::int64_t> tree() const {
    std::vector<std::int64_t> out = {root};
    std::set<std::int64_t> seen = {root};
    if (!use_children_files) {
      // A scan finds one generation at a time; a job's tree is a few deep at most.
      for (int depth = 0; depth < 8; ++depth) {
        bool grew = false;
        for (const std::int64_t c : children_by_scan(seen))
          if (seen.insert(c).second) {
            out.push_back(c);
            grew = true;
          }
        if (!grew) break;
      }
      return out;
    }
    for (std::size_t i = 0; i < out.size(); ++i) {
      const std::string tasks = "/proc/" + std::to_string(out[i]) + "/task";
      DIR* d = ::opendir(tasks.c_str());
      if (d == nullptr) continue;
      while (const dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        for (const std::int64_t c : numbers_in(slurp(tasks + "/" + e->d_name + "/children")))
          if (seen.insert(c).second) out.push_back(c);
      }
      ::closedir(d);
    }
    return out;
  }

  void sample_now() {
    const std::vector<std::int64_t> pids = tree();
    std::vector<std::pair<std::int64_t, ProcessCounts>> seen;
    std::vector<bool> io_missing;
    bool io_refused = false;
    for (const std::int64_t pid : pids) {
      const std::string dir = "/proc/" + std::to_string(pid);
      const std::string stat = slurp(dir + "/stat");
      const std::string io = slurp(dir + "/io");
      const auto c = parse_process_counts(stat, io);
      if (!c) continue;  // gone since the tree was read
      // A process that has exited (a zombie, not yet reaped) has no io file left: not a refusal.
      const std::size_t close = stat.rfind(')');
      const bool zombie = close + 2 < stat.size() && stat[close + 2] == 'Z';
      if (io.empty() && !zombie) io_refused = true;
      seen.emplace_back(pid, *c);
      io_missing.push_back(io.empty());
    }
    const std::vector<DeviceCount> devices = parse_diskstats(slurp("/proc/diskstats"));
    const std::int64_t t = now_ns();
    std::lock_guard<std::mutex> lock(mu);
    if (io_refused && samples.io_why.empty())
      samples.io_why =
          "/proc/PID/io could not be read for every process of the job (another user's, or not "
          "traceable): its read rates leave those out";
    const auto k = std::uint32_t(samples.t_ns.size());
    samples.t_ns.push_back(t);
    samples.devices.push_back(devices);
    for (std::size_t i = 0; i < seen.size(); ++i) {
      auto [pid, c] = seen[i];
      auto [it, fresh] = index_of.try_emplace(pid, samples.processes.size());
      if (fresh) samples.processes.push_back({pid, {}, {}});
      ProcessSeries& p = samples.processes[it->second];
      // Unread reads are the last ones read, never zero: a later count must not undo them.
      if (io_missing[i] && !p.counts.empty()) {
        c.rchar = p.counts.back().rchar;
        c.read_bytes = p.counts.back().read_bytes;
      }
      p.at.push_back(k);
      p.counts.push_back(c);
    }
    if (samples.t_ns.size() >= max_samples) samples = halve_samples(samples);
  }

  void loop() {
    std::unique_lock<std::mutex> lock(mu);
    while (!stopping) {
      wake.wait_for(lock, std::chrono::nanoseconds(samples.interval_ns), [this] { return stopping; });
      if (stopping) break;
      lock.unlock();
      sample_now();
      lock.lock();
    }
  }
};

ProcessSampler::ProcessSampler(pid_t root, std::int64_t interval_ns, std::size_t max_samples)
    : impl_(std::make_unique<Impl>()) {
  impl_->root = root;
  impl_->interval_ns = std::max<std::int64_t>(interval_ns, 1'000'000);
  impl_->max_samples = std::max<std::size_t>(max_samples, 4);
  impl_->samples.interval_ns = impl_->interval_ns;
  const long hz = ::sysconf(_SC_CLK_TCK);
  impl_->samples.ticks_per_second = hz > 0 ? hz : 100;
  const std::string own = "/proc/" + std::to_string(root) + "/task/" + std::to_string(root) + "/children";
  impl_->use_children_files = ::access(own.c_str(), R_OK) == 0;
}

ProcessSampler::~ProcessSampler() {
  if (!impl_->thread.empty()) {
    {
      std::lock_guard<std::mutex> lock(impl_->mu);
      impl_->stopping = true;
    }
    impl_->wake.notify_all();
    impl_->thread.front().join();
  }
}

std::string ProcessSampler::start() {
  impl_->sample_now();
  return start_thread(
      impl_->thread, [this] { impl_->loop(); }, "the process sampler", 0, 1);
}

ProcessSamples ProcessSampler::stop() {
  if (!impl_->thread.empty()) {
    {
      std::lock_guard<std::mutex> lock(impl_->mu);
      impl_->stopping = true;
    }
    impl_->wake.notify_all();
    impl_->thread.front().join();
    impl_->thread.clear();
  }
  impl_->sample_now();
  return impl_->samples;
}

}  // namespace feedbench
