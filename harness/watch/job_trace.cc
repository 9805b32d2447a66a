// A watched job's trace in Chrome's trace-event format (see job_trace.h).
#include "feedbench/watch/job_trace.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "feedbench/base/error.h"
#include "feedbench/base/file_system.h"
#include "feedbench/watch/read_log.h"

namespace feedbench {
namespace {

using nlohmann::json;

// The fetches of one thread, by start, for finding the one a read fell in.
struct ThreadFetches {
  std::vector<std::pair<std::int64_t, std::size_t>> by_start;  // (start, index into log.fetches)
};

class Writer {
 public:
  Writer(const std::string& path, std::int64_t origin) : out_(path), origin_(origin) {}

  double us(std::int64_t ns) const { return double(ns - origin_) / 1e3; }

  void event(const json& e) {
    out_.write(first_ ? "\n" : ",\n");
    out_.write(e.dump(-1, ' ', false, json::error_handler_t::replace));
    first_ = false;
    ++counts.events;
  }
  void span(const char* name, const char* cat, std::int64_t pid, std::int64_t tid, std::int64_t t0,
            std::int64_t t1, json args) {
    event({{"name", name},
           {"cat", cat},
           {"ph", "X"},
           {"ts", us(t0)},
           {"dur", double(t1 - t0) / 1e3},
           {"pid", pid},
           {"tid", tid},
           {"args", std::move(args)}});
  }
  void name_process(std::int64_t pid, const std::string& name) {
    event({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"tid", pid}, {"args", {{"name", name}}}});
  }
  void head(const json& other) {
    // otherData first, so a reader learns the format before the first event.
    std::string text = other.dump(-1, ' ', false, json::error_handler_t::replace);
    out_.write("{\"otherData\": " + text + ",\n\"displayTimeUnit\": \"ms\",\n\"traceEvents\": [");
  }
  void finish() {
    out_.write("\n]}\n");
    out_.commit();
  }

  JobTraceCounts counts;

 private:
  AtomicFile out_;
  std::int64_t origin_;
  bool first_ = true;
};

json or_null(std::int64_t v) { return v >= 0 ? json(v) : json(nullptr); }

// A worker process's CPU outside its fetches, per fetch: from the process CPU each fetch began
// at (all its threads': the loop, the queue's feeder pickling the batch it built).
struct OutsideCpu {
  std::vector<std::int64_t> after;    // per fetch: its process's CPU from its start to the next's,
                                      // less the fetch's own (-1: not known)
  std::vector<std::int64_t> startup;  // per fetch: its process's CPU before it when it is the
                                      // process's first (-1: not the first, or not known)
};

OutsideCpu outside_cpu(const JobLog& log) {
  OutsideCpu out{std::vector<std::int64_t>(log.fetches.size(), -1),
                 std::vector<std::int64_t>(log.fetches.size(), -1)};
  std::map<std::int64_t, std::vector<std::size_t>> by_pid;  // worker processes' fetches
  for (std::size_t i = 0; i < log.fetches.size(); ++i)
    if (log.fetches[i].worker >= 0 && log.fetches[i].process_cpu_ns >= 0)
      by_pid[log.fetches[i].pid].push_back(i);
  std::map<std::int64_t, std::int64_t> ended;  // pid → its CPU at its loop's end
  for (const JobWorkerEnd& e : log.worker_ends) ended[e.pid] = std::max(ended[e.pid], e.process_cpu_ns);
  for (auto& [pid, v] : by_pid) {
    std::sort(v.begin(), v.end(), [&](std::size_t a, std::size_t b) {
      return log.fetches[a].start_ns < log.fetches[b].start_ns;
    });
    out.startup[v.front()] = log.fetches[v.front()].process_cpu_ns;
    const auto end = ended.find(pid);
    for (std::size_t k = 0; k < v.size(); ++k) {
      const JobFetch& f = log.fetches[v[k]];
      const std::int64_t next = k + 1 < v.size()     ? log.fetches[v[k + 1]].process_cpu_ns
                                : end != ended.end() ? end->second
                                                     : -1;
      if (next >= 0) out.after[v[k]] = std::max<std::int64_t>(0, next - f.process_cpu_ns - f.cpu_ns);
    }
  }
  return out;
}

// The trace's file numbers of one process file. It holds every image its pid ran (a launcher,
// then the job it exec'd), each numbering its opens from 1: each image's are put after the
// highest of the images before it (an image's records all come before the next image's, which
// starts only when it is gone), so that (pid, file) names one open.
class FileNumbers {
 public:
  // RETURNS: the trace's number for open `serial` of process image `image`.
  std::uint64_t of(std::int64_t image, std::uint64_t serial) {
    const auto it = base_.try_emplace(image, top_).first;
    const std::uint64_t id = it->second + serial;
    top_ = std::max(top_, id);
    return id;
  }

 private:
  std::map<std::int64_t, std::uint64_t> base_;
  std::uint64_t top_ = 0;
};

}  // namespace

JobTraceCounts write_job_trace(const std::string& path, const JobLog& log, const std::string& records_dir,
                               std::int64_t origin_ns, const std::vector<std::string>& command,
                               const std::string& name) {
  Writer w(path, origin_ns);
  json passes = json::array();
  for (const JobEpoch& e : log.epochs)
    passes.push_back({{"pass", e.id},
                      {"pid", e.pid},
                      {"iterator", e.iter},
                      {"workers", e.workers},
                      {"batch_size", e.batch_size},
                      {"num_workers", e.num_workers},
                      {"prefetch_factor", e.prefetch_factor ? json(*e.prefetch_factor) : json(nullptr)},
                      {"persistent_workers", e.persistent_workers},
                      {"pin_memory", e.pin_memory},
                      {"start_method", e.start_method}});
  w.head({{"format", kJobTraceFormat},
          {"version", kJobTraceVersion},
          {"origin_ns", origin_ns},
          {"name", name},
          {"command", command},
          {"passes", passes}});

  // Who is who: the trainer and each worker.
  std::set<std::int64_t> named;
  for (const JobEpoch& e : log.epochs)
    if (named.insert(e.pid).second) w.name_process(e.pid, "trainer");
  for (const JobFetch& f : log.fetches)
    if (named.insert(f.pid).second) w.name_process(f.pid, "DataLoader worker " + std::to_string(f.worker));

  // The trainer's side of every batch.
  for (const JobEpoch& e : log.epochs)
    for (std::size_t k = 0; k < e.batches.size(); ++k) {
      const auto& b = e.batches[k];
      const json args = {{"pass", e.id}, {"batch", b.index}};
      auto with_cpu = [&](std::int64_t cpu) {
        json a = args;
        if (cpu >= 0) a["cpu_ms"] = double(cpu) / 1e6;
        return a;
      };
      w.span("wait", "batch", e.pid, e.pid, b.ask_ns, b.got_ns, with_cpu(b.cpu_ns));
      if (k + 1 < e.batches.size())
        w.span("step", "batch", e.pid, e.pid, b.got_ns, e.batches[k + 1].ask_ns, with_cpu(b.step_cpu_ns));
    }

  // The workers' fetches, and an index of them by thread to place each read in its batch.
  const std::vector<std::int64_t> pass = fetch_passes(log);
  const OutsideCpu outside = outside_cpu(log);
  std::map<std::pair<std::int64_t, std::int64_t>, ThreadFetches> threads;
  for (std::size_t i = 0; i < log.fetches.size(); ++i) {
    const JobFetch& f = log.fetches[i];
    json args = {{"pass", or_null(pass[i])},
                 {"batch", or_null(f.batch)},
                 {"worker", f.worker},
                 {"samples", f.samples},
                 {"cpu_ms", double(f.cpu_ns) / 1e6},
                 {"runqueue_ms", double(f.runqueue_ns) / 1e6}};
    if (outside.after[i] >= 0) args["after_cpu_ms"] = double(outside.after[i]) / 1e6;
    if (outside.startup[i] >= 0) args["startup_cpu_ms"] = double(outside.startup[i]) / 1e6;
    w.span("fetch", "fetch", f.pid, f.tid ? f.tid : f.pid, f.start_ns, f.end_ns, std::move(args));
    threads[{f.pid, f.tid}].by_start.emplace_back(f.start_ns, i);
  }
  for (auto& [_, t] : threads) std::sort(t.by_start.begin(), t.by_start.end());
  // RETURNS: the fetch the read at `t` of (pid, tid) fell in, or -1.
  const auto fetch_at = [&](std::int64_t pid, std::int64_t tid, std::int64_t t) -> std::int64_t {
    auto it = threads.find({pid, tid});
    if (it == threads.end()) it = threads.find({pid, 0});  // fetches recorded without their thread
    if (it == threads.end()) return -1;
    const auto& v = it->second.by_start;
    auto after = std::upper_bound(v.begin(), v.end(), std::pair{t, std::size_t(-1)});
    if (after == v.begin()) return -1;
    const std::size_t i = std::prev(after)->second;
    return t <= log.fetches[i].end_ns ? std::int64_t(i) : -1;
  };

  // The job's code and libraries (Python's imports) are no part of its data: left out, and
  // their reads with them (a few thousand opens at most).
  std::set<std::uint64_t> code;
  FileNumbers numbers;
  ReadLogVisitor visit;
  visit.open = [&](const OpenRecord& o) {
    const std::uint64_t file = numbers.of(o.image, o.serial);
    if (is_code_path(o.path) || is_kernel_path(o.path)) {
      code.insert(file);
      return;
    }
    ++w.counts.opens;
    w.event({{"name", "open"},
             {"cat", "open"},
             {"ph", "i"},
             {"s", "t"},
             {"ts", w.us(o.open_ns)},
             {"pid", o.pid},
             {"tid", o.pid},
             {"args", {{"file", file}, {"path", o.path}, {"size", o.size}}}});
  };
  visit.read = [&](const ReadRecord& r) {
    const std::uint64_t file = numbers.of(r.image, r.serial);
    if (code.count(file)) return;
    ++w.counts.reads;
    const std::int64_t i = fetch_at(r.pid, r.tid, r.t0_ns);
    json args = {
        {"file", file}, {"offset", r.offset}, {"bytes", r.bytes}, {"pass", nullptr}, {"batch", nullptr}};
    if (i >= 0) {
      ++w.counts.reads_in_batches;
      args["pass"] = or_null(pass[std::size_t(i)]);
      args["batch"] = or_null(log.fetches[std::size_t(i)].batch);
    }
    w.span("read", "read", r.pid, r.tid, r.t0_ns, r.t1_ns, std::move(args));
  };
  for (const std::string& file : read_log_files(records_dir)) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw RunError("cannot read " + file);
    code.clear();  // one process's opens at a time: what it held is no other's
    numbers = FileNumbers();
    std::uint64_t torn = 0;
    parse_read_log(file, in, visit, &torn);
  }
  w.finish();
  return w.counts;
}

}  // namespace feedbench
