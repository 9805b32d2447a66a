// Per-worker read streams for the three patterns. Everything that costs memory or time per
// file (the shuffle, the prefix sums for random picks) is built once in the constructor, before
// the clock; next() is a few arithmetic operations and, for whole-file patterns, one relaxed
// atomic add per file.
#include "feedbench/io/workload.h"

#include <algorithm>

#include "feedbench/base/error.h"
#include "feedbench/base/splitmix.h"

namespace feedbench {

Pattern parse_pattern(std::string_view name) {
  if (name == "sequential") return Pattern::sequential;
  if (name == "random") return Pattern::random;
  if (name == "shuffled_files") return Pattern::shuffled_files;
  if (is_skew_pattern(name)) return Pattern::skewed;
  throw InputError("unknown pattern '" + std::string(name) +
                   "' (expected sequential, random, shuffled_files, zipf:THETA or hot_set:F%:R%)");
}

std::string_view pattern_name(Pattern pattern) {
  switch (pattern) {
    case Pattern::sequential: return "sequential";
    case Pattern::random: return "random";
    case Pattern::shuffled_files: return "shuffled_files";
    case Pattern::skewed: return "skewed";
  }
  return "?";
}

namespace {

// One seed from several inputs, so (seed, worker, round) streams are unrelated.
std::uint64_t mix(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  std::uint64_t s = seed;
  std::uint64_t x = splitmix64(s);
  s = x ^ a;
  x = splitmix64(s);
  s = x ^ b;
  return splitmix64(s);
}

// SplitMix64: tiny state, passes BigCrush, and fast enough that picking an offset costs
// less than a cached 4 KiB read by orders of magnitude.
struct Rng {
  std::uint64_t state = 0;
  std::uint64_t next() { return splitmix64(state); }
  // Uniform in [0, n) by Lemire's multiply-shift (bias below 2^-64 * n: irrelevant here).
  std::uint64_t below(std::uint64_t n) {
    return std::uint64_t((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
};

}  // namespace

struct Workload::Impl {
  // Written by every worker: on its own cache line.
  struct alignas(64) Cursor {
    std::atomic<std::uint64_t> next{0};
  };
  // Each worker's state on its own cache line(s): no false sharing between workers.
  struct alignas(64) Worker {
    // whole-file patterns
    bool active = false;  // inside a file
    bool done = false;    // the shared cursor ran out
    std::uint32_t file = 0;
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
    // random
    std::uint64_t remaining = 0;
    Rng rng;
  };

  Cursor cursor;
  std::vector<std::uint32_t> order;   // shuffled_files: the epoch's permutation
  std::vector<std::uint64_t> blocks;  // random: cumulative block count up to and including file i
  std::vector<Worker> workers;
  std::uint64_t planned = 0;
  std::uint64_t full = 0;
  // Whole-file patterns under max_bytes: positions of the order handed out, and the size the
  // last of them is read to.
  std::uint64_t positions = 0;
  std::uint64_t last_size = 0;
  bool capped = false;
};

Workload::Workload(const FileSet& files, const WorkloadSpec& spec)
    : files_(files), spec_(spec), impl_(std::make_unique<Impl>()) {
  FB_CHECK(spec.block_size > 0 && spec.block_size <= UINT32_MAX, "block_size out of range");
  FB_CHECK(spec.workers >= 1, "a workload needs at least one worker");
  Impl& m = *impl_;
  m.workers.resize(spec.workers);
  const std::uint64_t bs = spec.block_size;
  switch (spec.pattern) {
    case Pattern::sequential: break;
    case Pattern::shuffled_files: {
      m.order.resize(files.size());
      for (std::size_t i = 0; i < files.size(); ++i) m.order[i] = std::uint32_t(i);
      Rng rng{mix(spec.seed, 0x5348554646ull /* "SHUFF" */, spec.round)};
      for (std::size_t i = m.order.size(); i > 1; --i)  // Fisher-Yates
        std::swap(m.order[i - 1], m.order[rng.below(i)]);
      break;
    }
    case Pattern::skewed: {
      FB_CHECK(spec.skew.kind != Skew::Kind::none, "a skewed workload without a skew");
      if (files.empty()) break;
      FB_CHECK(!spec.rank_by || spec.rank_by->size() == files.size(), "rank_by must index the same files");
      const SkewSampler sampler(spec.skew, hot_ranking(spec.rank_by ? *spec.rank_by : files, spec.seed));
      m.order = skewed_order(sampler, files.size(), spec.seed, spec.round);
      break;
    }
    case Pattern::random: {
      m.blocks.resize(files.size());
      std::uint64_t total = 0;
      for (std::size_t i = 0; i < files.size(); ++i) {
        total += (files.file_size(i) + bs - 1) / bs;
        m.blocks[i] = total;
      }
      // One pass over the data's worth of reads (none when every file is empty).
      const std::uint64_t pass = total == 0 ? 0 : (files.total_bytes() + bs - 1) / bs;
      const std::uint64_t reads = spec.max_bytes == 0 ? pass : std::min(pass, (spec.max_bytes + bs - 1) / bs);
      m.full = pass * bs;
      m.planned = reads * bs;
      for (unsigned w = 0; w < spec.workers; ++w) {
        m.workers[w].remaining = reads / spec.workers + (w < reads % spec.workers ? 1 : 0);
        m.workers[w].rng.state = mix(spec.seed, w + 1, spec.round);
      }
      break;
    }
  }
  if (spec.pattern != Pattern::random) {
    // The prefix of the order that max_bytes allows, the last file up to whole blocks.
    m.full = files.total_bytes();
    if (spec.pattern == Pattern::skewed) {  // files drawn with repeats: the sum of what was drawn
      m.full = 0;
      for (std::uint32_t f : m.order) m.full += files.file_size(f);
    }
    m.positions = files.size();
    m.planned = m.full;
    if (spec.max_bytes > 0 && spec.max_bytes < m.full) {
      m.capped = true;
      std::uint64_t sum = 0;
      m.positions = 0;
      while (m.positions < files.size() && sum < spec.max_bytes) {
        const std::uint32_t f = m.order.empty() ? std::uint32_t(m.positions) : m.order[m.positions];
        const std::uint64_t size = files.file_size(f);
        const std::uint64_t want = spec.max_bytes - sum;
        m.last_size = size <= want ? size : std::min(size, (want + bs - 1) / bs * bs);
        sum += m.last_size;
        ++m.positions;
      }
      m.planned = sum;
    }
  }
}

Workload::~Workload() = default;

std::uint64_t Workload::planned_bytes() const { return impl_->planned; }
std::uint64_t Workload::full_pass_bytes() const { return impl_->full; }
const std::vector<std::uint32_t>& Workload::order() const { return impl_->order; }

bool Workload::next(unsigned worker, WorkItem& item) {
  Impl& m = *impl_;
  Impl::Worker& s = m.workers[worker];
  const std::uint64_t bs = spec_.block_size;

  if (spec_.pattern == Pattern::random) {
    if (s.remaining == 0) return false;
    --s.remaining;
    // A uniform block over all blocks of all files: files weighted by size.
    const std::uint64_t g = s.rng.below(m.blocks.back());
    const auto it = std::upper_bound(m.blocks.begin(), m.blocks.end(), g);
    const std::size_t file = std::size_t(it - m.blocks.begin());
    const std::uint64_t first_block = file == 0 ? 0 : m.blocks[file - 1];
    item.file = std::uint32_t(file);
    item.offset = (g - first_block) * bs;
    item.length = std::uint32_t(bs);
    item.first_of_file = false;  // the runner's open-file cache decides
    item.last_of_file = false;
    return true;
  }

  if (!s.active) {
    if (s.done) return false;
    const std::uint64_t i = m.cursor.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= m.positions) {
      s.done = true;
      return false;
    }
    s.file = m.order.empty() ? std::uint32_t(i) : m.order[i];
    s.offset = 0;
    s.size = m.capped && i + 1 == m.positions ? m.last_size : files_.file_size(s.file);
    s.active = true;
  }
  item.file = s.file;
  item.offset = s.offset;
  item.length = std::uint32_t(bs);
  item.first_of_file = s.offset == 0;
  // An empty file still gets one (empty) read, so it is opened and counted like any other.
  item.last_of_file = s.offset + bs >= s.size;
  s.offset += bs;
  if (item.last_of_file) s.active = false;
  return true;
}

}  // namespace feedbench
