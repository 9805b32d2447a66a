// A run spread over processes (ranks), possibly on many hosts, seen through one small
// interface: who am I, who shares my host, wait for everyone, and hand everyone's plain
// structs to everyone. A single-process implementation is always here; an MPI one lives with
// the benchmarks (built when CMake finds MPI), so nothing in the harness knows MPI exists.
// Also here: the maths of a round across ranks (shares, the aggregate rate, stragglers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "feedbench/dataset/dataset.h"

namespace feedbench {

class Cluster {
 public:
  virtual ~Cluster() = default;

  virtual int rank() const = 0;  // 0 .. size()-1
  virtual int size() const = 0;
  // Hosts are numbered in the order of their lowest rank; rank 0 is on host 0.
  virtual int host_index() const = 0;
  virtual int hosts() const = 0;
  virtual const std::string& host_name() const = 0;
  // RETURNS: the ranks on this rank's host, ascending (this rank among them).
  virtual const std::vector<int>& ranks_on_host() const = 0;
  // RETURNS: every rank's host index, by rank.
  virtual const std::vector<int>& host_of_rank() const = 0;
  // RETURNS: every host's name, by host index.
  virtual const std::vector<std::string>& host_names() const = 0;
  // "single process", or the MPI library and its version.
  virtual std::string implementation() const = 0;

  // Every rank waits until all have called it.
  virtual void barrier() = 0;
  // Every rank gives `bytes` bytes (the same count on all). RETURNS, on every rank, the
  // concatenation of all ranks' bytes in rank order. Also a barrier.
  virtual std::vector<unsigned char> all_gather_bytes(const void* data, std::size_t bytes) = 0;

  // Ends every rank at once, with `code`: for a failure this rank alone met outside any
  // agreement (others would wait for it forever). The single process returns (its caller
  // goes on to fail as usual).
  virtual void abort(int code) = 0;

  // True for the rank that writes files and prints.
  bool is_root() const { return rank() == 0; }
  // True for the lowest rank of its host: it alone does per-host work (eviction, warming).
  bool host_leader() const { return ranks_on_host().front() == rank(); }
};

// RETURNS: every rank's `value`, by rank. T must be a plain struct (copied as bytes).
template <class T>
std::vector<T> all_gather(Cluster& cluster, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>, "all_gather copies plain structs as bytes");
  const std::vector<unsigned char> raw = cluster.all_gather_bytes(&value, sizeof(T));
  std::vector<T> out(raw.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), raw.data(), out.size() * sizeof(T));
  return out;
}

// RETURNS: every rank's `text`, by rank (any length: two gathers, lengths then texts).
std::vector<std::string> all_gather_text(Cluster& cluster, const std::string& text);

// One process: rank 0 of 1 on this host.
class LocalCluster final : public Cluster {
 public:
  LocalCluster();
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int host_index() const override { return 0; }
  int hosts() const override { return 1; }
  const std::string& host_name() const override { return host_names_[0]; }
  const std::vector<int>& ranks_on_host() const override { return ranks_; }
  const std::vector<int>& host_of_rank() const override { return hosts_of_ranks_; }
  const std::vector<std::string>& host_names() const override { return host_names_; }
  std::string implementation() const override { return "single process"; }
  void barrier() override {}
  void abort(int) override {}
  std::vector<unsigned char> all_gather_bytes(const void* data, std::size_t bytes) override;

 private:
  std::vector<int> ranks_{0};
  std::vector<int> hosts_of_ranks_{0};
  std::vector<std::string> host_names_;
};

// RETURNS: this machine's host name, or FEEDBENCH_HOST_NAME when set (a test hook: ranks on
// one machine given different names act as different hosts).
std::string cluster_host_name();

// A fixed-size, NUL-terminated text inside a plain struct (a reason, a host name).
template <std::size_t N>
struct FixedText {
  char text[N] = {};
  void set(const std::string& s) {
    const std::size_t n = s.size() < N - 1 ? s.size() : N - 1;
    std::memcpy(text, s.data(), n);
    text[n] = '\0';
  }
  std::string str() const { return std::string(text, strnlen(text, N)); }
};

// Every rank says whether it can go on. RETURNS: "" when all can, else the lowest failing
// rank's `error`, prefixed "rank R (host H): " when there are several ranks; the same text on
// every rank, so all of them stop (or go on) together.
std::string first_failure(Cluster& cluster, const std::string& error);

// A rank's cores: those its CPU affinity allows it to run on (usable_cores), and those its host
// has online (online_cpus).
struct RankCores {
  std::int32_t affinity = 0;
  std::int32_t online = 0;
};

// Under an MPI launcher's binding a rank may be held to fewer cores than it has reading threads
// (Open MPI binds each rank to one core by default with two ranks or fewer), and its threads
// then take turns on them: a figure of the binding, not of storage.
// RETURNS: one warning naming the ranks (and hosts) whose affinity allows fewer cores than
// `reading_threads` and fewer than their host has online (a binding, not a small machine), with
// their core count and the fix (mpirun --bind-to none, or --map-by ...:PE=N); "" when none.
// `host_of_rank` and `host_names` as Cluster gives them; `ranks` by rank.
std::string affinity_warning(const std::vector<RankCores>& ranks, const std::vector<int>& host_of_rank,
                             const std::vector<std::string>& host_names, int reading_threads);

// The maths of a round across ranks.

// RETURNS: the indices (ascending) into a selection of `files` files that part `part` of
// `parts` reads: the parts are contiguous slices of one shuffle of all indices, seeded by
// (seed, round), so they are disjoint, together complete, and the same on every rank.
// REQUIRES: 0 <= part < parts.
std::vector<std::size_t> share_of_selection(std::size_t files, std::uint64_t seed, std::uint64_t round,
                                            int part, int parts);

// RETURNS: a FileSet with `files`' entries at `indices` (same root), in that order.
FileSet subset(const FileSet& files, const std::vector<std::size_t>& indices);

// One rank's round, as every rank hands it to all (a plain struct).
struct RankRound {
  std::uint64_t bytes = 0;
  std::uint64_t reads = 0;
  std::uint64_t files = 0;
  std::uint64_t share_bytes = 0;  // bytes of its share of the selection
  double start_s = 0;             // measured start and end, from when this rank left the start barrier
  double end_s = 0;
  double cpu_seconds = 0;
  std::int32_t host = 0;
  std::uint8_t failed = 0;
  FixedText<400> error;  // why, when failed
};

// The round of all ranks together, as IOR defines its aggregate: total bytes over the span
// from the earliest start to the latest end (each rank's times from its own exit of the start
// barrier, so hosts' clocks need not agree).
struct ClusterRound {
  std::uint64_t bytes = 0;
  double seconds = 0;  // latest end - earliest start
  double bytes_per_second = 0;
  double median_rank_bytes_per_second = 0;
};

// RETURNS: a rank's own rate: its bytes over its own span (0 when it read nothing).
double rank_rate(const RankRound& r);
ClusterRound aggregate_round(const std::vector<RankRound>& ranks);

// A rank below kStragglerFraction of the median rank's rate is named a straggler.
inline constexpr double kStragglerFraction = 0.8;
struct Straggler {
  int rank = 0;
  int host = 0;
  double bytes_per_second = 0;
  double vs_median = 0;  // its rate / the median rank's
};
// RETURNS: the ranks (that had bytes to read) slower than kStragglerFraction × the median rank.
std::vector<Straggler> find_stragglers(const std::vector<RankRound>& ranks);

}  // namespace feedbench
