// A watched job's trace read back as a stream of events (see trace_reader.h).
#include "feedbench/replay/trace_reader.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "feedbench/base/error.h"
#include "feedbench/base/open_beneath.h"
#include "feedbench/base/units.h"
#include "feedbench/watch/job_trace.h"

namespace feedbench {
namespace {

using nlohmann::json;

// Nesting a trace needs: the document, traceEvents, an event, its args, and a little more.
constexpr int kMaxDepth = 16;
// Bounds on what a replay computes with, so that no sum or deadline of them overflows: times
// within about 28 hours of the job's start (µs), CPU times as long, counts and settings as
// large as a job has.
constexpr double kMaxTimeUs = 1e11;
constexpr double kMaxCpuMs = 1e8;
constexpr std::int64_t kMaxCount = std::int64_t{1} << 31;
constexpr std::int64_t kMaxWorkers = 1024;
// Pass and batch numbers as a replay keys them (32 bits: recorded_job.cc), so that two numbers
// of the trace never name one pass or batch there (a pass 1 + 2^32 replaying pass 1's reads).
constexpr std::int64_t kMaxIndex = std::int64_t{INT32_MAX};
// A read's length (32 bits where a replay holds it; more than any read call returns at once),
// and its offset and a file's size, whose sums stay within 63 bits.
constexpr std::int64_t kMaxReadBytes = std::int64_t{UINT32_MAX};
constexpr std::int64_t kMaxOffset = std::int64_t{1} << 62;
// A JPEG's side as its frame header holds it (16 bits).
constexpr std::int64_t kMaxJpegSide = 65535;

// One event or the header, checked field by field; each message names its JSON pointer.
class Fields {
 public:
  Fields(const json& v, std::string where, std::string pointer)
      : v_(v), where_(std::move(where)), pointer_(std::move(pointer)) {
    if (!v_.is_object()) fail("", "an object", v_);
  }

  [[noreturn]] void fail(const std::string& key, const std::string& expected, const json& got) const {
    std::string text = got.dump(-1, ' ', false, json::error_handler_t::replace);
    if (text.size() > 80) text = text.substr(0, 77) + "...";
    throw InputError(where_ + ": " + pointer_ + (key.empty() ? "" : "/" + key) + ": expected " + expected +
                     ", got " + text);
  }
  const json& at(const std::string& key) const {
    const auto it = v_.find(key);
    if (it == v_.end()) fail(key, "a value", json("nothing"));
    return *it;
  }
  bool has(const std::string& key) const { return v_.contains(key); }
  std::string text(const std::string& key) const {
    const json& x = at(key);
    if (!x.is_string()) fail(key, "a string", x);
    return x.get<std::string>();
  }
  std::int64_t integer(const std::string& key, std::int64_t min = 0, std::int64_t max = INT64_MAX) const {
    const json& x = at(key);
    if (!x.is_number_integer() ||
        (x.is_number_unsigned() && x.get<std::uint64_t>() > std::uint64_t(INT64_MAX)) ||
        x.get<std::int64_t>() < min || x.get<std::int64_t>() > max)
      fail(key,
           "an integer of at least " + std::to_string(min) +
               (max < INT64_MAX ? " and at most " + std::to_string(max) : std::string()),
           x);
    return x.get<std::int64_t>();
  }
  // RETURNS: -1 for null.
  std::int64_t integer_or_null(const std::string& key, std::int64_t max = INT64_MAX) const {
    if (at(key).is_null()) return -1;
    return integer(key, 0, max);
  }
  double number(const std::string& key, double min, double max) const {
    const json& x = at(key);
    if (!x.is_number() || !(x.get<double>() >= min) || !(x.get<double>() <= max))
      fail(key, "a number from " + format_printf("%g", min) + " to " + format_printf("%g", max), x);
    return x.get<double>();
  }
  // RETURNS: args.pass, -1 for null (a read or fetch of no known pass).
  std::int64_t pass_or_null() const { return at("pass").is_null() ? -1 : integer("pass", 0, kMaxIndex); }
  double time_us(const std::string& key) const { return number(key, -kMaxTimeUs, kMaxTimeUs); }
  double duration_us(const std::string& key) const { return number(key, 0, kMaxTimeUs); }
  Fields object(const std::string& key) const { return Fields(at(key), where_, pointer_ + "/" + key); }
  const std::string& pointer() const { return pointer_; }

 private:
  const json& v_;
  std::string where_, pointer_;
};

TraceHeader header_of(const json& other, const std::string& where) {
  const Fields f(other, where, "/otherData");
  TraceHeader h;
  h.format = f.has("format") && f.at("format").is_string() ? f.text("format") : "";
  if (h.format != kJobTraceFormat)
    throw InputError(where + ": not a " + std::string(kJobTraceFormat) + " (otherData/format is " +
                     (f.has("format") ? f.at("format").dump() : std::string("missing")) +
                     "): write one with feedbench watch --trace FILE -- COMMAND");
  h.version = f.integer("version", 1);
  if (h.version > kJobTraceVersion)
    throw InputError(where + ": version " + std::to_string(h.version) +
                     " is newer than this feedbench reads (" + std::to_string(kJobTraceVersion) +
                     "): replay it with a newer feedbench");
  // Version 2: paths %XX-encoded (encode_trace_path), absolute unless "paths" says relative.
  if (f.has("paths")) {
    const std::string paths = f.text("paths");
    if ((paths != "absolute" && paths != "relative") || h.version < 2)
      f.fail("paths", "\"absolute\" or \"relative\" (in a trace of version 2 or later)", f.at("paths"));
    h.relative_paths = paths == "relative";
  }
  if (f.has("name")) h.name = f.text("name");
  if (f.has("command") && f.at("command").is_array())
    for (const json& a : f.at("command"))
      if (a.is_string()) h.command.push_back(a.get<std::string>());
  if (!f.has("passes") || !f.at("passes").is_array())
    f.fail("passes", "an array of passes", f.has("passes") ? f.at("passes") : json("nothing"));
  const json& passes = f.at("passes");
  for (std::size_t i = 0; i < passes.size(); ++i) {
    const Fields p(passes[i], where, "/otherData/passes/" + std::to_string(i));
    TracePass tp;
    tp.pass = p.integer("pass", 0, kMaxIndex);
    tp.batch_size = p.at("batch_size").is_null() ? 0 : p.integer("batch_size", 0, kMaxCount);
    tp.num_workers = p.integer("num_workers", 0, kMaxWorkers);
    if (p.has("prefetch_factor") && !p.at("prefetch_factor").is_null())
      tp.prefetch_factor = p.integer("prefetch_factor", 1, kMaxWorkers);
    if (p.has("persistent_workers")) {
      if (!p.at("persistent_workers").is_boolean())
        p.fail("persistent_workers", "true or false", p.at("persistent_workers"));
      tp.persistent_workers = p.at("persistent_workers").get<bool>();
    }
    h.passes.push_back(tp);
  }
  return h;
}

// Hands one event to the visitor.
void dispatch(const json& e, const std::string& where, std::size_t index, const TraceHeader& header,
              const TraceVisitor& visit) {
  const Fields f(e, where, "/traceEvents/" + std::to_string(index));
  if (!f.has("cat")) return;  // metadata (process names)
  const std::string cat = f.text("cat");
  if (cat == "batch") {
    if (!visit.batch) return;
    TraceBatch b;
    const std::string name = f.text("name");
    if (name != "wait" && name != "step") f.fail("name", "\"wait\" or \"step\"", f.at("name"));
    b.step = name == "step";
    const Fields a = f.object("args");
    b.pass = a.integer("pass", 0, kMaxIndex);
    b.batch = a.integer("batch", 0, kMaxIndex);
    b.ts_us = f.time_us("ts");
    b.dur_us = f.duration_us("dur");
    if (a.has("cpu_ms")) b.cpu_ms = a.number("cpu_ms", 0, kMaxCpuMs);
    visit.batch(b);
  } else if (cat == "fetch") {
    if (!visit.fetch) return;
    TraceFetch x;
    x.pid = f.integer("pid", INT64_MIN);
    x.tid = f.integer("tid", INT64_MIN);
    x.ts_us = f.time_us("ts");
    x.dur_us = f.duration_us("dur");
    const Fields a = f.object("args");
    x.pass = a.pass_or_null();
    x.batch = a.integer_or_null("batch", kMaxIndex);
    x.worker = a.integer("worker", -1, kMaxWorkers);
    x.samples = a.integer("samples", 0, kMaxCount);
    x.cpu_ms = a.number("cpu_ms", 0, kMaxCpuMs);
    if (a.has("runqueue_ms")) x.runqueue_ms = a.number("runqueue_ms", 0, kMaxCpuMs);
    if (a.has("after_cpu_ms")) x.after_cpu_ms = a.number("after_cpu_ms", 0, kMaxCpuMs);
    if (a.has("startup_cpu_ms")) x.startup_cpu_ms = a.number("startup_cpu_ms", 0, kMaxCpuMs);
    visit.fetch(x);
  } else if (cat == "open") {
    if (!visit.open) return;
    TraceOpen o;
    o.pid = f.integer("pid", INT64_MIN);
    o.ts_us = f.time_us("ts");
    const Fields a = f.object("args");
    o.file = std::uint64_t(a.integer("file"));
    o.path = a.text("path");
    if (header.version >= 2) {
      std::optional<std::string> bytes = decode_trace_path(o.path);
      if (!bytes)
        a.fail("path", "a path whose every '%' starts a %XX escape (two hexadecimal digits, not %00)",
               a.at("path"));
      o.path = std::move(*bytes);
    }
    if (header.relative_paths) {
      if (!beneath_path_problem(o.path).empty())
        a.fail("path", "a path relative to the job's data folder (otherData/paths is \"relative\")",
               a.at("path"));
    } else if (o.path.empty() || o.path.front() != '/') {
      a.fail("path", "an absolute path", a.at("path"));
    }
    o.size = std::uint64_t(a.integer("size", 0, kMaxOffset));
    if (a.has("width") || a.has("height")) {  // both or neither: a JPEG's (a frame's at most 65535 a side)
      o.width = int(a.integer("width", 1, kMaxJpegSide));
      o.height = int(a.integer("height", 1, kMaxJpegSide));
    }
    visit.open(o);
  } else if (cat == "read") {
    if (!visit.read) return;
    TraceRead r;
    r.pid = f.integer("pid", INT64_MIN);
    r.ts_us = f.time_us("ts");
    r.dur_us = f.duration_us("dur");
    const Fields a = f.object("args");
    r.file = std::uint64_t(a.integer("file"));
    r.offset = std::uint64_t(a.integer("offset", 0, kMaxOffset));
    r.bytes = std::uint64_t(a.integer("bytes", 0, kMaxReadBytes));
    r.pass = a.pass_or_null();
    r.batch = a.integer_or_null("batch", kMaxIndex);
    visit.read(r);
  }
}

}  // namespace

void read_trace(std::istream& in, const std::string& where, const TraceVisitor& visit) {
  std::string top_key;  // the document's key being read
  bool have_header = false, have_events = false;
  TraceHeader header;  // how its events' paths are written
  std::size_t index = 0;
  const json::parser_callback_t cb = [&](int depth, json::parse_event_t event, json& parsed) -> bool {
    if (depth > kMaxDepth)
      throw InputError(where + ": expected events nested at most " + std::to_string(kMaxDepth) +
                       " deep, got deeper");
    if (event == json::parse_event_t::key && depth == 1) {
      top_key = parsed.get<std::string>();
      if (top_key == "traceEvents") {
        if (!have_header)
          throw InputError(where +
                           ": expected otherData (format, version, passes) before traceEvents, as "
                           "feedbench watch --trace writes it");
        have_events = true;
      }
      return true;
    }
    if (depth == 1 && top_key == "otherData" &&
        (event == json::parse_event_t::object_end || event == json::parse_event_t::value)) {
      header = header_of(parsed, where);
      have_header = true;
      if (visit.header) visit.header(header);
      return false;
    }
    if (depth == 2 && top_key == "traceEvents" &&
        (event == json::parse_event_t::object_end || event == json::parse_event_t::value)) {
      dispatch(parsed, where, index++, header, visit);
      return false;  // dropped: the array never holds the events
    }
    if (depth == 1 && top_key == "traceEvents" &&
        (event == json::parse_event_t::object_start ||
         (event == json::parse_event_t::value && !parsed.is_array())))
      throw InputError(
          where + ": /traceEvents: expected an array of events, got " +
          (event == json::parse_event_t::object_start ? std::string("an object") : parsed.dump()));
    // Any other key of the document (displayTimeUnit, what another tool adds) is passed over,
    // never held.
    if (depth == 1 && top_key != "traceEvents" && top_key != "otherData" &&
        (event == json::parse_event_t::object_end || event == json::parse_event_t::array_end ||
         event == json::parse_event_t::value))
      return false;
    return true;
  };
  // A trace is a JSON object: anything else from its first byte (a binary file, a text of
  // another kind) is not one, whatever its length; only a trace that ends early is cut short.
  for (int c = in.peek(); c == ' ' || c == '\t' || c == '\n' || c == '\r'; c = in.peek()) in.get();
  const int first = in.peek();
  if (first != '{' && first != '[') {
    if (first == std::istream::traits_type::eof())
      throw InputError(where + ": holds no JSON (only white space), expected a trace");
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02x", unsigned(first) & 0xffU);
    throw InputError(
        where + ": not JSON, so not a trace (its first byte is " + byte +
        ", where a trace starts with '{'): write one with feedbench watch --trace FILE -- COMMAND");
  }
  json doc;
  try {
    doc = json::parse(in, cb, /*allow_exceptions=*/true);
  } catch (const json::parse_error& e) {
    const std::string what = e.what();
    // The input ran out inside a value (a string, a number, an object): the file was cut short.
    // A bad byte before the end is malformed JSON, not a truncation.
    const bool was_eof = in.eof();
    in.clear();
    const std::streamoff end = in.seekg(0, std::ios::end).tellg();
    const bool at_end = end < 0 ? was_eof : e.byte + 1 >= std::size_t(end);
    if (what.find("unexpected end of input") != std::string::npos || at_end)
      throw InputError(where + ": cut short at byte " + std::to_string(e.byte) +
                       " (a truncated trace: was its watch interrupted, or the copy incomplete?)");
    throw InputError(where + ": not valid JSON at byte " + std::to_string(e.byte) +
                     ", so not a trace: " + what);
  } catch (const json::out_of_range& e) {  // a number no double holds (13e826957390992)
    throw InputError(where + ": not a trace: " + e.what());
  }
  if (!doc.is_object())
    throw InputError(where + ": expected a trace object {\"otherData\": ..., \"traceEvents\": [...]}");
  if (!have_header)
    throw InputError(where + ": /otherData: expected the trace's format and version, got nothing");
  if (!have_events) throw InputError(where + ": /traceEvents: expected an array of events, got nothing");
}

void read_trace_file(const std::string& path, const TraceVisitor& visit) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(path + ": is a folder, expected a trace file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(errno_message("cannot read the trace " + path, errno));
  if (in.peek() == std::ifstream::traits_type::eof())
    throw InputError(path + ": is empty, expected a trace (feedbench watch --trace FILE -- COMMAND)");
  read_trace(in, path, visit);
}

}  // namespace feedbench
