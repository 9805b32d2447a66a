// Plan: each family of a config expanded into Cases (cartesian product of its sweeps), values
// canonicalised, combinations that cannot run dropped with their reason.
#include "feedbench/plan.h"

#include <set>

#include "feedbench/error.h"
#include "feedbench/units.h"

namespace feedbench {
namespace {

using json = nlohmann::json;

enum class Kind { choice, integer, number, boolean, size, distribution, transform, samples };

struct Param {
  const char* key;        // as written in configs
  const char* short_key;  // as written in case names
  Kind kind;
};

struct FamilySpec {
  const char* name;
  std::vector<Param> params;  // canonical order: the order of case names and Case::params
};

// The identity of every case: changing a key or its order changes every case name, and with
// it what the diff tool can match. The schema holds the same keys (a unit test checks).
const std::vector<FamilySpec>& family_specs() {
  static const std::vector<FamilySpec> specs = {
      {"file_read",
       {{"pattern", "pattern", Kind::choice},
        {"block_size", "bs", Kind::size},
        {"engine", "engine", Kind::choice},
        {"queue_depth", "qd", Kind::integer},
        {"workers", "workers", Kind::integer},
        {"cache_state", "state", Kind::choice},
        {"path", "path", Kind::choice}}},
      {"loader",
       {{"batch_size", "batch", Kind::integer},
        {"workers", "workers", Kind::integer},
        {"prefetch", "prefetch", Kind::integer},
        {"step_time", "step", Kind::distribution},
        {"transform", "transform", Kind::transform},
        {"samples", "samples", Kind::samples},
        {"epochs", "epochs", Kind::integer},
        {"steps", "steps", Kind::integer},
        {"warmup_steps", "warmup", Kind::integer},
        {"accelerators", "acc", Kind::integer},
        {"target_au", "target", Kind::number},
        {"engine", "engine", Kind::choice},
        {"cache_state", "state", Kind::choice},
        {"path", "path", Kind::choice}}},
      {"stage",
       {{"workers", "workers", Kind::integer},
        {"cache_state", "state", Kind::choice},
        {"verify", "verify", Kind::boolean}}},
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

// RETURNS: the canonical form of `v` as Case::params holds it. Throws InputError at `where`.
json canonical(const Param& p, const json& v, const std::string& where) {
  switch (p.kind) {
    case Kind::size: {
      std::uint64_t bytes = v.is_number_integer() ? v.get<std::uint64_t>()
                                                  : parse_size(v.get<std::string>(), where);
      if (bytes == 0) throw InputError(where + ": expected a size of at least 1 byte, got " + v.dump());
      return bytes;
    }
    case Kind::distribution:
      return format_distribution(parse_distribution(v.get<std::string>(), where));
    case Kind::transform:
      return format_transform(parse_transform(v.get<std::string>(), where));
    case Kind::samples: {
      std::string s = v.get<std::string>();
      std::string trimmed = s;
      while (!trimmed.empty() && trimmed.front() == ' ') trimmed.erase(0, 1);
      while (!trimmed.empty() && trimmed.back() == ' ') trimmed.pop_back();
      if (trimmed.starts_with("records:")) {
        std::uint64_t bytes = parse_size(trimmed.substr(8), where);
        if (bytes == 0) throw InputError(where + ": expected a record size of at least 1 byte, got " + v.dump());
        return "records:" + std::to_string(bytes);
      }
      return trimmed;
    }
    case Kind::number:
      return v.get<double>();
    case Kind::integer:
      return v.get<std::int64_t>();
    case Kind::boolean:
    case Kind::choice:
      return v;
  }
  return v;
}

std::string value_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();  // integers, 0.9, true
}

// RETURNS: why the case cannot run, or "" when it can.
std::string infeasible(const Case& c) {
  if (c.family != "file_read") return "";
  const std::string engine = c.str("engine");
  const std::string state = c.str("cache_state");
  if (engine == "mmap" && state == "direct")
    return "mmap cannot bypass the page cache: cache_state direct needs psync, libaio or io_uring";
  if ((engine == "psync" || engine == "mmap") && c.integer("queue_depth") > 1)
    return engine + " has one read in flight per worker: queue_depth must be 1";
  if (engine == "libaio" && state != "direct") return "libaio reads only with O_DIRECT: cache_state must be direct";
  return "";
}

std::string builtin_default_pointer(const std::string& family, const std::string& key) {
  return "/definitions/" + family + "/properties/" + key + "/default";
}

}  // namespace

std::string Case::name() const {
  std::string out = family;
  for (const auto& p : spec_of(family).params) {
    FB_CHECK(params.contains(p.key), std::string("case without ") + p.key);
    out += std::string("/") + p.short_key + ":" + value_text(params.at(p.key));
  }
  return out;
}

std::string Case::str(const char* key) const {
  FB_CHECK(params.contains(key) && params.at(key).is_string(), std::string("no string parameter ") + key);
  return params.at(key).get<std::string>();
}

std::int64_t Case::integer(const char* key) const {
  FB_CHECK(params.contains(key) && params.at(key).is_number_integer(), std::string("no integer parameter ") + key);
  return params.at(key).get<std::int64_t>();
}

double Case::number(const char* key) const {
  FB_CHECK(params.contains(key) && params.at(key).is_number(), std::string("no number parameter ") + key);
  return params.at(key).get<double>();
}

bool Case::has(const char* key) const { return params.contains(key); }

Plan expand_plan(const Config& config) {
  const std::string& file = config.file;
  const json& defaults = config.defaults.is_object() ? config.defaults : json::object();
  const json& schema = experiment_schema();
  Plan plan;
  std::set<std::string> seen;

  const int default_repetitions = defaults.value("repetitions", 3);
  const std::uint64_t seed = defaults.value("seed", std::uint64_t{42});

  for (std::size_t i = 0; i < config.families.size(); ++i) {
    const json& entry = config.families[i];
    const std::string family = entry.at("family").get<std::string>();
    const std::string at = "/families/" + std::to_string(i);
    const FamilySpec& spec = spec_of(family);

    // Per parameter, the values to sweep: the family's own, else defaults', else built-in.
    std::vector<std::vector<Choice>> axes;
    for (const Param& p : spec.params) {
      json value;
      std::string where;
      if (entry.contains(p.key)) {
        value = entry.at(p.key);
        where = at + "/" + p.key;
      } else if (defaults.contains(p.key)) {
        value = defaults.at(p.key);
        where = std::string("/defaults/") + p.key;
      } else {
        value = schema.at(json::json_pointer(builtin_default_pointer(family, p.key)));
        where = "built-in default of " + family + "." + p.key;
      }
      std::vector<Choice> axis;
      if (value.is_array()) {
        for (std::size_t k = 0; k < value.size(); ++k) axis.push_back({value[k], where + "/" + std::to_string(k)});
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
        if (std::string(p.key) == "path" && choice.value == "cache" && config.cache_root.empty())
          throw InputError(file + ": " + choice.where + ": expected dataset.cache (or --cache) for path \"cache\" of the " +
                           family + " family at " + at + ", got no cache root");
      }
      axes.push_back(std::move(axis));
    }

    const int repetitions = entry.value("repetitions", default_repetitions);
    // Cartesian product, the first parameter varying slowest.
    std::vector<std::size_t> index(axes.size(), 0);
    while (true) {
      Case c;
      c.family = family;
      c.repetitions = repetitions;
      c.seed = seed;
      for (std::size_t k = 0; k < axes.size(); ++k) c.params[spec.params[k].key] = axes[k][index[k]].value;
      const std::string name = c.name();
      if (std::string why = infeasible(c); !why.empty()) {
        plan.dropped.push_back(name + ": " + why);
      } else if (!seen.insert(name).second) {
        plan.dropped.push_back(name + ": same as an earlier case (" + at + "), measured once");
      } else {
        plan.cases.push_back(std::move(c));
      }
      std::size_t k = axes.size();
      while (k > 0 && ++index[k - 1] == axes[k - 1].size()) index[--k] = 0;
      if (k == 0) break;
    }
  }

  if (plan.cases.empty()) {
    std::string msg = file + ": /families: expected at least one case that can run, got none";
    if (!plan.dropped.empty()) msg += " (" + plan.dropped.front() + ")";
    throw InputError(msg);
  }
  return plan;
}

std::vector<std::string> family_parameters(const std::string& family) {
  std::vector<std::string> keys;
  for (const auto& p : spec_of(family).params) keys.push_back(p.key);
  return keys;
}

}  // namespace feedbench
