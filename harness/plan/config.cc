// Config loading: parse, ${VAR} expansion, overrides, schema check (valijson), path checks.
// The schema (configs/schema/experiment.schema.json, compiled in) is the single definition
// of the format; this file only turns valijson's findings into one clear line.
#include "feedbench/plan/config.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "feedbench/base/error.h"
#include "feedbench/base/json_limits.h"
#include "feedbench/base/sha256.h"
#include "feedbench/base/units.h"
#include "feedbench/experiment_schema.h"

namespace feedbench {
namespace {

using json = nlohmann::json;
using Tokens = std::vector<std::string>;

// ---- JSON pointers ------------------------------------------------------------------------

// RETURNS: `token` escaped as one JSON-pointer reference token ("~" -> "~0", "/" -> "~1").
std::string escape_token(const std::string& token) {
  return (nlohmann::json::json_pointer() / token).to_string().substr(1);
}

std::string pointer(const Tokens& tokens) {
  if (tokens.empty()) return "/";
  std::string out;
  for (const auto& t : tokens) out += "/" + escape_token(t);
  return out;
}

// RETURNS: the value at `tokens` in `doc`, or nullptr when there is none.
const json* find(const json& doc, const Tokens& tokens) {
  const json* node = &doc;
  for (const auto& t : tokens) {
    if (node->is_object()) {
      auto it = node->find(t);
      if (it == node->end()) return nullptr;
      node = &*it;
    } else if (node->is_array()) {
      if (t.empty() || !std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return nullptr;
      std::size_t index = std::stoul(t);
      if (index >= node->size()) return nullptr;
      node = &(*node)[index];
    } else {
      return nullptr;
    }
  }
  return node;
}

// A value as the user wrote it, shortened for a one-line message.
std::string shown(const json& value) {
  std::string text = value.dump();
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

// ---- The schema -----------------------------------------------------------------------------

struct CompiledSchema {
  json doc;
  valijson::Schema schema;
};

const CompiledSchema& compiled_schema() {
  static const CompiledSchema* compiled = [] {
    auto* c = new CompiledSchema;
    try {
      c->doc = json::parse(embedded::kExperimentSchema);
      valijson::SchemaParser parser;
      valijson::adapters::NlohmannJsonAdapter adapter(c->doc);
      parser.populateSchema(adapter, c->schema);
    } catch (const std::exception& e) {
      check_failed("schema compiles", __FILE__, __LINE__,
                   std::string("the embedded experiment schema is broken: ") + e.what());
    }
    return c;
  }();
  return *compiled;
}

const json& definition(const std::string& name) { return compiled_schema().doc.at("definitions").at(name); }

// RETURNS: the definition of family `name`, or nullptr for an unknown family.
const json* family_definition(const json& name) {
  if (!name.is_string()) return nullptr;
  const json& defs = compiled_schema().doc.at("definitions");
  const json& kinds = defs.at("family").at("properties").at("family").at("enum");
  if (std::find(kinds.begin(), kinds.end(), name) == kinds.end()) return nullptr;
  return &defs.at(name.get<std::string>());
}

const json& deref(const json& node) {
  const json* n = &node;
  while (n->is_object() && n->contains("$ref")) {
    std::string ref = n->at("$ref").get<std::string>();  // "#/definitions/x": local only
    n = &compiled_schema().doc.at(json::json_pointer(ref.substr(1)));
  }
  return *n;
}

// RETURNS: the schema node describing the value at `tokens` of `doc`, or nullptr.
// A family entry is described by its own family's definition (picked by its "family").
const json* schema_for(const json& doc, const Tokens& tokens) {
  const json* node = &compiled_schema().doc;
  Tokens walked;
  for (const auto& t : tokens) {
    const json& n = deref(*node);
    const json* value = find(doc, walked);
    if (n.contains("allOf") && value && value->is_object() && value->contains("family")) {
      if (const json* fam = family_definition(value->at("family"))) {
        if (!fam->at("properties").contains(t)) return nullptr;
        node = &fam->at("properties").at(t);
        walked.push_back(t);
        continue;
      }
    }
    if (n.contains("properties") && n.at("properties").contains(t)) {
      node = &n.at("properties").at(t);
    } else if (n.contains("items")) {
      node = &n.at("items");
    } else if (n.contains("anyOf")) {  // a sweep: the list branch's items
      node = nullptr;
      for (const auto& branch : n.at("anyOf"))
        if (branch.value("type", "") == "array") node = &branch.at("items");
      if (!node) return nullptr;
    } else {
      return nullptr;
    }
    walked.push_back(t);
  }
  return node;
}

std::string number_text(const json& v) { return v.dump(); }

// RETURNS: what a value matching `node` looks like, in words: "an integer from 1 to 4096".
std::string expected_phrase(const json& raw) {
  const json& node = deref(raw);
  if (node.contains("title")) return node.at("title").get<std::string>();
  if (node.contains("const")) return node.at("const").dump();
  if (node.contains("enum")) {
    std::string out = "one of ";
    const json& values = node.at("enum");
    for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + values[i].dump();
    return out;
  }
  if (node.contains("allOf") && node.at("allOf").size() == 1) return expected_phrase(node.at("allOf")[0]);
  if (node.contains("anyOf")) {
    const json* scalar = nullptr;
    const json* list = nullptr;
    std::string joined;
    for (const auto& branch : node.at("anyOf")) {
      if (deref(branch).value("type", "") == "array") list = &branch;
      else scalar = &branch;
      joined += (joined.empty() ? "" : " or ") + expected_phrase(branch);
    }
    if (node.at("anyOf").size() == 2 && scalar && list)
      return expected_phrase(*scalar) + ", or a non-empty list of them (a sweep)";
    return joined;
  }
  std::string type = node.value("type", "");
  if (type == "integer" || type == "number") {
    std::string what = type == "integer" ? "an integer" : "a number";
    bool lo = node.contains("minimum"), hi = node.contains("maximum");
    if (lo && hi)
      return what + " from " + number_text(node["minimum"]) + " to " + number_text(node["maximum"]);
    if (lo) return what + " of at least " + number_text(node["minimum"]);
    return what;
  }
  if (type == "boolean") return "true or false";
  if (type == "string") return node.value("minLength", 0) > 0 ? "a non-empty string" : "a string";
  if (type == "array") return node.value("minItems", 0) > 0 ? "a non-empty list" : "a list";
  if (type == "object") return "an object";
  return "a valid value";
}

// RETURNS: the keys an object at `node` may have, for "unknown key" messages.
std::string allowed_keys(const json& raw, const json* value) {
  const json* node = &deref(raw);
  if (node->contains("allOf") && value && value->is_object() && value->contains("family"))
    if (const json* fam = family_definition(value->at("family"))) node = fam;
  std::string out;
  if (node->contains("properties"))
    for (const auto& [key, _] : node->at("properties").items()) out += (out.empty() ? "" : ", ") + key;
  return out;
}

// ---- Turning valijson's findings into one line -----------------------------------------------

// RETURNS: the last 'quoted' name in a valijson description (the key it is about).
std::string quoted_name(const std::string& description) {
  auto last = description.rfind('\'');
  if (last == std::string::npos || last == 0) return "";
  auto first = description.rfind('\'', last - 1);
  if (first == std::string::npos) return "";
  return description.substr(first + 1, last - first - 1);
}

struct Finding {
  Tokens tokens;  // where the problem is (for an unknown or missing key: that key)
  enum class Kind { value, unknown_key, missing_key } kind = Kind::value;
  std::string key;
};

Finding to_finding(const valijson::ValidationResults::Error& error) {
  Finding f;
  for (const auto& c : error.context) {
    if (c == "<root>") continue;
    f.tokens.push_back(c.size() >= 2 && c.front() == '[' && c.back() == ']' ? c.substr(1, c.size() - 2) : c);
  }
  if (error.description.starts_with("Object contains a property that could not be validated")) {
    f.kind = Finding::Kind::unknown_key;
  } else if (error.description.starts_with("Missing required property")) {
    f.kind = Finding::Kind::missing_key;
  }
  if (f.kind != Finding::Kind::value) {
    f.key = quoted_name(error.description);
    f.tokens.push_back(f.key);
  }
  return f;
}

// RETURNS: the most specific finding: composite "failed to validate against ..." reports are
// skipped and the deepest remaining location wins (in an anyOf, the branch that got furthest).
std::optional<Finding> best_finding(const valijson::ValidationResults& results) {
  std::optional<Finding> best;
  for (const auto& error : results) {
    if (error.description.starts_with("Failed to validate")) continue;
    Finding f = to_finding(error);
    if (!best || f.tokens.size() > best->tokens.size()) best = f;
  }
  return best;
}

// RETURNS: "/pointer: expected ..., got ..." for a finding in `doc`.
std::string describe(const json& doc, const Finding& f) {
  std::string where = pointer(f.tokens);
  Tokens parent(f.tokens.begin(), f.tokens.end() - (f.tokens.empty() ? 0 : 1));
  if (f.kind == Finding::Kind::unknown_key) {
    const json* object = find(doc, parent);
    const json* node = schema_for(doc, parent);
    std::string owner = "here";
    if (parent.size() == 2 && parent[0] == "families" && object && object->contains("family"))
      owner = "in a " + object->at("family").get<std::string>() + " family";
    else if (!parent.empty()) owner = "in " + pointer(parent);
    else owner = "at the top level";
    return where + ": expected one of the keys allowed " + owner + " (" +
           (node ? allowed_keys(*node, object) : std::string("?")) + "), got unknown key \"" + f.key + "\"";
  }
  const json* node = schema_for(doc, f.tokens);
  std::string expected = node ? expected_phrase(*node) : "a valid value";
  if (f.kind == Finding::Kind::missing_key)
    return where + ": expected " + expected + " (required), got nothing";
  const json* value = find(doc, f.tokens);
  if (value && value->is_array() && value->empty()) {
    if (f.tokens.size() == 1 && f.tokens[0] == "families")
      return where + ": expected at least one family, got []";
    return where + ": expected " + expected + "; an empty sweep runs nothing, got []";
  }
  return where + ": expected " + expected + ", got " + (value ? shown(*value) : std::string("nothing"));
}

// RETURNS: nullopt when `doc` matches the schema, else the most specific finding.
std::optional<Finding> check_schema(const json& doc) {
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter target(doc);
  if (validator.validate(compiled_schema().schema, target, &results)) return std::nullopt;
  auto best = best_finding(results);
  if (!best) best = Finding{};  // only composite reports: point at the root
  return best;
}

// ---- Environment expansion -------------------------------------------------------------------

bool is_name_char(char c, bool first) {
  return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (!first && c >= '0' && c <= '9');
}

void expand_strings(json& node, const std::string& file, Tokens& at, std::map<std::string, std::string>* used,
                    std::map<std::string, std::string>* defaulted) {
  if (node.is_string()) {
    const std::string& text = node.get_ref<const std::string&>();
    if (text.find("${") == std::string::npos) return;
    std::string expanded = expand_env(text, file + ": " + pointer(at), used, defaulted);
    // A value from the environment meets the same bound as one written in the file.
    if (expanded.size() > kConfigLimits.max_string_bytes)
      throw InputError(file + ": " + pointer(at) + ": expected a string of at most " +
                       std::to_string(kConfigLimits.max_string_bytes) +
                       " bytes (the limit for a config) after ${VAR} expansion, got " +
                       std::to_string(expanded.size()) + " bytes");
    node = std::move(expanded);
  } else if (node.is_object()) {
    for (auto& [key, value] : node.items()) {
      at.push_back(key);
      expand_strings(value, file, at, used, defaulted);
      at.pop_back();
    }
  } else if (node.is_array()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      at.push_back(std::to_string(i));
      expand_strings(node[i], file, at, used, defaulted);
      at.pop_back();
    }
  }
}

// ---- Overrides -------------------------------------------------------------------------------

// Applies --source/--cache/--scratch and --set. RETURNS: the pointers whose values came from --set
// (mapped to the --set key), to say so in messages.
std::map<std::string, std::string> apply_overrides(json& doc, const ConfigOverrides& o,
                                                   const std::string& file) {
  std::map<std::string, std::string> from_set;
  if (!doc.is_object()) return from_set;
  if (o.source || o.cache || o.scratch || !o.throttle.empty()) {
    if (!doc.contains("dataset") || !doc["dataset"].is_object()) doc["dataset"] = json::object();
    if (o.source) check_utf8(*o.source, "--source");
    if (o.cache) check_utf8(*o.cache, "--cache");
    if (o.scratch) check_utf8(*o.scratch, "--scratch");
    if (o.source) doc["dataset"]["source"] = *o.source;
    if (o.cache) doc["dataset"]["cache"] = *o.cache;
    if (o.scratch) doc["dataset"]["scratch"] = *o.scratch;
    for (const auto& [role, rate] : o.throttle) {
      check_utf8(rate, "--throttle " + role);
      json& dataset = doc["dataset"];
      if (!dataset.contains("throttle") || !dataset["throttle"].is_object())
        dataset["throttle"] = json::object();
      dataset["throttle"][role] = rate;
      from_set["/dataset/throttle/" + role] = "--throttle " + role;
    }
  }
  if (o.set.is_null()) return from_set;
  if (!o.set.is_object()) throw InputError(file + ": --set: expected key=value pairs");
  const json& default_props = definition("defaults").at("properties");
  for (const auto& [key, value] : o.set.items()) {
    try {
      check_json_value(value, file, "/defaults/" + escape_token(key), kConfigLimits);
    } catch (const InputError& e) {
      throw InputError(std::string(e.what()) + " (from --set " + key + ")");
    }
    bool known = false;
    if (default_props.contains(key)) {
      known = true;
      if (!doc.contains("defaults") || !doc["defaults"].is_object()) doc["defaults"] = json::object();
      doc["defaults"][key] = value;
      from_set["/defaults/" + escape_token(key)] = key;
    }
    if (doc.contains("families") && doc["families"].is_array()) {
      for (std::size_t i = 0; i < doc["families"].size(); ++i) {
        json& entry = doc["families"][i];
        if (!entry.is_object() || !entry.contains("family")) continue;
        const json* fam = family_definition(entry["family"]);
        if (!fam || key == "family" || !fam->at("properties").contains(key)) continue;
        known = true;
        entry[key] = value;
        from_set["/families/" + std::to_string(i) + "/" + escape_token(key)] = key;
      }
    }
    if (!known) {
      std::string keys;
      for (const auto& [k, _] : default_props.items()) keys += (keys.empty() ? "" : ", ") + k;
      throw InputError(file + ": --set " + key + ": expected a parameter name (" + keys +
                       "), got unknown \"" + key + "\"");
    }
  }
  return from_set;
}

std::string with_set_note(const std::string& message_pointer, const std::string& message,
                          const std::map<std::string, std::string>& from_set) {
  for (const auto& [ptr, key] : from_set)
    if (message_pointer == ptr || message_pointer.starts_with(ptr + "/"))
      return message + (key.starts_with("--") ? " (from " + key + ")" : " (from --set " + key + ")");
  return message;
}

// A default must also suit each family that takes it: check {family, key: default} per family.
void check_defaults_per_family(const json& doc, const std::string& file,
                               const std::map<std::string, std::string>& from_set) {
  if (!doc.contains("defaults")) return;
  const json& defaults = doc.at("defaults");
  const json& families = doc.at("families");
  for (std::size_t i = 0; i < families.size(); ++i) {
    const json& entry = families[i];
    const json* fam = family_definition(entry.at("family"));
    for (const auto& [key, value] : defaults.items()) {
      if (key == "repetitions" || entry.contains(key) || !fam->at("properties").contains(key)) continue;
      json probe = {{"name", "probe"},
                    {"dataset", {{"source", "."}}},
                    {"families", json::array({{{"family", entry.at("family")}, {key, value}}})}};
      auto finding = check_schema(probe);
      if (!finding) continue;
      // Report it where the user wrote it: /defaults/<key>/..., judged by the family's rule.
      Tokens rest(finding->tokens.begin() + std::min<std::size_t>(3, finding->tokens.size()),
                  finding->tokens.end());
      Tokens at = {"defaults", key};
      at.insert(at.end(), rest.begin(), rest.end());
      const json* node = schema_for(probe, finding->tokens);
      const json* got = find(doc, at);
      std::string msg = pointer(at) + ": expected " + (node ? expected_phrase(*node) : "a valid value") +
                        " (the default for the " + entry.at("family").get<std::string>() +
                        " family at /families/" + std::to_string(i) + "), got " +
                        (got ? shown(*got) : "nothing");
      throw InputError(file + ": " + with_set_note(pointer(at), msg, from_set));
    }
  }
}

// RETURNS: true when some family reads path "cache" (its own value, or the default's).
bool uses_cache_path(const json& doc) {
  auto has_cache = [](const json& v) {
    if (v.is_array()) return std::find(v.begin(), v.end(), json("cache")) != v.end();
    return v == json("cache");
  };
  const json* default_path = find(doc, {"defaults", "path"});
  for (const auto& entry : doc.at("families")) {
    const json* fam = family_definition(entry.at("family"));
    if (!fam->at("properties").contains("path")) continue;
    if (entry.contains("path") ? has_cache(entry.at("path")) : (default_path && has_cache(*default_path)))
      return true;
  }
  return false;
}

void check_folder(const std::string& file, const char* ptr, const std::string& path, const char* option,
                  const std::optional<std::string>& overridden) {
  std::error_code ec;
  std::string origin = overridden ? std::string(" (from ") + option + ")" : "";
  if (!std::filesystem::exists(path, ec))
    throw InputError(file + ": " + ptr + origin + ": " + path + " does not exist");
  if (!std::filesystem::is_directory(path, ec))
    throw InputError(file + ": " + ptr + origin + ": " + path + " is not a folder");
}

}  // namespace

const nlohmann::json& experiment_schema() { return compiled_schema().doc; }

std::string expand_env(const std::string& text, const std::string& where,
                       std::map<std::string, std::string>* used,
                       std::map<std::string, std::string>* defaulted) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '$' || i + 1 >= text.size() || text[i + 1] != '{') {
      out += text[i++];
      continue;
    }
    std::size_t close = text.find('}', i + 2);
    if (close == std::string::npos)
      throw InputError(where + ": expected ${NAME} or ${NAME:-default}, got an unterminated \"${\" in \"" +
                       text + "\"");
    std::string inner = text.substr(i + 2, close - i - 2);
    std::size_t sep = inner.find(":-");
    std::string name = inner.substr(0, sep);
    bool valid = !name.empty() && is_name_char(name[0], true) &&
                 std::all_of(name.begin(), name.end(), [](char c) { return is_name_char(c, false); });
    if (!valid)
      throw InputError(where +
                       ": expected ${NAME} or ${NAME:-default} with NAME of letters, digits and _, got \"${" +
                       inner + "}\"");
    const char* env = std::getenv(name.c_str());
    std::string value;
    if (env && *env) {
      value = env;
      check_utf8(value, where + ": environment variable " + name);
      if (used) (*used)[name] = value;
    } else if (sep != std::string::npos) {
      value = inner.substr(sep + 2);  // like the shell: an empty variable takes the default too
      // The config's own fallback, not the user's setting: recorded apart.
      if (defaulted) (*defaulted)[name] = value;
    } else {
      throw InputError(where + ": expected environment variable " + name + " to be set (for ${" + name +
                       "}; write ${" + name + ":-default} to give a default), got it " +
                       (env ? "empty" : "unset"));
    }
    out += value;
    i = close + 1;
  }
  return out;
}

Config parse_config(const std::string& text, const std::string& file, const ConfigOverrides& overrides) {
  json doc;
  try {
    doc = parse_json_within(text, file, kConfigLimits);
  } catch (const json::parse_error& e) {
    const auto [line, column] = line_and_column(text, e.byte);
    std::string what = e.what();
    auto colon = what.find(": ");  // drop nlohmann's "[json.exception...] parse error at ...: "
    if (colon != std::string::npos) what = what.substr(colon + 2);
    throw InputError(file + ": line " + std::to_string(line) + ", column " + std::to_string(column) +
                     ": expected valid JSON, got " + what);
  }
  return parse_config_document(std::move(doc), file, overrides);
}

Config parse_config_document(nlohmann::json doc, const std::string& file, const ConfigOverrides& overrides) {
  // A document built in memory did not come through the parser, which checks nesting and strings.
  check_json_value(doc, file, "", kConfigLimits);
  Config config;
  config.file = file;
  Tokens at;
  expand_strings(doc, file, at, &config.expanded_env, &config.defaults_used);
  auto from_set = apply_overrides(doc, overrides, file);

  if (auto finding = check_schema(doc)) {
    std::string msg = describe(doc, *finding);
    throw InputError(file + ": " + with_set_note(pointer(finding->tokens), msg, from_set));
  }
  check_defaults_per_family(doc, file, from_set);

  config.name = doc.at("name").get<std::string>();
  config.description = doc.value("description", "");
  const json& dataset = doc.at("dataset");
  config.source_root = dataset.at("source").get<std::string>();
  config.cache_root = dataset.value("cache", "");
  if (dataset.contains("include")) {
    if (dataset.at("include").is_string()) {
      config.include_from_cache = true;
      if (config.cache_root.empty())
        throw InputError(file +
                         ": /dataset/include: \"from-cache\" reads the selection from the "
                         "cache's manifest: set dataset.cache (or --cache)");
    } else {
      config.include = dataset.at("include").get<std::vector<std::string>>();
    }
  }
  config.partial_cache = dataset.value("partial_cache", false);
  if (config.partial_cache && config.cache_root.empty())
    throw InputError(file +
                     ": /dataset/partial_cache: the cache holds part of the selection: set dataset.cache "
                     "(or --cache)");
  if (config.partial_cache && config.include_from_cache)
    throw InputError(file +
                     ": /dataset/partial_cache: expected the selection the cache is part of, not "
                     "\"include\": \"from-cache\" (the cache's own selection)");
  const json throttle = dataset.value("throttle", json::object());
  for (const auto& [role, rate] : throttle.items()) {
    const std::string where = "/dataset/throttle/" + role;
    try {
      config.throttle[role] = parse_rate(rate.get<std::string>(), where);
    } catch (const InputError& e) {
      throw InputError(file + ": " + with_set_note(where, e.what(), from_set));
    }
  }
  config.share = dataset.value("share", std::string("per_rank"));  // the schema checked the choice
  config.defaults = doc.value("defaults", json::object());
  config.families = doc.at("families");

  check_folder(file, "/dataset/source", config.source_root, "--source", overrides.source);
  if (!config.cache_root.empty() && uses_cache_path(doc))
    check_folder(file, "/dataset/cache", config.cache_root, "--cache", overrides.cache);
  config.scratch_root = dataset.value("scratch", "");
  // The checkpoint family writes, and only beneath the folder the config names for it.
  for (std::size_t i = 0; i < config.families.size(); ++i) {
    if (config.families[i].at("family") != "checkpoint") continue;
    if (config.scratch_root.empty())
      throw InputError(file +
                       ": /dataset/scratch: expected a folder feedbench may write in, for the checkpoint "
                       "family at /families/" +
                       std::to_string(i) + ", got none (set it, or give --scratch DIR)");
    // Whether it exists is checked when the plan holds a checkpoint case (check_checkpoint_scratch):
    // a run filtered to other families needs no scratch.
    break;
  }

  config.resolved = std::move(doc);
  config.sha256 = sha256_hex(config.resolved.dump());
  return config;
}

Config load_config(const std::string& path, const ConfigOverrides& overrides) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(errno_message(path + ": cannot read the config", errno));
  // Refused by its size before reading; a pipe or device is read up to one byte past the limit.
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) {
    auto size = std::filesystem::file_size(path, ec);
    if (!ec) check_json_size(size, path, kConfigLimits);
  }
  std::string text(kConfigLimits.max_bytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw InputError(errno_message(path + ": cannot read the config", errno));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return parse_config(text, path, overrides);
}

std::map<std::string, std::string> parse_throttles(const std::vector<std::string>& options) {
  std::map<std::string, std::string> out;
  for (const std::string& o : options) {
    auto eq = o.find('=');
    const std::string role = o.substr(0, eq);
    if (eq == std::string::npos || (role != "source" && role != "cache"))
      throw InputError("--throttle " + o +
                       ": expected ROLE=RATE with ROLE source or cache, e.g. --throttle source=40MiB/s");
    out[role] = o.substr(eq + 1);
  }
  return out;
}

// RETURNS: "[source, cache]" as a list, as a shell user writes a sweep: each element, trimmed,
// is JSON where it parses as JSON (numbers, true), else a string. Throws InputError naming
// --set KEY for an empty list or element.
static json bare_list(const std::string& key, const std::string& value) {
  json list = json::array();
  const std::string inner = value.substr(1, value.size() - 2);
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = inner.find(',', start);
    std::string item = inner.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty())
      throw InputError("--set " + key + ": expected a list such as [source,cache], got " +
                       (inner.find_first_not_of(" \t") == std::string::npos ? std::string("an empty list")
                                                                            : "an empty element") +
                       " in '" + value + "'");
    try {
      list.push_back(parse_json_within(item, "--set " + key, kSetValueLimits));
    } catch (const json::parse_error&) {
      list.push_back(item);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return list;
}

nlohmann::json parse_sets(const std::vector<std::string>& sets) {
  json out = json::object();
  for (const std::string& s : sets) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError("--set " + s + ": expected KEY=VALUE, e.g. --set repetitions=1");
    std::string key = s.substr(0, eq), value = s.substr(eq + 1);
    check_utf8(key, "--set");
    check_utf8(value, "--set " + key);
    try {
      out[key] = parse_json_within(value, "--set " + key, kSetValueLimits);
    } catch (const json::parse_error&) {
      out[key] = value.size() >= 2 && value.front() == '[' && value.back() == ']'
                     ? bare_list(key, value)
                     : json(value);  // not JSON: a string
    }
  }
  return out;
}

}  // namespace feedbench
