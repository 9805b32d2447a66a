// The result document of a run, assembled from what the run gathered: Google Benchmark's
// context and entries, the config and plan, the scanned selections, the cache's checks, the
// environment, the ranks. One unit, so every field of the document is tested without a run;
// `feedbench run` gathers the facts and calls it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "feedbench/cluster/cluster.h"
#include "feedbench/dataset/dataset.h"
#include "feedbench/plan/config.h"
#include "feedbench/plan/plan.h"
#include "feedbench/results/result.h"

namespace feedbench {

// What a run knew when its cases ended: the inputs of its result document. Pointers are not
// owned and must outlive build_result's call.
struct RunFacts {
  nlohmann::json context = nlohmann::json::object();  // Google Benchmark's context
  std::vector<BenchmarkEntry> benchmarks;             // in report order
  nlohmann::json tool = nlohmann::json::object();     // describe_tool()
  std::vector<std::string> command_line;
  std::map<std::string, std::string> environment_variables;  // recorded_variables(): as recorded
  std::map<std::string, std::string> withheld;  // values the document must not hold (recorded_variables)
  const Config* config = nullptr;
  const Plan* plan = nullptr;
  std::int64_t node_accelerators = 0;  // --node-accelerators, 0 without
  nlohmann::json budget = nullptr;     // --budget's choice, null without --budget
  const FileSet* source = nullptr;
  std::string source_content;      // the content fingerprint, "" when not asked for
  const FileSet* cache = nullptr;  // null when no cache folder was scanned
  std::string cache_content;
  nlohmann::json manifest = nullptr;      // the cache's, as read before the run
  nlohmann::json verification = nullptr;  // CacheVerification::to_json(), null when unchecked
  bool cache_verified = false;
  bool allow_unverified_cache = false;
  nlohmann::json environment = nlohmann::json::object();  // describe_environment(paths)
  nlohmann::json load = nullptr;                          // load_to_json(before, after)
  const Cluster* cluster = nullptr;                       // recorded when it has more than one rank
  nlohmann::json cpu_affinity = nullptr;                  // the ranks' cores, null when not launched by MPI
  nlohmann::json sizing = nullptr;                        // sizing(selection, memory)
};

// REQUIRES: facts.config, facts.plan and facts.source are set.
// RETURNS: the result document: facts copied into their fields, "config" with the run's
// selection, seed, defaults used and budget, "dataset" with each selection (and the cache's
// manifest and checks), "environment" with the host's load, the ranks and their cores, and
// the summary (summarize) with "sizing".
ResultDocument build_result(RunFacts facts);

// RETURNS: a selection as the result file records it: root, files, bytes, the metadata
// fingerprint, the file size distribution, what gen --like recorded under its root, and
// `content` (the content fingerprint) unless it is "".
nlohmann::json describe_selection(const FileSet& files, const std::string& content);

// The method's sizing rule: a selection smaller than memory can be served from the page cache,
// so cold figures rest on per-file eviction and a loader's later epochs may never touch storage.
// RETURNS: {selection_bytes, memory_bytes, smaller_than_memory, note}; note "" when larger.
nlohmann::json sizing(std::uint64_t selection_bytes, std::uint64_t memory_bytes);

// RETURNS: the ranks of `cluster` as environment.cluster records them: {implementation, ranks,
// hosts: [{name, ranks}], share}.
nlohmann::json describe_cluster(const Cluster& cluster, const std::string& share);

// Nothing measured is never a success: a run whose every case was skipped fails.
// RETURNS: "" when some repetition of some case ran; otherwise why nothing was measured
// ("every case was skipped (N cases; ...): REASON; REASON"), naming at most three reasons.
std::string nothing_measured(const ResultDocument& doc);

}  // namespace feedbench
