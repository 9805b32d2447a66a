#include "collecting_reporter.h"

#include <cmath>
#include <ctime>
#include <iostream>
#include <regex>
#include <sstream>

#include "feedbench/base/error.h"
#include "feedbench/base/text.h"

#ifndef FEEDBENCH_BENCHMARK_VERSION
#define FEEDBENCH_BENCHMARK_VERSION "unknown"
#endif

namespace feedbench {

namespace {

// Google Benchmark's line about its own build, which its console reporter prints raw.
constexpr const char* kDebugWarning = "***WARNING*** Library was built as DEBUG.";

}  // namespace

const char* const kLibraryDebugNote =
    "Google Benchmark was built as DEBUG (Debian's package is); feedbench times every round "
    "with its own clock (manual time) and computes its counters from it, so its figures are "
    "not affected.";

std::string library_build_type(const benchmark::BenchmarkReporter::Context& context) {
  // JSONReporter writes "library_build_type" from the NDEBUG of the library's own build,
  // which no header shows: ask it, into a string, and read the field back.
  std::ostringstream out, err;
  benchmark::JSONReporter reporter;
  reporter.SetOutputStream(&out);
  reporter.SetErrorStream(&err);
  reporter.ReportContext(context);
  static const std::regex field(R"re("library_build_type"\s*:\s*"([^"]*)")re");
  std::smatch m;
  const std::string text = out.str();
  return std::regex_search(text, m, field) ? m[1].str() : "unknown";
}

CollectingReporter::CollectingReporter(std::unique_ptr<benchmark::BenchmarkReporter> display,
                                       const RunLog& log)
    : display_(std::move(display)), log_(log) {
  if (display_) {
    display_->SetOutputStream(&std::cout);
    display_->SetErrorStream(&std::cerr);
  }
}

nlohmann::json CollectingReporter::context_to_json(const Context& context) {
  const benchmark::CPUInfo& cpu = context.cpu_info;
  nlohmann::ordered_json j;
  j["date"] = local_date_time();
  j["host_name"] = context.sys_info.name;
  if (Context::executable_name) j["executable"] = Context::executable_name;
  j["num_cpus"] = std::int64_t(cpu.num_cpus);
  j["mhz_per_cpu"] = std::int64_t(std::llround(cpu.cycles_per_second / 1000000.0));
  if (cpu.scaling != benchmark::CPUInfo::Scaling::UNKNOWN)
    j["cpu_scaling_enabled"] = cpu.scaling == benchmark::CPUInfo::Scaling::ENABLED;
  j["caches"] = nlohmann::ordered_json::array();
  for (const auto& c : cpu.caches)
    j["caches"].push_back({{"type", c.type},
                           {"level", std::int64_t(c.level)},
                           {"size", std::int64_t(c.size)},
                           {"num_sharing", std::int64_t(c.num_sharing)}});
  j["load_avg"] = cpu.load_avg;
  j["library_build_type"] = library_build_type(context);
  j["library_version"] = FEEDBENCH_BENCHMARK_VERSION;
  if (j["library_build_type"] == "debug") j["library_build_note"] = kLibraryDebugNote;
  return nlohmann::json(j);
}

BenchmarkEntry CollectingReporter::to_entry(const Run& run, const RunLog& log) {
  BenchmarkEntry e;
  e.name = run.benchmark_name();
  e.run_name = run.run_name.str();
  const bool aggregate = run.run_type == Run::RT_Aggregate;
  e.run_type = aggregate ? "aggregate" : "iteration";
  e.aggregate_name = aggregate ? run.aggregate_name : "";
  e.family_index = run.family_index;
  e.per_family_instance_index = run.per_family_instance_index;
  e.repetitions = run.repetitions;
  e.repetition_index = aggregate ? -1 : run.repetition_index;
  e.threads = run.threads;
  e.iterations = std::int64_t(run.iterations);
  if (aggregate && run.aggregate_unit == benchmark::kPercentage) {
    // The coefficient of variation: a fraction, not a time (as JSONReporter writes it).
    e.real_time = run.real_accumulated_time;
    e.cpu_time = run.cpu_accumulated_time;
  } else {
    e.real_time = run.GetAdjustedRealTime();
    e.cpu_time = run.GetAdjustedCPUTime();
  }
  e.time_unit = benchmark::GetTimeUnitString(run.time_unit);
  for (const auto& [key, counter] : run.counters) e.counters[key] = counter.value;
  e.error_occurred = run.error_occurred;
  e.error_message = run.error_message;
  e.label = run.report_label;

  // The run verb registers each case under its canonical name: that is the join key.
  e.case_name = run.run_name.function_name;
  e.cache = nullptr;
  if (aggregate) {
    std::vector<const CaseRecord*> all = log.all(e.case_name);
    if (!all.empty()) e.params = all.front()->params;
    return e;
  }
  if (const CaseRecord* r = log.find(e.case_name, run.repetition_index)) {
    e.params = r->params;
    e.cache = r->cache;
    e.latency = r->latency;
    e.extra = r->extra.is_object() ? r->extra : nlohmann::json::object();
    if (!r->skipped.empty() && !e.error_occurred) {
      e.error_occurred = true;
      e.error_message = r->skipped;
    }
  } else if (std::vector<const CaseRecord*> all = log.all(e.case_name); !all.empty()) {
    e.params = all.front()->params;  // a skipped repetition left no record of its own
  }
  return e;
}

bool CollectingReporter::ReportContext(const Context& context) {
  context_ = context_to_json(context);
  if (!display_) return true;
  // The display's context block goes through a buffer, so that the library's raw DEBUG
  // warning is replaced by one line that says what it means for feedbench's figures.
  std::ostream& err = display_->GetErrorStream();
  std::ostringstream block;
  display_->SetErrorStream(&block);
  const bool ok = display_->ReportContext(context);
  display_->SetErrorStream(&err);
  std::istringstream lines(block.str());
  bool warned = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(kDebugWarning, 0) == 0) {
      if (!warned) err << "note: " << kLibraryDebugNote << "\n";
      warned = true;
      continue;
    }
    err << line << (lines.eof() ? "" : "\n");
  }
  err.flush();
  return ok;
}

void CollectingReporter::ReportRuns(const std::vector<Run>& runs) {
  // Google Benchmark's aggregates (mean, median, stddev, cv) fold every repetition, excluded
  // ones included: feedbench's readers fold the repetitions themselves and Google Benchmark's
  // compare.py compares repetitions, so where repetitions were reported the aggregates are only
  // shown, not kept (they were more than a third of a result file). They are kept where they
  // are all there is (--benchmark_display_aggregates_only).
  const std::size_t first = entries_.size();
  for (const Run& run : runs) {
    if (run.run_type != Run::RT_Aggregate) with_repetitions_.insert(run.run_name.str());
    else if (with_repetitions_.count(run.run_name.str())) continue;
    entries_.push_back(to_entry(run, log_));
  }
  if (!display_ && !view_) return;
  if (progress_) progress_->suspend();
  if (display_) {
    display_->ReportRuns(runs);
    display_->GetOutputStream().flush();
  }
  if (view_) view_(std::vector<BenchmarkEntry>(entries_.begin() + std::ptrdiff_t(first), entries_.end()));
  if (progress_) progress_->resume();
}

void CollectingReporter::Finalize() {
  if (display_) display_->Finalize();
}

std::vector<BenchmarkEntry> CollectingReporter::take_entries() {
  std::vector<BenchmarkEntry> out;
  out.swap(entries_);
  return out;
}

std::unique_ptr<benchmark::BenchmarkReporter> make_display_reporter(const std::string& format, bool color,
                                                                    bool tabular) {
  std::unique_ptr<benchmark::BenchmarkReporter> r;
  if (format == "console") {
    int opts = benchmark::ConsoleReporter::OO_None;
    if (color) opts |= benchmark::ConsoleReporter::OO_Color;
    if (tabular) opts |= benchmark::ConsoleReporter::OO_Tabular;
    r = std::make_unique<benchmark::ConsoleReporter>(
        static_cast<benchmark::ConsoleReporter::OutputOptions>(opts));
  } else if (format == "json") {
    r = std::make_unique<benchmark::JSONReporter>();
  } else if (format == "csv") {
    // Deprecated upstream but still what --benchmark_format=csv means in 1.7.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    r = std::make_unique<benchmark::CSVReporter>();
#pragma GCC diagnostic pop
  } else {
    throw InputError("--benchmark_format: expected console, json or csv, got \"" + format + "\"");
  }
  r->SetOutputStream(&std::cout);
  r->SetErrorStream(&std::cerr);
  return r;
}

}  // namespace feedbench
