#include "case_run.h"

#include <cstdio>

#include "feedbench/error.h"
#include "feedbench/page_cache.h"
#include "feedbench/units.h"
#include "progress.h"

namespace feedbench {

CaseRun::CaseRun(const Case& c, RunContext& context, benchmark::State& state)
    : context_(context), state_(state) {
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

const FileSet* CaseRun::selection(const std::string& path_role) {
  const FileSet* files = context_.files_for(path_role);
  if (!files) {
    skip("no " + path_role + " root in the config's dataset");
    return nullptr;
  }
  if (files->empty()) {
    skip("the " + path_role + " selection holds no files");
    return nullptr;
  }
  if (path_role == "cache" && !context_.cache_refusal.empty() && !context_.allow_unverified_cache) {
    skip(context_.cache_refusal);
    return nullptr;
  }
  return files;
}

std::optional<double> CaseRun::prepare_cache_state(const std::string& cache_state,
                                                   const FileSet& files) {
  ProgressLine line(context_.show_progress);
  Residency r;
  try {
    if (cache_state == "cold")
      r = evict(files, line.callback("evicting"));
    else if (cache_state == "warm")
      r = warm(files, line.callback("warming"));
    else
      r = measure_residency(files, line.callback("measuring residency"));
  } catch (const RunError& e) {
    line.clear();
    skip("preparing the " + cache_state + " state: " + e.what());
    return std::nullopt;
  }
  line.clear();
  const double f = r.fraction();
  const bool achieved = cache_state == "cold"   ? f <= kColdMaxResident
                        : cache_state == "warm" ? f >= kWarmMinResident
                                                : true;
  record_.cache = {{"requested", cache_state}, {"residency_before", f}, {"achieved", achieved},
                   {"method", r.method}};
  return f;
}

bool CaseRun::cache_state_achieved() const {
  return !record_.cache.is_object() || record_.cache.value("achieved", true);
}

void CaseRun::record_round(std::uint64_t bytes_planned, std::uint64_t bytes_read, bool complete,
                           const std::string& why) {
  nlohmann::json& extra = record_.extra;
  extra["round_complete"] = complete;
  extra["bytes_planned"] = bytes_planned;
  extra["bytes_read"] = bytes_read;
  if (!complete) extra["incomplete"] = why;
}

bool CaseRun::round_complete() const { return record_.extra.value("round_complete", true); }

void CaseRun::record_opens(std::uint64_t noatime_opens, std::uint64_t plain_opens) {
  nlohmann::json& noatime = record_.extra["noatime"];
  if (noatime_opens + plain_opens == 0) noatime = nullptr;  // nothing opened
  else if (plain_opens == 0) noatime = true;
  else if (noatime_opens == 0) noatime = false;
  else noatime = "partial";
}

void CaseRun::counter(const char* name, double value, bool binary) {
  state_.counters[name] = benchmark::Counter(
      value, benchmark::Counter::kDefaults,
      binary ? benchmark::Counter::kIs1024 : benchmark::Counter::kIs1000);
}

void CaseRun::finish(const std::string& label, bool flag_cache_state) {
  std::string notes;
  auto note = [&notes](const std::string& text) { notes += (notes.empty() ? "" : "; ") + text; };
  if (flag_cache_state && !cache_state_achieved()) {
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
