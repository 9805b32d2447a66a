// The result document: to_json/from_json, load/save. The layout is Google Benchmark's JSON
// reporter's (context + benchmarks, same field names and types, counters flattened into each
// entry) plus feedbench's additions; results/README.md documents it field by field.
#include "feedbench/results/result.h"

#include <cerrno>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <set>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "feedbench/base/error.h"
#include "feedbench/base/file_system.h"
#include "feedbench/base/json_limits.h"
#include "feedbench/base/units.h"
#include "feedbench/results/counters.h"
#include "json_reader.h"

namespace feedbench {

namespace {

using ojson = nlohmann::ordered_json;
using json_reader::child;
using json_reader::Reader;

// Keys of an entry that are not user counters (Google Benchmark's and ours). Every other
// numeric key is a counter, as Google Benchmark flattens them.
const std::set<std::string, std::less<>> kEntryKeys = {"name",
                                                       "family_index",
                                                       "per_family_instance_index",
                                                       "run_name",
                                                       "run_type",
                                                       "repetitions",
                                                       "repetition_index",
                                                       "threads",
                                                       "aggregate_name",
                                                       "aggregate_unit",
                                                       "error_occurred",
                                                       "error_message",
                                                       "iterations",
                                                       "real_time",
                                                       "cpu_time",
                                                       "time_unit",
                                                       "label",
                                                       "case",
                                                       "params",
                                                       "cache",
                                                       "latency",
                                                       "latency_hist",
                                                       "extra"};

// Percentiles revision 1 wrote beside the histogram's bins (the lat_* counters hold them).
constexpr std::pair<const char*, double> kPercentiles[] = {
    {"p50_us", 0.50}, {"p90_us", 0.90}, {"p99_us", 0.99}, {"p999_us", 0.999}};

// Revision 1's `latency`: bins as [lower, upper, count] and percentiles in microseconds.
Histogram latency_from_json(const ojson& j, const std::string& where, const std::string& ptr) {
  nlohmann::json bins = nlohmann::json(j);
  for (const auto& [key, q] : kPercentiles) bins.erase(key);
  bins.erase("max_us");
  return Histogram::from_json(bins, where + ": " + ptr);
}

ojson entry_to_json(const BenchmarkEntry& e) {
  const bool aggregate = e.run_type == "aggregate";
  ojson o;
  o["name"] = e.name;
  o["family_index"] = e.family_index;
  o["per_family_instance_index"] = e.per_family_instance_index;
  o["run_name"] = e.run_name;
  o["run_type"] = e.run_type;
  o["repetitions"] = e.repetitions;
  if (!aggregate) o["repetition_index"] = e.repetition_index;
  o["threads"] = e.threads;
  if (aggregate) {
    o["aggregate_name"] = e.aggregate_name;
    // Google Benchmark 1.7: the coefficient of variation is a percentage, the rest times.
    o["aggregate_unit"] = e.aggregate_name == "cv" ? "percentage" : "time";
  }
  if (e.error_occurred) {
    o["error_occurred"] = true;
    o["error_message"] = e.error_message;
  }
  o["iterations"] = e.iterations;
  o["real_time"] = e.real_time;
  o["cpu_time"] = e.cpu_time;
  o["time_unit"] = e.time_unit;
  for (const auto& [key, value] : e.counters)
    if (!kEntryKeys.count(key)) o[key] = value;  // a counter may not shadow a field
  if (!e.label.empty()) o["label"] = e.label;
  o["case"] = e.case_name;
  o["params"] = e.params;
  o["cache"] = ojson(e.cache);
  // Compressed, under a key revision-1 readers ignore: they read the entry as one without a
  // histogram (as after --no-latency) instead of refusing it. Percentiles are the lat_* counters.
  if (e.latency) o["latency_hist"] = ojson(e.latency.compact_json());
  o["extra"] = ojson(e.extra);
  return o;
}

BenchmarkEntry entry_from_json(const ojson& j, const std::string& where, const std::string& ptr) {
  Reader r(where, j, ptr);
  BenchmarkEntry e;
  e.name = r.str("name", true);
  e.run_name = r.str("run_name", false, e.name);
  e.run_type = r.str("run_type", false, "iteration");
  if (e.run_type != "iteration" && e.run_type != "aggregate")
    r.fail(r.path("run_type"), "\"iteration\" or \"aggregate\"", j["run_type"]);
  const bool aggregate = e.run_type == "aggregate";
  e.family_index = r.integer("family_index", false, 0);
  e.per_family_instance_index = r.integer("per_family_instance_index", false, 0);
  e.repetitions = r.integer("repetitions", false, 1);
  e.repetition_index = r.integer("repetition_index", false, aggregate ? -1 : 0);
  e.threads = r.integer("threads", false, 1);
  if (aggregate) e.aggregate_name = r.str("aggregate_name", true);
  e.error_occurred = r.boolean("error_occurred", false);
  e.error_message = r.str("error_message", false);
  e.iterations = r.integer("iterations", false, 1);
  e.real_time = r.number("real_time", !e.error_occurred, 0);
  e.cpu_time = r.number("cpu_time", false, 0);
  e.time_unit = r.str("time_unit", false, "ns");
  e.label = r.str("label", false);
  for (const auto& [key, value] : j.items()) {
    if (kEntryKeys.count(key)) continue;
    if (value.is_number()) e.counters[key] = value.get<double>();
    // A counter of the table is a number, or null (how a NaN or an infinity is written: read
    // as absent, which diff names missing); anything else is bad input, never quietly dropped.
    else if (!value.is_null() && find_counter(key)) r.fail(r.path(key), "a number or null", value);
    // Other unknown keys: newer writers' additions, ignored.
  }
  // A plain Google Benchmark file has no case name: its run name is the identity.
  e.case_name = r.str("case", false, e.run_name);
  if (const ojson* p = r.find("params"); p && !p->is_null()) {
    if (!p->is_object()) r.fail(r.path("params"), "an object", *p);
    e.params = *p;
  }
  e.cache = nlohmann::json(r.object_or_null("cache"));
  if (ojson lat = r.object_or_null("latency_hist"); !lat.is_null())
    e.latency =
        StoredHistogram::from_compact_json(nlohmann::json(lat), where + ": " + r.path("latency_hist"));
  else if (ojson lat1 = r.object_or_null("latency"); !lat1.is_null())
    e.latency = latency_from_json(lat1, where, r.path("latency"));
  const ojson extra = r.object("extra", false);
  // The extra keys a reader relies on (reporters, diff): checked here, once, so a hostile type
  // is refused naming its place instead of failing inside whichever reader reaches it first.
  static const std::pair<const char*, ojson::value_t> kExtraTypes[] = {
      {"judged", ojson::value_t::boolean},
      {"cpu_bound", ojson::value_t::boolean},
      {"calibration", ojson::value_t::boolean},
      {"round_complete", ojson::value_t::boolean},
      {"direct_reaches_device", ojson::value_t::boolean},
      {"verdict", ojson::value_t::string},
      {"bytes", ojson::value_t::number_float},
      {"bytes_read", ojson::value_t::number_float},
      {"bytes_planned", ojson::value_t::number_float},
      {"epochs", ojson::value_t::array},
      {"ranks", ojson::value_t::array}};
  const Reader x(where, extra, r.path("extra"));
  for (const auto& [key, type] : kExtraTypes) {
    const ojson* v = x.find(key);
    if (!v) continue;
    if (type == ojson::value_t::boolean && !v->is_boolean()) x.fail(x.path(key), "true or false", *v);
    if (type == ojson::value_t::string && !v->is_string()) x.fail(x.path(key), "a string", *v);
    if (type == ojson::value_t::number_float && !v->is_number()) x.fail(x.path(key), "a number", *v);
    if (type == ojson::value_t::array && !v->is_array()) x.fail(x.path(key), "an array", *v);
  }
  e.extra = nlohmann::json(extra);
  return e;
}

// The entries of the top-level `benchmarks` array, each read as soon as the parser completes it
// and then dropped from the document: a large result is never whole as a DOM (several times its
// text) in memory. What reading an entry throws waits until the document's earlier members
// were checked, so a file's first error is the one named, as when the DOM is read in order.
class EntryStream {
 public:
  explicit EntryStream(const std::string& where) : where_(where) {}

  // nlohmann's parser callback (depth: the containers open around the event's value).
  bool on(int depth, nlohmann::json::parse_event_t event, ojson& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (depth == 1 && event == E::key) {
      key_ = parsed.get<std::string>();  // a member of the top-level object
    } else if (depth == 1 && event == E::array_start && key_ == "benchmarks") {
      *this = EntryStream(where_);  // a repeated key: the last one counts, as in a DOM
      inside_ = true;
    } else if (depth == 1 && event == E::array_end) {
      inside_ = false;
    } else if (inside_ && depth == 2 && event != E::object_start && event != E::array_start) {
      if (!error_) {
        try {
          entries_.push_back(entry_from_json(parsed, where_, child("/benchmarks", count_)));
        } catch (const InputError&) {
          error_ = std::current_exception();
        }
      }
      ++count_;
      return false;  // read: dropped from the document
    }
    return true;
  }

  // RETURNS: the entries read. Throws what reading the first bad one threw.
  std::vector<BenchmarkEntry> take() {
    if (error_) std::rethrow_exception(error_);
    return std::move(entries_);
  }

 private:
  std::string where_;
  std::string key_;  // the top-level member being parsed
  bool inside_ = false;
  std::size_t count_ = 0;
  std::vector<BenchmarkEntry> entries_;
  std::exception_ptr error_;
};

// RETURNS: the document `j` holds; its entries from `streamed` where the parser already read
// them (and dropped them from `j`), else from `j`.
ResultDocument document_from_json(const ojson& j, const std::string& where, EntryStream* streamed) {
  Reader r(where, j, "");
  ResultDocument doc;
  const ojson* schema = r.find("schema");
  if (!schema) r.missing("schema", std::string("\"") + kResultSchema + "\"");
  if (!schema->is_string() || schema->get<std::string>() != kResultSchema)
    throw InputError(where + ": /schema: expected \"" + kResultSchema + "\", got " +
                     schema->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  doc.schema = kResultSchema;
  // Revisions only add what earlier readers ignore: any revision is read, none is required.
  if (const ojson* rev = r.find("schema_revision");
      rev && !(rev->is_number_integer() && rev->get<std::int64_t>() >= 1))
    r.fail("/schema_revision", "an integer of at least 1", *rev);
  doc.context = nlohmann::json(r.object("context", true));
  doc.tool = nlohmann::json(r.object("tool", false));
  if (const ojson* cl = r.find("command_line")) {
    if (!cl->is_array()) r.fail("/command_line", "an array of strings", *cl);
    for (std::size_t i = 0; i < cl->size(); ++i) {
      if (!(*cl)[i].is_string()) r.fail(child("/command_line", i), "a string", (*cl)[i]);
      doc.command_line.push_back((*cl)[i].get<std::string>());
    }
  }
  const ojson env = r.object("environment_variables", false);  // outlives the loop
  for (const auto& [key, value] : env.items()) {
    if (!value.is_string()) r.fail(child("/environment_variables", key), "a string", value);
    doc.environment_variables[key] = value.get<std::string>();
  }
  doc.config = nlohmann::json(r.object("config", false));
  doc.dataset = nlohmann::json(r.object("dataset", false));
  doc.environment = nlohmann::json(r.object("environment", false));
  doc.summary = nlohmann::json(r.object("summary", false));
  const ojson* benchmarks = r.find("benchmarks");
  if (!benchmarks) r.missing("benchmarks", "an array");
  if (!benchmarks->is_array()) r.fail("/benchmarks", "an array", *benchmarks);
  if (streamed) {
    doc.benchmarks = streamed->take();
    return doc;
  }
  for (std::size_t i = 0; i < benchmarks->size(); ++i)
    doc.benchmarks.push_back(entry_from_json((*benchmarks)[i], where, child("/benchmarks", i)));
  return doc;
}

}  // namespace

double time_to_ns(double value, const std::string& unit) {
  if (unit == "ns") return value;
  if (unit == "us") return value * 1e3;
  if (unit == "ms") return value * 1e6;
  if (unit == "s") return value * 1e9;
  return value;
}

std::optional<double> BenchmarkEntry::counter(const std::string& key) const {
  auto it = counters.find(key);
  if (it == counters.end()) return std::nullopt;
  return it->second;
}

bool operator==(const BenchmarkEntry& a, const BenchmarkEntry& b) {
  if (a.latency.has_value() != b.latency.has_value()) return false;
  if (a.latency && a.latency->to_json() != b.latency->to_json()) return false;
  return a.name == b.name && a.run_name == b.run_name && a.run_type == b.run_type &&
         a.aggregate_name == b.aggregate_name && a.family_index == b.family_index &&
         a.per_family_instance_index == b.per_family_instance_index && a.repetitions == b.repetitions &&
         a.repetition_index == b.repetition_index && a.threads == b.threads && a.iterations == b.iterations &&
         a.real_time == b.real_time && a.cpu_time == b.cpu_time && a.time_unit == b.time_unit &&
         a.counters == b.counters && a.error_occurred == b.error_occurred &&
         a.error_message == b.error_message && a.label == b.label && a.case_name == b.case_name &&
         a.params == b.params && a.cache == b.cache && a.extra == b.extra;
}

bool operator==(const ResultDocument& a, const ResultDocument& b) {
  return a.schema == b.schema && a.context == b.context && a.tool == b.tool &&
         a.command_line == b.command_line && a.environment_variables == b.environment_variables &&
         a.config == b.config && a.dataset == b.dataset && a.environment == b.environment &&
         a.summary == b.summary && a.benchmarks == b.benchmarks;
}

nlohmann::ordered_json ResultDocument::to_ordered_json() const {
  ojson o;
  o["schema"] = schema;
  o["schema_revision"] = kResultRevision;
  o["context"] = ojson(context);
  o["tool"] = ojson(tool);
  o["command_line"] = command_line;
  o["environment_variables"] = ojson::object();
  for (const auto& [k, v] : environment_variables) o["environment_variables"][k] = v;
  o["config"] = ojson(config);
  o["dataset"] = ojson(dataset);
  o["environment"] = ojson(environment);
  o["summary"] = ojson(summary);
  o["benchmarks"] = ojson::array();
  for (const BenchmarkEntry& e : benchmarks) o["benchmarks"].push_back(entry_to_json(e));
  return o;
}

nlohmann::json ResultDocument::to_json() const { return nlohmann::json(to_ordered_json()); }

ResultDocument ResultDocument::from_json(const nlohmann::json& j, const std::string& where) {
  return from_json(ojson(j), where);
}

ResultDocument ResultDocument::from_json(const nlohmann::ordered_json& j, const std::string& where) {
  return document_from_json(j, where, nullptr);
}

ResultDocument ResultDocument::parse(const std::string& text, const std::string& where) {
  ojson j;
  EntryStream entries(where);
  try {
    j = parse_ordered_json_within(text, where, kResultLimits,
                                  [&](int depth, nlohmann::json::parse_event_t event, ojson& parsed) {
                                    return entries.on(depth, event, parsed);
                                  });
  } catch (const nlohmann::json::parse_error& e) {
    json_reader::throw_malformed(e, text, where);
  }
  return document_from_json(j, where, &entries);
}

ResultDocument ResultDocument::load(const std::string& path) {
  return parse(read_json_file(path, kResultLimits), path);
}

std::string ResultDocument::dump() const {
  constexpr auto kReplace = nlohmann::json::error_handler_t::replace;
  ojson o = to_ordered_json();
  ojson entries = std::move(o["benchmarks"]);
  o.erase("benchmarks");
  std::string text = o.dump(2, ' ', false, kReplace);  // "{\n  ...\n}"
  text.resize(text.size() - 2);                        // "\n}"
  text += ",\n  \"benchmarks\": [";
  for (std::size_t i = 0; i < entries.size(); ++i)
    text += (i ? ",\n    " : "\n    ") + entries[i].dump(-1, ' ', false, kReplace);
  text += entries.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return text;
}

std::string ResultDocument::save(const std::string& path, AtomicFile::Existing existing) const {
  return write_file_atomically(path, dump(), existing);
}

std::string write_file_atomically(const std::string& path, const std::string& text,
                                  AtomicFile::Existing existing) {
  AtomicFile out(path, existing);
  out.write(text);
  out.commit();
  return out.path();
}

bool is_calibration(const BenchmarkEntry& e) {
  auto flag = e.extra.is_object() ? e.extra.find("calibration") : e.extra.end();
  if (e.extra.is_object() && flag != e.extra.end() && flag->is_boolean() && flag->get<bool>()) return true;
  if (!e.params.is_object() || !e.params.contains("samples")) return false;
  const auto& samples = e.params["samples"];
  return samples.is_string() && samples.get<std::string>() == "memory";
}

std::string exclusion_reason(const BenchmarkEntry& e) {
  const nlohmann::json& x = e.extra;
  if (x.is_object() && x.contains("round_complete") && x["round_complete"].is_boolean() &&
      !x["round_complete"].get<bool>()) {
    auto bytes = [&](const char* key) {
      return x.contains(key) && x[key].is_number() ? format_size(x[key].get<double>()) : std::string("?");
    };
    return "short round: read " + bytes("bytes_read") + " of " + bytes("bytes_planned") + " planned";
  }
  if (x.is_object() && x.contains("direct_reaches_device") && x["direct_reaches_device"].is_boolean() &&
      !x["direct_reaches_device"].get<bool>())
    return "direct requested, served from memory: no device behind the file system";
  const nlohmann::json& c = e.cache;
  if (c.is_object() && c.contains("achieved") && c["achieved"].is_boolean() && !c["achieved"].get<bool>() &&
      !is_calibration(e)) {
    std::string requested = c.contains("requested") && c["requested"].is_string()
                                ? c["requested"].get<std::string>()
                                : "cache state";
    std::string why = requested + " not achieved";
    if (c.contains("residency_before") && c["residency_before"].is_number()) {
      char pct[48];
      std::snprintf(pct, sizeof pct, ": %.1f%% resident before the round",
                    100.0 * c["residency_before"].get<double>());
      why += pct;
    }
    return why;
  }
  return "";
}

}  // namespace feedbench
