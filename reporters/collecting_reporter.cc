#include "collecting_reporter.h"

#include <ctime>
#include <iostream>

#include "feedbench/error.h"

#ifndef FEEDBENCH_BENCHMARK_VERSION
#define FEEDBENCH_BENCHMARK_VERSION "unknown"
#endif

namespace feedbench {

namespace {

// Google Benchmark's LocalDateTimeString: "2024-05-01T12:34:56+02:00".
std::string local_date_time() {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  ::localtime_r(&now, &local);
  char buf[64];
  std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", &local);
  std::string s(buf, n);
  if (s.size() >= 5 && (s[s.size() - 5] == '+' || s[s.size() - 5] == '-'))
    s.insert(s.size() - 2, ":");
  return s;
}

}  // namespace

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
  j["mhz_per_cpu"] = std::int64_t(cpu.cycles_per_second / 1000000.0 + 0.5);
  if (cpu.scaling != benchmark::CPUInfo::Scaling::UNKNOWN)
    j["cpu_scaling_enabled"] = cpu.scaling == benchmark::CPUInfo::Scaling::ENABLED;
  j["caches"] = nlohmann::ordered_json::array();
  for (const auto& c : cpu.caches)
    j["caches"].push_back({{"type", c.type},
                           {"level", std::int64_t(c.level)},
                           {"size", std::int64_t(c.size)},
                           {"num_sharing", std::int64_t(c.num_sharing)}});
  j["load_avg"] = cpu.load_avg;
  // Debian builds the library with NDEBUG; JSONReporter reports its own build the same way.
  j["library_build_type"] = "release";
  j["library_version"] = FEEDBENCH_BENCHMARK_VERSION;
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
  return display_ ? display_->ReportContext(context) : true;
}

void CollectingReporter::ReportRuns(const std::vector<Run>& runs) {
  for (const Run& run : runs) entries_.push_back(to_entry(run, log_));
  if (display_) display_->ReportRuns(runs);
}

void CollectingReporter::Finalize() {
  if (display_) display_->Finalize();
}

std::vector<BenchmarkEntry> CollectingReporter::take_entries() {
  std::vector<BenchmarkEntry> out;
  out.swap(entries_);
  return out;
}

std::unique_ptr<benchmark::BenchmarkReporter> make_display_reporter(const std::string& format,
                                                                    bool color, bool tabular) {
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
