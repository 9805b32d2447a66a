// feedbench-latency-overhead: what timing every read costs, measured inside one process.
//
// tools/measure-overhead runs this. It alternates rounds of the runner (run_round, the code
// `feedbench run` measures with) with latency recording on and off, over the same page-cached
// files: random 4 KiB psync reads, one worker, queue depth 1, the cheapest read there is, so
// the harness's own cost shows most. Which setting goes first alternates from pair to pair, and
// every round reads its own random blocks: a round reading the blocks the round before it had
// just read would find their pages in the CPU's cache and run faster for that alone. Short
// rounds, close together, so a change of machine speed between the two rounds of a pair (steal
// time on a shared VM) is small: whole `feedbench run` processes, a second apart, differed by
// 10-25% on such a machine.
//
//   feedbench-latency-overhead DIR PAIRS ROUND_BYTES
//
// Prints one JSON object: latency_clock, residency (of the data set after warming it),
// round_bytes, and `on` and `off`, each pair's rates (reads per second) with latency recorded
// and not. Bad arguments: one line, exit 2; a round that fails or reads less than it planned:
// one line, exit 1.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/feedbench/command_line.h"

#include "feedbench/base/error.h"
#include "feedbench/base/latency_clock.h"
#include "feedbench/dataset/dataset.h"
#include "feedbench/io/page_cache.h"
#include "feedbench/io/runner.h"
#include "feedbench/io/workload.h"

namespace {

using feedbench::InputError;

constexpr std::uint64_t kBlock = 4096;

// RETURNS: reads per second of one round over `files`, latency recorded or not.
double round_rate(const feedbench::FileSet& files, std::uint64_t round, std::uint64_t bytes, bool latency) {
  feedbench::WorkloadSpec spec;
  spec.pattern = feedbench::Pattern::random;
  spec.block_size = kBlock;
  spec.seed = 42;
  spec.round = round;  // each round its own blocks
  spec.max_bytes = bytes;
  feedbench::Workload workload(files, spec);
  feedbench::RoundOptions options;
  options.engine = "psync";
  options.engine_options.block_size = kBlock;
  options.engine_options.queue_depth = 1;
  options.workers = 1;
  options.record_latency = latency;
  const feedbench::RoundStats stats = feedbench::run_round(files, workload, options);
  if (!stats.error.empty()) throw std::runtime_error(stats.error);
  if (!stats.complete()) throw std::runtime_error("a round read less than it planned: " + stats.incomplete);
  if (stats.elapsed_ns <= 0 || stats.reads == 0) throw std::runtime_error("a round read nothing");
  return double(stats.reads) / stats.seconds();
}

}  // namespace

int main(int argc, char** argv) {
  const char* self = "feedbench-latency-overhead";
  try {
    if (argc != 4)
      throw InputError(
          "expected DIR PAIRS ROUND_BYTES: a data set folder, pairs of rounds, and bytes a round reads "
          "(tools/measure-overhead runs it)");
    const std::uint64_t pairs = feedbench::parse_whole_number(argv[2], "PAIRS", 1, 1'000'000);
    const std::uint64_t bytes =
        feedbench::parse_whole_number(argv[3], "ROUND_BYTES", kBlock, std::uint64_t(1) << 40);
    const feedbench::FileSet files = feedbench::scan_dataset(argv[1]);
    if (files.total_bytes() < kBlock)
      throw InputError(std::string(argv[1]) + ": less than 4 KiB of files to read");
    // Page-cached reads only: a round that went to the device would measure the device.
    const feedbench::Residency warm = feedbench::warm(files);
    if (warm.fraction() < 0.99)
      throw std::runtime_error(std::string(argv[1]) + ": only " + std::to_string(int(warm.fraction() * 100)) +
                               "% of it stays in the page cache after reading it; use a smaller data set");
    nlohmann::json out;
    out["latency_clock"] = feedbench::LatencyClock::get().name();
    out["residency"] = warm.fraction();
    out["round_bytes"] = bytes;
    nlohmann::json on = nlohmann::json::array(), off = nlohmann::json::array();
    for (std::uint64_t p = 0; p < pairs; ++p) {
      for (int k = 0; k < 2; ++k) {
        const bool latency = (k == 0) == (p % 2 == 0);  // alternate which goes first
        (latency ? on : off).push_back(round_rate(files, 2 * p + std::uint64_t(k), bytes, latency));
      }
    }
    out["on"] = std::move(on);
    out["off"] = std::move(off);
    std::printf("%s\n", out.dump().c_str());
    return 0;
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s: %s\n", self, e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", self, e.what());
    return 1;
  }
}
