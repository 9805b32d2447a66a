#include "feedbench/cluster/cluster.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "feedbench/base/error.h"
#include "feedbench/base/splitmix.h"

namespace feedbench {

std::string cluster_host_name() {
  if (const char* name = std::getenv("FEEDBENCH_HOST_NAME"); name && *name) return name;
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf[0] ? buf : "host";
}

LocalCluster::LocalCluster() : host_names_{cluster_host_name()} {}

std::vector<unsigned char> LocalCluster::all_gather_bytes(const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  return std::vector<unsigned char>(p, p + bytes);
}

std::vector<std::string> all_gather_text(Cluster& cluster, const std::string& text) {
  const std::vector<std::uint64_t> lengths = all_gather(cluster, std::uint64_t(text.size()));
  const std::uint64_t longest = *std::max_element(lengths.begin(), lengths.end());
  std::string padded = text;
  padded.resize(longest);
  const std::vector<unsigned char> raw = cluster.all_gather_bytes(padded.data(), padded.size());
  std::vector<std::string> out;
  for (std::size_t r = 0; r < lengths.size(); ++r)
    out.emplace_back(reinterpret_cast<const char*>(raw.data()) + r * longest, lengths[r]);
  return out;
}

std::string first_failure(Cluster& cluster, const std::string& error) {
  struct Status {
    std::uint8_t failed;
    FixedText<400> why;
  } mine{};
  mine.failed = error.empty() ? 0 : 1;
  mine.why.set(error);
  const std::vector<Status> all = all_gather(cluster, mine);
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (!all[r].failed) continue;
    if (cluster.size() == 1) return all[r].why.str();
    const int host = cluster.host_of_rank()[r];
    return "rank " + std::to_string(r) + " (host " + cluster.host_names()[std::size_t(host)] +
           "): " + all[r].why.str();
  }
  return "";
}

std::string affinity_warning(const std::vector<RankCores>& ranks, const std::vector<int>& host_of_rank,
                             const std::vector<std::string>& host_names, int reading_threads) {
  std::vector<std::size_t> held;
  for (std::size_t r = 0; r < ranks.size(); ++r)
    if (ranks[r].affinity < reading_threads && ranks[r].affinity < ranks[r].online) held.push_back(r);
  if (held.empty()) return "";
  constexpr std::size_t kNamed = 4;
  std::string who;
  std::int32_t fewest = ranks[held[0]].affinity, most = fewest, online = ranks[held[0]].online;
  for (std::size_t i = 0; i < held.size(); ++i) {
    const std::size_t r = held[i];
    fewest = std::min(fewest, ranks[r].affinity);
    most = std::max(most, ranks[r].affinity);
    online = std::max(online, ranks[r].online);
    if (i >= kNamed) continue;
    if (i > 0) who += i + 1 == held.size() ? " and " : ", ";
    const int host = r < host_of_rank.size() ? host_of_rank[r] : 0;
    who += "rank " + std::to_string(r) + " (host " +
           (std::size_t(host) < host_names.size() ? host_names[std::size_t(host)] : "?") + ")";
  }
  if (held.size() > kNamed) who += " and " + std::to_string(held.size() - kNamed) + " more ranks";
  const bool one = held.size() == 1;
  std::string cores =
      fewest == most ? std::to_string(fewest) : std::to_string(fewest) + " to " + std::to_string(most);
  cores += most == 1 ? " core" : " cores";
  const std::string threads = std::to_string(reading_threads);
  return "CPU affinity: " + who + (one ? " may run on " : " may each run on ") + cores + " (of " +
         std::to_string(online) + " online), but cases read with up to " + threads +
         " threads per rank, which then "
         "take turns on " +
         (most == 1 ? "that core" : "those cores") +
         ": the figures measure the binding, not "
         "storage (Open MPI binds each rank to one core by default with two ranks or fewer); start mpirun "
         "with "
         "--bind-to none, or --map-by slot:PE=" +
         threads + " to give each rank " + threads + " cores";
}

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::vector<std::size_t> share_of_selection(std::size_t files, std::uint64_t seed, std::uint64_t round,
                                            int part, int parts) {
  FB_CHECK(parts >= 1 && part >= 0 && part < parts, "a share is one part of at least one");
  std::vector<std::size_t> order(files);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::uint64_t state = seed ^ (0x53484152ull /* "SHAR" */ * (round + 1));
  for (std::size_t i = files; i > 1; --i) {  // Fisher-Yates
    const std::size_t j = std::size_t(splitmix64(state) % i);
    std::swap(order[i - 1], order[j]);
  }
  // Contiguous slices of the shuffle, sizes differing by at most one file.
  const std::size_t begin = files * std::size_t(part) / std::size_t(parts);
  const std::size_t end = files * std::size_t(part + 1) / std::size_t(parts);
  std::vector<std::size_t> mine(order.begin() + std::ptrdiff_t(begin), order.begin() + std::ptrdiff_t(end));
  std::sort(mine.begin(), mine.end());
  return mine;
}

FileSet subset(const FileSet& files, const std::vector<std::size_t>& indices) {
  FileSet out(files.root());
  for (std::size_t i : indices) out.add(files.relative_path(i), files.file_size(i), files.mtime_ns(i));
  return out;
}

double rank_rate(const RankRound& r) {
  const double span = r.end_s - r.start_s;
  return r.bytes > 0 && span > 0 ? double(r.bytes) / span : 0.0;
}

ClusterRound aggregate_round(const std::vector<RankRound>& ranks) {
  ClusterRound out;
  double first = 0, last = 0;
  bool any = false;
  std::vector<double> rates;
  for (const RankRound& r : ranks) {
    out.bytes += r.bytes;
    if (r.share_bytes == 0) continue;  // a rank with nothing to read neither starts nor ends the round
    first = any ? std::min(first, r.start_s) : r.start_s;
    last = any ? std::max(last, r.end_s) : r.end_s;
    any = true;
    rates.push_back(rank_rate(r));
  }
  out.seconds = any ? std::max(0.0, last - first) : 0.0;
  out.bytes_per_second = out.seconds > 0 ? double(out.bytes) / out.seconds : 0.0;
  out.median_rank_bytes_per_second = median(rates);
  return out;
}

std::vector<Straggler> find_stragglers(const std::vector<RankRound>& ranks) {
  std::vector<Straggler> out;
  const double med = aggregate_round(ranks).median_rank_bytes_per_second;
  if (med <= 0 || ranks.size() < 2) return out;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].share_bytes == 0) continue;
    const double rate = rank_rate(ranks[i]);
    if (rate < kStragglerFraction * med) out.push_back({int(i), ranks[i].host, rate, rate / med});
  }
  return out;
}

}  // namespace feedbench
