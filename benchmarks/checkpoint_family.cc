// The checkpoint family: a checkpoint written into dataset.scratch by `ranks` writer threads,
// fsync'd, then restored cold by the same ranks (docs/method.md, "Checkpoints"). Under mpirun the
// writer ranks are split over the processes, each writing and restoring its part in a folder of
// its own, started together at a barrier; one result. Everything it writes is in a ScratchFolder of
// its own, removed after the case, on failure and on SIGINT or SIGTERM (caught as stage and verify
// catch them, then raised again once the files are gone).
#include <algorithm>
#include <csignal>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "case_run.h"
#include "cluster_round.h"
#include "families.h"
#include "feedbench/base/error.h"
#include "feedbench/base/file_system.h"
#include "feedbench/base/stop_signals.h"
#include "feedbench/base/threads.h"
#include "feedbench/base/units.h"
#include "feedbench/io/checkpoint_write.h"
#include "feedbench/io/device_reads.h"
#include "feedbench/io/page_cache.h"
#include "feedbench/io/runner.h"

namespace feedbench {
namespace {

// One restore: the checkpoint's files read back by their ranks, after eviction.
struct Restore {
  std::uint64_t bytes = 0;
  double seconds = 0;  // the first rank's start to the last rank's end
  double slowest_rank_seconds = 0;
  double resident_after_write = 0;            // before the eviction
  Residency residency;                        // after it: what the restore started from
  std::optional<std::uint64_t> device_bytes;  // the devices' own count during the restore
  ReadTally tally;
  std::string error;
};

// RETURNS: the files of `ranks` as a FileSet rooted at the folder (every rank's when `rank` < 0).
FileSet files_of(const ScratchFolder& folder, const CheckpointWrite& written, int rank,
                 std::uint64_t file_bytes) {
  FileSet set(folder.path());
  for (std::size_t r = 0; r < written.ranks.size(); ++r)
    if (rank < 0 || std::size_t(rank) == r)
      for (const std::string& name : written.ranks[r].files) set.add(name, file_bytes, 0);
  set.sort();
  return set;
}

RoundOptions restore_options(const CheckpointParameters& p) {
  RoundOptions o;
  o.engine = p.engine;
  o.engine_options.direct = p.direct;
  o.engine_options.block_size = p.block_size;
  o.engine_options.queue_depth = unsigned(p.queue_depth.value_or(1));  // as the write's
  o.workers = 1;
  return o;
}

// Reads checkpoint `written` back cold: residency measured, every file evicted, measured again,
// then (every process's files evicted: the agreement is a barrier) each rank reads its own files
// on its own thread with the case's engine. A collective.
Restore restore_checkpoint(Cluster& cluster, const ScratchFolder& folder, const CheckpointWrite& written,
                           const CheckpointParameters& p, std::uint64_t file_bytes) {
  Restore out;
  const FileSet all = files_of(folder, written, -1, file_bytes);
  try {
    out.resident_after_write = measure_residency(all).fraction();
    out.residency = evict(all);
  } catch (const RunError& e) {
    out.error = std::string("evicting the checkpoint: ") + e.what();
  }
  out.error = first_failure(cluster, out.error);
  if (!out.error.empty()) return out;
  const DeviceReads device(all);
  const std::optional<std::uint64_t> device_before = device.bytes_read();
  const std::size_t ranks = written.ranks.size();
  std::vector<FileSet> sets;
  for (std::size_t r = 0; r < ranks; ++r) sets.push_back(files_of(folder, written, int(r), file_bytes));
  std::vector<RoundStats> stats(ranks);
  std::vector<std::thread> threads;
  const RoundOptions options = restore_options(p);
  for (std::size_t r = 0; r < ranks && out.error.empty(); ++r)
    out.error = start_thread(
        threads,
        [&, r] {
          WorkloadSpec spec;
          spec.block_size = p.block_size;
          Workload workload(sets[r], spec);
          stats[r] = run_round(sets[r], workload, options);
        },
        "restoring rank", r, ranks);
  for (std::thread& t : threads) t.join();
  const std::optional<std::uint64_t> device_after = device.bytes_read();
  if (device_before && device_after) out.device_bytes = *device_after - *device_before;
  std::int64_t first = INT64_MAX, last = INT64_MIN;
  for (const RoundStats& s : stats) {
    if (out.error.empty() && !s.error.empty()) out.error = s.error;
    out.bytes += s.bytes;
    out.tally.merge(s);
    first = std::min(first, s.start_ns);
    last = std::max(last, s.start_ns + s.elapsed_ns);
    out.slowest_rank_seconds = std::max(out.slowest_rank_seconds, s.seconds());
  }
  out.seconds = last > first ? double(last - first) * 1e-9 : 0;
  return out;
}

// One checkpoint's figures, of this process or of every process together: a plain struct, so
// all_gather carries it.
struct CheckpointFigures {
  std::uint64_t bytes = 0, writes = 0, writer_ranks = 0, restored = 0, device_bytes = 0;
  double write_s = 0, slowest_write_s = 0, fsync_s = 0, busy_s = 0, folder_fsync_s = 0;
  double restore_s = 0, slowest_restore_s = 0, resident_after_write = 0, residency_before = 0;
  std::int32_t host = 0;
  std::uint8_t device_known = 0;
};

CheckpointFigures figures_of(const CheckpointWrite& w, const Restore& r, int host) {
  CheckpointFigures f;
  f.bytes = w.bytes;
  f.writes = w.writes;
  f.writer_ranks = w.ranks.size();
  f.write_s = w.seconds();
  f.slowest_write_s = w.slowest_rank_seconds();
  for (const RankWrite& rank : w.ranks) {
    f.fsync_s += double(rank.fsync_ns) * 1e-9;
    f.busy_s += rank.seconds();
  }
  f.folder_fsync_s = double(w.folder_fsync_ns) * 1e-9;
  f.restored = r.bytes;
  f.restore_s = r.seconds;
  f.slowest_restore_s = r.slowest_rank_seconds;
  f.resident_after_write = r.resident_after_write;
  f.residency_before = r.residency.fraction();
  f.device_known = r.device_bytes ? 1 : 0;
  f.device_bytes = r.device_bytes.value_or(0);
  f.host = host;
  return f;
}

// RETURNS: every process's figures as one checkpoint's: bytes, writes and fsync time summed; the
// checkpoint's and the restore's time the longest process's (all start at a barrier), the slowest
// rank the slowest of all; the devices' count once per host (each process on a host sees all of
// that host's reads). One process: its own. A collective.
CheckpointFigures across_processes(Cluster& cluster, const CheckpointFigures& mine) {
  if (cluster.size() == 1) return mine;
  CheckpointFigures t;
  t.device_known = 1;
  std::vector<std::uint64_t> per_host(std::size_t(cluster.hosts()), 0);
  for (const CheckpointFigures& x : all_gather(cluster, mine)) {
    t.bytes += x.bytes;
    t.writes += x.writes;
    t.writer_ranks += x.writer_ranks;
    t.restored += x.restored;
    t.fsync_s += x.fsync_s;
    t.busy_s += x.busy_s;
    t.write_s = std::max(t.write_s, x.write_s);
    t.slowest_write_s = std::max(t.slowest_write_s, x.slowest_write_s);
    t.folder_fsync_s = std::max(t.folder_fsync_s, x.folder_fsync_s);
    t.restore_s = std::max(t.restore_s, x.restore_s);
    t.slowest_restore_s = std::max(t.slowest_restore_s, x.slowest_restore_s);
    t.resident_after_write = std::max(t.resident_after_write, x.resident_after_write);
    t.residency_before = std::max(t.residency_before, x.residency_before);
    t.device_known &= x.device_known;
    std::uint64_t& host = per_host[std::size_t(x.host)];
    host = std::max(host, x.device_bytes);
  }
  for (std::uint64_t b : per_host) t.device_bytes += b;
  return t;
}

// What a repetition's checkpoints add up to.
struct Totals {
  std::uint64_t bytes = 0, writes = 0, restored = 0, rank_bytes = 0;
  double write_s = 0, slowest_write_s = 0, restore_s = 0, slowest_restore_s = 0, fsync_s = 0, busy_s = 0;
  double folder_fsync_s = 0, resident_after_write = 0, residency_before = 0;
  std::optional<std::uint64_t> device_bytes = 0;
  Histogram latency;
  ReadTally tally;
  int checkpoints = 0;
};

void add(Totals& t, const CheckpointFigures& f) {
  ++t.checkpoints;
  t.bytes += f.bytes;
  t.writes += f.writes;
  t.rank_bytes += f.writer_ranks ? f.bytes / f.writer_ranks : 0;
  t.write_s += f.write_s;
  t.slowest_write_s += f.slowest_write_s;
  t.fsync_s += f.fsync_s;
  t.busy_s += f.busy_s;
  t.folder_fsync_s += f.folder_fsync_s;
  t.restored += f.restored;
  t.restore_s += f.restore_s;
  t.slowest_restore_s += f.slowest_restore_s;
  t.resident_after_write = std::max(t.resident_after_write, f.resident_after_write);
  t.residency_before = std::max(t.residency_before, f.residency_before);
  t.device_bytes =
      t.device_bytes && f.device_known ? std::optional(*t.device_bytes + f.device_bytes) : std::nullopt;
}

// RETURNS: "" when `need` bytes fit in the scratch's free room, else the refusal.
std::string room_refusal(const std::string& scratch, std::uint64_t need) {
  const std::int64_t free = free_bytes_at(scratch);
  if (free < 0 || std::uint64_t(free) >= need) return "";
  return "not enough room in the scratch " + scratch + ": the checkpoint needs " + std::to_string(need) +
         " bytes (" + format_size(double(need)) + "), " + std::to_string(free) + " bytes (" +
         format_size(double(free)) + ") are free; nothing was written";
}

// Writes and restores the case's checkpoints, one after the other, each removed before the next;
// every process starts each write at a barrier. A collective.
// RETURNS: "" or why the repetition failed (the same on every process).
std::string write_and_restore(Cluster& cluster, ScratchFolder& folder, CheckpointWriteSpec spec,
                              const CheckpointBuffers& buffers, const CheckpointParameters& p,
                              Totals& totals) {
  for (int k = 0; k < p.checkpoints; ++k) {
    spec.checkpoint = k;
    cluster.barrier();
    const CheckpointWrite written = write_checkpoint(folder, spec, buffers);
    std::string why =
        first_failure(cluster, written.error.empty() ? "" : "writing the checkpoint: " + written.error);
    if (!why.empty()) return why;
    const Restore restored = restore_checkpoint(cluster, folder, written, p, spec.file_bytes);
    why = first_failure(cluster, restored.error.empty() ? "" : "restoring the checkpoint: " + restored.error);
    if (!why.empty()) return why;
    add(totals, across_processes(cluster, figures_of(written, restored, cluster.host_index())));
    totals.latency.merge(written.latency);  // this process's; merged across processes at the end
    totals.tally.merge(restored.tally);
    if (why = first_failure(cluster, folder.remove_files()); !why.empty()) return why;
  }
  return "";
}

void record_counters(CaseRun& run, const Totals& t, const CheckpointParameters& p,
                     const CheckpointBuffers& buffers) {
  const double n = std::max(1, t.checkpoints);
  const double interval_s = double(p.interval.count()) * 1e-9;
  const double per_checkpoint_s = t.write_s / n;
  auto rate = [](double bytes, double s) { return s > 0 ? bytes / s : 0.0; };
  run.counter("bytes_per_second", rate(double(t.bytes), t.write_s), true);
  run.counter("write_slowest_rank_bytes_per_second", rate(double(t.rank_bytes), t.slowest_write_s), true);
  run.counter("checkpoint_s", per_checkpoint_s);
  run.counter("fsync_share", t.busy_s > 0 ? t.fsync_s / t.busy_s : 0);
  run.counter("lat_p50_us", t.latency.quantile(0.50) / 1e3);
  run.counter("lat_p90_us", t.latency.quantile(0.90) / 1e3);
  run.counter("lat_p99_us", t.latency.quantile(0.99) / 1e3);
  run.counter("lat_p999_us", t.latency.quantile(0.999) / 1e3);
  run.counter("lat_max_us", double(t.latency.max()) / 1e3);
  run.counter("restore_bytes_per_second", rate(double(t.restored), t.restore_s), true);
  run.counter("restore_slowest_rank_bytes_per_second", rate(double(t.rank_bytes), t.slowest_restore_s), true);
  run.counter("restore_s", t.restore_s / n);
  run.counter("generation_bytes_per_second", buffers.bytes_per_second(), true);
  run.counter("blocking_share", interval_s > 0 ? per_checkpoint_s / interval_s : 0);
  run.counter("async_bytes_per_second", interval_s > 0 ? double(t.bytes) / n / interval_s : 0, true);
  run.counter("residency_before", t.residency_before);
}

void record_extra(CaseRun& run, const Totals& t, const CheckpointLayout& layout,
                  const CheckpointParameters& p, const CheckpointBuffers& buffers,
                  const std::string& folder) {
  const int processes = run.cluster().size();
  const double n = std::max(1, t.checkpoints);
  nlohmann::json& extra = run.record().extra;
  extra.update({{"bytes", t.bytes / std::uint64_t(n)},
                {"bytes_asked", layout.bytes_asked},
                {"writer_ranks", layout.ranks},  // extra.ranks is a run's MPI ranks
                {"writer_processes", processes},
                {"files_per_rank", layout.files_per_rank},
                {"file_bytes", layout.file_bytes},
                {"checkpoints", t.checkpoints},
                {"writes", t.writes},
                {"write_s", t.write_s / n},
                {"fsync_s", t.fsync_s / n},
                {"folder_fsync_s", t.folder_fsync_s / n},
                {"interval_s", double(p.interval.count()) * 1e-9},
                {"scratch_folder", folder},
                {"generation",
                 {{"bytes", buffers.bytes},
                  {"seconds", buffers.seconds},
                  {"bytes_per_second", buffers.bytes_per_second()},
                  {"before_the_clock", true}}}});
  nlohmann::json restore = {{"bytes", t.restored / std::uint64_t(n)},
                            {"resident_after_write", t.resident_after_write},
                            {"residency_before", t.residency_before}};
  restore["device_bytes"] =
      t.device_bytes ? nlohmann::json(*t.device_bytes / std::uint64_t(n)) : nlohmann::json();
  extra["restore"] = restore;
  run.record().cache = {{"requested", "cold"},
                        {"residency_before", t.residency_before},
                        {"achieved", t.residency_before <= kColdMaxResident},
                        {"method", "evicted per file after the write"}};
}

}  // namespace

// Generation across processes: all of them make their buffers at once.
struct Generated {
  std::uint64_t bytes;
  double seconds;
};

void run_checkpoint_case(const Case& c, RunContext& context, benchmark::State& state) {
  CaseRun run(c, context, state);
  const std::string scratch = context.config ? context.config->scratch_root : "";
  if (scratch.empty()) return run.skip("no scratch folder in the config's dataset (set dataset.scratch)");
  const CheckpointParameters& p = c.checkpoint();
  const CheckpointLayout layout = checkpoint_layout(p);
  Cluster& cluster = run.cluster();
  const int processes = cluster.size();
  if (layout.ranks < processes)  // every process sees the same plan: all skip, none waits
    return run.skip("the checkpoint's " + std::to_string(layout.ranks) +
                    " writer ranks cannot be split over " + std::to_string(processes) +
                    " MPI ranks (set ranks to at least " + std::to_string(processes) + ")");
  if (!run.agree(room_refusal(scratch, layout.bytes()))) return;

  CheckpointWriteSpec spec;
  spec.ranks = layout.ranks;
  spec.first_rank = layout.ranks * cluster.rank() / processes;  // this process's part of the ranks
  spec.local_ranks = layout.ranks * (cluster.rank() + 1) / processes - spec.first_rank;
  spec.files_per_rank = layout.files_per_rank;
  spec.file_bytes = layout.file_bytes;
  spec.block_size = p.block_size;
  spec.direct = p.direct;
  spec.engine = p.engine;
  spec.queue_depth = unsigned(p.queue_depth.value_or(1));
  spec.fsync = p.fsync;
  spec.seed = c.seed + run.repetition();
  CheckpointBuffers buffers = make_checkpoint_buffers(spec);  // before the clock
  if (!run.agree(buffers.error.empty() ? "" : "making the checkpoint's bytes: " + buffers.error)) return;
  if (processes > 1) {  // the node's generation rate: every process's bytes, made at once
    std::uint64_t bytes = 0;
    double seconds = 0;
    for (const Generated& g : all_gather(cluster, Generated{buffers.bytes, buffers.seconds})) {
      bytes += g.bytes;
      seconds = std::max(seconds, g.seconds);
    }
    buffers.bytes = bytes;
    buffers.seconds = seconds;
  }

  Totals totals;
  std::string failure, folder_path;
  int signal = 0;
  {
    StopOnSignals stop;  // a Ctrl-C stops the writers; the files go before the signal is raised again
    spec.stop = stop.flag();
    std::optional<ScratchFolder> folder;
    try {
      folder.emplace(scratch, "feedbench-checkpoint");
      folder_path = folder->path();
    } catch (const std::exception& e) {
      failure = e.what();
    }
    failure = first_failure(cluster, failure);  // no process writes unless every one has its folder
    try {
      for (auto _ : state) {
        if (!failure.empty()) break;
        failure = write_and_restore(cluster, *folder, spec, buffers, p, totals);
        if (!failure.empty()) break;
        state.SetIterationTime(std::max(totals.write_s, 1e-9));
      }
    } catch (const std::exception& e) {  // the folder's files are removed below
      failure = e.what();
    }
    if (folder)
      if (std::string left = folder->remove_all(); !left.empty())
        failure += (failure.empty() ? "" : "; ") + ("removing the checkpoint: " + left);
    signal = stop.flag()->load();
  }
  if (signal != 0) {
    // The run ends on the signal, as stage and verify end on it (128 + the signal), the scratch as
    // it was; by its default action, whatever the process inherited (a shell's background job
    // ignores SIGINT, yet StopOnSignals caught it).
    std::signal(signal, SIG_DFL);
    std::raise(signal);
  }
  if (!run.agree(failure)) return;
  if (processes > 1) {  // every process's writes and reads, on every process
    totals.latency = merged_histogram(cluster, totals.latency, "checkpoint write latency");
    totals.tally = merged_tally(cluster, totals.tally);
  }
  record_counters(run, totals, p, buffers);
  record_extra(run, totals, layout, p, buffers, folder_path);
  run.record_reads(totals.tally);
  run.record().latency = totals.latency;
  run.finish("data made at " + format_rate(buffers.bytes_per_second()) + " before the clock");
}

}  // namespace feedbench
