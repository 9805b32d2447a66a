// The one fold from a result's repetitions to its cases' figures, used by every reporter (the
// console summary, Markdown, CSV, the loader summary and the HTML page), so that they agree:
// a case's figure is the median over its achieved repetitions only; repetitions whose cache
// state was not achieved or that read less than planned are excluded and counted with their
// reasons (feedbench/results/result.h: exclusion_reason); calibration cases are marked so that no
// storage headline counts them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "feedbench/base/histogram.h"
#include "feedbench/results/result.h"

namespace feedbench {

// A repetition left out of its case's figures, and why.
struct ExcludedRepetition {
  std::int64_t repetition_index = 0;
  std::string reason;    // "cold not achieved: 87.0% resident before the round", "short round: ..."
  nlohmann::json cache;  // the repetition's cache record (null when it has none)
};

// One case of one result document, its repetitions folded together.
struct CaseView {
  std::string name;    // canonical case name (Google Benchmark's run name for foreign files)
  std::string family;  // params.family, else the name's first segment
  nlohmann::json params = nlohmann::json::object();  // {"family", every parameter}
  bool calibration = false;  // measures the harness, not storage: never a storage headline

  std::size_t achieved = 0;                  // repetitions whose figures count
  std::vector<ExcludedRepetition> excluded;  // measured but not counted
  std::size_t errored = 0;                   // repetitions that failed or were skipped
  std::vector<std::string> errors;           // their distinct reasons, first-seen order
  bool from_aggregate = false;               // no repetitions in the file: its "median" aggregate stands in

  std::map<std::string, double> counters;  // median over the achieved repetitions
  // The spread of each counter over the achieved repetitions: the coefficient of variation
  // (sample standard deviation / mean, as diff's noise rule reads it); only with 2 or more.
  std::map<std::string, double> spread;
  // Same, for numeric top-level extra fields; "min_au" is the worst-fed trainer's AU (the
  // lowest of au, extra.min_au and extra.au_per_accelerator) where the case has an AU.
  std::map<std::string, double> extra_numbers;
  double real_time = 0;  // median, in time_unit
  std::string time_unit;
  // extra of the representative achieved repetition: the lower middle by the primary counter
  // (au for the loader, else bytes_per_second), so its text (a verdict) matches the figure.
  nlohmann::json extra = nlohmann::json::object();
  std::string label;                 // the representative's label (a round's note; the loader's verdict)
  std::string requested_state;       // cache state asked for ("" when none)
  std::vector<double> residency;     // residency_before of each measured repetition, in order
  std::optional<Histogram> latency;  // merged over the achieved repetitions

  // RETURNS: achieved + excluded + errored.
  std::size_t repetitions() const { return achieved + excluded.size() + errored; }
  // RETURNS: whether any repetition counts (a case with none has no figure at all).
  bool measured() const { return achieved > 0; }
  // RETURNS: the median of an achieved counter, or nullopt.
  std::optional<double> counter(const std::string& key) const;
  // RETURNS: a parameter as text ("" when absent; numbers as JSON writes them).
  std::string param(const char* key) const;
  // RETURNS: a whole-number parameter, or `fallback` when absent or not a whole number.
  std::int64_t int_param(const char* key, std::int64_t fallback) const;
  // RETURNS: the median AU of the worst-fed trainer (extra_numbers["min_au"]); nullopt when
  // the case has no AU.
  std::optional<double> worst_au() const;
  // RETURNS: the target AU the case was judged against (params, extra, else 0.90).
  double target_au() const;
  // RETURNS: "1 of 3 repetitions excluded (repetition 2: cold not achieved: ...)", or "" when
  // none was. Errored repetitions are not counted in it.
  std::string exclusion_note() const;
};

// RETURNS: per case name, what a summary calls it: the parameters (key:value, as its name writes
// them) that set it apart from the other cases of its family among `names`, "workers:4 state:cold";
// its full name where nothing does (the only case of its family). A name's part without a ':'
// belongs to the value before it ("transform:1ms/sample"). The full names stay the identity: in
// the console's table of cases and in the result file.
std::map<std::string, std::string> case_labels(const std::vector<std::string>& names);
// RETURNS: case_labels of the document's cases.
std::map<std::string, std::string> case_labels(const std::vector<CaseView>& cases);

// RETURNS: the name an entry's case is folded under: case_name, else Google Benchmark's
// run_name, else its name.
std::string case_key(const BenchmarkEntry& e);

// RETURNS: the document's cases in first-appearance order. Aggregate entries are ignored
// except where a case has no iteration entry at all (then its "median" aggregate, marked
// from_aggregate). NOTE: the view copies what it needs; it does not point into `doc`.
std::vector<CaseView> fold_cases(const ResultDocument& doc);

}  // namespace feedbench
