// A watched job's loading from its trace, what-ifs applied, its files found (see recorded_job.h).
#include "feedbench/replay/recorded_job.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

#include "feedbench/base/error.h"
#include "feedbench/base/file_system.h"
#include "feedbench/base/open_beneath.h"
#include "feedbench/base/text.h"
#include "feedbench/replay/trace_reader.h"

namespace feedbench {
namespace {

using BatchKey = std::pair<std::int64_t, std::int64_t>;  // (pass, batch)

// A read of a batch as the trace streams it, before the batches are known.
// A read of a batch, held until every batch is known. 32 bytes: pass and batch fit 32 bits (the
// reader bounds them by 2^31), and `seq`, its place in the trace, keeps a batch's reads in order
// through an in-place sort (a stable sort's buffer would cost as much again).
struct PendingRead {
  std::uint32_t pass = 0, batch = 0, seq = 0, bytes = 0, file = 0;
  std::uint64_t offset = 0;
};

struct TrainerSide {
  double ask_us = 0, wait_us = 0;
  std::optional<double> step_us;
  double wait_cpu_ms = 0, step_cpu_ms = 0;  // 0 where the trace has none
};

struct FetchSide {
  std::int64_t worker = -1, samples = 0;
  double start_us = 0, end_us = 0, cpu_ms = 0, runqueue_ms = 0, wall_us = 0;
  double read_us = 0;  // its reads' time
  double after_cpu_ms = 0;
  std::optional<double> startup_cpu_ms;  // on its worker's first fetch
};

// Times the reader bounds (trace_reader.cc: 1e11 µs) and their sums, kept within what any sum
// or deadline of them can hold.
constexpr double kMaxNs = 1e17;

std::int64_t ns_of(double us) { return std::int64_t(std::llround(std::clamp(us * 1e3, -kMaxNs, kMaxNs))); }

}  // namespace

std::uint64_t RecordedJob::bytes() const {
  std::uint64_t n = 0;
  for (const RecordedRead& r : reads) n += r.bytes;
  return n;
}

double RecordedJob::bytes_per_read() const {
  if (reads.empty()) return 0;
  double held = double(reads.capacity() * sizeof(RecordedRead) + samples.capacity() * sizeof(RecordedSample));
  for (const RecordedPass& p : passes) held += double(p.batches.capacity() * sizeof(RecordedBatch));
  for (const RecordedFile& f : files) held += double(sizeof(RecordedFile) + f.path.capacity());
  return held / double(reads.size());
}

namespace {

// What the trace's events say, gathered as they stream by: settings, files, reads, both sides of
// every batch.
struct TraceParts {
  std::map<std::int64_t, TracePass> settings;
  std::map<std::pair<std::int64_t, std::uint64_t>, std::uint32_t> opened;  // (pid, file) → data file
  std::unordered_map<std::string, std::uint32_t> by_path;
  std::vector<std::string> paths;
  std::vector<std::uint64_t> sizes;
  std::vector<std::pair<int, int>> dims;  // a JPEG's width and height, per path
  std::vector<PendingRead> pending;
  std::map<BatchKey, TrainerSide> trainer;
  std::map<BatchKey, FetchSide> fetches;
  std::map<BatchKey, double> read_time;  // µs in each batch's reads
  bool relative = false;                 // paths relative to a data folder the trace does not name
};

// RETURNS: the events of the trace `read` hands its visitor to; counts in `job` the reads it
// leaves out.
TraceParts collect_trace(const std::string& path, const std::function<void(const TraceVisitor&)>& read,
                         RecordedJob& job) {
  TraceParts t;
  auto& settings = t.settings;
  auto& opened = t.opened;
  auto& by_path = t.by_path;
  auto& paths = t.paths;
  auto& sizes = t.sizes;
  auto& pending = t.pending;
  auto& trainer = t.trainer;
  auto& fetches = t.fetches;
  auto& read_time = t.read_time;
  TraceVisitor visit;
  visit.header = [&](const TraceHeader& h) {
    job.name = h.name.empty() ? "job" : h.name;
    t.relative = h.relative_paths;
    for (const TracePass& p : h.passes) settings[p.pass] = p;
  };
  visit.open = [&](const TraceOpen& o) {
    auto [it, added] = by_path.try_emplace(o.path, std::uint32_t(paths.size()));
    if (added) paths.push_back(o.path), sizes.push_back(o.size), t.dims.emplace_back(o.width, o.height);
    else if (o.width > 0) t.dims[it->second] = {o.width, o.height};  // the latest open's header
    opened[{o.pid, o.file}] = it->second;
  };
  visit.read = [&](const TraceRead& r) {
    if (r.pass >= 0 && r.batch >= 0) read_time[{r.pass, r.batch}] += r.dur_us;  // a 0-byte read's too
    if (r.bytes == 0) return void(++job.reads_empty);
    if (r.pass < 0 || r.batch < 0) return void(++job.reads_outside);
    const auto it = opened.find({r.pid, r.file});
    if (it == opened.end())
      throw InputError(path + ": a read of file " + std::to_string(r.file) + " of process " +
                       std::to_string(r.pid) +
                       " comes before any open of it (events out of order, or the open left out)");
    if (r.bytes > UINT32_MAX)
      throw InputError(path + ": a read of " + std::to_string(r.bytes) +
                       " bytes: expected at most 4 GiB a call");
    if (pending.size() >= UINT32_MAX)
      throw InputError(path + ": more than " + std::to_string(UINT32_MAX) + " reads: expected fewer");
    pending.push_back({std::uint32_t(r.pass), std::uint32_t(r.batch), std::uint32_t(pending.size()),
                       std::uint32_t(r.bytes), it->second, r.offset});
  };
  visit.batch = [&](const TraceBatch& b) {
    TrainerSide& t = trainer[{b.pass, b.batch}];
    const double cpu = std::max(b.cpu_ms, 0.0);
    if (b.step) t.step_us = b.dur_us, t.step_cpu_ms = cpu;
    else t.ask_us = b.ts_us, t.wait_us = b.dur_us, t.wait_cpu_ms = cpu;
  };
  visit.fetch = [&](const TraceFetch& f) {
    if (f.pass < 0 || f.batch < 0) return;
    auto [it, added] = fetches.try_emplace({f.pass, f.batch});
    FetchSide& s = it->second;
    if (added) s.worker = f.worker, s.start_us = f.ts_us, s.end_us = f.ts_us + f.dur_us;
    s.start_us = std::min(s.start_us, f.ts_us);
    s.end_us = std::max(s.end_us, f.ts_us + f.dur_us);
    s.cpu_ms += f.cpu_ms;
    s.runqueue_ms += f.runqueue_ms;
    s.wall_us += f.dur_us;
    s.samples += f.samples;
    s.after_cpu_ms += std::max(f.after_cpu_ms, 0.0);
    if (f.startup_cpu_ms >= 0) s.startup_cpu_ms = s.startup_cpu_ms.value_or(0) + f.startup_cpu_ms;
  };
  read(visit);
  return t;
}

// The job as its batches are added: which trace files it read, the hand-overs, the AU's sums.
struct Assembly {
  std::vector<std::uint32_t> file_index;  // trace's data file → job.files
  std::vector<std::string> used;          // job.files' absolute paths
  std::vector<std::int64_t> handovers;
  double startup_cpu_ms = 0;  // the pass's workers' start-up CPU after its first ask, summed
  int started = 0;            // over this many
  double first_ask = 0;       // the pass's
  std::uint64_t replayed = 0;
  double step_sum = 0, wait_sum = 0, first_fetch = INFINITY;
};

// Adds batch `index` of pass `pass` to `job` and `p`: both sides of it, and its reads as samples.
void add_batch(const TraceParts& parts, std::int64_t pass, std::int64_t index, RecordedJob& job,
               RecordedPass& p, Assembly& a) {
  const auto& pending = parts.pending;
  const auto& trainer = parts.trainer;
  const auto& fetches = parts.fetches;
  const auto& read_time = parts.read_time;
  const auto& paths = parts.paths;
  const auto& sizes = parts.sizes;
  const TrainerSide& t = trainer.at({pass, index});
  RecordedBatch b;
  b.first = job.samples.size();
  b.wait_ns = ns_of(t.wait_us);
  b.step_ns = t.step_us ? ns_of(*t.step_us) : -1;
  b.step_cpu_ns = t.step_us ? std::min(ns_of(t.step_cpu_ms * 1e3), b.step_ns) : 0;
  b.take_cpu_ns = ns_of(t.wait_cpu_ms * 1e3);
  if (t.step_us) a.step_sum += *t.step_us, a.wait_sum += t.wait_us;
  if (const auto f = fetches.find({pass, index}); f != fetches.end()) {
    b.worker = std::int32_t(f->second.worker);
    b.cpu_ns = ns_of(f->second.cpu_ms * 1e3);
    b.samples = f->second.samples;
    b.after_cpu_ns = ns_of(f->second.after_cpu_ms * 1e3);
    // Without workers the trainer's wait is its own fetch: that CPU is the fetch's, not the take's.
    if (f->second.worker < 0) b.take_cpu_ns = std::max<std::int64_t>(0, b.take_cpu_ns - b.cpu_ns);
    if (f->second.startup_cpu_ms) {
      // Only the start-up after the pass's first ask is in the pass: iter() starts the workers
      // before the trainer asks, and a forked one may be fetching by then. A worker starts up on
      // one thread, so it spent at most the wall from the ask to its first fetch.
      const double after_ask_ms = std::max(0.0, (f->second.start_us - a.first_ask) / 1e3);
      a.startup_cpu_ms += std::min(*f->second.startup_cpu_ms, after_ask_ms), ++a.started;
    }
    const auto rt = read_time.find({pass, index});
    const double other_us = f->second.wall_us - f->second.cpu_ms * 1e3 - f->second.runqueue_ms * 1e3 -
                            (rt == read_time.end() ? 0 : rt->second);
    b.idle_ns = std::max<std::int64_t>(0, ns_of(other_us));
    a.first_fetch = std::min(a.first_fetch, f->second.start_us);
    const double got = t.ask_us + t.wait_us;
    a.handovers.push_back(std::max<std::int64_t>(0, ns_of(got - std::max(t.ask_us, f->second.end_us))));
  }
  const PendingRead key{std::uint32_t(pass), std::uint32_t(index), 0, 0, 0, 0};
  const auto [lo, hi] =
      std::equal_range(pending.begin(), pending.end(), key, [](const PendingRead& a, const PendingRead& c) {
        return a.pass != c.pass ? a.pass < c.pass : a.batch < c.batch;
      });
  for (auto r = lo; r != hi; ++r) {
    if (a.file_index[r->file] == UINT32_MAX) {
      a.file_index[r->file] = std::uint32_t(a.used.size());
      a.used.push_back(paths[r->file]);
      job.files.push_back({"", sizes[r->file], parts.dims[r->file].first, parts.dims[r->file].second});
    }
    const std::uint32_t f = a.file_index[r->file];
    // A sample: one file's consecutive reads within the batch.
    if (r == lo || job.reads.back().file != f) job.samples.push_back({job.reads.size(), 0});
    job.reads.push_back({r->offset, r->bytes, f});
    ++job.samples.back().count;
    ++a.replayed;
  }
  b.count = std::uint32_t(job.samples.size() - b.first);
  p.batches.push_back(b);
}

// Refuses a job with nothing to replay; sets its hand-over cost, AU, data folder and paths.
void finish_job(const std::string& path, Assembly& a, RecordedJob& job, bool relative) {
  if (job.passes.empty())
    throw InputError(path +
                     ": the trace holds no batch the trainer took: nothing to replay (was the job's "
                     "DataLoader iterated while watched?)");
  if (a.used.empty())
    throw InputError(path +
                     ": the trace's batches read no file: nothing to replay (a data set read through "
                     "mmap, io_uring or from memory is not recorded: docs/trace-format.md)");
  if (!a.handovers.empty()) {
    std::nth_element(a.handovers.begin(), a.handovers.begin() + std::ptrdiff_t(a.handovers.size() / 2),
                     a.handovers.end());
    job.handover_ns = a.handovers[a.handovers.size() / 2];
  }
  job.au = a.step_sum + a.wait_sum > 0 ? a.step_sum / (a.step_sum + a.wait_sum) : 0;
  // Every file the replay reads is a plain path beneath the data folder (absolute, or relative
  // in a relative trace), so that its path under the data folder names it beneath that folder and
  // nowhere else ('/data/set/../../etc/shadow' would be '../../etc/shadow' under /data/set):
  // refused before anything is opened.
  for (const std::string& u : a.used) {
    const std::string_view under = relative ? std::string_view(u) : std::string_view(u).substr(1);
    if (const std::string problem = beneath_path_problem(under); !problem.empty())
      throw InputError(path + ": the path '" + u + "' of a file the job read " + problem +
                       ": a replay reads only plain paths beneath the job's data folder");
  }
  // The data folder: the deepest holding every file the batches read; a relative trace's paths
  // are beneath a folder it does not name (data_root stays empty).
  if (relative) {
    for (std::size_t i = 0; i < a.used.size(); ++i) job.files[i].path = a.used[i];
  } else if (!a.used.empty()) {
    job.data_root = folder_of(a.used.front());
    for (const std::string& u : a.used) job.data_root = common_folder(job.data_root, folder_of(u));
    // Files of no common folder below the root would make a replay scan, and a cold one evict,
    // the whole machine.
    if (job.data_root == "/")
      throw InputError(path + ": the job read its data from folders that share none below / (" +
                       a.used.front() + ", ...): a replay reads one data folder");
    for (std::size_t i = 0; i < a.used.size(); ++i)
      job.files[i].path = a.used[i].substr(job.data_root.size() + 1);
  }
  job.reads.shrink_to_fit();
  job.samples.shrink_to_fit();
}

// RETURNS: the job of the trace `read` hands its visitor to, named `path` in messages.
RecordedJob build_recorded_job(const std::string& path,
                               const std::function<void(const TraceVisitor&)>& read) {
  RecordedJob job;
  job.trace = path;
  TraceParts parts = collect_trace(path, read, job);
  // The batches the trainer took, pass by pass, in the order it took them; each batch's reads.
  std::sort(parts.pending.begin(), parts.pending.end(), [](const PendingRead& a, const PendingRead& b) {
    return a.pass != b.pass ? a.pass < b.pass : a.batch != b.batch ? a.batch < b.batch : a.seq < b.seq;
  });
  std::map<std::int64_t, std::vector<std::pair<double, std::int64_t>>> taken;  // pass → (ask, batch)
  for (const auto& [key, t] : parts.trainer) taken[key.first].emplace_back(t.ask_us, key.second);
  // A pass the header does not list has the workers its fetches name: counted in one walk of
  // the fetches (one walk per pass would take passes × fetches steps).
  std::map<std::int64_t, int> fetch_workers;
  for (const auto& [key, f] : parts.fetches)
    fetch_workers[key.first] = std::max(fetch_workers[key.first], int(f.worker) + 1);
  Assembly a;
  a.file_index.assign(parts.paths.size(), UINT32_MAX);
  job.reads.reserve(parts.pending.size());  // no doubling's copy beside the pending reads
  for (auto& [pass, batches] : taken) {
    std::sort(batches.begin(), batches.end());
    RecordedPass p;
    p.id = pass;
    if (const auto s = parts.settings.find(pass); s != parts.settings.end()) {
      p.workers = int(s->second.num_workers);
      p.prefetch = int(s->second.prefetch_factor.value_or(2));
      p.batch_size = s->second.batch_size;
    } else {
      // A pass the header does not list: its workers are those its fetches name.
      if (const auto w = fetch_workers.find(pass); w != fetch_workers.end()) p.workers = w->second;
    }
    a.first_fetch = INFINITY;
    a.startup_cpu_ms = 0, a.started = 0, a.first_ask = batches.front().first;
    for (const auto& [ask, index] : batches) add_batch(parts, pass, index, job, p, a);
    if (a.started > 0) p.startup_cpu_ns = ns_of(a.startup_cpu_ms * 1e3 / a.started);
    if (!batches.empty()) {
      const double first_ask = batches.front().first;
      p.start_ns = std::isfinite(a.first_fetch) && p.workers > 0
                       ? std::max<std::int64_t>(0, ns_of(a.first_fetch - first_ask))
                       : 0;
      job.passes.push_back(std::move(p));
    }
  }
  job.reads_untaken = parts.pending.size() - a.replayed;
  finish_job(path, a, job, parts.relative);
  return job;
}

}  // namespace

RecordedJob load_recorded_job(const std::string& path) {
  return build_recorded_job(path, [&](const TraceVisitor& v) { read_trace_file(path, v); });
}

RecordedJob read_recorded_job(std::istream& in, const std::string& where) {
  return build_recorded_job(where, [&](const TraceVisitor& v) { read_trace(in, where, v); });
}

namespace {

// The epoch's recorded CPU times on cores `scale` times as fast: each ÷ scale.
void scale_cpu(RecordedLoading::Epoch& epoch, double scale) {
  if (scale == 1) return;  // as recorded, to the nanosecond
  auto scaled = [scale](std::int64_t ns) { return std::int64_t(std::llround(double(ns) / scale)); };
  epoch.startup_cpu_ns = scaled(epoch.startup_cpu_ns);
  for (RecordedLoading::Batch& b : epoch.batches) {
    b.cpu_ns = scaled(b.cpu_ns), b.after_cpu_ns = scaled(b.after_cpu_ns);
    b.take_cpu_ns = scaled(b.take_cpu_ns);
    b.step_cpu_ns =
        std::min(scaled(b.step_cpu_ns), std::max<std::int64_t>(b.step_ns, 0));  // none without a step
  }
}

}  // namespace

RecordedLoading replay_loading(const RecordedJob& job, const ReplayKnobs& knobs) {
  RecordedLoading out;
  out.epochs = knobs.epochs.value_or(int(job.passes.size()));
  // Each pass built once, however many epochs go over them again (RecordedLoading::epoch).
  const std::size_t built = std::min(std::size_t(std::max(out.epochs, 0)), job.passes.size());
  std::vector<bool> seen(job.files.size(), false);
  auto scaled = [&](double step_ns) {
    return std::int64_t(std::llround(std::clamp(step_ns * knobs.step_scale, 0.0, kMaxNs)));
  };
  for (std::size_t e = 0; e < built; ++e) {
    const RecordedPass& p = job.passes[e];
    RecordedLoading::Epoch epoch;
    epoch.workers = knobs.workers.value_or(p.workers);
    epoch.prefetch = std::max(p.prefetch, 1);
    epoch.start_ns = epoch.workers > 0 ? p.start_ns : 0;
    epoch.startup_cpu_ns = epoch.workers > 0 ? p.startup_cpu_ns : 0;
    // Loaded in the trainer's process where the job had workers: no batch is pickled by a worker
    // nor unpickled by the trainer.
    const bool handed_over = epoch.workers > 0 || p.workers == 0;
    auto after_of = [&](const RecordedBatch& b) { return handed_over ? b.after_cpu_ns : 0; };
    auto take_of = [&](const RecordedBatch& b) { return handed_over ? b.take_cpu_ns : 0; };
    if (!knobs.batch_size) {
      for (const RecordedBatch& b : p.batches) {
        RecordedLoading::Batch r{b.first,
                                 b.count,
                                 knobs.workers ? -1 : b.worker,
                                 b.cpu_ns,
                                 b.step_ns < 0 ? -1 : scaled(double(b.step_ns)),
                                 b.idle_ns,
                                 std::uint32_t(b.samples > 0 ? b.samples : b.count),
                                 take_of(b),
                                 b.step_ns < 0 ? 0 : scaled(double(b.step_cpu_ns))};
        r.after_cpu_ns = after_of(b);
        epoch.batches.push_back(r);
      }
    } else {
      // Regrouped: each sample carries its batch's CPU time and step in equal shares; a new batch
      // takes batch_size of the job's samples (a sample of k files: k of ours), the pass's last
      // has no step after it.
      std::uint64_t groups = 0, recorded = 0;
      for (const RecordedBatch& b : p.batches)
        groups += b.count, recorded += std::uint64_t(std::max<std::int64_t>(b.samples, 0));
      const double per_sample =
          recorded > 0 ? std::max(1.0, std::round(double(groups) / double(recorded))) : 1.0;
      const auto size = std::uint64_t(std::max(1.0, double(*knobs.batch_size) * per_sample));
      // A sample of the pass's last batch (no step after it) takes the pass's mean step a sample.
      double stepped = 0, stepped_samples = 0;
      for (const RecordedBatch& b : p.batches)
        if (b.step_ns >= 0) stepped += double(b.step_ns), stepped_samples += b.count;
      const double mean_step = stepped_samples > 0 ? stepped / stepped_samples : 0;
      double stepped_cpu = 0;
      for (const RecordedBatch& b : p.batches)
        if (b.step_ns >= 0) stepped_cpu += double(b.step_cpu_ns);
      const double mean_step_cpu = stepped_samples > 0 ? stepped_cpu / stepped_samples : 0;
      RecordedLoading::Batch cur;
      double cpu = 0, step = 0, idle = 0, take = 0, step_cpu = 0, after = 0;
      bool open = false;
      auto close = [&] {
        cur.cpu_ns = std::int64_t(cpu), cur.step_ns = scaled(step), cur.idle_ns = std::int64_t(idle);
        cur.after_cpu_ns = std::int64_t(after);
        cur.take_cpu_ns = std::int64_t(take), cur.step_cpu_ns = std::min(scaled(step_cpu), cur.step_ns);
        epoch.batches.push_back(cur);
        open = false;
      };
      for (const RecordedBatch& b : p.batches)
        for (std::uint32_t k = 0; k < b.count; ++k) {
          if (!open)
            cur = {b.first + k, 0, -1, 0, 0, 0, 0}, cpu = step = idle = take = step_cpu = after = 0,
            open = true;
          ++cur.count;
          cpu += double(b.cpu_ns) / b.count;
          after += double(after_of(b)) / b.count;
          idle += double(b.idle_ns) / b.count;
          take += double(take_of(b)) / b.count;
          step += b.step_ns >= 0 ? double(b.step_ns) / b.count : mean_step;
          step_cpu += b.step_ns >= 0 ? double(b.step_cpu_ns) / b.count : mean_step_cpu;
          if (cur.count == size) {
            cur.samples = std::uint32_t(*knobs.batch_size);
            close();
          }
        }
      if (open) {
        cur.samples = std::uint32_t(std::max(1.0, std::round(double(cur.count) / per_sample)));
        close();
      }
      if (!epoch.batches.empty()) epoch.batches.back().step_ns = -1, epoch.batches.back().step_cpu_ns = 0;
    }
    for (const RecordedLoading::Batch& b : epoch.batches)
      for (std::uint64_t s = b.first; s < b.first + b.count; ++s) {
        const RecordedSample& sample = job.samples[s];
        if (sample.count == 0) continue;
        const std::uint32_t f = job.reads[sample.first].file;
        ++epoch.rereads.reads;
        if (seen[f]) ++epoch.rereads.rereads;
        seen[f] = true;
      }
    scale_cpu(epoch, knobs.cpu_scale);
    out.passes.push_back(std::move(epoch));
  }
  return out;
}

std::string system_folder_holding(const std::string& folder) {
  // The system's own folders: a job's data is never there, a trace naming them is hostile or
  // broken. Beneath /var only those that hold the system's state.
  static const char* const kSystem[] = {"/etc",     "/proc",      "/sys",     "/dev",      "/boot",
                                        "/run",     "/root",      "/usr",     "/bin",      "/sbin",
                                        "/lib",     "/lib32",     "/lib64",   "/libx32",   "/var/lib",
                                        "/var/log", "/var/spool", "/var/run", "/var/mail", "/snap"};
  if (folder == "/") return "/";
  // Shared memory is where a data set is staged to be read fast: a data folder, not the system's.
  if (folder.starts_with("/dev/shm/")) return "";
  for (const char* s : kSystem) {
    const std::string_view root(s);
    if (folder.starts_with(root) && (folder.size() == root.size() || folder[root.size()] == '/'))
      return std::string(root);
  }
  return "";
}

FileSet recorded_file_set(const RecordedJob& job, const FileSet& lookup, const FileSet& from,
                          bool allow_resized) {
  std::vector<std::size_t> index(job.files.size(), SIZE_MAX);
  std::vector<std::size_t> missing, resized;
  // FileSet's relative paths are sorted (byte order): each recorded path found by bisection.
  for (std::size_t i = 0; i < job.files.size(); ++i) {
    std::size_t lo = 0, hi = lookup.size();
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      if (lookup.relative_path(mid) < job.files[i].path) lo = mid + 1;
      else hi = mid;
    }
    if (lo == lookup.size() || lookup.relative_path(lo) != job.files[i].path) {
      missing.push_back(i);
      continue;
    }
    index[i] = lo;
    if (from.file_size(lo) != job.files[i].size) resized.push_back(i);
  }
  auto examples = [&](const std::vector<std::size_t>& which, bool sizes) {
    std::string text;
    for (std::size_t k = 0; k < std::min<std::size_t>(which.size(), 3); ++k) {
      const RecordedFile& f = job.files[which[k]];
      text += (k ? ", " : "") + f.path;
      // The recorded size only: nothing of a file it refuses is said (a trace can name any file).
      if (sizes) text += " (" + std::to_string(f.size) + " bytes recorded)";
    }
    return text + (which.size() > 3 ? ", ..." : "");
  };
  const std::string of = " of the " + std::to_string(job.files.size()) + " files the job read";
  if (!missing.empty())
    throw InputError(
        job.trace + ": " + std::to_string(missing.size()) + of + " are missing under " + lookup.root() +
        " (" + examples(missing, false) + "; recorded " +
        (job.data_root.empty() ? "relative to the job's data folder" : "under " + job.data_root) +
        "): replay on a copy of the data the job read (--source DIR)");
  if (!resized.empty() && !allow_resized)
    throw InputError(job.trace + ": " + std::to_string(resized.size()) + of + " differ in size under " +
                     lookup.root() + " (" + examples(resized, true) +
                     "): this is not the data the job read; --allow-resized replays them as they are");
  FileSet out(from.root());
  for (std::size_t i = 0; i < job.files.size(); ++i)
    out.add(from.relative_path(index[i]), from.file_size(index[i]), from.mtime_ns(index[i]));
  return out;  // not sorted: in the recording's order, so that its reads index it as they are
}

}  // namespace feedbench
