// A file_read round across the ranks of a distributed run: which files each rank reads, the
// start barrier, and the gather after the round into one set of figures (IOR's aggregate,
// per-rank and per-host rates, stragglers), the same on every rank.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "feedbench/cluster/cluster.h"
#include "feedbench/dataset/dataset.h"
#include "feedbench/io/runner.h"
#include "feedbench/io/workload.h"
#include "feedbench/loader/loader.h"

namespace feedbench {

// This rank's files for one round, and its host's (what the host's lowest rank prepares).
struct ShareOfRound {
  std::optional<FileSet> mine;
  std::optional<FileSet> host;  // per_rank: the union of the host's ranks' shares; per_node: unset (all)
};

// This rank's part of the ranks that split a selection: per_node, its index among its host's
// ranks, of as many parts as its host has ranks; per_rank, its rank, of all.
struct RankPart {
  int part = 0;
  int parts = 1;
};
RankPart rank_part(Cluster& cluster, const std::string& share_mode);

// Splits `selection` for round `round`: per_rank, one shuffle (seed, round) of the whole
// selection cut into one slice per rank; per_node, the same per host among its ranks.
// RETURNS: "" and fills `share`, or why the round cannot be split (a rank would read nothing;
// per_rank ranks that see different selections, which a shared store cannot give).
// A collective: every rank calls it.
std::string share_round(Cluster& cluster, const FileSet& selection, const std::string& share_mode,
                        std::uint64_t seed, std::uint64_t round, ShareOfRound& share);

// RETURNS: every rank's `tally` merged, the same on every rank. A collective.
ReadTally merged_tally(Cluster& cluster, const ReadTally& tally);

// RETURNS: every rank's `histogram` merged, the same on every rank (`what` names it in the error
// of a histogram that does not parse). A collective.
Histogram merged_histogram(Cluster& cluster, const Histogram& histogram, const std::string& what);

struct AcrossRanks {
  std::string error;   // the first failing rank's reason (every rank has the same)
  ClusterRound round;  // the aggregate
  RoundStats stats;    // totals over ranks; elapsed is the aggregate span, latency merged
  nlohmann::json extra = nlohmann::json::object();  // ranks, hosts, stragglers, cluster
};

// Every rank waits at a barrier, reads `mine` and hands its figures to all.
// RETURNS: the same figures on every rank. Never throws for one rank's failure: a failing
// rank's reason becomes `error` on all.
AcrossRanks run_round_across_ranks(Cluster& cluster, const FileSet& mine, Workload& workload,
                                   const RoundOptions& options, const std::string& share_mode,
                                   const FileSet& selection);

// The loader across ranks: each rank a trainer node of its own accelerators.
struct LoaderAcrossRanks {
  std::string error;    // the first failing rank's reason (every rank has the same)
  std::string verdict;  // what the ranks add to the verdict ("" when nothing)
  nlohmann::json extra = nlohmann::json::object();  // ranks, min AU's rank, accelerators supported
};

// Hands every rank's LoaderResult to all and folds them into `result` (on every rank): AU and
// stall over every accelerator's steps, min AU over every accelerator, AU per accelerator in
// rank order, samples and bytes over all ranks per the slowest rank's measured time.
// "accelerators supported" counts every accelerator of every host when all reach
// `target` (MLPerf Storage's headline), else 0, with how many did. `failed`: this rank's error.
LoaderAcrossRanks gather_loader_ranks(Cluster& cluster, LoaderResult& result, const std::string& failed,
                                      double target);

}  // namespace feedbench
