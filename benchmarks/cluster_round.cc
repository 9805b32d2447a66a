#include "cluster_round.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <map>

#include "feedbench/base/clock.h"
#include "feedbench/base/histogram.h"

namespace feedbench {
namespace {

struct SelectionSeen {
  std::uint64_t files;
  std::uint64_t bytes;
};

// A rank's ReadTally as all_gather carries it: a plain struct, the shortfall's text cut short.
struct GatheredTally {
  std::uint64_t bytes = 0, bytes_planned = 0, short_reads = 0, files_vanished = 0;
  std::uint64_t files_opened = 0, noatime_opens = 0;
  FixedText<300> incomplete;
};

GatheredTally gathered(const ReadTally& t) {
  GatheredTally g{t.bytes, t.bytes_planned, t.short_reads, t.files_vanished, t.files_opened, t.noatime_opens,
                  {}};
  g.incomplete.set(t.incomplete);
  return g;
}

ReadTally tally_of(const GatheredTally& g) {
  ReadTally t;
  t.bytes = g.bytes;
  t.bytes_planned = g.bytes_planned;
  t.short_reads = g.short_reads;
  t.files_vanished = g.files_vanished;
  t.incomplete = g.incomplete.str();
  t.files_opened = g.files_opened;
  t.noatime_opens = g.noatime_opens;
  return t;
}

// What a rank hands to all after its round, beyond RankRound.
struct RankFigures {
  RankRound round;
  GatheredTally read;
  std::uint64_t share_files = 0;
  std::uint64_t selection_bytes = 0;  // the whole selection this rank's host sees
  std::uint64_t share_checksum = 0;
  FixedText<32> stopped_by;
};

}  // namespace

ReadTally merged_tally(Cluster& cluster, const ReadTally& tally) {
  ReadTally out;
  for (const GatheredTally& g : all_gather(cluster, gathered(tally))) out.merge(tally_of(g));
  return out;
}

Histogram merged_histogram(Cluster& cluster, const Histogram& histogram, const std::string& what) {
  Histogram out;
  const std::vector<std::string> all = all_gather_text(cluster, histogram.to_compact_json().dump());
  for (std::size_t r = 0; r < all.size(); ++r)
    out.merge(Histogram::from_compact_json(nlohmann::json::parse(all[r]),
                                           "rank " + std::to_string(r) + " " + what));
  return out;
}

namespace {

// RETURNS: the sum (mod 2^64) of FNV-1a-64 of each file's relative path: shares whose
// checksums and counts add up to the selection's are, in practice, disjoint and complete.
std::uint64_t share_checksum(const FileSet& files) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char ch : files.relative_path(i)) h = (h ^ ch) * 0x100000001b3ull;
    sum += h;
  }
  return sum;
}

}  // namespace

RankPart rank_part(Cluster& cluster, const std::string& share_mode) {
  if (share_mode != "per_node") return {cluster.rank(), cluster.size()};
  const std::vector<int>& on_host = cluster.ranks_on_host();
  return {int(std::find(on_host.begin(), on_host.end(), cluster.rank()) - on_host.begin()),
          int(on_host.size())};
}

std::string share_round(Cluster& cluster, const FileSet& selection, const std::string& share_mode,
                        std::uint64_t seed, std::uint64_t round, ShareOfRound& share) {
  const std::vector<SelectionSeen> seen =
      all_gather(cluster, SelectionSeen{selection.size(), selection.total_bytes()});
  const bool per_node = share_mode == "per_node";
  const std::vector<int>& on_host = cluster.ranks_on_host();
  if (!per_node)
    for (std::size_t r = 1; r < seen.size(); ++r)
      if (seen[r].files != seen[0].files || seen[r].bytes != seen[0].bytes)
        return "rank " + std::to_string(r) + " sees another selection (" + std::to_string(seen[r].files) +
               " files, " + std::to_string(seen[r].bytes) + " bytes) than rank 0 (" +
               std::to_string(seen[0].files) + " files, " + std::to_string(seen[0].bytes) +
               " bytes): share per_rank splits one shared "
               "store; set dataset.share to per_node for copies local to each node";
  const auto [part, parts] = rank_part(cluster, share_mode);
  for (std::size_t r = 0; r < seen.size(); ++r) {
    const int ranks_sharing = per_node
                                  ? int(std::count(cluster.host_of_rank().begin(),
                                                   cluster.host_of_rank().end(), cluster.host_of_rank()[r]))
                                  : cluster.size();
    if (seen[r].files < std::uint64_t(ranks_sharing))
      return "the selection of rank " + std::to_string(r) + " holds " + std::to_string(seen[r].files) +
             " files, fewer than the " + std::to_string(ranks_sharing) +
             " ranks that share it (file-level "
             "shares): use fewer ranks or a larger selection";
  }
  share.mine = subset(selection, share_of_selection(selection.size(), seed, round, part, parts));
  share.host.reset();
  if (!per_node) {
    std::vector<std::size_t> host;
    for (int r : on_host) {
      std::vector<std::size_t> s = share_of_selection(selection.size(), seed, round, r, parts);
      host.insert(host.end(), s.begin(), s.end());
    }
    std::sort(host.begin(), host.end());
    share.host = subset(selection, host);
  }
  return "";
}

namespace {

// RETURNS: what this rank hands to all after its round `stats` over `mine` (`t0`: when it left
// the start barrier; `selection`: the whole its host sees).
RankFigures rank_figures(const RoundStats& stats, std::int64_t t0, const FileSet& mine,
                         const FileSet& selection, int host) {
  RankFigures f;
  f.round.bytes = stats.bytes;
  f.round.reads = stats.reads;
  f.round.files = stats.files;
  f.round.share_bytes = mine.total_bytes();
  f.round.start_s = double(stats.start_ns - t0) * 1e-9;
  if (stats.start_ns == 0) f.round.start_s = 0;
  f.round.end_s = f.round.start_s + stats.seconds();
  f.round.cpu_seconds = stats.cpu_seconds;
  f.round.host = host;
  f.round.failed = stats.error.empty() ? 0 : 1;
  f.round.error.set(stats.error);
  f.read = gathered(stats);
  f.share_files = mine.size();
  f.selection_bytes = selection.total_bytes();
  f.share_checksum = share_checksum(mine);
  f.stopped_by.set(stats.stopped_by);
  return f;
}

// RETURNS: the totals over every rank's figures `all`, so the family's counters and checks read
// as for one process; `aggregate` is their round, `mine` this rank's own (its CPU use, latency).
// With latency recorded, a collective: every rank's histogram is merged.
RoundStats totals_of(Cluster& cluster, const std::vector<RankFigures>& all, const ClusterRound& aggregate,
                     const RoundStats& mine, bool record_latency) {
  RoundStats t;
  // Rounded: truncating shortened the time by up to 1 ns, overstating the rate.
  t.elapsed_ns = std::llround(aggregate.seconds * 1e9);
  for (const RankFigures& x : all) {
    t.merge(tally_of(x.read));
    t.reads += x.round.reads;
    t.files += x.round.files;
    t.cpu_seconds += x.round.cpu_seconds;
  }
  t.stopped_by = all[0].stopped_by.str();
  t.cpu_util = mine.cpu_util;  // this rank's; cores differ per host
  // Every rank's histogram, merged: percentiles over all reads of the round.
  if (record_latency) t.latency = merged_histogram(cluster, mine.latency, "latency");
  return t;
}

nlohmann::json ranks_json(Cluster& cluster, const std::vector<RankFigures>& all) {
  nlohmann::json ranks = nlohmann::json::array();
  for (std::size_t r = 0; r < all.size(); ++r) {
    const RankRound& x = all[r].round;
    ranks.push_back({{"rank", r},
                     {"host", cluster.host_names()[std::size_t(x.host)]},
                     {"host_index", x.host},
                     {"files", all[r].share_files},
                     {"share_bytes", x.share_bytes},
                     {"share_checksum", all[r].share_checksum},
                     {"bytes", x.bytes},
                     {"start_s", x.start_s},
                     {"end_s", x.end_s},
                     {"bytes_per_second", rank_rate(x)}});
  }
  return ranks;
}

nlohmann::json hosts_json(Cluster& cluster, const std::vector<RankFigures>& all) {
  nlohmann::json hosts = nlohmann::json::array();
  for (int h = 0; h < cluster.hosts(); ++h) {
    std::vector<RankRound> on_host;
    std::vector<int> which;
    for (std::size_t r = 0; r < all.size(); ++r)
      if (all[r].round.host == h) {
        on_host.push_back(all[r].round);
        which.push_back(int(r));
      }
    const ClusterRound hr = aggregate_round(on_host);
    hosts.push_back({{"host", cluster.host_names()[std::size_t(h)]},
                     {"host_index", h},
                     {"ranks", which},
                     {"bytes", hr.bytes},
                     {"seconds", hr.seconds},
                     {"bytes_per_second", hr.bytes_per_second}});
  }
  return hosts;
}

nlohmann::json stragglers_json(Cluster& cluster, const std::vector<RankRound>& rounds) {
  nlohmann::json stragglers = nlohmann::json::array();
  for (const Straggler& s : find_stragglers(rounds))
    stragglers.push_back({{"rank", s.rank},
                          {"host", cluster.host_names()[std::size_t(s.host)]},
                          {"bytes_per_second", s.bytes_per_second},
                          {"vs_median", s.vs_median}});
  return stragglers;
}

// RETURNS: the bytes of what the ranks split: per_node, every host's own selection; per_rank,
// the one shared `selection`.
std::uint64_t split_bytes(const std::vector<RankFigures>& all, const std::string& share_mode,
                          const FileSet& selection) {
  if (share_mode != "per_node") return selection.total_bytes();
  std::map<int, std::uint64_t> selection_per_host;
  for (const RankFigures& x : all) selection_per_host[x.round.host] = x.selection_bytes;
  std::uint64_t bytes = 0;
  for (const auto& [h, b] : selection_per_host) bytes += b;
  return bytes;
}

}  // namespace

AcrossRanks run_round_across_ranks(Cluster& cluster, const FileSet& mine, Workload& workload,
                                   const RoundOptions& options, const std::string& share_mode,
                                   const FileSet& selection) {
  AcrossRanks out;
  // All ranks start together; each times its round from its own exit of the barrier.
  cluster.barrier();
  const std::int64_t t0 = now_ns();
  RoundStats stats;
  try {
    stats = run_round(mine, workload, options);
  } catch (const std::exception& e) {
    stats.error = e.what();
  }
  const std::vector<RankFigures> all =
      all_gather(cluster, rank_figures(stats, t0, mine, selection, cluster.host_index()));
  for (std::size_t r = 0; r < all.size(); ++r)
    if (all[r].round.failed) {
      out.error = "rank " + std::to_string(r) + " (host " +
                  cluster.host_names()[std::size_t(all[r].round.host)] + "): " + all[r].round.error.str();
      return out;
    }

  std::vector<RankRound> rounds;
  for (const RankFigures& x : all) rounds.push_back(x.round);
  out.round = aggregate_round(rounds);
  out.stats = totals_of(cluster, all, out.round, stats, options.record_latency);
  out.extra = {{"cluster",
                {{"ranks", cluster.size()},
                 {"hosts", cluster.hosts()},
                 {"share", share_mode},
                 {"aggregate", "total bytes / (latest end - earliest start)"},
                 {"seconds", out.round.seconds},
                 {"bytes_per_second", out.round.bytes_per_second},
                 {"median_rank_bytes_per_second", out.round.median_rank_bytes_per_second},
                 {"straggler_below", kStragglerFraction}}},
               {"ranks", ranks_json(cluster, all)},
               {"hosts", hosts_json(cluster, all)},
               {"stragglers", stragglers_json(cluster, rounds)},
               {"selection_bytes", split_bytes(all, share_mode, selection)}};
  return out;
}

}  // namespace feedbench

namespace feedbench {
namespace {

struct LoaderRank {
  LoaderCounters counters;
  double measured_s, read_s, transform_s;
  std::int32_t host;
  std::uint8_t failed;
  FixedText<400> error;
  GatheredTally read;  // what it read against what it planned, its opens included
};

}  // namespace

LoaderAcrossRanks gather_loader_ranks(Cluster& cluster, LoaderResult& result, const std::string& failed,
                                      double target) {
  LoaderAcrossRanks out;
  LoaderRank mine{result,
                  result.measured_s,
                  result.read_s,
                  result.transform_s,
                  cluster.host_index(),
                  std::uint8_t(failed.empty() ? 0 : 1),
                  {},
                  gathered(result)};
  mine.error.set(failed);
  const std::vector<LoaderRank> all = all_gather(cluster, mine);
  nlohmann::json au_list = result.au_per_trainer;
  const std::vector<std::string> aus = all_gather_text(cluster, failed.empty() ? au_list.dump() : "[]");
  const std::vector<std::string> waits =
      all_gather_text(cluster, failed.empty() ? result.wait_ns.to_compact_json().dump() : "");
  for (std::size_t r = 0; r < all.size(); ++r)
    if (all[r].failed) {
      out.error = "rank " + std::to_string(r) + " (host " + cluster.host_names()[std::size_t(all[r].host)] +
                  "): " + all[r].error.str();
      return out;
    }
  // Every rank's figures folded, as if one process had run every accelerator.
  LoaderResult& t = result;
  // The read tally over every rank (ReadTally::merge), as the file_read fold does.
  ReadTally read;
  read.reads_files = t.reads_files;
  static_cast<LoaderCounters&>(t) = {};
  t.read_s = t.transform_s = t.measured_s = 0;
  t.au_per_trainer.clear();
  t.wait_ns = Histogram();
  for (std::size_t r = 0; r < waits.size(); ++r)  // data wait of every accelerator's steps
    t.wait_ns.merge(Histogram::from_compact_json(nlohmann::json::parse(waits[r]),
                                                 "rank " + std::to_string(r) + " data wait"));
  nlohmann::json ranks = nlohmann::json::array();
  int min_rank = 0;
  double min_au = 2;
  for (std::size_t r = 0; r < all.size(); ++r) {
    const LoaderRank& x = all[r];
    t += x.counters;
    read.merge(tally_of(x.read));
    t.read_s += x.read_s;
    t.transform_s += x.transform_s;
    t.measured_s = std::max(t.measured_s, x.measured_s);
    const std::vector<double> au = nlohmann::json::parse(aus[r]).get<std::vector<double>>();
    double rank_min = 2;
    for (double a : au) {
      t.au_per_trainer.push_back(a);
      rank_min = std::min(rank_min, a);
      if (a < min_au) {
        min_au = a;
        min_rank = int(r);
      }
    }
    ranks.push_back(
        {{"rank", r},
         {"host", cluster.host_names()[std::size_t(x.host)]},
         {"host_index", x.host},
         {"au", x.counters.au_counted()},
         {"min_au", au.empty() ? 0.0 : rank_min},
         {"au_per_accelerator", au},
         {"samples", x.counters.samples},
         {"bytes", x.read.bytes},
         {"measured_s", x.measured_s},
         {"samples_per_second", x.measured_s > 0 ? double(x.counters.samples) / x.measured_s : 0.0}});
  }
  static_cast<ReadTally&>(t) = read;
  t.wait_s = double(t.waited_ns) * 1e-9;
  t.compute_s = double(t.computed_ns) * 1e-9;
  t.step_s = double(t.stepped_ns) * 1e-9;
  t.au = t.au_counted();
  t.stall_fraction = t.stall_counted();
  t.min_au = t.au_per_trainer.empty() ? 0 : min_au;
  t.samples_per_second = t.measured_s > 0 ? double(t.samples) / t.measured_s : 0;
  t.bytes_per_second = t.measured_s > 0 ? double(t.bytes) / t.measured_s : 0;
  const std::size_t total = t.au_per_trainer.size();
  const std::size_t meeting = std::size_t(
      std::count_if(t.au_per_trainer.begin(), t.au_per_trainer.end(), [&](double a) { return a >= target; }));
  const std::size_t supported = meeting == total ? total : 0;
  out.extra = {{"cluster", {{"ranks", cluster.size()}, {"hosts", cluster.hosts()}}},
               {"ranks", ranks},
               {"accelerators_total", total},
               {"accelerators_meeting_target", meeting},
               {"accelerators_supported", supported},
               {"min_au_rank", min_rank},
               {"min_au_host", cluster.host_names()[std::size_t(all[std::size_t(min_rank)].host)]}};
  char text[256];
  std::snprintf(text, sizeof text,
                " — across %d ranks on %d %s: %zu of %zu accelerators at AU %.0f%% or more; "
                "lowest AU %.1f%% (rank %d)",
                cluster.size(), cluster.hosts(), cluster.hosts() == 1 ? "host" : "hosts", meeting, total,
                100 * target, 100 * t.min_au, min_rank);
  out.verdict = text;
  if (supported > 0) out.verdict += "; " + std::to_string(supported) + " accelerators supported";
  return out;
}

}  // namespace feedbench
