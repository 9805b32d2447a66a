// Reading a JSON document field by field with every error naming the file and the JSON
// pointer: private to harness/results/ (the result document's reader and the card's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "feedbench/base/error.h"
#include "feedbench/base/json_limits.h"

namespace feedbench::json_reader {

using ojson = nlohmann::ordered_json;

// RETURNS: `key` escaped as one JSON-pointer reference token ("~" -> "~0", "/" -> "~1").
inline std::string escape_pointer_token(const std::string& key) {
  return (nlohmann::json::json_pointer() / key).to_string().substr(1);
}

inline std::string child(const std::string& ptr, const std::string& key) {
  return ptr + "/" + escape_pointer_token(key);
}
inline std::string child(const std::string& ptr, std::size_t index) {
  return ptr + "/" + std::to_string(index);
}

// A short rendering of the offending value for messages.
inline std::string show(const ojson& v) {
  std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return std::string(v.type_name()) + " " + s;
}

// Reads typed fields of one JSON object, naming file and pointer in every error.
class Reader {
 public:
  Reader(const std::string& where, const ojson& obj, std::string ptr)
      : where_(where), obj_(obj), ptr_(std::move(ptr)) {
    if (!obj_.is_object()) fail(ptr_, "an object", obj_);
  }

  [[noreturn]] void fail(const std::string& ptr, const std::string& expected, const ojson& got) const {
    throw InputError(where_ + ": " + (ptr.empty() ? std::string("/") : ptr) + ": expected " + expected +
                     ", got " + show(got));
  }
  [[noreturn]] void missing(const std::string& key, const std::string& expected) const {
    throw InputError(where_ + ": " + child(ptr_, key) + ": missing (expected " + expected + ")");
  }

  // RETURNS: the member, or nullptr when absent (null counts as absent where `null_ok`).
  const ojson* find(const std::string& key) const {
    auto it = obj_.find(key);
    return it == obj_.end() ? nullptr : &*it;
  }
  std::string path(const std::string& key) const { return child(ptr_, key); }

  std::string str(const std::string& key, bool required, std::string fallback = {}) const {
    const ojson* v = find(key);
    if (!v) return required ? (missing(key, "a string"), std::string()) : std::move(fallback);
    if (!v->is_string()) fail(path(key), "a string", *v);
    return v->get<std::string>();
  }
  std::int64_t integer(const std::string& key, bool required, std::int64_t fallback) const {
    const ojson* v = find(key);
    if (!v) return required ? (missing(key, "an integer"), 0) : fallback;
    if (!v->is_number_integer()) fail(path(key), "an integer", *v);
    // A uint64 past int64's range would wrap to a negative number.
    if (v->is_number_unsigned() && v->get<std::uint64_t>() > std::uint64_t(INT64_MAX))
      fail(path(key), "an integer of at most 9223372036854775807", *v);
    return v->get<std::int64_t>();
  }
  double number(const std::string& key, bool required, double fallback) const {
    const ojson* v = find(key);
    if (!v) return required ? (missing(key, "a number"), 0.0) : fallback;
    if (!v->is_number()) fail(path(key), "a number", *v);
    return v->get<double>();
  }
  bool boolean(const std::string& key, bool fallback) const {
    const ojson* v = find(key);
    if (!v) return fallback;
    if (!v->is_boolean()) fail(path(key), "true or false", *v);
    return v->get<bool>();
  }
  // An object member; absent -> {} unless required.
  ojson object(const std::string& key, bool required) const {
    const ojson* v = find(key);
    if (!v) return required ? (missing(key, "an object"), ojson()) : ojson::object();
    if (!v->is_object()) fail(path(key), "an object", *v);
    return *v;
  }
  // An object or null member; absent -> null.
  ojson object_or_null(const std::string& key) const {
    const ojson* v = find(key);
    if (!v || v->is_null()) return nullptr;
    if (!v->is_object()) fail(path(key), "an object or null", *v);
    return *v;
  }

  const ojson& obj() const { return obj_; }
  const std::string& where() const { return where_; }
  const std::string& ptr() const { return ptr_; }

 private:
  const std::string& where_;
  const ojson& obj_;
  std::string ptr_;
};

// Throws InputError "<where>: malformed JSON at line L, column C: <nlohmann's reason>" for the
// parse error `e` of `text`.
[[noreturn]] inline void throw_malformed(const nlohmann::json::parse_error& e, const std::string& text,
                                         const std::string& where) {
  const auto [line, column] = line_and_column(text, e.byte);
  // Keep nlohmann's reason, without its "[json.exception...] parse error at ...:" prefix.
  std::string reason = e.what();
  if (auto pos = reason.find("column "); pos != std::string::npos) {
    if (auto colon = reason.find(": ", pos); colon != std::string::npos) reason = reason.substr(colon + 2);
  }
  throw InputError(where + ": malformed JSON at line " + std::to_string(line) + ", column " +
                   std::to_string(column) + ": " + reason);
}

}  // namespace feedbench::json_reader
