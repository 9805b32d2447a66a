// What every family needs while a run is under way: the scanned data sets, run-wide options,
// and the RunLog where each measured round leaves what Google Benchmark's Run cannot carry
// (typed params, cache state, latency histogram), for the reporters to join by case name.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "feedbench/base/histogram.h"
#include "feedbench/cluster/cluster.h"
#include "feedbench/dataset/dataset.h"
#include "feedbench/plan/config.h"
#include "feedbench/plan/plan.h"
#include "feedbench/replay/recorded_job.h"

namespace feedbench {

class RunProgress;

// Everything one repetition of one case produced beyond Google Benchmark's own fields.
struct CaseRecord {
  std::string case_name;
  nlohmann::ordered_json params;   // the Case's; RunLog::add puts "family" first
  nlohmann::json cache = nullptr;  // {"requested", "residency_before", "achieved", "method"}
  std::optional<Histogram> latency;
  nlohmann::json extra = nlohmann::json::object();
  std::string skipped;  // reason, when the round did not run
};

// Records appended in repetition order per case. Google Benchmark calls a case's function
// once per repetition (Iterations(1)), so the n-th record of a case is repetition n.
class RunLog {
 public:
  void add(CaseRecord record);
  // RETURNS: the record of that repetition, or nullptr.
  const CaseRecord* find(const std::string& case_name, std::int64_t repetition_index) const;
  // RETURNS: every record of the case, in repetition order.
  std::vector<const CaseRecord*> all(const std::string& case_name) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::vector<CaseRecord>> records_;
};

struct RunContext {
  const Config* config = nullptr;
  std::optional<FileSet> source;  // scanned once per root
  std::optional<FileSet> cache;
  bool record_latency = true;           // --no-latency turns per-read timing off
  bool allow_unverified_cache = false;  // --allow-unverified-cache
  // dataset.partial_cache: the cache holds part of the source selection (a hot set); path:cache
  // reads each file from the cache when it holds it, else from the source.
  bool partial_cache = false;
  bool show_progress = false;       // a terminal is attached
  RunProgress* progress = nullptr;  // the run's progress line(s); null when --quiet
  // The ranks of the run; families call it around each round. Never null during a run.
  Cluster* cluster = nullptr;
  RunLog log;
  // The traces replay cases read (by the path a case names), read and checked before any case.
  std::map<std::string, std::shared_ptr<const RecordedJob>> recorded_jobs;

  // RETURNS: `cluster`, or one process when none was set (tests, verbs that run alone).
  Cluster& ranks();

  // RETURNS: the FileSet of "source" or "cache", or nullptr when that root is not configured.
  const FileSet* files_for(const std::string& path_role) const;
};

}  // namespace feedbench
