#include "feedbench/results/counters.h"

namespace feedbench {

const std::vector<CounterInfo>& known_counters() {
  using D = Direction;
  using U = CounterUnit;
  // Floors are in the counter's own unit: AU and stall fraction are fractions (0.02 = 2 points),
  // waits in ms, latencies in us. A read's rate gates file_read and stage, and a checkpoint's
  // write (with its restore's rate); a loader's
  // bytes_per_second and samples_per_second follow what the training step asks for, so the
  // loader gates on AU and its wait p99.
  static const std::vector<CounterInfo> counters = {
      {"bytes_per_second",
       U::kBytesPerSecond,
       "MiB/s",
       true,
       D::kHigherIsBetter,
       {"file_read", "stage", "checkpoint"}},
      {"items_per_second", U::kPerSecond, "reads/s", true, D::kHigherIsBetter, {}},
      {"files_per_second", U::kPerSecond, "files/s", true, D::kHigherIsBetter, {}},
      {"lat_p50_us", U::kMicroseconds, "p50 µs", true, D::kLowerIsBetter, {}, 5, "5 us"},
      {"lat_p90_us", U::kMicroseconds, "p90 µs", true, D::kLowerIsBetter, {}, 5, "5 us"},
      {"lat_p99_us", U::kMicroseconds, "p99 µs", true, D::kLowerIsBetter, {"file_read"}, 5, "5 us", true},
      {"lat_p999_us", U::kMicroseconds, "p999 µs", true, D::kLowerIsBetter, {}, 5, "5 us", true},
      {"lat_max_us", U::kMicroseconds, "max µs", true, D::kLowerIsBetter, {}, 5, "5 us", true},
      {"residency_before", U::kFraction, "resident before %", false, D::kHigherIsBetter, {}},
      {"cpu_util", U::kFraction, "CPU %", false, D::kLowerIsBetter, {}},
      {"samples_per_second", U::kPerSecond, "samples/s", true, D::kHigherIsBetter, {}},
      {"steps", U::kCount, "steps", false, D::kHigherIsBetter, {}},
      {"epoch_s", U::kSeconds, "epoch s", true, D::kLowerIsBetter, {}},
      {"wait_p50_ms", U::kMilliseconds, "wait p50 ms", true, D::kLowerIsBetter, {}, 1, "1 ms"},
      {"wait_p90_ms", U::kMilliseconds, "wait p90 ms", true, D::kLowerIsBetter, {}, 1, "1 ms"},
      {"wait_p99_ms",
       U::kMilliseconds,
       "wait p99 ms",
       true,
       D::kLowerIsBetter,
       {"loader", "job", "replay"},
       1,
       "1 ms",
       true},
      {"wait_max_ms", U::kMilliseconds, "wait max ms", true, D::kLowerIsBetter, {}, 1, "1 ms", true},
      {"stall_fraction", U::kFraction, "stall %", true, D::kLowerIsBetter, {}, 0.02, "2 points"},
      {"au", U::kFraction, "AU %", true, D::kHigherIsBetter, {"loader", "job", "replay"}, 0.02, "2 points"},
      // A GPU sink's or a CUDA loader's host-to-device copies (a pinned buffer to device memory).
      {"h2d_bytes_per_second", U::kBytesPerSecond, "H2D MiB/s", true, D::kHigherIsBetter, {}},
      {"copy_p50_us", U::kMicroseconds, "copy p50 µs", true, D::kLowerIsBetter, {}, 5, "5 us"},
      {"copy_p99_us", U::kMicroseconds, "copy p99 µs", true, D::kLowerIsBetter, {}, 5, "5 us", true},
      {"copy_bound_share", U::kFraction, "copy-bound %", true, D::kLowerIsBetter, {}, 0.02, "2 points"},
      {"real_time", U::kNanoseconds, "time", true, D::kLowerIsBetter, {}},
      // The checkpoint family (bytes_per_second above is its node's write throughput).
      {"write_slowest_rank_bytes_per_second",
       U::kBytesPerSecond,
       "slowest rank MiB/s",
       true,
       D::kHigherIsBetter,
       {}},
      {"checkpoint_s", U::kSeconds, "checkpoint s", true, D::kLowerIsBetter, {}},
      {"fsync_share", U::kFraction, "fsync %", true, D::kLowerIsBetter, {}, 0.02, "2 points"},
      {"restore_bytes_per_second",
       U::kBytesPerSecond,
       "restore MiB/s",
       true,
       D::kHigherIsBetter,
       {"checkpoint"}},
      {"restore_slowest_rank_bytes_per_second",
       U::kBytesPerSecond,
       "restore slowest rank MiB/s",
       true,
       D::kHigherIsBetter,
       {}},
      {"restore_s", U::kSeconds, "restore s", true, D::kLowerIsBetter, {}},
      {"generation_bytes_per_second", U::kBytesPerSecond, "generation MiB/s", false, D::kHigherIsBetter, {}},
      {"blocking_share", U::kFraction, "blocking %", true, D::kLowerIsBetter, {}, 0.001, "0.1 point"},
      {"async_bytes_per_second", U::kBytesPerSecond, "async MiB/s", false, D::kLowerIsBetter, {}},
  };
  return counters;
}

const CounterInfo* find_counter(std::string_view name) {
  for (const CounterInfo& c : known_counters())
    if (name == c.name) return &c;
  return nullptr;
}

const char* primary_counter(std::string_view family) {
  return family == "loader" || family == "job" || family == "replay" ? "au" : "bytes_per_second";
}

std::size_t counter_rank(std::string_view name) {
  const auto& all = known_counters();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (name == all[i].name) return i;
  return all.size();
}

}  // namespace feedbench
