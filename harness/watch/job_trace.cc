// A watched job's trace in Chrome's trace-event format (see job_trace.h).
#include "feedbench/watch/job_trace.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "feedbench/base/error.h"
#include "feedbench/base/file_system.h"
#include "feedbench/base/open_beneath.h"
#include "feedbench/base/unique_fd.h"
#include "feedbench/dataset/jpeg.h"
#include "feedbench/results/recorded_variables.h"
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

// RETURNS: the length of the valid UTF-8 sequence at p[i] (2 to 4 bytes), 0 when there is none
// (a stray continuation byte, an overlong form, a surrogate, beyond U+10FFFF, cut short).
std::size_t utf8_sequence(std::string_view p, std::size_t i) {
  const auto c = static_cast<unsigned char>(p[i]);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) n = 3, lo = 0xA0;
  else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) n = 3;
  else if (c == 0xED) n = 3, hi = 0x9F;
  else if (c == 0xF0) n = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else if (c == 0xF4) n = 4, hi = 0x8F;
  else return 0;
  if (i + n > p.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(p[i + k]);
    if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return 0;
  }
  return n;
}

// RETURNS: `command` naming no folder of this machine: `root` (the data folder) as ".", a path
// beneath it relative to it, and any other absolute path as its last name (/usr/bin/python3 as
// python3). A path starts an argument or follows a space, '=', ':', ',' or a quote.
std::vector<std::string> relative_command(const std::vector<std::string>& command, const std::string& root) {
  constexpr std::string_view kBefore = " \t\n=:,'\"", kAfter = " \t\n:,'\"";
  std::vector<std::string> out;
  for (const std::string& a : command) {
    std::string r;
    for (std::size_t i = 0; i < a.size();) {
      if (a[i] != '/' || (i > 0 && kBefore.find(a[i - 1]) == std::string_view::npos)) {
        r += a[i++];
        continue;
      }
      std::size_t end = a.find_first_of(kAfter, i);
      if (end == std::string::npos) end = a.size();
      std::string path = a.substr(i, end - i);
      while (path.size() > 1 && path.back() == '/') path.pop_back();
      if (path == root) r += ".";
      else if (path.starts_with(root + "/")) r += path.substr(root.size() + 1);
      else r += path == "/" ? path : path.substr(path.rfind('/') + 1);
      i = end;
    }
    out.push_back(std::move(r));
  }
  return out;
}

// The dimensions of each JPEG the job read, read from its header once the job is gone (the job
// is never slowed by it), once a path. The recorder's paths are the kernel's, with no symbolic
// link on the way: each is opened beneath "/" following none, so a link the job left where it
// read a file is not followed elsewhere; O_NONBLOCK, so a FIFO left there does not hold watch.
// A file gone, unreadable, not regular or not a JPEG has no dimensions, and is no failure.
class JpegHeaders {
 public:
  JpegHeaders() : root_(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) {}

  // RETURNS: the dimensions of the JPEG at the absolute `path`, or nullopt.
  std::optional<JpegDimensions> of(const std::string& path) {
    const auto [it, added] = known_.try_emplace(path);
    if (added) it->second = read(path);
    return it->second;
  }

 private:
  std::optional<JpegDimensions> read(const std::string& path) const {
    if (!root_ || path.size() < 2 || path.front() != '/') return std::nullopt;
    const UniqueFd fd(
        open_beneath(root_.get(), path.substr(1), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd) return std::nullopt;
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    return read_jpeg_dimensions(fd.get());
  }

  UniqueFd root_;
  std::unordered_map<std::string, std::optional<JpegDimensions>> known_;
};

// The workers' fetches by thread, to place each read in the fetch (and so the batch) it fell in.
class FetchIndex {
 public:
  explicit FetchIndex(const JobLog& log) : log_(log) {
    for (std::size_t i = 0; i < log.fetches.size(); ++i)
      threads_[{log.fetches[i].pid, log.fetches[i].tid}].by_start.emplace_back(log.fetches[i].start_ns, i);
    for (auto& [_, t] : threads_) std::sort(t.by_start.begin(), t.by_start.end());
  }
  // RETURNS: the fetch the read at `t` of (pid, tid) fell in, or -1.
  std::int64_t at(std::int64_t pid, std::int64_t tid, std::int64_t t) const {
    auto it = threads_.find({pid, tid});
    if (it == threads_.end()) it = threads_.find({pid, 0});  // fetches recorded without their thread
    if (it == threads_.end()) return -1;
    const auto& v = it->second.by_start;
    auto after = std::upper_bound(v.begin(), v.end(), std::pair{t, std::size_t(-1)});
    if (after == v.begin()) return -1;
    const std::size_t i = std::prev(after)->second;
    return t <= log_.fetches[i].end_ns ? std::int64_t(i) : -1;
  }

 private:
  const JobLog& log_;
  std::map<std::pair<std::int64_t, std::int64_t>, ThreadFetches> threads_;
};

// Parses every read recorder file under `records_dir` with `visit`, calling `next_file` before each.
void for_each_read_log(const std::string& records_dir, const ReadLogVisitor& visit,
                       const std::function<void()>& next_file) {
  for (const std::string& file : read_log_files(records_dir)) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw RunError("cannot read " + file);
    next_file();
    std::uint64_t torn = 0;
    parse_read_log(file, in, visit, &torn);
  }
}

// RETURNS: the job's data folder as a replay finds it: the deepest folder holding every file a
// batch's fetch read bytes of (a pass over the reads). Throws InputError when there is none.
std::string batch_data_root(const JobLog& log, const std::string& records_dir, const FetchIndex& fetches,
                            const std::vector<std::int64_t>& pass) {
  std::string root;
  std::map<std::pair<std::int64_t, std::uint64_t>, std::string> opened;
  bool any = false;
  ReadLogVisitor pre;
  pre.open = [&](const OpenRecord& o) {
    if (!is_code_path(o.path) && !is_kernel_path(o.path)) opened[{o.image, o.serial}] = o.path;
  };
  pre.read = [&](const ReadRecord& r) {
    if (r.bytes <= 0) return;
    const std::int64_t i = fetches.at(r.pid, r.tid, r.t0_ns);
    if (i < 0 || pass[std::size_t(i)] < 0 || log.fetches[std::size_t(i)].batch < 0) return;
    const auto it = opened.find({r.image, r.serial});
    if (it == opened.end()) return;
    root = any ? common_folder(root, folder_of(it->second)) : folder_of(it->second);
    any = true;
  };
  for_each_read_log(records_dir, pre, [&] { opened.clear(); });
  if (!any)
    throw InputError(
        "--trace-paths relative: the job's batches read no file, so there is no data folder for its paths "
        "to be relative to");
  if (root == "/")
    throw InputError(
        "--trace-paths relative: the job's batches read files in folders that share none below /, so there "
        "is no data folder for its paths to be relative to");
  return root;
}

}  // namespace

std::string encode_trace_path(std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(path.size());
  for (std::size_t i = 0; i < path.size();) {
    const auto c = static_cast<unsigned char>(path[i]);
    const std::size_t n = c < 0x80 ? (c < 0x20 || c == 0x7F || c == '%' ? 0 : 1) : utf8_sequence(path, i);
    if (n == 0) {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
    } else {
      out.append(path.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::optional<std::string> decode_trace_path(std::string_view text) {
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int h = hex(text[i + 1]), l = hex(text[i + 2]);
    if (h < 0 || l < 0 || (h == 0 && l == 0)) return std::nullopt;
    out += static_cast<char>(h * 16 + l);
    i += 2;
  }
  return out;
}

JobTraceCounts write_job_trace(const std::string& path, const JobLog& log, const std::string& records_dir,
                               std::int64_t origin_ns, const std::vector<std::string>& command,
                               const std::string& name, const JobTraceOptions& options) {
  Writer w(path, origin_ns);
  const std::vector<std::int64_t> pass = fetch_passes(log);
  const FetchIndex fetches(log);
  const std::string root = options.relative_paths ? batch_data_root(log, records_dir, fetches, pass) : "";
  w.counts.data_root = root;

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
  // The trace is made to be copied to other machines: no credential of the command travels.
  std::vector<std::string> shown = withhold_in_command(command, options.redact, environ);
  if (options.relative_paths) shown = relative_command(shown, root);
  json head = {{"format", kJobTraceFormat},
               {"version", kJobTraceVersion},
               {"origin_ns", origin_ns},
               {"name", name},
               {"command", shown}};
  if (options.relative_paths) head["paths"] = "relative";
  head["passes"] = passes;
  w.head(head);

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

  // The workers' fetches.
  const OutsideCpu outside = outside_cpu(log);
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
  }

  // The job's code and libraries (Python's imports) are no part of its data: left out, and
  // their reads with them (a few thousand opens at most); with relative paths, files outside
  // the data folder too.
  std::set<std::uint64_t> code;
  FileNumbers numbers;
  JpegHeaders headers;
  ReadLogVisitor visit;
  visit.open = [&](const OpenRecord& o) {
    const std::uint64_t file = numbers.of(o.image, o.serial);
    if (is_code_path(o.path) || is_kernel_path(o.path) ||
        (options.relative_paths && !o.path.starts_with(root + "/"))) {
      code.insert(file);
      return;
    }
    ++w.counts.opens;
    const std::string shown_path = options.relative_paths ? o.path.substr(root.size() + 1) : o.path;
    json args = {{"file", file}, {"path", encode_trace_path(shown_path)}, {"size", o.size}};
    if (const auto dims = headers.of(o.path)) {
      args["width"] = dims->width;
      args["height"] = dims->height;
      ++w.counts.jpeg_dimensions;
    }
    w.event({{"name", "open"},
             {"cat", "open"},
             {"ph", "i"},
             {"s", "t"},
             {"ts", w.us(o.open_ns)},
             {"pid", o.pid},
             {"tid", o.pid},
             {"args", std::move(args)}});
  };
  visit.read = [&](const ReadRecord& r) {
    const std::uint64_t file = numbers.of(r.image, r.serial);
    if (code.count(file)) return;
    ++w.counts.reads;
    const std::int64_t i = fetches.at(r.pid, r.tid, r.t0_ns);
    json args = {
        {"file", file}, {"offset", r.offset}, {"bytes", r.bytes}, {"pass", nullptr}, {"batch", nullptr}};
    if (i >= 0) {
      ++w.counts.reads_in_batches;
      args["pass"] = or_null(pass[std::size_t(i)]);
      args["batch"] = or_null(log.fetches[std::size_t(i)].batch);
    }
    w.span("read", "read", r.pid, r.tid, r.t0_ns, r.t1_ns, std::move(args));
  };
  // One process's opens at a time: what it held is no other's.
  for_each_read_log(records_dir, visit, [&] {
    code.clear();
    numbers = FileNumbers();
  });
  w.finish();
  return w.counts;
}

}  // namespace feedbench
