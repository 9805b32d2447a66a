// A watched job's loading from its trace, what-ifs applied, its files found (see recorded_job.h).
#include "feedbench/replay/recorded_job.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "feedbench/base/error.h"
#include "feedbench/base/text.h"
#include "feedbench/replay/trace_reader.h"

namespace feedbench {
namespace {

using BatchKey = std::pair<std::int64_t, std::int64_t>;  // (pass, batch)

// A read of a batch as the trace streams it, before the batches are known.
struct PendingRead {
  std::int64_t pass = 0, batch = 0;
  std::uint64_t offset = 0;
  std::uint32_t bytes = 0, file = 0;
};

struct TrainerSide {
  double ask_us = 0, wait_us = 0;
  std::optional<double> step_us;
};

struct FetchSide {
  std::int64_t worker = -1, samples = 0;
  double start_us = 0, end_us = 0, cpu_ms = 0, runqueue_ms = 0, wall_us = 0;
  double read_us = 0;  // its reads' time
};

std::int64_t ns_of(double us) { return std::int64_t(std::llround(us * 1e3)); }

// RETURNS: the folder of `path` ("/a/b" for "/a/b/c").
std::string folder_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

// RETURNS: the deepest folder holding both `a` and `b` (folders, no trailing '/').
std::string common_folder(const std::string& a, const std::string& b) {
  std::size_t n = 0, last = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) {
    ++n;
    if (n == a.size() || n == b.size() || a[n] == '/') {
      if ((n == a.size() || a[n] == '/') && (n == b.size() || b[n] == '/')) last = n;
    }
  }
  return last == 0 ? "/" : a.substr(0, last);
}

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

RecordedJob load_recorded_job(const std::string& path) {
  RecordedJob job;
  job.trace = path;
  std::map<std::int64_t, TracePass> settings;
  std::map<std::pair<std::int64_t, std::uint64_t>, std::uint32_t> opened;  // (pid, file) → data file
  std::unordered_map<std::string, std::uint32_t> by_path;
  std::vector<std::string> paths;
  std::vector<std::uint64_t> sizes;
  std::vector<PendingRead> pending;
  std::map<BatchKey, TrainerSide> trainer;
  std::map<BatchKey, FetchSide> fetches;
  std::map<BatchKey, double> read_time;  // µs in each batch's reads

  TraceVisitor visit;
  visit.header = [&](const TraceHeader& h) {
    job.name = h.name.empty() ? "job" : h.name;
    for (const TracePass& p : h.passes) settings[p.pass] = p;
  };
  visit.open = [&](const TraceOpen& o) {
    auto [it, added] = by_path.try_emplace(o.path, std::uint32_t(paths.size()));
    if (added) paths.push_back(o.path), sizes.push_back(o.size);
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
    pending.push_back({r.pass, r.batch, r.offset, std::uint32_t(r.bytes), it->second});
  };
  visit.batch = [&](const TraceBatch& b) {
    TrainerSide& t = trainer[{b.pass, b.batch}];
    if (b.step) t.step_us = b.dur_us;
    else t.ask_us = b.ts_us, t.wait_us = b.dur_us;
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
  };
  read_trace_file(path, visit);

  // The batches the trainer took, pass by pass, in the order it took them; each batch's reads.
  std::stable_sort(pending.begin(), pending.end(), [](const PendingRead& a, const PendingRead& b) {
    return a.pass != b.pass ? a.pass < b.pass : a.batch < b.batch;
  });
  std::map<std::int64_t, std::vector<std::pair<double, std::int64_t>>> taken;  // pass → (ask, batch)
  for (const auto& [key, t] : trainer) taken[key.first].emplace_back(t.ask_us, key.second);
  std::vector<std::uint32_t> file_index(paths.size(), UINT32_MAX);  // trace's data file → job.files
  std::vector<std::string> used;
  std::vector<std::int64_t> handovers;
  std::uint64_t replayed = 0;
  double step_sum = 0, wait_sum = 0;
  for (auto& [pass, batches] : taken) {
    std::sort(batches.begin(), batches.end());
    RecordedPass p;
    p.id = pass;
    if (const auto s = settings.find(pass); s != settings.end()) {
      p.workers = int(s->second.num_workers);
      p.prefetch = int(s->second.prefetch_factor.value_or(2));
      p.batch_size = s->second.batch_size;
    }
    double first_fetch = INFINITY;
    for (const auto& [ask, index] : batches) {
      const TrainerSide& t = trainer.at({pass, index});
      RecordedBatch b;
      b.first = job.samples.size();
      b.wait_ns = ns_of(t.wait_us);
      b.step_ns = t.step_us ? ns_of(*t.step_us) : -1;
      if (t.step_us) step_sum += *t.step_us, wait_sum += t.wait_us;
      if (const auto f = fetches.find({pass, index}); f != fetches.end()) {
        b.worker = std::int32_t(f->second.worker);
        b.cpu_ns = ns_of(f->second.cpu_ms * 1e3);
        b.samples = f->second.samples;
        const auto rt = read_time.find({pass, index});
        const double other_us = f->second.wall_us - f->second.cpu_ms * 1e3 - f->second.runqueue_ms * 1e3 -
                                (rt == read_time.end() ? 0 : rt->second);
        b.idle_ns = std::max<std::int64_t>(0, ns_of(other_us));
        first_fetch = std::min(first_fetch, f->second.start_us);
        const double got = t.ask_us + t.wait_us;
        handovers.push_back(std::max<std::int64_t>(0, ns_of(got - std::max(t.ask_us, f->second.end_us))));
      }
      const PendingRead key{pass, index, 0, 0, 0};
      const auto [lo, hi] = std::equal_range(pending.begin(), pending.end(), key,
                                             [](const PendingRead& a, const PendingRead& c) {
                                               return a.pass != c.pass ? a.pass < c.pass : a.batch < c.batch;
                                             });
      for (auto r = lo; r != hi; ++r) {
        if (file_index[r->file] == UINT32_MAX) {
          file_index[r->file] = std::uint32_t(used.size());
          used.push_back(paths[r->file]);
          job.files.push_back({"", sizes[r->file]});
        }
        const std::uint32_t f = file_index[r->file];
        // A sample: one file's consecutive reads within the batch.
        if (r == lo || job.reads.back().file != f) job.samples.push_back({job.reads.size(), 0});
        job.reads.push_back({r->offset, r->bytes, f});
        ++job.samples.back().count;
        ++replayed;
      }
      b.count = std::uint32_t(job.samples.size() - b.first);
      p.batches.push_back(b);
    }
    if (!batches.empty()) {
      const double first_ask = batches.front().first;
      p.start_ns = std::isfinite(first_fetch) && p.workers > 0
                       ? std::max<std::int64_t>(0, ns_of(first_fetch - first_ask))
                       : 0;
      job.passes.push_back(std::move(p));
    }
  }
  job.reads_untaken = pending.size() - replayed;
  if (job.passes.empty())
    throw InputError(path +
                     ": the trace holds no batch the trainer took: nothing to replay (was the job's "
                     "DataLoader iterated while watched?)");
  if (!handovers.empty()) {
    std::nth_element(handovers.begin(), handovers.begin() + std::ptrdiff_t(handovers.size() / 2),
                     handovers.end());
    job.handover_ns = handovers[handovers.size() / 2];
  }
  job.au = step_sum + wait_sum > 0 ? step_sum / (step_sum + wait_sum) : 0;
  // The data folder: the deepest holding every file the batches read.
  if (!used.empty()) {
    job.data_root = folder_of(used.front());
    for (const std::string& u : used) job.data_root = common_folder(job.data_root, folder_of(u));
    const std::size_t cut = job.data_root == "/" ? 1 : job.data_root.size() + 1;
    for (std::size_t i = 0; i < used.size(); ++i) job.files[i].path = used[i].substr(cut);
  }
  job.reads.shrink_to_fit();
  job.samples.shrink_to_fit();
  return job;
}

RecordedLoading replay_loading(const RecordedJob& job, const ReplayKnobs& knobs) {
  RecordedLoading out;
  const int epochs = knobs.epochs.value_or(int(job.passes.size()));
  std::vector<bool> seen(job.files.size(), false);
  auto scaled = [&](double step_ns) { return std::int64_t(std::llround(step_ns * knobs.step_scale)); };
  for (int e = 0; e < epochs; ++e) {
    const RecordedPass& p = job.passes[std::size_t(e) % job.passes.size()];
    RecordedLoading::Epoch epoch;
    epoch.workers = knobs.workers.value_or(p.workers);
    epoch.prefetch = std::max(p.prefetch, 1);
    epoch.start_ns = epoch.workers > 0 ? p.start_ns : 0;
    if (!knobs.batch_size) {
      for (const RecordedBatch& b : p.batches)
        epoch.batches.push_back({b.first, b.count, knobs.workers ? -1 : b.worker, b.cpu_ns,
                                 b.step_ns < 0 ? -1 : scaled(double(b.step_ns)), b.idle_ns});
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
      RecordedLoading::Batch cur;
      double cpu = 0, step = 0, idle = 0;
      bool open = false;
      for (const RecordedBatch& b : p.batches)
        for (std::uint32_t k = 0; k < b.count; ++k) {
          if (!open) cur = {b.first + k, 0, -1, 0, 0, 0}, cpu = step = idle = 0, open = true;
          ++cur.count;
          cpu += double(b.cpu_ns) / b.count;
          idle += double(b.idle_ns) / b.count;
          step += b.step_ns > 0 ? double(b.step_ns) / b.count : 0;
          if (cur.count == size) {
            cur.cpu_ns = std::int64_t(cpu), cur.step_ns = scaled(step), cur.idle_ns = std::int64_t(idle);
            epoch.batches.push_back(cur);
            open = false;
          }
        }
      if (open) {
        cur.cpu_ns = std::int64_t(cpu), cur.step_ns = scaled(step), cur.idle_ns = std::int64_t(idle);
        epoch.batches.push_back(cur);
      }
      if (!epoch.batches.empty()) epoch.batches.back().step_ns = -1;
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
    out.epochs.push_back(std::move(epoch));
  }
  return out;
}

std::vector<RecordedRead> map_recorded_files(const RecordedJob& job, const FileSet& files,
                                             bool allow_resized) {
  std::vector<std::uint32_t> index(job.files.size(), UINT32_MAX);
  std::vector<std::size_t> missing, resized;
  // FileSet's relative paths are sorted (byte order): each recorded path found by bisection.
  for (std::size_t i = 0; i < job.files.size(); ++i) {
    std::size_t lo = 0, hi = files.size();
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      if (files.relative_path(mid) < job.files[i].path) lo = mid + 1;
      else hi = mid;
    }
    if (lo == files.size() || files.relative_path(lo) != job.files[i].path) {
      missing.push_back(i);
      continue;
    }
    index[i] = std::uint32_t(lo);
    if (files.file_size(lo) != job.files[i].size) resized.push_back(i);
  }
  auto examples = [&](const std::vector<std::size_t>& which, bool sizes) {
    std::string text;
    for (std::size_t k = 0; k < std::min<std::size_t>(which.size(), 3); ++k) {
      const RecordedFile& f = job.files[which[k]];
      text += (k ? ", " : "") + f.path;
      if (sizes)
        text += " (" + std::to_string(f.size) + " bytes recorded, " +
                std::to_string(files.file_size(index[which[k]])) + " here)";
    }
    return text + (which.size() > 3 ? ", ..." : "");
  };
  const std::string of = " of the " + std::to_string(job.files.size()) + " files the job read";
  if (!missing.empty())
    throw InputError(job.trace + ": " + std::to_string(missing.size()) + of + " are missing under " +
                     files.root() + " (" + examples(missing, false) + "; recorded under " + job.data_root +
                     "): replay on a copy of the data the job read (--source DIR), or make a stand-in with "
                     "feedbench gen --like " +
                     job.trace);
  if (!resized.empty() && !allow_resized)
    throw InputError(job.trace + ": " + std::to_string(resized.size()) + of + " differ in size under " +
                     files.root() + " (" + examples(resized, true) +
                     "): this is not the data the job read; --allow-resized replays them as they are");
  std::vector<RecordedRead> out = job.reads;
  for (RecordedRead& r : out) {
    r.file = index[r.file];
    // A resized file's reads end at its end now: what a replay plans is what is there to read.
    const std::uint64_t size = files.file_size(r.file);
    r.bytes = r.offset >= size ? 0 : std::uint32_t(std::min<std::uint64_t>(r.bytes, size - r.offset));
  }
  return out;
}

}  // namespace feedbench
