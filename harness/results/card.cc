// The qualification card: to_json/from_json, load/save, and two cards compared cell by cell.
// docs/card.md documents the layout field by field.
#include "feedbench/results/card.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>
#include <utility>

#include "feedbench/base/error.h"
#include "feedbench/base/units.h"
#include "json_reader.h"

namespace feedbench {
namespace {

using ojson = nlohmann::ordered_json;
using json_reader::child;
using json_reader::Reader;

// A figure as a person writes it: 6, not 6.0, where it is a whole number.
ojson number_json(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15) return std::int64_t(v);
  return v;
}

// RETURNS: the member `key` as a finite number >= `low` (and <= `high`). Absent: `fallback`
// unless `required`.
double bounded_number(const Reader& r, const std::string& key, bool required, double fallback, double low,
                      double high, const char* expected) {
  const ojson* v = r.find(key);
  if (!v) return required ? (r.missing(key, expected), 0.0) : fallback;
  if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < low ||
      v->get<double>() > high)
    r.fail(r.path(key), expected, *v);
  return v->get<double>();
}

// RETURNS: the member `key`: an integer of at least `low` that int64 holds, never cast from
// what is out of range (a float past int64, a negative number).
std::int64_t count_at_least(const Reader& r, const std::string& key, std::int64_t low, const char* expected) {
  const ojson* v = r.find(key);
  if (!v) r.missing(key, expected);
  // An integer is a scalar: the copy into nlohmann::json for the shared check is no deep one.
  if (!v->is_number_integer() || !is_non_negative_integer(nlohmann::json(*v)) ||
      v->get<std::uint64_t>() > std::uint64_t(INT64_MAX) || v->get<std::int64_t>() < low)
    r.fail(r.path(key), expected, *v);
  return v->get<std::int64_t>();
}

// RETURNS: the member `key`, an array (required).
const ojson& array_at(const Reader& r, const std::string& key) {
  const ojson* v = r.find(key);
  if (!v) r.missing(key, "an array");
  if (!v->is_array()) r.fail(r.path(key), "an array", *v);
  return *v;
}

// RETURNS: the member `key`, a string among `allowed`.
std::string one_of(const Reader& r, const std::string& key, const std::set<std::string>& allowed,
                   const char* expected) {
  std::string s = r.str(key, true);
  if (!allowed.count(s)) r.fail(r.path(key), expected, *r.find(key));
  return s;
}

// The bounds of a figure a card holds: any finite number of at least 0.
constexpr double kAnyFigure = 1e300;
constexpr const char* kFigure = "a number of at least 0";

ojson cell_to_json(const CardCell& c) {
  ojson o;
  o["path"] = c.path;
  o["state"] = c.state;
  if (!c.measured) {
    o["measured"] = false;
    o["reason"] = c.reason;
    return o;
  }
  o["accelerators_fed"] = number_json(c.accelerators_fed);
  o["accelerators_fed_min"] = number_json(c.accelerators_fed_min);
  o["accelerators_fed_max"] = number_json(c.accelerators_fed_max);
  o["repetitions"] = c.repetitions;
  o["limit"] = c.limit;
  o["per_accelerator"] = {{"bytes_per_second", number_json(c.per_accelerator.bytes_per_second)},
                          {"samples_per_second", number_json(c.per_accelerator.samples_per_second)},
                          {"cpu_cores", number_json(c.per_accelerator.cpu_cores)}};
  return o;
}

CardCell cell_from_json(const ojson& j, const std::string& where, const std::string& ptr) {
  const Reader r(where, j, ptr);
  CardCell c;
  c.path = one_of(r, "path", {"store", "cache"}, "\"store\" or \"cache\"");
  c.state = one_of(r, "state", {"cold", "steady"}, "\"cold\" or \"steady\"");
  c.measured = r.boolean("measured", true);
  if (!c.measured) {  // only why: an unmeasured cell's figures would be read as measured ones
    c.reason = r.str("reason", true);
    if (c.reason.empty()) r.fail(r.path("reason"), "why the cell was not measured", *r.find("reason"));
    return c;
  }
  c.accelerators_fed = bounded_number(r, "accelerators_fed", true, 0, 0, kAnyFigure, kFigure);
  c.accelerators_fed_min =
      bounded_number(r, "accelerators_fed_min", false, c.accelerators_fed, 0, c.accelerators_fed,
                     "a number of at least 0 and at most accelerators_fed");
  c.accelerators_fed_max =
      bounded_number(r, "accelerators_fed_max", false, c.accelerators_fed, c.accelerators_fed, kAnyFigure,
                     "a number of at least accelerators_fed");
  c.repetitions = count_at_least(r, "repetitions", 1, "an integer of at least 1");
  c.limit = r.str("limit", true);
  const ojson need_object = r.object("per_accelerator", true);
  const Reader need(where, need_object, r.path("per_accelerator"));
  c.per_accelerator.bytes_per_second =
      bounded_number(need, "bytes_per_second", true, 0, 0, kAnyFigure, kFigure);
  c.per_accelerator.samples_per_second =
      bounded_number(need, "samples_per_second", true, 0, 0, kAnyFigure, kFigure);
  c.per_accelerator.cpu_cores = bounded_number(need, "cpu_cores", true, 0, 0, kAnyFigure, kFigure);
  return c;
}

ojson reads_to_json(const CardReads& r) {
  return {{"path", r.path},       {"bytes_per_second", number_json(r.bytes_per_second)},
          {"workers", r.workers}, {"accelerators", number_json(r.accelerators)},
          {"bytes", r.bytes},     {"seconds", number_json(r.seconds)}};
}

ojson staging_to_json(const CardStaging& s) {
  return {{"bytes", s.bytes},
          {"seconds", number_json(s.seconds)},
          {"bytes_per_second", number_json(s.bytes_per_second)},
          {"epochs_of_reading", number_json(s.epochs_of_reading)},
          {"pays_after_epochs", s.pays_after_epochs ? number_json(*s.pays_after_epochs) : ojson()}};
}

ojson checkpoint_to_json(const CardCheckpoint& c) {
  return {{"path", c.path},
          {"model", c.model},
          {"scale", number_json(c.scale)},
          {"bytes", c.bytes},
          {"full_bytes", c.full_bytes},
          {"ranks", c.ranks},
          {"write_bytes_per_second", number_json(c.write_bytes_per_second)},
          {"restore_bytes_per_second", number_json(c.restore_bytes_per_second)}};
}

CardReads reads_from_json(const ojson& j, const std::string& where, const std::string& ptr) {
  const Reader r(where, j, ptr);
  CardReads out;
  out.path = one_of(r, "path", {"store", "cache"}, "\"store\" or \"cache\"");
  out.bytes_per_second = bounded_number(r, "bytes_per_second", true, 0, 0, kAnyFigure, kFigure);
  out.workers = count_at_least(r, "workers", 1, "an integer of at least 1");
  out.accelerators = bounded_number(r, "accelerators", true, 0, 0, kAnyFigure, kFigure);
  if (r.find("bytes")) out.bytes = std::uint64_t(count_at_least(r, "bytes", 0, "an integer of at least 0"));
  out.seconds = bounded_number(r, "seconds", false, 0, 0, kAnyFigure, kFigure);
  return out;
}

CardStaging staging_from_json(const ojson& j, const std::string& where, const std::string& ptr) {
  const Reader r(where, j, ptr);
  CardStaging s;
  s.bytes = std::uint64_t(count_at_least(r, "bytes", 0, "an integer of at least 0"));
  s.seconds = bounded_number(r, "seconds", true, 0, 0, kAnyFigure, kFigure);
  s.bytes_per_second = bounded_number(r, "bytes_per_second", true, 0, 0, kAnyFigure, kFigure);
  s.epochs_of_reading = bounded_number(r, "epochs_of_reading", false, 0, 0, kAnyFigure, kFigure);
  if (const ojson* pays = r.find("pays_after_epochs"); pays && !pays->is_null())
    s.pays_after_epochs = bounded_number(r, "pays_after_epochs", true, 0, 0, kAnyFigure,
                                         "a number of at least 0, or null (it never pays)");
  return s;
}

CardCheckpoint checkpoint_from_json(const ojson& j, const std::string& where, const std::string& ptr) {
  const Reader r(where, j, ptr);
  CardCheckpoint c;
  c.path = one_of(r, "path", {"store", "cache"}, "\"store\" or \"cache\"");
  c.model = r.str("model", true);
  c.scale = bounded_number(r, "scale", true, 0, 1e-9, 1, "a fraction above 0 and at most 1");
  c.bytes = std::uint64_t(count_at_least(r, "bytes", 1, "an integer of at least 1"));
  c.full_bytes = std::uint64_t(count_at_least(r, "full_bytes", 1, "an integer of at least 1"));
  c.ranks = count_at_least(r, "ranks", 1, "an integer of at least 1");
  c.write_bytes_per_second = bounded_number(r, "write_bytes_per_second", true, 0, 0, kAnyFigure, kFigure);
  c.restore_bytes_per_second = bounded_number(r, "restore_bytes_per_second", true, 0, 0, kAnyFigure, kFigure);
  return c;
}

// RETURNS: the optional array `key` read entry by entry with `read`, one entry per path.
template <typename T, typename Read>
std::vector<T> per_path_array(const Reader& r, const std::string& key, const std::string& where, Read read) {
  std::vector<T> out;
  if (!r.find(key)) return out;
  const ojson& items = array_at(r, key);
  std::set<std::string> paths;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string at = child(r.path(key), i);
    out.push_back(read(items[i], where, at));
    if (!paths.insert(out.back().path).second)
      r.fail(at, "one entry per path, not a second " + out.back().path, items[i]);
  }
  return out;
}

CardWorkload workload_from_json(const ojson& j, const std::string& where, const std::string& ptr) {
  const Reader r(where, j, ptr);
  CardWorkload w;
  w.name = r.str("name", true);
  if (w.name.empty()) r.fail(r.path("name"), "a workload's name", *r.find("name"));
  w.step_ns = count_at_least(r, "step_ns", 1, "an integer of at least 1 (nanoseconds)");
  w.step_source = r.str("step_source", true);
  const ojson& cells = array_at(r, "paths");
  std::set<std::pair<std::string, std::string>> seen;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const std::string at = child(r.path("paths"), i);
    w.paths.push_back(cell_from_json(cells[i], where, at));
    if (!seen.insert({w.paths.back().path, w.paths.back().state}).second)
      r.fail(at,
             "one cell per path and state, not a second " + w.paths.back().path + " " + w.paths.back().state,
             cells[i]);
  }
  w.reads = per_path_array<CardReads>(r, "reads", where, reads_from_json);
  if (r.find("staging")) {
    const ojson staging = r.object("staging", true);
    w.staging = staging_from_json(staging, where, r.path("staging"));
  }
  return w;
}

// An embedded result's error names its place in the card: "<where>: /results/N/<pointer>: ...".
ResultDocument result_from_json(const ojson& j, const std::string& where, std::size_t index) {
  const std::string at = "/results/" + std::to_string(index);
  try {
    return ResultDocument::from_json(j, where);
  } catch (const InputError& e) {
    std::string message = e.what();
    const std::string head = where + ": /";
    if (message.rfind(head, 0) == 0) {
      const std::string rest = message.substr(head.size());
      message = where + ": " + at + (rest.rfind(": ", 0) == 0 ? rest : "/" + rest);
    } else {
      message = where + ": " + at + ": " + message;
    }
    throw InputError(message);
  }
}

}  // namespace

ojson Card::to_json() const {
  ojson o;
  o["schema"] = schema;
  o["created_utc"] = created_utc;
  o["feedbench_version"] = feedbench_version;
  o["target_au"] = number_json(target_au);
  o["speedup"] = number_json(speedup);
  if (accelerators_per_node > 0) o["accelerators_per_node"] = accelerators_per_node;
  o["host"] = host;
  o["storage"] = storage;
  o["workloads"] = ojson::array();
  for (const CardWorkload& w : workloads) {
    ojson cells = ojson::array();
    for (const CardCell& c : w.paths) cells.push_back(cell_to_json(c));
    ojson workload = {{"name", w.name},
                      {"step_ns", w.step_ns},
                      {"step_source", w.step_source},
                      {"paths", std::move(cells)}};
    if (!w.reads.empty()) {
      workload["reads"] = ojson::array();
      for (const CardReads& r : w.reads) workload["reads"].push_back(reads_to_json(r));
    }
    if (w.staging) workload["staging"] = staging_to_json(*w.staging);
    o["workloads"].push_back(std::move(workload));
  }
  if (!checkpoints.empty()) {
    o["checkpoints"] = ojson::array();
    for (const CardCheckpoint& c : checkpoints) o["checkpoints"].push_back(checkpoint_to_json(c));
  }
  o["results"] = ojson::array();
  for (const ResultDocument& d : results) o["results"].push_back(d.to_ordered_json());
  return o;
}

Card Card::from_json(const ojson& j, const std::string& where) {
  const Reader r(where, j, "");
  Card card;
  const ojson* schema = r.find("schema");
  if (!schema) r.missing("schema", std::string("\"") + kCardSchema + "\"");
  if (!schema->is_string() || schema->get<std::string>() != kCardSchema)
    r.fail("/schema", std::string("\"") + kCardSchema + "\"", *schema);
  card.created_utc = r.str("created_utc", false);
  card.feedbench_version = r.str("feedbench_version", false);
  card.target_au = bounded_number(r, "target_au", true, 0, 0.01, 1, "an AU between 0.01 and 1, such as 0.9");
  card.speedup = bounded_number(r, "speedup", false, 1, 1e-6, 1e6, "a factor above 0, such as 2");
  if (r.find("accelerators_per_node"))
    card.accelerators_per_node = count_at_least(r, "accelerators_per_node", 1, "an integer of at least 1");
  card.host = nlohmann::json(r.object("host", false));
  const ojson storage = r.object("storage", false);
  for (const auto& [path, about] : storage.items())
    if (!about.is_object()) r.fail(child(r.path("storage"), path), "an object", about);
  card.storage = nlohmann::json(storage);
  const ojson& workloads = array_at(r, "workloads");
  std::set<std::string> names;
  for (std::size_t i = 0; i < workloads.size(); ++i) {
    const std::string at = child(r.path("workloads"), i);
    card.workloads.push_back(workload_from_json(workloads[i], where, at));
    if (!names.insert(card.workloads.back().name).second)
      r.fail(at + "/name", "a name no other workload has", workloads[i].at("name"));
  }
  card.checkpoints = per_path_array<CardCheckpoint>(r, "checkpoints", where, checkpoint_from_json);
  if (r.find("results")) {
    const ojson& results = array_at(r, "results");
    for (std::size_t i = 0; i < results.size(); ++i)
      card.results.push_back(result_from_json(results[i], where, i));
  }
  return card;
}

Card Card::parse(const std::string& text, const std::string& where) {
  ojson j;
  try {
    j = parse_ordered_json_within(text, where, kCardLimits);
  } catch (const nlohmann::json::parse_error& e) {
    json_reader::throw_malformed(e, text, where);
  }
  return from_json(j, where);
}

Card Card::load(const std::string& path) { return parse(read_json_file(path, kCardLimits), path); }

std::string Card::dump() const {
  return to_json().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string Card::save(const std::string& path) const { return write_file_atomically(path, dump()); }

std::string json_schema_of(const std::string& text, const std::string& where, const JsonLimits& limits) {
  struct Found {
    std::string schema;
  };
  bool after_key = false;
  try {
    parse_ordered_json_within(
        text, where, limits, [&](int depth, nlohmann::json::parse_event_t event, ojson& v) {
          if (after_key)
            throw Found{event == nlohmann::json::parse_event_t::value && v.is_string() ? v.get<std::string>()
                                                                                       : std::string()};
          after_key = depth == 1 && event == nlohmann::json::parse_event_t::key && v == "schema";
          // Nothing below the top level is kept; arrays and objects are still entered, so the
          // limits are checked all the way down.
          const bool ends_value = event == nlohmann::json::parse_event_t::value ||
                                  event == nlohmann::json::parse_event_t::object_end ||
                                  event == nlohmann::json::parse_event_t::array_end;
          return !ends_value || depth == 0;
        });
  } catch (const Found& found) {
    return found.schema;
  } catch (const nlohmann::json::parse_error&) {
    return "";  // malformed before any schema: its reader says where
  }
  return "";
}

CardOrResult load_card_or_result(const std::string& path) {
  JsonLimits limits = kCardLimits;
  limits.kind = "result file or card";
  const std::string text = read_json_file(path, limits);
  if (json_schema_of(text, path, limits) == kCardSchema) return Card::parse(text, path);
  return ResultDocument::parse(text, path);
}

bool all_cards(const std::vector<CardOrResult>& inputs, const std::vector<std::string>& files) {
  const std::string* a_card = nullptr;
  const std::string* a_result = nullptr;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    (std::holds_alternative<Card>(inputs[i]) ? a_card : a_result) = &files[i];
  if (a_card && a_result)
    throw InputError("expected cards or result files, not both: " + *a_card + " is a card (" + kCardSchema +
                     "), " + *a_result + " a result file");
  return a_card != nullptr;
}

// ---- staging ---------------------------------------------------------------------------------

const CardCell* measured_cell(const CardWorkload& w, const std::string& path, const std::string& state) {
  for (const CardCell& c : w.paths)
    if (c.measured && c.path == path && c.state == state) return &c;
  return nullptr;
}

bool feeds_more_beyond_noise(const CardCell& more, const CardCell& than) {
  return more.accelerators_fed_min > than.accelerators_fed_max &&
         more.accelerators_fed >= 1.1 * than.accelerators_fed;
}

namespace {

// RETURNS: the bytes a second an epoch reads through a path feeding `fed` of a node of `node`.
double epoch_rate(double fed, double need, std::int64_t node) {
  return (node > 0 ? std::min(fed, double(node)) : fed) * need;
}

}  // namespace

double staging_epochs_of_reading(const CardWorkload& w, double stage_bytes_per_second,
                                 std::int64_t accelerators_per_node) {
  const CardCell* store = measured_cell(w, "store", "cold");
  if (!store || stage_bytes_per_second <= 0) return 0;
  return epoch_rate(store->accelerators_fed, store->per_accelerator.bytes_per_second, accelerators_per_node) /
         stage_bytes_per_second;
}

std::optional<double> staging_pays_after_epochs(const CardWorkload& w, double stage_bytes_per_second,
                                                std::int64_t accelerators_per_node) {
  const CardCell* store = measured_cell(w, "store", "cold");
  const CardCell* cache = measured_cell(w, "cache", "cold");
  if (!store || !cache || stage_bytes_per_second <= 0 || !feeds_more_beyond_noise(*cache, *store))
    return std::nullopt;
  const double need = store->per_accelerator.bytes_per_second;
  const double from_store = epoch_rate(store->accelerators_fed, need, accelerators_per_node);
  const double from_cache = epoch_rate(cache->accelerators_fed, need, accelerators_per_node);
  if (from_store <= 0 || from_cache <= from_store) return std::nullopt;  // both feed the node
  // Per byte of the data set: an epoch saves 1/store - 1/cache seconds; staging costs 1/stage.
  return (1 / stage_bytes_per_second) / (1 / from_store - 1 / from_cache);
}

// ---- comparison -------------------------------------------------------------------------------

std::size_t CardComparison::count(CellVerdict verdict) const {
  std::size_t n = 0;
  for (const CellComparison& c : cells) n += c.verdict == verdict;
  return n;
}

std::size_t CardComparison::compared() const {
  return count(CellVerdict::kFewer) + count(CellVerdict::kNoisy) + count(CellVerdict::kUnchanged) +
         count(CellVerdict::kMore);
}

int CardComparison::exit_code() const { return count(CellVerdict::kFewer) > 0 || compared() == 0 ? 1 : 0; }

namespace {

std::string figure_text(double v) {
  const ojson j = number_json(v);
  return j.is_number_integer() ? j.dump() : format_printf("%.2f", v);
}

// Judges one cell both cards hold.
void judge_cell(CellComparison& k) {
  const CardCell& a = *k.base;
  const CardCell& b = *k.next;
  if (!a.measured || !b.measured) {
    k.verdict = CellVerdict::kNotJudged;
    k.note = !a.measured ? "not measured in BASE: " + a.reason : "not measured in NEW: " + b.reason;
    return;
  }
  if (b.accelerators_fed > a.accelerators_fed) {
    k.verdict = CellVerdict::kMore;
  } else if (b.accelerators_fed == a.accelerators_fed) {
    k.verdict = CellVerdict::kUnchanged;
  } else if (b.accelerators_fed >= a.accelerators_fed_min) {
    k.verdict = CellVerdict::kNoisy;
    k.note = "within BASE's spread: its " + std::to_string(a.repetitions) + " repetitions fed " +
             figure_text(a.accelerators_fed_min) + " to " + figure_text(a.accelerators_fed_max);
  } else if (a.accelerators_fed <= b.accelerators_fed_max) {
    k.verdict = CellVerdict::kNoisy;
    k.note = "within NEW's spread: its " + std::to_string(b.repetitions) + " repetitions fed " +
             figure_text(b.accelerators_fed_min) + " to " + figure_text(b.accelerators_fed_max);
  } else {
    k.verdict = CellVerdict::kFewer;
  }
}

}  // namespace

CardComparison compare_cards(const Card& base, const Card& next) {
  CardComparison out;
  auto find = [](const Card& card, const std::string& workload, const CardCell& cell) -> const CardCell* {
    for (const CardWorkload& w : card.workloads)
      if (w.name == workload)
        for (const CardCell& c : w.paths)
          if (c.path == cell.path && c.state == cell.state) return &c;
    return nullptr;
  };
  for (const CardWorkload& w : base.workloads)
    for (const CardCell& c : w.paths) {
      CellComparison k{w.name, c.path, c.state, &c, find(next, w.name, c), CellVerdict::kNotJudged, ""};
      if (k.next) judge_cell(k);
      else k.verdict = CellVerdict::kOnlyBase;
      out.cells.push_back(std::move(k));
    }
  for (const CardWorkload& w : next.workloads)
    for (const CardCell& c : w.paths)
      if (!find(base, w.name, c))
        out.cells.push_back({w.name, c.path, c.state, nullptr, &c, CellVerdict::kOnlyNew, ""});
  return out;
}

}  // namespace feedbench
