// The qualification card ("feedbench-card/1"): how many accelerators of each workload this
// instance's storage feeds, per path (store, cache) and state (cold, steady), what limits each
// cell and what one accelerator needs. One struct for writers and readers, like result.h; the
// card's renderings are in reporters/card_report.h. Layout documented in docs/card.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "feedbench/base/json_limits.h"
#include "feedbench/results/result.h"

namespace feedbench {

inline constexpr const char* kCardSchema = "feedbench-card/1";

// A card embeds its result documents whole (`results`), two levels down (/results/N): its
// limits are a result file's, with room for those two levels.
inline constexpr JsonLimits kCardLimits{"card", kResultLimits.max_bytes, kResultLimits.max_depth + 2,
                                        kResultLimits.max_string_bytes};

// What one accelerator of the workload asks of the storage and the host at its step: medians
// over the cell's repetitions.
struct PerAccelerator {
  double bytes_per_second = 0;
  double samples_per_second = 0;
  double cpu_cores = 0;  // the data loading's CPU (reads, decode, transforms) one accelerator needs

  friend bool operator==(const PerAccelerator&, const PerAccelerator&) = default;
};

// One cell of the card: a workload read through one path in one state.
struct CardCell {
  std::string path;      // "store" or "cache"
  std::string state;     // "cold" (the first epoch) or "steady"
  bool measured = true;  // false: the budget left it unmeasured; only `reason` then says anything
  std::string reason;    // why it was not measured; "" when measured
  // The most accelerators kept at AU >= target_au: the median over the repetitions of the
  // search, with the lowest and the highest repetition's (its spread). Fractional below one
  // ("0.43 of one accelerator").
  double accelerators_fed = 0;
  double accelerators_fed_min = 0;
  double accelerators_fed_max = 0;
  std::int64_t repetitions = 0;  // searches of K the figures fold; at least 1 when measured
  std::string limit;             // what stops K + 1: "the store's bandwidth", "the host's CPU: decode"
  PerAccelerator per_accelerator;

  friend bool operator==(const CardCell&, const CardCell&) = default;
};

// What one path's storage delivers of a workload's files with nothing else to do: the best of
// a few cold passes of its files read whole in shuffled order (the file_read family's
// shuffled_files, one pass per reader count), and how many accelerators that rate feeds by its
// bytes alone (the rate ÷ one accelerator's bytes_per_second).
struct CardReads {
  std::string path;             // "store" or "cache"
  double bytes_per_second = 0;  // the best pass
  std::int64_t workers = 0;     // the readers of the best pass
  double accelerators = 0;      // bytes_per_second ÷ one accelerator's need (0: need unknown)
  // The best pass's bytes and seconds (0: not recorded): a pass far under a second, as a small
  // data set's, is a burst (a throttle's, a store's credits) more than a rate.
  std::uint64_t bytes = 0;
  double seconds = 0;

  friend bool operator==(const CardReads&, const CardReads&) = default;
};

// The stage of the workload's data set from the store into the cache (`feedbench stage`,
// verified), and whether staging pays: its time against the epochs it saves
// (staging_pays_after_epochs).
struct CardStaging {
  std::uint64_t bytes = 0;
  double seconds = 0;
  double bytes_per_second = 0;
  // The stage's time in epochs read through the store at the store's cold rate: 0.5 = staging
  // takes as long as half an epoch. 0: not known (no store cold cell).
  double epochs_of_reading = 0;
  // The epochs a training run must read for staging to have paid (its time won back by the
  // cache's faster epochs); nullopt: it never pays (the cache feeds no more than the store, or
  // both feed every accelerator of the node).
  std::optional<double> pays_after_epochs;

  friend bool operator==(const CardStaging&, const CardStaging&) = default;
};

struct CardWorkload {
  std::string name;                    // "images", "volumes", "records", "tokens", or a --like trace's name
  std::int64_t step_ns = 0;            // one accelerator's compute per batch, at the card's speedup
  std::string step_source;             // where the step came from: a cited profile or a trace
  std::vector<CardCell> paths;         // its cells, at most one per (path, state)
  std::vector<CardReads> reads;        // at most one per path; empty: not measured
  std::optional<CardStaging> staging;  // a card with a cache path that staged it

  friend bool operator==(const CardWorkload&, const CardWorkload&) = default;
};

// A checkpoint written to one path and restored cold (the checkpoint family): a model's
// checkpoint at a scale that fits, and the full checkpoint's time at the rates measured.
struct CardCheckpoint {
  std::string path;                     // "store" or "cache"
  std::string model;                    // "llama3-8b"
  double scale = 0;                     // of the model's full checkpoint: 0.01 wrote 1% of it
  std::uint64_t bytes = 0;              // what was written and restored
  std::uint64_t full_bytes = 0;         // the model's whole checkpoint
  std::int64_t ranks = 0;               // writer ranks, each its own files
  double write_bytes_per_second = 0;    // all bytes over the checkpoint's time, fsync'd
  double restore_bytes_per_second = 0;  // read back after eviction

  friend bool operator==(const CardCheckpoint&, const CardCheckpoint&) = default;
};

struct Card {
  std::string schema = kCardSchema;
  std::string created_utc;                            // "2026-12-06T18:00:00Z"
  std::string feedbench_version;                      // the writer's version
  nlohmann::json host = nlohmann::json::object();     // as a result's environment.host
  nlohmann::json storage = nlohmann::json::object();  // {"store": {"root", "device", "file_system",
                                                      //  "mount"}, "cache": {...}}
  double target_au = 0.9;                             // the AU a fed accelerator keeps, 0..1
  double speedup = 1;                                 // accelerators this many times faster
  std::int64_t accelerators_per_node = 0;             // the node's accelerators; 0: not given
  std::vector<CardWorkload> workloads;
  std::vector<CardCheckpoint> checkpoints;  // at most one per path
  std::vector<ResultDocument> results;      // the result documents the card came from, whole

  // RETURNS: the card as its file holds it, keys in the documented order.
  nlohmann::ordered_json to_json() const;
  // Throws InputError "<where>: <pointer>: expected ..., got ..." for anything not as
  // docs/card.md says, a schema other than feedbench-card/1 included; an embedded result's
  // error names its pointer below /results/N.
  static Card from_json(const nlohmann::ordered_json& j, const std::string& where);
  // Parses a card's text within kCardLimits. Throws InputError (malformed JSON with its line
  // and column, past the limits, or as from_json).
  static Card parse(const std::string& text, const std::string& where);
  // Reads a card file. Throws InputError (unreadable, past kCardLimits, or as parse).
  static Card load(const std::string& path);
  // RETURNS: the text save() writes (indented JSON, a final newline).
  std::string dump() const;
  // Writes dump() atomically (write_file_atomically). RETURNS: the path written.
  std::string save(const std::string& path) const;

  friend bool operator==(const Card&, const Card&) = default;
};

// RETURNS: the top-level "schema" string of a JSON text, "" when it has none (or the text is
// not a JSON object); parses only as far as that key, so a large file costs little. Throws
// InputError for text past `limits` before that key.
std::string json_schema_of(const std::string& text, const std::string& where, const JsonLimits& limits);

// RETURNS: the measured cell of `w` through `path` in `state`; null when it has none.
const CardCell* measured_cell(const CardWorkload& w, const std::string& path, const std::string& state);

// RETURNS: whether `more` feeds more accelerators than `than` by what counts as a gain: beyond
// both cells' spread (more's lowest repetition above than's highest) and by a tenth at least
// (one search of K can differ by a few hundredths).
bool feeds_more_beyond_noise(const CardCell& more, const CardCell& than);

// RETURNS: the epochs a training run of `w` must read for staging into the cache to pay, from
// its cold cells: through the store an epoch of D bytes reads at min(N, K_store) × b (b: one
// accelerator's bytes_per_second, N: `accelerators_per_node`, unbounded when 0), through the
// cache at min(N, K_cache) × b, and staging costs D ÷ `stage_bytes_per_second` once; it pays
// after R epochs where R × (D ÷ store rate − D ÷ cache rate) = D ÷ stage rate, whatever D.
// nullopt when it never pays: the cache's cold cell feeds no more than the store's beyond both
// spreads and by a tenth (one search can differ by a few hundredths), or both feed the node;
// or a cold cell or the need is missing. REQUIRES: stage_bytes_per_second > 0.
std::optional<double> staging_pays_after_epochs(const CardWorkload& w, double stage_bytes_per_second,
                                                std::int64_t accelerators_per_node);

// RETURNS: the stage's time in epochs through the store at its cold rate (min(N, K_store) × b),
// 0 when that rate is not known. REQUIRES: stage_bytes_per_second > 0.
double staging_epochs_of_reading(const CardWorkload& w, double stage_bytes_per_second,
                                 std::int64_t accelerators_per_node);

// A file given to a verb that takes cards and result files alike (diff, report).
using CardOrResult = std::variant<ResultDocument, Card>;

// RETURNS: the file at `path`, read once (a pipe too) within kCardLimits, as the reader of its
// top-level schema (json_schema_of) makes it: a Card for "feedbench-card/1", else a result
// document (whose reader refuses any other schema). Throws InputError "<path>: cannot read
// result file or card: ...", and as Card::parse or ResultDocument::parse.
CardOrResult load_card_or_result(const std::string& path);

// RETURNS: whether `inputs` are all cards (true) or all result documents (false).
// Throws InputError "expected cards or result files, not both: A is a card (feedbench-card/1),
// B a result file", naming the first of each. REQUIRES: files.size() == inputs.size().
bool all_cards(const std::vector<CardOrResult>& inputs, const std::vector<std::string>& files);

// ---- two cards compared cell by cell (what `feedbench diff CARD_A CARD_B` judges) ----------

enum class CellVerdict {
  kFewer,      // NEW feeds fewer, beyond both cells' spread: a regression
  kNoisy,      // NEW feeds fewer, within the spread of either cell's repetitions
  kUnchanged,  // the same number
  kMore,       // NEW feeds more
  kNotJudged,  // either side did not measure the cell
  kOnlyBase,   // the cell is in BASE's card only
  kOnlyNew,    // in NEW's only
};

struct CellComparison {
  std::string workload, path, state;
  const CardCell* base = nullptr;  // null for kOnlyNew
  const CardCell* next = nullptr;  // null for kOnlyBase
  CellVerdict verdict = CellVerdict::kNotJudged;
  std::string note;  // why noisy or not judged, "" otherwise
};

struct CardComparison {
  std::vector<CellComparison> cells;  // BASE's order, then the cells only NEW has

  // RETURNS: how many cells were judged so.
  std::size_t count(CellVerdict verdict) const;
  // RETURNS: the cells both cards measured.
  std::size_t compared() const;
  // RETURNS: 1 when a cell feeds fewer beyond noise or nothing was compared (as a result
  // diff that compared nothing), else 0.
  int exit_code() const;
};

// RETURNS: the cells of `base` and `next` matched by (workload, path, state). A drop counts
// (kFewer) only when NEW's median is below the lowest repetition of BASE and BASE's median
// above the highest of NEW: a drop within the spread of either side's repetitions is kNoisy.
// The comparison points into both cards, which must outlive it.
CardComparison compare_cards(const Card& base, const Card& next);

}  // namespace feedbench
