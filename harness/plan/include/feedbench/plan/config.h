// An experiment config (configs/*.json): parsed, environment-expanded, checked against
// configs/schema/experiment.schema.json. The single definition of the format is that schema.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace feedbench {

struct ConfigOverrides {
  std::optional<std::string> source;              // --source
  std::optional<std::string> cache;               // --cache
  std::optional<std::string> scratch;             // --scratch
  std::map<std::string, std::string> throttle;    // --throttle ROLE=RATE: dataset.throttle.ROLE
  nlohmann::json set = nlohmann::json::object();  // --set key=value: forces that parameter in every family
                                                  // that has it, and in `defaults`
};

struct Config {
  std::string file;         // path it was read from
  std::string name;         // "name"
  std::string description;  // "description", may be empty
  std::string source_root;  // dataset.source after ${VAR} expansion and overrides ("" if absent)
  std::string cache_root;   // dataset.cache likewise ("" if absent)
  // dataset.scratch: a folder feedbench may write in (the checkpoint family's), "" if absent;
  // checked to exist when a checkpoint family is in the config.
  std::string scratch_root;
  std::vector<std::string> include;               // dataset.include globs ("**" spans folders); empty = all
  std::map<std::string, std::uint64_t> throttle;  // dataset.throttle: path role -> bytes/s
  // dataset.include was "from-cache": `include` is empty until the caller reads the cache's
  // manifest (resolve_include_from_cache in stager.h).
  bool include_from_cache = false;
  // dataset.share: how ranks of a distributed run (mpirun) split the selection each round.
  // "per_rank": one disjoint file-level share per rank, from one shuffle of the whole selection;
  // "per_node": every node reads the whole selection (its own node-local cache), its ranks
  // splitting it. A run of one rank reads the whole selection either way.
  std::string share = "per_rank";
  // dataset.partial_cache: the cache holds part of the selection (a staged hot set).
  bool partial_cache = false;
  nlohmann::json defaults;  // "defaults" merged with overrides: repetitions, seed, ...
  nlohmann::json families;  // "families" array, verbatim after expansion
  nlohmann::json resolved;  // the whole config as run (expanded, overrides applied)
  std::string sha256;       // SHA-256 of resolved.dump() (canonical), hex
  std::map<std::string, std::string> expanded_env;   // VAR -> value of a ${VAR} that was set
  std::map<std::string, std::string> defaults_used;  // VAR -> the ${VAR:-default} that applied
                                                     // because VAR was unset or empty
};

// Turns --set KEY=VALUE options into ConfigOverrides::set: VALUE is JSON when it parses as
// JSON ("[1,2]", "4", "true"), else a string.
// RETURNS: {KEY: value}. Throws InputError naming --set KEY for a malformed option, a number no
// double holds, or a value past the limits of a --set value (json_limits.h).
nlohmann::json parse_sets(const std::vector<std::string>& sets);

// Turns --throttle ROLE=RATE options into ConfigOverrides::throttle. RETURNS: {ROLE: RATE}.
// Throws InputError naming --throttle for a role other than source/cache or a malformed option
// (the rate itself is checked with the config, as dataset.throttle.ROLE).
std::map<std::string, std::string> parse_throttles(const std::vector<std::string>& options);

// Reads, expands ${VAR} / ${VAR:-default} in every string from the environment, applies
// overrides and validates against the schema.
// RETURNS: the config. Throws InputError naming the file, JSON pointer and what was expected
// (e.g. "configs/demo.json: /families/0/block_size: expected a size such as 4KiB, got \"4XB\""),
// also for a config past kConfigLimits (size, nesting, string length), checked before any
// recursive work, and for a string that ${VAR} expansion makes longer than the limit.
Config load_config(const std::string& path, const ConfigOverrides& overrides = {});

// Same, from text already in memory (`file` is only used in messages).
Config parse_config(const std::string& text, const std::string& file, const ConfigOverrides& overrides = {});

// Same, from a document already in memory (a verb's own config, replay's): `file` names it in
// messages and the result. Its nesting and strings are held to kConfigLimits as a text's are.
Config parse_config_document(nlohmann::json doc, const std::string& file,
                             const ConfigOverrides& overrides = {});

// Expands ${VAR} and ${VAR:-default} in `text`. Records each variable that was set (and its
// value) in `used`, and each default that applied because its variable was unset or empty in
// `defaulted`; either may be null. Throws InputError when a ${VAR} without default is unset
// (naming `where`).
std::string expand_env(const std::string& text, const std::string& where,
                       std::map<std::string, std::string>* used,
                       std::map<std::string, std::string>* defaulted = nullptr);

// RETURNS: configs/schema/experiment.schema.json as compiled into the binary, parsed.
const nlohmann::json& experiment_schema();

}  // namespace feedbench
