// A Google Benchmark reporter that keeps what a run produced for the result file: it shows the
// usual table through a display reporter (console, json or csv, as --benchmark_format says) and
// turns each Run into a BenchmarkEntry joined with the RunLog's record of that repetition.
// It lives with the families, not the reporters: it is the one place a Google Benchmark Run
// becomes a BenchmarkEntry, and the reporters' library knows no Google Benchmark.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "feedbench/results/result.h"
#include "progress.h"
#include "run_context.h"

namespace feedbench {

class CollectingReporter : public benchmark::BenchmarkReporter {
 public:
  // `display` may be null (silent). `log` must outlive the reporter; it is read when runs are
  // reported, after the family has added the repetition's record.
  CollectingReporter(std::unique_ptr<benchmark::BenchmarkReporter> display, const RunLog& log);

  // Forwards to the display, except that the library's raw "***WARNING*** Library was built
  // as DEBUG" line becomes one note saying why feedbench's figures are not affected.
  // RETURNS: what the display returns (true without one).
  bool ReportContext(const Context& context) override;
  // Collects each run as an entry (aggregates only where no repetition of their case was
  // reported: they fold excluded repetitions too, and readers fold repetitions themselves) and
  // forwards every run to the display.
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

  // The run's live line is cleared while the display prints rows, then redrawn. May be null.
  void set_progress(RunProgress* progress) { progress_ = progress; }
  // Called with the entries of each batch of runs as they are reported (the compact console
  // table, console_table.h), as well as or instead of a display reporter. May be empty.
  using EntriesView = std::function<void(const std::vector<BenchmarkEntry>&)>;
  void set_entries_view(EntriesView view) { view_ = std::move(view); }

  // RETURNS: the context as Google Benchmark's JSONReporter writes it, plus "library_version",
  // and "library_build_note" when the library is a DEBUG build.
  const nlohmann::json& context() const { return context_; }
  // RETURNS: the entries collected so far, in report order, and forgets them.
  std::vector<BenchmarkEntry> take_entries();

  // RETURNS: the entry for one Run (exposed for tests and other reporters).
  static BenchmarkEntry to_entry(const Run& run, const RunLog& log);
  // RETURNS: the context JSON for one Context.
  static nlohmann::json context_to_json(const Context& context);

 private:
  std::unique_ptr<benchmark::BenchmarkReporter> display_;
  const RunLog& log_;
  nlohmann::json context_ = nlohmann::json::object();
  std::vector<BenchmarkEntry> entries_;
  std::set<std::string> with_repetitions_;  // run names whose repetitions were reported
  RunProgress* progress_ = nullptr;
  EntriesView view_;
};

// What feedbench says, once, about a DEBUG build of Google Benchmark (console and result file).
extern const char* const kLibraryDebugNote;

// RETURNS: "release" or "debug" as the linked library's own JSONReporter writes it for
// `context` (it follows the library's NDEBUG, not ours); "unknown" when it writes none.
std::string library_build_type(const benchmark::BenchmarkReporter::Context& context);

// RETURNS: Google Benchmark's reporter for `format` ("console", "json" or "csv", the values of
// --benchmark_format), writing to std::cout/std::cerr. The console table is tabular (one column
// per counter) and colored when `color`. Throws InputError for another format.
std::unique_ptr<benchmark::BenchmarkReporter> make_display_reporter(const std::string& format, bool color,
                                                                    bool tabular = true);

}  // namespace feedbench
