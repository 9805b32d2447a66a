// Plan: each family of a config expanded into Cases (cartesian product of its sweeps), values
// canonicalised, combinations that cannot run dropped with their reason.
#include "feedbench/plan/plan.h"

#include <chrono>
#include <optional>
#include <set>
#include <type_traits>

#include "feedbench/base/error.h"
#include "feedbench/base/units.h"
#include "feedbench/io/runner.h"
#include "feedbench/io/skew.h"

namespace feedbench {
namespace {

using json = nlohmann::json;

enum class Kind {
  choice,
  pattern,
  sampling,
  integer,
  number,
  boolean,
  size,
  distribution,
  transform,
  samples,
  duration,
  steady_state
};

// The typed fields (family_parameters.h) and how a canonical value fills one: each overload
// reads the JSON type and text the plan's canonical() makes for its kind.
void assign(const json& v, int& out) { out = int(v.get<std::int64_t>()); }
void assign(const json& v, std::int64_t& out) { out = v.get<std::int64_t>(); }
void assign(const json& v, std::uint64_t& out) { out = v.get<std::uint64_t>(); }
void assign(const json& v, double& out) { out = v.get<double>(); }
void assign(const json& v, bool& out) { out = v.get<bool>(); }
void assign(const json& v, std::string& out) { out = v.get<std::string>(); }
void assign(const json& v, std::chrono::nanoseconds& out) {
  out = std::chrono::nanoseconds(parse_duration_ns(v.get<std::string>()));
}
void assign(const json& v, Distribution& out) { out = parse_distribution(v.get<std::string>()); }
void assign(const json& v, TransformCost& out) { out = parse_transform(v.get<std::string>()); }
void assign(const json& v, SteadyStateSpec& out) { out = parse_steady_state(v.get<std::string>()); }
void assign(const json& v, Skew& out) { out = parse_skew(v.get<std::string>()); }
void assign(const json& v, ReadPattern& out) {
  const std::string text = v.get<std::string>();
  out.pattern = parse_pattern(text);
  out.skew = out.pattern == Pattern::skewed ? parse_skew(text) : Skew{};
}
void assign(const json& v, SampleFormat& out) {
  const std::string text = v.get<std::string>();
  out = {};
  if (text == "memory") out.kind = SampleFormat::Kind::memory;
  else if (text == "tfrecord") out.kind = SampleFormat::Kind::tfrecord;
  else if (text.starts_with("records:"))
    out = {SampleFormat::Kind::records, parse_size(text.substr(8), "samples")};
  else FB_CHECK(text == "files", "the schema admits files, memory, tfrecord and records:SIZE; got " + text);
}
template <typename T>
void assign(const json& v, std::optional<T>& out) {
  T value{};
  assign(v, value);
  out = std::move(value);
}

template <typename T>
struct MemberOf;
template <typename Owner, typename Field>
struct MemberOf<Field Owner::*> {
  using Struct = Owner;
};

// Fills one typed field of a case's FamilyParameters from its canonical value.
using FieldSetter = void (*)(FamilyParameters&, const json&);
template <auto field>
void set_field(FamilyParameters& values, const json& v) {
  using Struct = typename MemberOf<decltype(field)>::Struct;
  FB_CHECK(std::holds_alternative<Struct>(values), "a field of another family's parameters");
  assign(v, std::get<Struct>(values).*field);
}
// The setter of a field, as a row of family_specs() names it: at<&LoaderParameters::workers>.
template <auto field>
constexpr FieldSetter at = &set_field<field>;

struct Param {
  const char* key;        // as written in configs
  const char* short_key;  // as written in case names
  FieldSetter field;      // the typed field the value fills
  Kind kind;
  // Kind::integer: the range the code that reads it can hold (the schema's minimum and
  // maximum say the same; a unit test checks). Kind::size: max is the largest size.
  std::int64_t min = 0;
  std::int64_t max = 0;
  // Unset by default (the schema's default is null): absent from Case::params and from the
  // name, so adding such a parameter leaves every existing case name, and baseline, as it was.
  bool optional = false;
  // In Case::params but not in the name: what the case reads rather than how (replay's trace),
  // as a dataset root is no part of a file_read case's name. Never swept.
  bool hidden = false;
  // Optional parameters only: a value that means the same as unset (0: none), left out of
  // Case::params and the name as unset is, so writing it names the same case as not writing it.
  std::int64_t same_as_unset = 0;
};

constexpr std::int64_t kMaxBlockBytes = std::int64_t{1} << 30;
constexpr std::int64_t kMaxRoundBytes = std::int64_t{1} << 60;
constexpr std::int64_t kMinRoundLimitNs = 1'000'000;  // 1ms: below it a round measures set-up

struct FamilySpec {
  const char* name;
  FamilyParameters blank;     // the family's alternative, before any field is filled
  std::vector<Param> params;  // canonical order: the order of case names and Case::params
};

// The identity of every case: changing a key or its order changes every case name, and with
// it what the diff tool can match. The schema holds the same keys (a unit test checks).
const std::vector<FamilySpec>& family_specs() {
  static const std::vector<FamilySpec> specs = {
      {"file_read",
       FileReadParameters{},
       {{"pattern", "pattern", at<&FileReadParameters::pattern>, Kind::pattern},
        {"block_size", "bs", at<&FileReadParameters::block_size>, Kind::size, 1, kMaxBlockBytes},
        {"engine", "engine", at<&FileReadParameters::engine>, Kind::choice},
        {"queue_depth", "qd", at<&FileReadParameters::queue_depth>, Kind::integer, 1, 4096},
        {"workers", "workers", at<&FileReadParameters::workers>, Kind::integer, 1, 1024},
        {"cache_state", "state", at<&FileReadParameters::cache_state>, Kind::choice},
        {"path", "path", at<&FileReadParameters::path>, Kind::choice},
        {"runtime", "runtime", at<&FileReadParameters::runtime>, Kind::duration, kMinRoundLimitNs, 0, true},
        {"max_bytes", "max_bytes", at<&FileReadParameters::max_bytes>, Kind::size, 1, kMaxRoundBytes, true},
        {"ramp_time", "ramp", at<&FileReadParameters::ramp_time>, Kind::duration, kMinRoundLimitNs, 0, true},
        {"steady_state", "ss", at<&FileReadParameters::steady_state>, Kind::steady_state, 0, 0, true},
        {"sink", "sink", at<&FileReadParameters::sink>, Kind::choice, 0, 0, true}}},
      {"loader",
       LoaderParameters{},
       {{"batch_size", "batch", at<&LoaderParameters::batch_size>, Kind::integer, 1, 65536},
        {"workers", "workers", at<&LoaderParameters::workers>, Kind::integer, 1, 1024},
        {"prefetch", "prefetch", at<&LoaderParameters::prefetch>, Kind::integer, 1, 1024},
        {"step_time", "step", at<&LoaderParameters::step_time>, Kind::distribution},
        {"transform", "transform", at<&LoaderParameters::transform>, Kind::transform},
        {"samples", "samples", at<&LoaderParameters::samples>, Kind::samples, 1, kMaxBlockBytes},
        {"epochs", "epochs", at<&LoaderParameters::epochs>, Kind::integer, 1, 10000},
        {"steps", "steps", at<&LoaderParameters::steps>, Kind::integer, 0, 1000000000},
        {"warmup_steps", "warmup", at<&LoaderParameters::warmup_steps>, Kind::integer, 0, 1000000000},
        {"accelerators", "acc", at<&LoaderParameters::accelerators>, Kind::integer, 1, 1024},
        {"target_au", "target", at<&LoaderParameters::target_au>, Kind::number},
        {"engine", "engine", at<&LoaderParameters::engine>, Kind::choice},
        {"cache_state", "state", at<&LoaderParameters::cache_state>, Kind::choice},
        {"path", "path", at<&LoaderParameters::path>, Kind::choice},
        {"pattern", "pattern", at<&LoaderParameters::pattern>, Kind::sampling, 0, 0, true},
        {"shuffle_buffer", "shuffle", at<&LoaderParameters::shuffle_buffer>, Kind::integer, 0, 1 << 24, true},
        {"verify_crc", "crc", at<&LoaderParameters::verify_crc>, Kind::boolean, 0, 0, true},
        {"accelerator", "accel", at<&LoaderParameters::accelerator>, Kind::choice, 0, 0, true},
        {"overlap", "overlap", at<&LoaderParameters::overlap>, Kind::boolean, 0, 0, true},
        {"handover", "handover", at<&LoaderParameters::handover>, Kind::choice, 0, 0, true},
        {"next_cost", "next", at<&LoaderParameters::next_cost>, Kind::duration, 0, 0, true},
        {"next_cost_per_mib", "next_mib", at<&LoaderParameters::next_cost_per_mib>, Kind::duration, 0, 0,
         true},
        {"framework", "framework", at<&LoaderParameters::framework>, Kind::choice, 0, 0, true},
        {"collate", "collate", at<&LoaderParameters::collate>, Kind::choice, 0, 0, true}}},
      // A watched job run again (harness/replay): every what-if unset by default, so a faithful
      // replay's name is replay/job:NAME/state:cold/path:source, which diff matches to the
      // watched job/NAME (comparison.h's case_identity).
      {"replay",
       ReplayParameters{},
       {{"trace", "trace", at<&ReplayParameters::trace>, Kind::choice, 0, 0, false, true},
        {"job", "job", at<&ReplayParameters::job>, Kind::choice, 0, 0, true},
        {"step_scale", "step_scale", at<&ReplayParameters::step_scale>, Kind::number, 0, 0, true},
        {"workers", "workers", at<&ReplayParameters::workers>, Kind::integer, 0, 1024, true},
        {"batch_size", "batch", at<&ReplayParameters::batch_size>, Kind::integer, 1, 65536, true},
        {"epochs", "epochs", at<&ReplayParameters::epochs>, Kind::integer, 1, 10000, true},
        {"cache_state", "state", at<&ReplayParameters::cache_state>, Kind::choice},
        {"path", "path", at<&ReplayParameters::path>, Kind::choice},
        {"target_au", "target", at<&ReplayParameters::target_au>, Kind::number, 0, 0, true},
        {"allow_resized", "allow_resized", at<&ReplayParameters::allow_resized>, Kind::boolean, 0, 0, true,
         true},
        {"cpu_scale", "cpu_scale", at<&ReplayParameters::cpu_scale>, Kind::number, 0, 0, true}}},
      {"stage",
       StageParameters{},
       {{"workers", "workers", at<&StageParameters::workers>, Kind::integer, 1, 1024},
        {"cache_state", "state", at<&StageParameters::cache_state>, Kind::choice},
        {"verify", "verify", at<&StageParameters::verify>, Kind::boolean}}},
      {"checkpoint",
       CheckpointParameters{},
       {{"model", "model", at<&CheckpointParameters::model>, Kind::choice, 0, 0, true},
        {"size", "size", at<&CheckpointParameters::size>, Kind::size, 1, kMaxRoundBytes, true},
        {"scale", "scale", at<&CheckpointParameters::scale>, Kind::number, 0, 0, true},
        {"ranks", "ranks", at<&CheckpointParameters::ranks>, Kind::integer, 1, 4096, true},
        {"files_per_rank", "files", at<&CheckpointParameters::files_per_rank>, Kind::integer, 1, 65536},
        {"block_size", "bs", at<&CheckpointParameters::block_size>, Kind::size, 1, kMaxBlockBytes},
        {"engine", "engine", at<&CheckpointParameters::engine>, Kind::choice},
        {"queue_depth", "qd", at<&CheckpointParameters::queue_depth>, Kind::integer, 1, 4096, true, false, 1},
        {"direct", "direct", at<&CheckpointParameters::direct>, Kind::boolean},
        {"fsync", "fsync", at<&CheckpointParameters::fsync>, Kind::boolean},
        {"checkpoints", "n", at<&CheckpointParameters::checkpoints>, Kind::integer, 1, 1000},
        {"interval", "interval", at<&CheckpointParameters::interval>, Kind::duration, 1'000'000'000}}},
  };
  return specs;
}

const FamilySpec& spec_of(const std::string& family) {
  for (const auto& s : family_specs())
    if (family == s.name) return s;
  check_failed("known family", __FILE__, __LINE__, "no spec for family " + family);
}

// A value to sweep over, and where it was written (for messages).
struct Choice {
  json value;
  std::string where;
};

// RETURNS: true when `v` is an integer from `min` to `max` (a float or a uint64 past int64 is not).
bool in_range(const json& v, std::int64_t min, std::int64_t max) {
  if (!v.is_number_integer()) return false;
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(INT64_MAX)) return false;
  const std::int64_t i = v.get<std::int64_t>();
  return i >= min && i <= max;
}

// RETURNS: the steady-state criterion written as {"metric", "mode", "limit", "window"}.
// Throws InputError at `where` (the schema checks the shape; this checks the values).
SteadyStateSpec steady_state_of(const json& v, const std::string& where) {
  FB_CHECK(v.is_object(), "the schema admits only objects for steady_state");
  auto text = [&](const char* key) -> std::string {
    if (!v.contains(key) || !v.at(key).is_string())
      throw InputError(where + "/" + key + ": expected a string, got " +
                       (v.contains(key) ? v.at(key).dump() : "nothing"));
    return v.at(key).get<std::string>();
  };
  SteadyStateSpec s;
  const std::string metric = text("metric"), mode = text("mode"), limit = text("limit");
  if (metric == "bw") s.metric = SteadyStateSpec::Metric::bw;
  else if (metric == "iops") s.metric = SteadyStateSpec::Metric::iops;
  else throw InputError(where + "/metric: expected one of bw, iops, got \"" + metric + "\"");
  if (mode == "slope") s.mode = SteadyStateSpec::Mode::slope;
  else if (mode == "spread") s.mode = SteadyStateSpec::Mode::spread;
  else throw InputError(where + "/mode: expected one of slope, spread, got \"" + mode + "\"");
  char* end = nullptr;
  const double pct = std::strtod(limit.c_str(), &end);
  if (end == limit.c_str() || std::string(end) != "%" || !(pct > 0) || pct > 1000)
    throw InputError(where + "/limit: expected a percentage above 0% such as 2%, got \"" + limit + "\"");
  s.limit_percent = pct;
  s.window_ns = parse_duration_ns(text("window"), where + "/window");
  if (s.window_ns < 10'000'000)
    throw InputError(where + "/window: expected a window of at least 10ms, got \"" + text("window") + "\"");
  return s;
}

// RETURNS: the canonical form of `v` as Case::params holds it. Throws InputError at `where`.
json canonical(const Param& p, const json& v, const std::string& where) {
  switch (p.kind) {
    case Kind::size: {
      if (v.is_number_integer() && !in_range(v, 1, p.max))
        throw InputError(where + ": expected a size from 1 to " + std::to_string(p.max) + " bytes, got " +
                         v.dump());
      std::uint64_t bytes =
          v.is_number_integer() ? v.get<std::uint64_t>() : parse_size(v.get<std::string>(), where);
      if (bytes == 0) throw InputError(where + ": expected a size of at least 1 byte, got " + v.dump());
      if (bytes > std::uint64_t(p.max))
        throw InputError(where + ": expected a size of at most " + format_size(double(p.max)) + ", got " +
                         v.dump());
      return bytes;
    }
    case Kind::distribution: return format_distribution(parse_distribution(v.get<std::string>(), where));
    case Kind::transform: return format_transform(parse_transform(v.get<std::string>(), where));
    case Kind::samples: {
      std::string s = v.get<std::string>();
      std::string trimmed = s;
      while (!trimmed.empty() && trimmed.front() == ' ') trimmed.erase(0, 1);
      while (!trimmed.empty() && trimmed.back() == ' ') trimmed.pop_back();
      if (trimmed.starts_with("records:")) {
        std::uint64_t bytes = parse_size(trimmed.substr(8), where);
        if (bytes == 0)
          throw InputError(where + ": expected a record size of at least 1 byte, got " + v.dump());
        if (bytes > std::uint64_t(p.max))
          throw InputError(where + ": expected a record size of at most " + format_size(double(p.max)) +
                           ", got " + v.dump());
        return "records:" + std::to_string(bytes);
      }
      return trimmed;
    }
    case Kind::duration: {
      const std::int64_t ns = parse_duration_ns(v.get<std::string>(), where);
      if (ns < p.min)
        throw InputError(where + ": expected a duration of at least " + format_duration_exact(p.min) +
                         ", got " + v.dump());
      return format_duration_exact(ns);
    }
    case Kind::steady_state: return format_steady_state(steady_state_of(v, where));
    case Kind::number: return v.get<double>();
    case Kind::integer:
      // The schema says the same; this keeps a value that bypassed it from being cut short.
      if (!in_range(v, p.min, p.max))
        throw InputError(where + ": expected an integer from " + std::to_string(p.min) + " to " +
                         std::to_string(p.max) + ", got " + v.dump());
      return v.get<std::int64_t>();
    case Kind::sampling:
      // The loader reads whole samples: only a shuffle or a skew over them.
      if (!is_skew_pattern(v.get<std::string>()))
        throw InputError(where +
                         ": expected a skew, zipf:THETA or hot_set:F%:R%, for the loader's sampling (unset: "
                         "a seeded shuffle of every sample), got " +
                         v.dump());
      [[fallthrough]];
    case Kind::pattern: {
      const std::string text = v.get<std::string>();
      return is_skew_pattern(text) ? json(format_skew(parse_skew(text, where))) : v;
    }
    case Kind::boolean:
    case Kind::choice: return v;
  }
  return v;
}

std::string value_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();  // integers, 0.9, true
}

// RETURNS: why the case cannot run, or "" when it can.
std::string infeasible(const Case& c) {
  if (c.family == "loader") {
    const LoaderParameters& p = c.loader();
    using Samples = SampleFormat::Kind;
    if (p.samples.kind == Samples::memory && p.transform.per == TransformCost::Per::decode)
      return "samples \"memory\" copies no image bytes: transform decode needs samples read from files";
    const bool tfrecord = p.samples.kind == Samples::tfrecord;
    if (!tfrecord && (p.shuffle_buffer || p.verify_crc))
      return "shuffle_buffer and verify_crc apply to samples \"tfrecord\" only, not \"" +
             c.params.at("samples").get<std::string>() + "\"";
    if (tfrecord && p.pattern)
      return "samples \"tfrecord\" are read in streams, shard by shard: a skewed pattern needs samples read "
             "by index "
             "(files or records:SIZE)";
    const std::int64_t threads = std::int64_t{p.accelerators} * p.workers;
    if (threads > kMaxLoaderThreads)
      return "accelerators x workers = " + std::to_string(threads) +
             " reader threads, more than the limit of " + std::to_string(kMaxLoaderThreads);
  }
  if (c.family == "replay" && c.replay().step_scale && !(*c.replay().step_scale > 0))
    return "step_scale must be above 0 (0.5: every recorded step half as long)";
  if (c.family == "replay" && c.replay().cpu_scale && !(*c.replay().cpu_scale > 0))
    return "cpu_scale must be above 0 (2: cores twice as fast, every recorded CPU time halved)";
  if (c.family == "checkpoint") {
    const CheckpointParameters& p = c.checkpoint();
    if (p.engine == "psync" && p.queue_depth.value_or(1) > 1)
      return "psync has one write in flight per rank: queue_depth must be 1";
    if (p.engine == "libaio" && !p.direct)
      return "libaio writes and reads only with O_DIRECT (buffered, io_submit waits for each write): direct "
             "must be true";
  }
  if (c.family != "file_read") return "";
  const FileReadParameters& p = c.file_read();
  const std::string& engine = p.engine;
  const std::string& state = p.cache_state;
  if (engine == "mmap" && state == "direct")
    return "mmap cannot bypass the page cache: cache_state direct needs psync, libaio or io_uring";
  if ((engine == "psync" || engine == "mmap") && p.queue_depth > 1)
    return engine + " has one read in flight per worker: queue_depth must be 1";
  if (engine == "libaio" && state != "direct")
    return "libaio reads only with O_DIRECT: cache_state must be direct";
  return "";
}

// Limits that only mean something together: refused where the user wrote them.
void check_round_limits(const Case& c, const std::string& file) {
  if (c.family != "file_read") return;
  const FileReadParameters& p = c.file_read();
  if (p.ramp_time && !p.runtime)
    throw InputError(
        file + ": " + c.origin.at("ramp_time") +
        ": expected runtime as well (ramp_time is excluded from the figures of a time-based round), "
        "got ramp_time alone");
  if (p.steady_state && !p.runtime)
    throw InputError(file + ": " + c.origin.at("steady_state") +
                     ": expected runtime as well (steady state is judged within a time-based round), got "
                     "steady_state alone");
  if (p.steady_state && p.steady_state->window_ns > p.runtime->count())
    throw InputError(file + ": " + c.origin.at("steady_state") +
                     "/window: expected a window no longer than runtime (" +
                     format_duration_exact(p.runtime->count()) + "), got \"" +
                     format_duration_exact(p.steady_state->window_ns) + "\"");
}

// The GPU parameters need the GPU component: a build without CUDA refuses them where they are
// written, before anything runs.
void check_gpu_parameter(const Param& p, const Choice& choice, bool cuda_built, const std::string& file) {
  const std::string key = p.key;
  const bool wants_gpu =
      (key == "sink" && choice.value == "gpu") || (key == "accelerator" && choice.value == "cuda");
  if (wants_gpu && !cuda_built)
    throw InputError(
        file + ": " + choice.where + ": " + key + " " + choice.value.get<std::string>() +
        " needs the GPU component, but this feedbench was built without CUDA (rebuild with the CUDA "
        "toolkit and -DFEEDBENCH_CUDA=ON)");
}

// Overlap is the device's copy beside its step: it means nothing for a step waited out on the CPU.
void check_overlap(const Case& c, const std::string& file) {
  if (c.family != "loader" || !c.loader().overlap.value_or(false)) return;
  if (c.loader().accelerator.value_or("cpu") != "cuda")
    throw InputError(
        file + ": " + c.origin.at("overlap") +
        ": expected accelerator \"cuda\" as well (overlap copies batch k+1 to the device during step "
        "k), got overlap without it");
}

// A checkpoint's size is size or model's, never both nor neither; its files at least one 4 KiB
// block each. Refused where the user wrote them, before anything runs.
void check_checkpoint(const Case& c, const std::string& at, const std::string& file) {
  if (c.family != "checkpoint") return;
  const CheckpointParameters& p = c.checkpoint();
  if (p.size.has_value() == p.model.has_value())
    throw InputError(file + ": " + (p.size ? c.origin.at("size") : at) +
                     ": expected size or model for the checkpoint family (the checkpoint's bytes), got " +
                     (p.size ? "both" : "neither"));
  if (p.scale && !(*p.scale > 0 && *p.scale <= 1))
    throw InputError(file + ": " + c.origin.at("scale") +
                     ": expected a fraction above 0 and at most 1, got " + c.params.at("scale").dump());
  if (p.direct && p.block_size % kCheckpointAlignment != 0)
    throw InputError(file + ": " + c.origin.at("block_size") + ": expected a multiple of " +
                     format_size(double(kCheckpointAlignment)) +
                     " with direct (O_DIRECT writes whole aligned blocks), got " +
                     std::to_string(p.block_size));
  const CheckpointLayout layout = checkpoint_layout(p);
  if (layout.file_bytes == 0)
    throw InputError(file + ": " + (p.size ? c.origin.at("size") : c.origin.at("model")) +
                     ": expected at least " + format_size(double(kCheckpointAlignment)) + " per file, got " +
                     format_size(double(layout.bytes_asked)) + " over " +
                     std::to_string(std::uint64_t(layout.ranks) * std::uint64_t(layout.files_per_rank)) +
                     " files (ranks x files_per_rank)");
}

std::string builtin_default_pointer(const std::string& family, const std::string& key) {
  return "/definitions/" + family + "/properties/" + key + "/default";
}

// RETURNS: the repetitions at `value` (written at `where`), checked against the range the
// library and the schema take.
int repetitions_at(const json& value, const std::string& where, const std::string& file) {
  if (!in_range(value, 1, kMaxRepetitions))
    throw InputError(file + ": " + where + ": expected an integer from 1 to " +
                     std::to_string(kMaxRepetitions) + ", got " + value.dump());
  return int(value.get<std::int64_t>());
}

// One family's sweep before its product is taken.
struct FamilyAxes {
  std::string family;
  std::string at;  // "/families/<i>"
  int repetitions = 3;
  std::vector<std::vector<Choice>> axes;  // per parameter in canonical order
  std::uint64_t count = 1;                // product of the axes' sizes, saturated
};

// RETURNS: parameter `p`'s value for the family entry at `at` and where it was written: the
// family's own, else defaults', else the built-in default (from `schema`).
Choice written_value(const Param& p, const json& entry, const std::string& family, const std::string& at,
                     const json& defaults, const json& schema) {
  if (entry.contains(p.key)) return {entry.at(p.key), at + "/" + p.key};
  // (The loader's sampling is its own: defaults.pattern is file_read's read order. A replay's
  // what-ifs are its own too: a config's default workers or batch_size is the loaders', and would
  // change the recorded job without a word; it takes only the conditions, state and path.)
  const bool replay_own = family == "replay" && p.kind != Kind::choice;
  // (A checkpoint's queue_depth is its own too: defaults.queue_depth is the reads' of file_read,
  // and would put a psync checkpoint out of the plan.)
  const bool checkpoint_own = family == "checkpoint" && std::string(p.key) == "queue_depth";
  if (defaults.contains(p.key) && p.kind != Kind::sampling && !replay_own && !checkpoint_own)
    return {defaults.at(p.key), std::string("/defaults/") + p.key};
  return {schema.at(json::json_pointer(builtin_default_pointer(family, p.key))),
          "built-in default of " + family + "." + p.key};
}

// RETURNS: the values parameter `p` sweeps, `written` being one value or an array of them,
// each canonical and checked; empty when an optional parameter is unset. Throws InputError
// naming config.file.
std::vector<Choice> parameter_axis(const Param& p, const Choice& written, const std::string& family,
                                   const std::string& at, const Config& config, bool cuda_built) {
  const std::string& file = config.file;
  const json& value = written.value;
  const std::string& where = written.where;
  if (p.optional && value.is_null()) return {};  // unset: no axis
  std::vector<Choice> axis;
  if (value.is_array() && p.hidden)
    throw InputError(file + ": " + where + ": expected one value (" + p.key + " is not swept), got a list");
  if (value.is_array()) {
    for (std::size_t k = 0; k < value.size(); ++k)
      axis.push_back({value[k], where + "/" + std::to_string(k)});
  } else {
    axis.push_back({value, where});
  }
  FB_CHECK(!axis.empty(), "the schema refuses empty sweeps");
  for (auto& choice : axis) {
    try {
      choice.value = canonical(p, choice.value, choice.where);
    } catch (const InputError& e) {
      throw InputError(file + ": " + e.what());
    }
    check_gpu_parameter(p, choice, cuda_built, file);
    if (std::string(p.key) == "path" && choice.value == "cache" && config.cache_root.empty())
      throw InputError(file + ": " + choice.where +
                       ": expected dataset.cache (or --cache) for path \"cache\" of the " + family +
                       " family at " + at + ", got no cache root");
  }
  return axis;
}

// RETURNS: family entry `i` of the config as its axes (per parameter, the values to sweep),
// repetitions and number of cases.
FamilyAxes family_axes(const Config& config, std::size_t i, const json& defaults, const json& schema,
                       int default_repetitions, bool cuda_built) {
  const json& entry = config.families[i];
  FamilyAxes f;
  f.family = entry.at("family").get<std::string>();
  f.at = "/families/" + std::to_string(i);
  for (const Param& p : spec_of(f.family).params)
    f.axes.push_back(parameter_axis(p, written_value(p, entry, f.family, f.at, defaults, schema), f.family,
                                    f.at, config, cuda_built));
  f.repetitions = entry.contains("repetitions")
                      ? repetitions_at(entry.at("repetitions"), f.at + "/repetitions", config.file)
                      : default_repetitions;
  for (const auto& axis : f.axes)
    if (!axis.empty()) f.count = f.count > UINT64_MAX / axis.size() ? UINT64_MAX : f.count * axis.size();
  return f;
}

// Refuses sweeps that make more than `max_cases` cases (`total`, saturated), naming each
// family's count.
void check_case_count(const std::vector<FamilyAxes>& families, std::uint64_t total, std::uint64_t max_cases,
                      const std::string& file) {
  if (total <= max_cases) return;
  std::string each;
  for (const FamilyAxes& f : families)
    each += (each.empty() ? "" : ", ") + f.at + " " + f.family + ": " +
            (f.count == UINT64_MAX ? "more than " : "") + std::to_string(f.count);
  throw InputError(file + ": /families: expected at most " + std::to_string(max_cases) +
                   " cases (raise the limit with --max-cases N), got " +
                   (total == UINT64_MAX ? "more than " : "") + std::to_string(total) + " from the sweeps (" +
                   each + "); sweep fewer values");
}

// Adds family `f`'s cases, the cartesian product of its axes (the first parameter varying
// slowest), to plan->cases; to plan->dropped, with why, those that cannot run and those
// `seen` (the names so far) already holds.
void add_cases(const FamilyAxes& f, std::uint64_t seed, const std::string& file, Plan* plan,
               std::set<std::string>* seen) {
  const FamilySpec& spec = spec_of(f.family);
  const auto& axes = f.axes;
  std::vector<std::size_t> index(axes.size(), 0);
  while (true) {
    Case c;
    c.family = f.family;
    c.values = spec.blank;
    c.group = f.at;
    c.repetitions = f.repetitions;
    c.seed = seed;
    for (std::size_t k = 0; k < axes.size(); ++k) {
      if (axes[k].empty()) continue;  // an optional parameter left unset
      const Param& param = spec.params[k];
      if (param.same_as_unset != 0 && axes[k][index[k]].value == param.same_as_unset) continue;
      c.params[spec.params[k].key] = axes[k][index[k]].value;
      spec.params[k].field(c.values, axes[k][index[k]].value);
      c.origin[spec.params[k].key] = axes[k][index[k]].where;
    }
    check_round_limits(c, file);
    check_overlap(c, file);
    check_checkpoint(c, f.at, file);
    const std::string name = c.name();
    if (std::string why = infeasible(c); !why.empty()) {
      plan->dropped.push_back(name + ": " + why);
    } else if (!seen->insert(name).second) {
      plan->dropped.push_back(name + ": same as an earlier case (" + f.at + "), measured once");
    } else {
      plan->cases.push_back(std::move(c));
    }
    std::size_t k = axes.size();
    while (k > 0 && ++index[k - 1] >= std::max<std::size_t>(1, axes[k - 1].size())) index[--k] = 0;
    if (k == 0) break;
  }
}

}  // namespace

std::vector<NamePart> Case::name_parts() const {
  std::vector<NamePart> parts;
  for (const auto& p : spec_of(family).params) {
    if (p.hidden || (p.optional && !params.contains(p.key))) continue;
    FB_CHECK(params.contains(p.key), std::string("case without ") + p.key);
    parts.push_back({p.key, p.short_key, value_text(params.at(p.key))});
  }
  return parts;
}

std::string Case::name() const {
  std::string out = family;
  for (const NamePart& p : name_parts()) out += "/" + p.short_key + ":" + p.value;
  return out;
}

const FileReadParameters& Case::file_read() const {
  FB_CHECK(family == "file_read" && std::holds_alternative<FileReadParameters>(values),
           "not a file_read case");
  return std::get<FileReadParameters>(values);
}

const LoaderParameters& Case::loader() const {
  FB_CHECK(family == "loader" && std::holds_alternative<LoaderParameters>(values), "not a loader case");
  return std::get<LoaderParameters>(values);
}

const ReplayParameters& Case::replay() const {
  FB_CHECK(family == "replay" && std::holds_alternative<ReplayParameters>(values), "not a replay case");
  return std::get<ReplayParameters>(values);
}

ReplayParameters& Case::replay() {
  FB_CHECK(family == "replay" && std::holds_alternative<ReplayParameters>(values), "not a replay case");
  return std::get<ReplayParameters>(values);
}

const StageParameters& Case::stage() const {
  FB_CHECK(family == "stage" && std::holds_alternative<StageParameters>(values), "not a stage case");
  return std::get<StageParameters>(values);
}

const CheckpointParameters& Case::checkpoint() const {
  FB_CHECK(family == "checkpoint" && std::holds_alternative<CheckpointParameters>(values),
           "not a checkpoint case");
  return std::get<CheckpointParameters>(values);
}

const std::string* Case::path() const {
  return std::visit(
      [](const auto& p) -> const std::string* {
        using P = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<P, StageParameters> || std::is_same_v<P, CheckpointParameters>)
          return nullptr;
        else return &p.path;
      },
      values);
}

const std::string& Case::cache_state() const {
  return std::visit([](const auto& p) -> const std::string& { return p.cache_state; }, values);
}

int Case::reader_threads() const {
  return std::visit(
      [](const auto& p) -> int {
        using P = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<P, LoaderParameters>) return std::max(1, p.workers) * p.accelerators;
        else if constexpr (std::is_same_v<P, ReplayParameters>) return std::max(1, p.workers.value_or(1));
        else if constexpr (std::is_same_v<P, CheckpointParameters>) return checkpoint_layout(p).ranks;
        else return std::max(1, p.workers);
      },
      values);
}

void Case::set(const std::string& key, const json& value) {
  for (const Param& p : spec_of(family).params) {
    if (key != p.key) continue;
    if (values.index() != spec_of(family).blank.index()) values = spec_of(family).blank;
    params[key] = value;
    p.field(values, value);
    return;
  }
  check_failed("a parameter of the family", __FILE__, __LINE__, family + " has no parameter " + key);
}

Case make_case(const std::string& family, const nlohmann::ordered_json& params) {
  Case c;
  c.family = family;
  c.values = spec_of(family).blank;
  // In the family's canonical order, whatever the order given.
  for (const Param& p : spec_of(family).params)
    if (params.contains(p.key)) c.set(p.key, params.at(p.key));
  for (const auto& [key, value] : params.items()) FB_CHECK(c.params.contains(key), "no parameter " + key);
  return c;
}

Plan expand_plan(const Config& config, std::uint64_t max_cases, bool cuda_built) {
  const std::string& file = config.file;
  const json& defaults = config.defaults.is_object() ? config.defaults : json::object();
  const json& schema = experiment_schema();
  Plan plan;
  std::set<std::string> seen;

  const int default_repetitions =
      defaults.contains("repetitions")
          ? repetitions_at(defaults.at("repetitions"), "/defaults/repetitions", file)
          : 3;
  const std::uint64_t seed = defaults.value("seed", std::uint64_t{42});

  // First every family's axes and the number of cases they make, then the cases themselves:
  // a small config can sweep to more cases than memory holds, so they are counted first.
  std::vector<FamilyAxes> families;
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < config.families.size(); ++i) {
    FamilyAxes f = family_axes(config, i, defaults, schema, default_repetitions, cuda_built);
    total = total > UINT64_MAX - f.count ? UINT64_MAX : total + f.count;
    families.push_back(std::move(f));
  }
  check_case_count(families, total, max_cases, file);
  for (const FamilyAxes& f : families) add_cases(f, seed, file, &plan, &seen);

  if (plan.cases.empty()) {
    std::string msg = file + ": /families: expected at least one case that can run, got none";
    if (!plan.dropped.empty()) msg += " (" + plan.dropped.front() + ")";
    throw InputError(msg);
  }
  return plan;
}

const std::vector<CheckpointModel>& checkpoint_models() {
  // MLPerf Storage v2.0's checkpointing workloads (mlcommons/storage, with DLIO): the Llama 3
  // checkpoints, model and optimizer state, and the ranks that write them.
  static const std::vector<CheckpointModel> models = {
      {"llama3-8b", 105'000'000'000ull, 8},
      {"llama3-70b", 912'000'000'000ull, 64},
      {"llama3-405b", 5'290'000'000'000ull, 512},
      {"llama3-1t", 18'000'000'000'000ull, 1024},
  };
  return models;
}

CheckpointLayout checkpoint_layout(const CheckpointParameters& p) {
  CheckpointLayout out;
  std::uint64_t bytes = p.size.value_or(0);
  int ranks = 1;
  if (p.model) {
    for (const CheckpointModel& m : checkpoint_models())
      if (*p.model == m.name) bytes = m.bytes, ranks = m.ranks;
  }
  out.ranks = p.ranks.value_or(ranks);
  out.files_per_rank = p.files_per_rank;
  out.bytes_asked = std::uint64_t(double(bytes) * p.scale.value_or(1.0));
  const std::uint64_t files = std::uint64_t(out.ranks) * std::uint64_t(std::max(1, out.files_per_rank));
  out.file_bytes = out.bytes_asked / files / kCheckpointAlignment * kCheckpointAlignment;
  return out;
}

std::vector<std::string> family_parameters(const std::string& family) {
  std::vector<std::string> keys;
  for (const auto& p : spec_of(family).params) keys.push_back(p.key);
  return keys;
}

}  // namespace feedbench
