// Limits on the JSON feedbench reads (configs, --set values, result files, manifests), checked
// while the text is parsed: before anything recursive (schema check, ${VAR} expansion, copies,
// dumps) sees a document deep enough to overflow the stack, or a string long enough to make
// std::regex recurse past it. docs/limits.md "Limits" lists every number.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

namespace feedbench {

struct JsonLimits {
  const char* kind;              // "config", "result file", ...: named in messages
  std::uint64_t max_bytes;       // the whole text
  std::size_t max_depth;         // arrays and objects nested inside each other
  std::size_t max_string_bytes;  // one string value or key
};

// A config embeds in a result (config.resolved) and so does a manifest, two levels down: the
// result's depth limit leaves room for both.
inline constexpr JsonLimits kConfigLimits{"config", std::uint64_t{1} << 20, 64, 4096};
inline constexpr JsonLimits kSetValueLimits{"--set value", 65536, 64, 4096};
inline constexpr JsonLimits kResultLimits{"result file", std::uint64_t{256} << 20, 128, std::size_t{1} << 20};
inline constexpr JsonLimits kManifestLimits{"manifest", std::uint64_t{16} << 20, 64, 4096};

// Parses `text` as JSON, refusing what exceeds `limits` while parsing.
// RETURNS: the value. Throws InputError "<where>: <pointer>: expected ..., got ..." for a text,
// string or nesting past the limits and for a number no double holds (1e999); lets
// nlohmann::json::parse_error through for malformed text (callers say line and column).
nlohmann::json parse_json_within(const std::string& text, const std::string& where, const JsonLimits& limits);
nlohmann::ordered_json parse_ordered_json_within(const std::string& text, const std::string& where,
                                                 const JsonLimits& limits);

// nlohmann's parser callback: the depth, the event and the value just parsed; false drops the
// value from the document (a key or value event's value, or a whole array or object at its end).
using OrderedJsonCallback =
    std::function<bool(int depth, nlohmann::json::parse_event_t event, nlohmann::ordered_json& parsed)>;
// As parse_ordered_json_within, calling `reader` on every event after the limits are checked:
// a reader of a large document takes each part as it is parsed and drops it, so the whole
// document is never in memory at once. What `reader` throws goes through.
nlohmann::ordered_json parse_ordered_json_within(const std::string& text, const std::string& where,
                                                 const JsonLimits& limits, const OrderedJsonCallback& reader);

// Throws InputError "<where>: expected a <kind> of at most N bytes, got M bytes" when
// `size` > limits.max_bytes. For loaders, to refuse a file by its size before reading it.
void check_json_size(std::uint64_t size, const std::string& where, const JsonLimits& limits);

// RETURNS: {line, column}, both from 1, of the byte where the parser stopped in `text`
// (nlohmann's parse_error::byte, counted from 1; 0 is the start).
std::pair<std::size_t, std::size_t> line_and_column(const std::string& text, std::size_t byte);

// RETURNS: the text of the file at `path`, read whole. Throws InputError "<path>: cannot read
// <kind>: <reason>" when it cannot be read, and check_json_size's error for a file past
// limits.max_bytes (a regular file refused by its size before reading; a pipe read up to one
// byte past the limit, which the parser's own size check then refuses).
std::string read_json_file(const std::string& path, const JsonLimits& limits);

// Throws InputError "<where><pointer>: ..." when `value` (already in memory, e.g. after
// ${VAR} expansion) nests deeper or holds a longer string than `limits` allow. Walks at most
// max_depth + 1 levels, so it is safe on any value that did not come through the parser.
void check_json_value(const nlohmann::json& value, const std::string& where, const std::string& pointer,
                      const JsonLimits& limits);

// Throws InputError "<where>: expected UTF-8 text, got byte 0xNN at offset K" when `text` is not
// UTF-8 (overlong forms and surrogates included). For text that enters a JSON document from
// outside its parser (an environment variable, a command-line value): the parser checks what it
// reads, but dumping a document with such a string throws, so it is refused where it comes in.
void check_utf8(std::string_view text, const std::string& where);

// RETURNS: whether `value` is an integer of at least 0 that uint64 holds. Parsed text gives
// unsigned numbers, json built in code signed ones: both are accepted; a float (1e84) never is,
// since nlohmann's get<uint64_t> on one is undefined past uint64's range.
bool is_non_negative_integer(const nlohmann::json& value);

}  // namespace feedbench
