// A watched job as a result entry (see job_result.h).
#include "feedbench/watch/job_result.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <set>

#include "feedbench/base/units.h"
#include "feedbench/results/recorded_variables.h"

namespace feedbench {
namespace {

using nlohmann::json;

// Three decimals: a chart's series need no more, and a long job's result stays small.
double rounded(double v) { return std::round(v * 1000) / 1000; }

json series(const std::vector<double>& v, double scale = 1) {
  json out = json::array();
  for (const double x : v) out.push_back(rounded(x * scale));
  return out;
}

json or_null(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

double per_second(double total, double span_s) { return span_s > 0 ? total / span_s : 0; }

json pass_json(const JobPassFigures& p, const JobEpoch& e) {
  return {{"pass", p.id},
          {"batches", p.batches},
          {"steps", p.steps},
          {"au", p.au},
          {"stall_fraction", p.stall_fraction},
          {"first_wait_ms", p.first_wait_ms},
          {"wait_p50_ms", p.wait_p50_ms},
          {"wait_p99_ms", p.wait_p99_ms},
          {"wait_max_ms", p.wait_max_ms},
          {"wall_s", p.wall_s},
          {"ended", p.ended},
          {"data_bytes", or_null(p.data_bytes)},
          {"device_bytes", or_null(p.device_bytes)},
          {"loader",
           {{"batch_size", e.batch_size},
            {"num_workers", e.num_workers},
            {"prefetch_factor", e.prefetch_factor ? json(*e.prefetch_factor) : json(nullptr)},
            {"pin_memory", e.pin_memory},
            {"persistent_workers", e.persistent_workers},
            {"start_method", e.start_method}}}};
}

json timeline_json(const JobTimeline& t) {
  json steps = json::array();
  for (const auto& s : t.step_ms) steps.push_back(s ? json(rounded(*s)) : json(nullptr));
  return {{"batches_per_point", t.batches_per_point},
          {"t_s", series(t.t_s)},
          {"wait_ms", series(t.wait_ms)},
          {"step_ms", steps},
          {"pass", t.pass}};
}

json processes_json(const JobProcesses& p) {
  constexpr double kMiB = 1.0 / (1 << 20);
  std::vector<double> read, storage;
  for (std::size_t k = 0; k < p.trainer.t_s.size(); ++k) {
    read.push_back(p.trainer.read_bps[k] + p.workers.read_bps[k]);
    storage.push_back(p.trainer.storage_bps[k] + p.workers.storage_bps[k]);
  }
  return {{"interval_s", p.interval_s},
          {"t_s", series(p.trainer.t_s)},
          {"trainer_cores", series(p.trainer.cores)},
          {"worker_cores", series(p.workers.cores)},
          {"read_mib_s", series(read, kMiB)},
          {"storage_read_mib_s", series(storage, kMiB)},
          {"device_read_mib_s", p.device_bps.empty() ? json(nullptr) : series(p.device_bps, kMiB)},
          {"device", p.device},
          {"device_read_bytes", or_null(p.device_bytes)},
          {"io_why", p.io_why}};
}

// Calls fn(start_s, end_s, bytes per second) for each sampled interval of the data device.
template <class F>
void each_device_interval(const JobProcesses& p, F&& fn) {
  for (std::size_t k = 0; k < p.device_bps.size() && k < p.trainer.t_s.size(); ++k) {
    const double end = p.trainer.t_s[k];
    fn(k == 0 ? end - p.interval_s : p.trainer.t_s[k - 1], end, p.device_bps[k]);
  }
}

json folder_json(const ReadSummary::Folder& f, const std::string& where, std::int64_t origin_ns) {
  return {{"path", f.path},
          {"where", where},
          {"files", f.files},
          {"bytes", f.bytes},
          {"reads", f.reads},
          {"first_s", f.first_ns > 0 ? json(double(f.first_ns - origin_ns) / 1e9) : json(nullptr)},
          {"last_s", f.last_ns > 0 ? json(double(f.last_ns - origin_ns) / 1e9) : json(nullptr)}};
}

// The folders a result keeps: the most read, enough to say where the data came from.
constexpr std::size_t kFoldersKept = 50;

json reads_json(const JobReads& r, std::int64_t origin_ns) {
  if (!r.why_not.empty()) return {{"recorded", false}, {"why", r.why_not}};
  const ReadSummary& s = r.summary;
  json folders = json::array();
  for (std::size_t i = 0; i < s.folders.size() && i < kFoldersKept; ++i)
    folders.push_back(folder_json(s.folders[i], i < r.where.size() ? r.where[i] : "", origin_ns));
  ReadSummary::Folder rest = s.other;
  for (std::size_t i = kFoldersKept; i < s.folders.size(); ++i) {
    rest.files += s.folders[i].files;
    rest.bytes += s.folders[i].bytes;
    rest.reads += s.folders[i].reads;
  }
  json roots = json::array();
  for (std::size_t i = 0; i < r.roots.roots.size(); ++i) {
    const DataRoot& d = r.roots.roots[i];
    roots.push_back({{"path", d.path},
                     {"where", i < r.root_where.size() ? r.root_where[i] : ""},
                     {"folders", d.folders},
                     {"files", d.files},
                     {"bytes", d.bytes},
                     {"reads", d.reads}});
  }
  return {{"recorded", true},
          {"files", s.files},
          {"roots", roots},
          {"bytes", s.bytes},
          {"reads", s.reads},
          {"folders", folders},
          {"other_folders",
           {{"folders", s.folders.size() > kFoldersKept ? s.folders.size() - kFoldersKept : 0},
            {"files", rest.files},
            {"bytes", rest.bytes}}},
          {"code", {{"files", s.code.files}, {"bytes", s.code.bytes}, {"reads", s.code.reads}}},
          {"processes", s.processes},
          {"torn_lines", s.torn_lines},
          {"notes", r.notes},
          {"record_format", kReadLogVersion}};
}

}  // namespace

std::vector<std::string> job_reads_text(const JobReads& r, std::size_t shown) {
  if (!r.why_not.empty()) return {"reads: not recorded: " + r.why_not};
  const ReadSummary& s = r.summary;
  std::vector<std::string> out;
  std::string line = "reads: " + format_size(double(s.bytes)) + " of data in " +
                     format_count(double(s.files)) + (s.files == 1 ? " file" : " files") + " (" +
                     format_count(double(s.reads)) + " reads)";
  const std::size_t folders = s.folders.size() + (s.other.files ? 1 : 0);
  if (folders > 0) line += " from " + format_count(double(folders)) + (folders == 1 ? " folder" : " folders");
  line += "; the job's code and libraries " + format_size(double(s.code.bytes)) + " in " +
          format_count(double(s.code.files)) + " files";
  out.push_back(line);
  // Each root's folders summarised: an ImageNet tree is one line, not 1,000.
  const auto files_in = [](const DataRoot& d) {
    return format_count(double(d.files)) + (d.files == 1 ? " file" : " files") +
           (d.folders > 1 ? " in " + format_count(double(d.folders)) + " folders" : "") + ", " +
           format_size(double(d.bytes));
  };
  const std::vector<DataRoot>& roots = r.roots.roots;
  for (std::size_t i = 0; i < roots.size() && i < shown; ++i)
    out.push_back("  " + roots[i].path +
                  (i < r.root_where.size() && !r.root_where[i].empty() ? " (" + r.root_where[i] + ")" : "") +
                  ": " + files_in(roots[i]));
  DataRoot rest = r.roots.elsewhere;
  for (std::size_t i = shown; i < roots.size(); ++i) {
    rest.folders += roots[i].folders;
    rest.files += roots[i].files;
    rest.bytes += roots[i].bytes;
  }
  if (rest.files > 0) out.push_back("  elsewhere: " + files_in(rest));
  for (const std::string& n : r.notes) out.push_back(n);
  return out;
}

JobProcesses job_processes(const ProcessSamples& s, const JobLog& log, std::int64_t origin_ns,
                           std::optional<std::uint64_t> dev, const std::string& device) {
  std::set<std::int64_t> workers;
  for (const JobFetch& x : log.fetches)
    if (x.worker >= 0) workers.insert(x.pid);
  JobProcesses p;
  p.interval_s = double(s.interval_ns) / 1e9;
  p.trainer = rate_series(
      s, [&](std::int64_t pid) { return workers.count(pid) == 0; }, origin_ns);
  p.workers = rate_series(
      s, [&](std::int64_t pid) { return workers.count(pid) != 0; }, origin_ns);
  if (dev) {
    p.device_bps = device_rate_series(s, *dev);
    p.device_bytes = device_bytes_read(s, *dev);
  }
  p.device = device;
  p.io_why = s.io_why;
  if (s.t_ns.size() >= 2) p.span_s = double(s.t_ns.back() - s.t_ns.front()) / 1e9;
  return p;
}

std::optional<double> other_programs_cores(const JobRun& run, const JobProcesses& processes) {
  const double tree = std::max(run.tree_cpu_s, processes.trainer.cpu_s + processes.workers.cpu_s);
  return other_programs_cores(run.load_before, run.load_after, tree);
}

std::optional<double> device_rate_during(const JobProcesses& p, const JobLog& log, std::int64_t origin_ns) {
  if (p.device_bps.empty() || log.epochs.empty()) return std::nullopt;
  std::int64_t first = INT64_MAX, last = 0;
  for (const JobEpoch& e : log.epochs)
    if (!e.batches.empty()) {
      first = std::min(first, e.batches.front().ask_ns);
      last = std::max(last, e.batches.back().got_ns);
    }
  if (last <= first) return std::nullopt;
  const double from = double(first - origin_ns) / 1e9, to = double(last - origin_ns) / 1e9;
  double bytes = 0, span = 0;
  each_device_interval(p, [&](double start, double end, double bps) {
    if (start >= from && end <= to) {
      bytes += bps * (end - start);
      span += end - start;
    }
  });
  if (span <= 0) return std::nullopt;
  return bytes / span;
}

std::vector<TimeWindow> pass_windows(const JobLog& log, const JobFigures& f) {
  std::vector<TimeWindow> out;
  for (const JobPassFigures& pf : f.passes) {
    // From its start (the workers begin fetching at iter()) to its end.
    const JobEpoch& e = log.epochs[pf.epoch];
    out.push_back(
        {std::min(e.start_ns, e.batches.front().ask_ns), e.end_ns.value_or(e.batches.back().got_ns)});
  }
  return out;
}

void attribute_passes(JobFigures& f, const JobLog& log, const ReadSummary& reads, const JobProcesses& p,
                      std::int64_t origin_ns) {
  const std::vector<TimeWindow> windows = pass_windows(log, f);
  for (std::size_t i = 0; i < f.passes.size() && i < windows.size(); ++i) {
    if (i < reads.window_bytes.size()) f.passes[i].data_bytes = double(reads.window_bytes[i]);
    if (p.device_bps.empty()) continue;
    const double from = double(windows[i].from_ns - origin_ns) / 1e9,
                 to = double(windows[i].to_ns - origin_ns) / 1e9;
    double bytes = 0;
    each_device_interval(p, [&](double start, double end, double bps) {
      const double overlap = std::min(end, to) - std::max(start, from);
      if (overlap > 0 && end > start) bytes += bps * overlap;
    });
    f.passes[i].device_bytes = bytes;
  }
}

std::string pass_sources_text(const JobFigures& f) {
  std::string cold, warm;
  double warm_lo = 1, warm_hi = 0;
  for (const JobPassFigures& pf : f.passes) {
    if (!pf.data_bytes || !pf.device_bytes || *pf.data_bytes <= 0) return "";
    const double share = *pf.device_bytes / *pf.data_bytes;
    std::string& list = share >= 0.5 ? cold : share < 0.2 ? warm : cold;
    list += (list.empty() ? "" : ", ") + std::to_string(pf.id);
    if (share < 0.2) {
      warm_lo = std::min(warm_lo, pf.au);
      warm_hi = std::max(warm_hi, pf.au);
    }
  }
  if (cold.empty() || warm.empty()) return "";
  const auto passes = [](const std::string& list) {
    return (list.find(',') == std::string::npos ? "pass " : "passes ") + list;
  };
  return "; " + passes(cold) + " read its data from the device, " + passes(warm) +
         " from the page cache (the device read under a fifth of it), AU " + format_percent(warm_lo) +
         (warm_hi > warm_lo ? "–" + format_percent(warm_hi) : "") +
         ": a data set larger than memory, or a cold start, is what storage must feed (by the device's own "
         "count, to which its other readers add: a pass read from memory can look read from the device, "
         "never the other way)";
}

std::string job_processes_text(const JobProcesses& p) {
  if (p.span_s <= 0) return "processes: not sampled (the job ended before the first interval)";
  const double read = (p.trainer.read_bytes + p.workers.read_bytes) / p.span_s;
  const double storage = (p.trainer.storage_bytes + p.workers.storage_bytes) / p.span_s;
  std::string out = "processes: trainer " + format_printf("%.2f", per_second(p.trainer.cpu_s, p.span_s)) +
                    " cores, workers " + format_printf("%.2f", per_second(p.workers.cpu_s, p.span_s)) +
                    " cores (mean over " + format_printf("%.1f", p.span_s) + " s); read " +
                    format_rate(read) + ", " + format_rate(storage) + " of it from storage";
  if (p.device_bytes) {
    out += "; device " + p.device + " " + format_rate(*p.device_bytes / p.span_s) + " (every reader of it)";
  } else {
    out += "; device not counted: " + p.device;
  }
  if (!p.io_why.empty()) out += "; " + p.io_why;
  return out;
}

BenchmarkEntry job_entry(const std::string& name, const JobRun& run, const JobLog& log, const JobFigures& f,
                         const JobVerdict& v, double target_au, const JobProcesses& processes,
                         const JobReads& reads, const nlohmann::json& gpu,
                         const std::vector<std::string>& redact) {
  BenchmarkEntry e;
  e.name = e.run_name = e.case_name = "job/" + name;
  e.run_type = "iteration";
  e.real_time = e.cpu_time = run.wall_s * 1e3;
  e.params = {{"family", "job"}, {"name", name}, {"target_au", target_au}};
  e.cache = nullptr;
  json passes = json::array();
  for (const JobPassFigures& p : f.passes) passes.push_back(pass_json(p, log.epochs[p.epoch]));
  const double span = processes.span_s;
  e.extra = {{"command", withhold_in_command(run.command, redact, environ)},
             {"exit_code", run.exit_code},
             {"failed", run.exit_code != 0},
             {"wall_s", run.wall_s},
             {"tree_cpu_s", run.tree_cpu_s},
             {"host_cpu_busy", or_null(run.host_cpu_busy)},
             {"passes", passes},
             {"headroom", f.headroom},
             {"first_wait_ms_max", f.first_wait_ms_max},
             {"fetch_cpu_share", or_null(f.fetch_cpu_share)},
             {"fetch_s", f.fetch_s},
             {"fetch_cpu_s", f.fetch_cpu_s},
             {"fetch_runqueue_s", f.fetch_runqueue_s},
             {"au_after_first", f.au_after_first},
             {"worker_busy_share", or_null(f.worker_busy_share)},
             {"trainer_cpu_s", processes.trainer.cpu_s},
             {"worker_cpu_s", processes.workers.cpu_s},
             {"trainer_cores_mean", per_second(processes.trainer.cpu_s, span)},
             {"worker_cores_mean", per_second(processes.workers.cpu_s, span)},
             {"read_bytes_per_second",
              per_second(processes.trainer.read_bytes + processes.workers.read_bytes, span)},
             {"storage_read_bytes_per_second",
              per_second(processes.trainer.storage_bytes + processes.workers.storage_bytes, span)},
             {"device_read_bytes_per_second",
              processes.device_bytes ? json(per_second(*processes.device_bytes, span)) : json(nullptr)},
             {"timeline", timeline_json(job_timeline(log, run.start_ns))},
             {"processes", processes_json(processes)},
             {"reads", reads_json(reads, run.start_ns)},
             {"gpu", gpu},
             {"processes_recorded", log.processes},
             {"torn_lines", log.torn_lines},
             {"probe_errors", log.probe_errors},
             {"verdict", v.text},
             {"verdict_line", v.line},
             {"limited_by", v.by},
             {"record_format", kJobLogVersion}};
  if (run.signal) e.extra["signal"] = run.signal;
  if (f.steps == 0) {
    e.error_occurred = true;
    e.error_message = log.epochs.empty() ? "no DataLoader batch recorded: the job did not iterate a "
                                           "torch.utils.data.DataLoader under a Python that read the probe"
                                         : "too few batches: none had a step after it";
    return e;
  }
  const double loop_s = f.wait_s + f.step_s;
  e.counters = {{"au", f.au},
                {"stall_fraction", f.stall_fraction},
                {"wait_p50_ms", f.wait_p50_ms},
                {"wait_p99_ms", f.wait_p99_ms},
                {"wait_max_ms", f.wait_max_ms},
                {"steps", double(f.steps)},
                {"samples_per_second", loop_s > 0 ? double(f.samples) / loop_s : 0}};
  e.latency = StoredHistogram(f.wait_ns);
  if (run.exit_code != 0) e.label = "job failed: exit " + std::to_string(run.exit_code);
  return e;
}

}  // namespace feedbench
