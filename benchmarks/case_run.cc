#include "case_run.h"

#include <cstdio>

#include "cluster_round.h"
#include "feedbench/base/clock.h"
#include "feedbench/base/error.h"
#include "feedbench/base/units.h"
#include "feedbench/io/page_cache.h"
#include "feedbench/io/skew.h"
#include "progress.h"

namespace feedbench {

CaseRun::CaseRun(const Case& c, RunContext& context, benchmark::State& state)
    : case_(c), context_(context), state_(state) {
  record_.case_name = c.name();
  record_.params = c.params;
}

void CaseRun::skip(const std::string& why) {
  state_.SkipWithError(why.c_str());
  record_.skipped = why;
  context_.log.add(std::move(record_));
}

std::shared_ptr<Throttle> CaseRun::throttle(const std::string& path_role) const {
  if (!context_.config) return nullptr;
  auto it = context_.config->throttle.find(path_role);
  return it == context_.config->throttle.end() ? nullptr : std::make_shared<Throttle>(it->second);
}

const FileSet* CaseRun::find_selection(const std::string& path_role, std::string* why) const {
  const FileSet* files = context_.files_for(path_role);
  if (!files) {
    *why = "no " + path_role + " root in the config's dataset";
    return nullptr;
  }
  if (files->empty()) {
    *why = "the " + path_role + " selection holds no files";
    return nullptr;
  }
  return files;
}

void CaseRun::note_stop(const std::string& why) {
  if (why_.empty()) why_ = why;
}

void CaseRun::need_cuda_device() {
  if (stopping()) return;
  std::string why;
  cuda_device_count(&why);  // "no CUDA device: ..."
  note_stop(why);
}

CaseRun::FilesToRead CaseRun::files_to_read(const std::string& path_role) {
  FilesToRead out;
  std::string why;
  out.selected = find_selection(path_role, &why);
  out.tiered = partial_cache_files(path_role, out.selected, &why);
  note_stop(why);
  return out;
}

void CaseRun::share_among_ranks(const FileSet* selection, std::uint64_t round, ShareOfRound& share) {
  if (stopping() || !many()) return;
  note_stop(share_round(cluster(), *selection, share_mode(), case_.seed, round, share));
}

std::string CaseRun::share_mode() const { return context_.config ? context_.config->share : "per_rank"; }

std::uint64_t CaseRun::repetition() const { return context_.log.all(record_.case_name).size(); }

std::optional<double> CaseRun::prepare(const std::string& cache_state, const FileSet& files,
                                       const FileSet& host_files) {
  return many() ? prepare_cache_state_per_host(cache_state, host_files)
                : prepare_cache_state(cache_state, files);
}

std::optional<FileSet> CaseRun::partial_cache_files(const std::string& path_role, const FileSet* selected,
                                                    std::string* why) const {
  if (!selected || path_role != "cache" || !context_.partial_cache || !context_.source) return std::nullopt;
  // Its files are ranked and counted by their index in the source; a rank's share is not.
  if (context_.ranks().size() > 1)
    *why = "a partial cache (dataset.partial_cache) is read by one process only, not across ranks";
  return tiered_files(*context_.source, *selected);
}

void CaseRun::record_hit_share(const FileSet& files, const std::vector<std::uint64_t>& reads, bool tiered,
                               const std::string& path_role) {
  if (!context_.cache) return;
  FB_CHECK(reads.size() == files.size(), "one read count per file");
  const std::vector<bool> held = held_by(files, *context_.cache);
  std::uint64_t draws = 0, hits = 0, hit_bytes = 0, bytes = 0;
  for (std::size_t f = 0; f < files.size(); ++f) {
    draws += reads[f];
    bytes += reads[f] * files.file_size(f);
    if (held[f]) hits += reads[f], hit_bytes += reads[f] * files.file_size(f);
  }
  nlohmann::json& extra = record_.extra;
  extra["hit_share"] = draws ? double(hits) / double(draws) : 0.0;
  extra["hit_share_bytes"] = bytes ? double(hit_bytes) / double(bytes) : 0.0;
  extra["served_by"] = tiered ? "cache where it holds the file, else source" : path_role;
}

const FileSet* CaseRun::selection(const std::string& path_role) {
  std::string why;
  const FileSet* files = find_selection(path_role, &why);
  if (!files) skip(why);
  return files;
}

bool CaseRun::agree(const std::string& why) {
  Cluster& cluster = context_.ranks();
  const std::string first = cluster.size() > 1 ? first_failure(cluster, why) : why;
  if (first.empty()) return true;
  skip(first);
  return false;
}

namespace {

struct HostPrepared {
  std::uint64_t resident_bytes;
  std::uint64_t total_bytes;
  std::uint8_t leader;
  FixedText<64> method;
};

}  // namespace

std::optional<double> CaseRun::prepare_cache_state_per_host(const std::string& cache_state,
                                                            const FileSet& host_files) {
  Cluster& cluster = context_.ranks();
  auto phase = [this](const char* what) {
    return context_.progress ? context_.progress->phase(what) : Progress{};
  };
  Residency r;
  std::string why;
  const std::int64_t start = now_ns();
  if (cluster.host_leader()) {
    try {
      if (cache_state == "cold") r = evict(host_files, phase("evicting"));
      else if (cache_state == "warm") r = warm(host_files, phase("warming"));
      else r = measure_residency(host_files, phase("measuring residency"));
    } catch (const RunError& e) {
      why = "preparing the " + cache_state + " state: " + e.what();
    }
  }
  if (!agree(why)) return std::nullopt;  // also the barrier: every host is prepared past here
  HostPrepared mine{r.resident_bytes, r.total_bytes, std::uint8_t(cluster.host_leader() ? 1 : 0), {}};
  mine.method.set(r.method);
  const std::vector<HostPrepared> all = all_gather(cluster, mine);
  nlohmann::json hosts = nlohmann::json::array();
  double worst = cache_state == "cold" ? 0.0 : 1.0;
  bool achieved = true;
  std::string method;
  for (std::size_t rank = 0; rank < all.size(); ++rank) {
    if (!all[rank].leader) continue;
    const Residency host{all[rank].resident_bytes, all[rank].total_bytes, all[rank].method.str()};
    const double f = host.fraction();
    const bool ok = cache_state == "cold"   ? f <= kColdMaxResident
                    : cache_state == "warm" ? f >= kWarmMinResident
                                            : true;
    achieved = achieved && ok;
    worst = cache_state == "cold" ? std::max(worst, f) : cache_state == "warm" ? std::min(worst, f) : f;
    if (method.empty()) method = host.method;
    const int h = cluster.host_of_rank()[rank];
    hosts.push_back({{"host", cluster.host_names()[std::size_t(h)]},
                     {"residency_before", f},
                     {"achieved", ok},
                     {"bytes", host.total_bytes}});
  }
  record_.cache = {{"requested", cache_state},
                   {"residency_before", worst},
                   {"achieved", achieved},
                   {"method", method},
                   {"prepare_s", double(now_ns() - start) * 1e-9},
                   {"hosts", hosts}};
  return worst;
}

std::optional<double> CaseRun::prepare_cache_state(const std::string& cache_state, const FileSet& files) {
  // What the case does before its round shows in the run's live line.
  auto phase = [this](const char* what) {
    return context_.progress ? context_.progress->phase(what) : Progress{};
  };
  Residency r;
  const std::int64_t start = now_ns();
  try {
    if (cache_state == "cold") r = evict(files, phase("evicting"));
    else if (cache_state == "warm") r = warm(files, phase("warming"));
    else r = measure_residency(files, phase("measuring residency"));
  } catch (const RunError& e) {
    skip("preparing the " + cache_state + " state: " + e.what());
    return std::nullopt;
  }
  const double f = r.fraction();
  const bool achieved = cache_state == "cold"   ? f <= kColdMaxResident
                        : cache_state == "warm" ? f >= kWarmMinResident
                                                : true;
  // Untimed, but it is most of a cold case's wall time on millions of files: recorded.
  const double prepare_s = double(now_ns() - start) * 1e-9;
  record_.cache = {{"requested", cache_state},
                   {"residency_before", f},
                   {"achieved", achieved},
                   {"method", r.method},
                   {"prepare_s", prepare_s}};
  return f;
}

void CaseRun::record_moot_cache_state(const std::string& cache_state, const std::string& why) {
  record_.cache = {
      {"requested", cache_state}, {"achieved", true}, {"method", "none"}, {"prepare_s", 0.0}, {"moot", why}};
}

bool CaseRun::cache_state_achieved() const {
  return !record_.cache.is_object() || record_.cache.value("achieved", true);
}

void CaseRun::record_reads(const ReadTally& read) {
  nlohmann::json& extra = record_.extra;
  extra["round_complete"] = read.complete();
  extra["bytes_planned"] = read.bytes_planned;
  extra["bytes_read"] = read.bytes;
  if (!read.complete()) extra["incomplete"] = read.incomplete;
  if (!read.reads_files) return;
  nlohmann::json& noatime = extra["noatime"];
  if (read.files_opened == 0) noatime = nullptr;  // nothing opened
  else if (read.noatime_opens == read.files_opened) noatime = true;
  else if (read.noatime_opens == 0) noatime = false;
  else noatime = "partial";
}

bool CaseRun::round_complete() const { return record_.extra.value("round_complete", true); }

void CaseRun::counter(const char* name, double value, bool binary) {
  state_.counters[name] =
      benchmark::Counter(value, benchmark::Counter::kDefaults,
                         binary ? benchmark::Counter::kIs1024 : benchmark::Counter::kIs1000);
}

void CaseRun::copy_counters(const SinkStats& d) {
  const double copy_s = d.copy_seconds();
  counter("h2d_bytes_per_second", copy_s > 0 ? double(d.bytes) / copy_s : 0, /*binary=*/true);
  counter("copy_p50_us", d.copy_ns.quantile(0.50) / 1e3);
  counter("copy_p99_us", d.copy_ns.quantile(0.99) / 1e3);
}

void CaseRun::finish(const std::string& label) {
  std::string notes;
  auto note = [&notes](const std::string& text) { notes += (notes.empty() ? "" : "; ") + text; };
  if (!cache_state_achieved()) {
    char text[96];
    std::snprintf(text, sizeof text, "%s NOT achieved: %.1f%% resident",
                  record_.cache["requested"].get<std::string>().c_str(),
                  100.0 * record_.cache["residency_before"].get<double>());
    note(text);
  }
  if (!round_complete())
    note("incomplete round: read " + format_size(record_.extra.value("bytes_read", 0.0)) + " of " +
         format_size(record_.extra.value("bytes_planned", 0.0)));
  std::string text = label;
  if (!notes.empty()) text = label.empty() ? notes : label + " (" + notes + ")";
  if (!text.empty()) state_.SetLabel(text);
  context_.log.add(std::move(record_));
}

}  // namespace feedbench
