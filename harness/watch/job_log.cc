// Reads a watched job's record files back (see job_log.h).
#include "feedbench/watch/job_log.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "feedbench/base/error.h"

namespace feedbench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// RETURNS: r[key] as an integer. Throws InputError at `where` when absent or not one.
std::int64_t integer(const json& r, const char* key, const std::string& where) {
  auto it = r.find(key);
  if (it == r.end() || !it->is_number_integer())
    throw InputError(where + ": record \"" + r.value("e", "") + "\" needs an integer \"" + key + "\"");
  return it->get<std::int64_t>();
}

// RETURNS: r[key] as a time or duration in ns: an integer from 0 (CLOCK_MONOTONIC never reads
// below it), so that differences of two never overflow. Throws InputError at `where`.
std::int64_t nanoseconds(const json& r, const char* key, const std::string& where) {
  const std::int64_t v = integer(r, key, where);
  if (v < 0)
    throw InputError(where + ": \"" + key + "\" is a time or duration in ns, got " + std::to_string(v));
  return v;
}

// RETURNS: r[key] as a boolean, `otherwise` when absent or null. Throws InputError at `where`
// for any other type.
bool boolean(const json& r, const char* key, bool otherwise, const std::string& where) {
  auto it = r.find(key);
  if (it == r.end() || it->is_null()) return otherwise;
  if (!it->is_boolean())
    throw InputError(where + ": \"" + key + "\" must be true or false, got " + it->dump());
  return it->get<bool>();
}

// RETURNS: r[key] as a string, "" when absent or null. Throws InputError at `where` otherwise.
std::string text(const json& r, const char* key, const std::string& where) {
  auto it = r.find(key);
  if (it == r.end() || it->is_null()) return "";
  if (!it->is_string()) throw InputError(where + ": \"" + key + "\" must be a string, got " + it->dump());
  return it->get<std::string>();
}

std::optional<std::int64_t> optional_integer(const json& r, const char* key, const std::string& where) {
  auto it = r.find(key);
  if (it == r.end() || it->is_null()) return std::nullopt;
  return integer(r, key, where);
}

struct Reader {
  JobLog log;
  // (pid, process image, the probe's pass serial): a launcher that execs the job runs two images
  // under one pid, each probe numbering its passes from 1.
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t>;
  std::map<Key, JobEpoch> epochs;
  std::vector<std::int64_t> fetch_images;  // per fetch, its process image

  JobEpoch& epoch_of(std::int64_t pid, std::int64_t image, std::int64_t id, const std::string& where) {
    auto it = epochs.find({pid, image, id});
    if (it == epochs.end())
      throw InputError(where + ": a record of pass " + std::to_string(id) + " before the pass began");
    return it->second;
  }

  void record(const json& r, const std::string& where) {
    if (!r.is_object() || !r.contains("e") || !r.at("e").is_string())
      throw InputError(where + ": expected a record object with a string \"e\"");
    const std::string e = r.at("e").get<std::string>();
    const std::int64_t pid = integer(r, "pid", where);
    const std::int64_t image = optional_integer(r, "img", where).value_or(0);
    if (e == "epoch") {
      JobEpoch p;
      p.id = integer(r, "it", where);
      p.loader = std::uint64_t(integer(r, "loader", where));
      p.start_ns = nanoseconds(r, "t", where);
      p.batch_size = optional_integer(r, "batch_size", where).value_or(0);
      p.num_workers = integer(r, "num_workers", where);
      p.prefetch_factor = optional_integer(r, "prefetch_factor", where);
      p.pin_memory = boolean(r, "pin_memory", false, where);
      p.persistent_workers = boolean(r, "persistent_workers", false, where);
      p.start_method = text(r, "start_method", where);
      p.pid = pid;
      p.iter = std::uint64_t(optional_integer(r, "iter", where).value_or(0));
      if (auto w = r.find("workers"); w != r.end() && !w->is_null()) {
        if (!w->is_array())
          throw InputError(where + ": \"workers\" must be a list of pids, got " + w->dump());
        for (const json& x : *w) {
          if (!x.is_number_integer())
            throw InputError(where + ": \"workers\" must be a list of pids, got " + w->dump());
          p.workers.push_back(x.get<std::int64_t>());
        }
      }
      epochs[{pid, image, p.id}] = std::move(p);
    } else if (e == "batch") {
      JobEpoch& p = epoch_of(pid, image, integer(r, "it", where), where);
      JobEpoch::Batch b{integer(r, "k", where), nanoseconds(r, "ask", where), nanoseconds(r, "got", where)};
      if (b.got_ns < b.ask_ns) throw InputError(where + ": a batch got before it was asked for");
      if (r.contains("cask") && r.contains("cgot")) {
        const std::int64_t cask = nanoseconds(r, "cask", where), cgot = nanoseconds(r, "cgot", where);
        if (cgot < cask)
          throw InputError(where + ": a batch's \"cgot\" below its \"cask\" (CPU time runs back)");
        b.cpu_ns = cgot - cask;
      }
      if (r.contains("step_cpu")) b.step_cpu_ns = nanoseconds(r, "step_cpu", where);
      p.batches.push_back(b);
    } else if (e == "end") {
      epoch_of(pid, image, integer(r, "it", where), where).end_ns = nanoseconds(r, "t", where);
    } else if (e == "fetch") {
      JobFetch f{pid,
                 integer(r, "worker", where),
                 nanoseconds(r, "t0", where),
                 nanoseconds(r, "t1", where),
                 nanoseconds(r, "cpu", where),
                 r.contains("runq") ? nanoseconds(r, "runq", where) : 0,
                 integer(r, "n", where)};
      if (f.end_ns < f.start_ns) throw InputError(where + ": a fetch that ended before it began");
      f.tid = optional_integer(r, "tid", where).value_or(0);
      f.batch = optional_integer(r, "batch", where).value_or(-1);
      f.pass = optional_integer(r, "pass", where).value_or(-1);
      f.resumes = optional_integer(r, "resumes", where).value_or(-1);
      if (r.contains("pcpu")) f.process_cpu_ns = nanoseconds(r, "pcpu", where);
      log.fetches.push_back(f);
      fetch_images.push_back(image);
    } else if (e == "worker_end") {
      log.worker_ends.push_back({pid, nanoseconds(r, "t", where), nanoseconds(r, "pcpu", where)});
    } else if (e == "probe_error") {
      log.probe_errors.push_back(text(r, "what", where));
    } else {
      throw InputError(where + ": unknown record kind \"" + e + "\" (record format version " +
                       std::to_string(kJobLogVersion) + ")");
    }
  }

  void file(const JobRecordFile& f) {
    const std::string& all = f.text;
    std::size_t at = 0, line = 0;
    while (at < all.size()) {
      ++line;
      const std::size_t nl = all.find('\n', at);
      if (nl == std::string::npos) {  // cut short: the process died mid-write
        ++log.torn_lines;
        break;
      }
      const std::string where = f.name + ":" + std::to_string(line);
      json r;
      try {
        r = json::parse(all.begin() + std::ptrdiff_t(at), all.begin() + std::ptrdiff_t(nl));
      } catch (const json::exception& ex) {
        throw InputError(where + ": malformed record: " + ex.what());
      }
      record(r, where);
      at = nl + 1;
    }
    ++log.processes;
  }
};

}  // namespace

std::vector<std::int64_t> fetch_passes(const JobLog& log) {
  std::map<std::int64_t, std::vector<std::int64_t>> served;  // worker pid -> its passes, in order
  for (const JobEpoch& e : log.epochs)
    for (const std::int64_t w : e.workers) served[w].push_back(e.id);
  std::vector<std::int64_t> out;
  out.reserve(log.fetches.size());
  for (const JobFetch& f : log.fetches) {
    std::int64_t pass = f.pass;
    if (pass < 0) {
      auto it = served.find(f.pid);
      const std::size_t k = std::size_t(std::max<std::int64_t>(f.resumes, 0));
      if (it != served.end() && k < it->second.size()) pass = it->second[k];
    }
    out.push_back(pass);
  }
  return out;
}

JobLog parse_job_log(const std::vector<JobRecordFile>& files) {
  Reader reader;
  for (const JobRecordFile& f : files) reader.file(f);
  // The passes numbered anew from 1 in the order they began, over every process and image (the
  // probe's own numbers restart in each): a fetch that names its pass is renamed with it.
  std::vector<std::pair<Reader::Key, JobEpoch*>> order;
  for (auto& [key, p] : reader.epochs) order.emplace_back(key, &p);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second->start_ns < b.second->start_ns; });
  std::map<Reader::Key, std::int64_t> renamed;
  for (std::size_t i = 0; i < order.size(); ++i) {
    renamed[order[i].first] = std::int64_t(i) + 1;
    order[i].second->id = std::int64_t(i) + 1;
    reader.log.epochs.push_back(std::move(*order[i].second));
  }
  for (std::size_t i = 0; i < reader.log.fetches.size(); ++i) {
    JobFetch& f = reader.log.fetches[i];
    if (f.pass < 0) continue;
    const auto it = renamed.find({f.pid, reader.fetch_images[i], f.pass});
    f.pass = it == renamed.end() ? -1 : it->second;
  }
  return reader.log;
}

JobLog read_job_log(const std::string& dir) {
  std::error_code ec;
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".jsonl") paths.push_back(entry.path());
  if (ec) throw InputError(dir + ": cannot list the job's records: " + ec.message());
  std::sort(paths.begin(), paths.end());
  std::vector<JobRecordFile> files;
  for (const fs::path& p : paths) {
    std::ifstream in(p, std::ios::binary);
    if (!in) throw InputError(p.string() + ": cannot read");
    std::stringstream text;
    text << in.rdbuf();
    files.push_back({p.string(), text.str()});
  }
  return parse_job_log(files);
}

}  // namespace feedbench
