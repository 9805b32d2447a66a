// The one table of the counters a result holds: each one's unit, how a column titles it, which
// way is better, which families diff judges on it by default, and the change too small to
// judge. CSV and Markdown order their columns by it, the HTML report titles and formats them by
// it, and diff judges and prints them by it; a new counter is one row here.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace feedbench {

enum class Direction { kHigherIsBetter, kLowerIsBetter };

enum class CounterUnit {
  kBytesPerSecond,  // bytes_per_second: binary prefixes (MiB/s)
  kPerSecond,       // reads, files, samples per second: SI prefixes
  kFraction,        // 0..1, shown as a percentage
  kMicroseconds,
  kMilliseconds,
  kSeconds,
  kNanoseconds,  // Google Benchmark's real_time
  kCount,
};

struct CounterInfo {
  const char* name;
  CounterUnit unit;
  // A column's title where the cells are bare numbers (the HTML report): "MiB/s", "AU %".
  const char* label;
  // diff judges it (--metric accepts it): a measured figure, not a state (residency_before) or
  // a count the config sets (steps).
  bool judged;
  Direction direction;
  // Families whose cases diff judges on this counter by default (when --metric is not given):
  // what decides there. A loader's bytes_per_second follows its demand, so it does not gate.
  std::vector<std::string> gates;
  // A change of the median smaller than this (in the counter's own unit) is not judged,
  // whatever its percentage: AU 0.001 -> 0.013 is 1.2 points, not "+1200%".
  double floor = 0;
  const char* floor_text = "";  // the floor for people: "2 points", "1 ms"
  // A tail (p99 and beyond) is set by the few slowest operations of a round: on a host with
  // more runnable tasks than cores, by whichever the scheduler preempted.
  bool tail = false;
};

// RETURNS: every known counter in the table's order, which is CSV's column order: a contract
// with whoever parses the CSV, so rows are only ever added at the end (real_time has a CSV
// column of its own).
const std::vector<CounterInfo>& known_counters();

// RETURNS: the counter's row, or nullptr for one not in the table.
const CounterInfo* find_counter(std::string_view name);

// RETURNS: the counter that answers for a family's case, what its comparisons lead with:
// "au" for the loader, "bytes_per_second" for the others.
const char* primary_counter(std::string_view family);

// RETURNS: the counter's position in the table; a counter not in it sorts after all that are.
std::size_t counter_rank(std::string_view name);

}  // namespace feedbench
