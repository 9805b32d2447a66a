// Bounded JSON parsing: nlohmann's parser is iterative, but what follows it (valijson, our
// ${VAR} expansion, copies and dumps) recurses once per level, and valijson's std::regex once
// per character. The parser's callback sees every event with its depth, so limits are checked
// there, with the JSON pointer of the offending value tracked alongside.
#include "feedbench/base/json_limits.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <type_traits>
#include <vector>

#include <sys/stat.h>

#include "feedbench/base/error.h"

namespace feedbench {
namespace {

// "<where>: <pointer>" for a message: the pointer whole when short, else its head and tail;
// none for the document itself (a --set value is usually one number or string).
std::string place(const std::string& where, const std::string& pointer) {
  if (pointer.empty()) return where;
  if (pointer.size() <= 160) return where + ": " + pointer;
  return where + ": " + pointer.substr(0, 80) + "..." + pointer.substr(pointer.size() - 60);
}

std::string token(const std::string& key) { return (nlohmann::json::json_pointer() / key).to_string(); }

std::string string_message(const std::string& where, const std::string& pointer, const JsonLimits& limits,
                           std::size_t size, const char* what) {
  return place(where, pointer) + ": expected " + what + " of at most " +
         std::to_string(limits.max_string_bytes) + " bytes (the limit for a " + limits.kind + "), got " +
         std::to_string(size) + " bytes";
}

std::string depth_message(const std::string& where, const std::string& pointer, const JsonLimits& limits) {
  return place(where, pointer) + ": expected arrays and objects nested at most " +
         std::to_string(limits.max_depth) + " levels deep (the limit for a " + limits.kind + "), got deeper";
}

// Where the parser is: one frame per open array or object.
struct Frame {
  bool array = false;
  std::size_t count = 0;  // elements of an array already complete
  std::string key;        // an object's current key
};

class Tracker {
 public:
  Tracker(const std::string& where, const JsonLimits& limits) : where_(where), limits_(limits) {}

  // The pointer of the value being parsed now (a child of the innermost open container).
  std::string pointer() const {
    std::string out;
    for (const Frame& f : frames_) out += f.array ? "/" + std::to_string(f.count) : token(f.key);
    return out;
  }
  std::string container_pointer() const {
    std::string out;
    for (std::size_t i = 0; i + 1 < frames_.size(); ++i)
      out += frames_[i].array ? "/" + std::to_string(frames_[i].count) : token(frames_[i].key);
    return out;
  }

  template <class Json>
  bool on(int depth, nlohmann::json::parse_event_t event, Json& parsed) {
    using E = nlohmann::json::parse_event_t;
    switch (event) {
      case E::object_start:
      case E::array_start:
        // `depth` counts the containers already open around this one.
        if (static_cast<std::size_t>(depth) >= limits_.max_depth)
          throw InputError(depth_message(where_, pointer(), limits_));
        frames_.push_back(Frame{event == E::array_start, 0, {}});
        break;
      case E::key: {
        const auto& key = parsed.template get_ref<const std::string&>();
        if (key.size() > limits_.max_string_bytes)
          throw InputError(string_message(where_, container_pointer(), limits_, key.size(), "a key"));
        frames_.back().key = key;
        break;
      }
      case E::value:
        if (parsed.is_string() &&
            parsed.template get_ref<const std::string&>().size() > limits_.max_string_bytes)
          throw InputError(string_message(where_, pointer(), limits_,
                                          parsed.template get_ref<const std::string&>().size(), "a string"));
        if (!frames_.empty() && frames_.back().array) ++frames_.back().count;
        break;
      case E::object_end:
      case E::array_end:
        frames_.pop_back();
        if (!frames_.empty() && frames_.back().array) ++frames_.back().count;
        break;
    }
    return true;
  }

 private:
  const std::string& where_;
  const JsonLimits& limits_;
  std::vector<Frame> frames_;
};

// `reader` (optional) sees each event after the tracker, which counts every value, kept or not.
template <class Json, class Reader = std::nullptr_t>
Json parse_within(const std::string& text, const std::string& where, const JsonLimits& limits,
                  const Reader& reader = nullptr) {
  check_json_size(text.size(), where, limits);
  Tracker tracker(where, limits);
  try {
    return Json::parse(text, [&](int depth, nlohmann::json::parse_event_t event, Json& parsed) {
      if (!tracker.on(depth, event, parsed)) return false;
      if constexpr (std::is_same_v<Reader, std::nullptr_t>) return true;
      else return reader(depth, event, parsed);
    });
  } catch (const nlohmann::json::out_of_range& e) {
    // The lexer read a number no double holds ("number overflow parsing '1e999'").
    std::string what = e.what();
    std::string got = "a number out of range";
    if (auto q = what.find('\''); q != std::string::npos && what.back() == '\'')
      got = what.substr(q + 1, what.size() - q - 2);
    if (got.size() > 80) got = got.substr(0, 77) + "...";
    throw InputError(place(where, tracker.pointer()) +
                     ": expected a number between -1.7e308 and 1.7e308, got " + got);
  }
}

void check_value(const nlohmann::json& value, const std::string& where, std::string& pointer,
                 const JsonLimits& limits, std::size_t depth) {
  if (value.is_string()) {
    std::size_t size = value.get_ref<const std::string&>().size();
    if (size > limits.max_string_bytes)
      throw InputError(string_message(where, pointer, limits, size, "a string"));
    return;
  }
  if (!value.is_structured()) return;
  if (depth >= limits.max_depth) throw InputError(depth_message(where, pointer, limits));
  const std::size_t at = pointer.size();
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) {
      if (key.size() > limits.max_string_bytes)
        throw InputError(string_message(where, pointer, limits, key.size(), "a key"));
      pointer += token(key);
      check_value(child, where, pointer, limits, depth + 1);
      pointer.resize(at);
    }
  } else {
    for (std::size_t i = 0; i < value.size(); ++i) {
      pointer += "/" + std::to_string(i);
      check_value(value[i], where, pointer, limits, depth + 1);
      pointer.resize(at);
    }
  }
}

}  // namespace

void check_json_size(std::uint64_t size, const std::string& where, const JsonLimits& limits) {
  if (size <= limits.max_bytes) return;
  throw InputError(where + ": expected a " + limits.kind + " of at most " + std::to_string(limits.max_bytes) +
                   " bytes, got " + std::to_string(size) + " bytes");
}

nlohmann::json parse_json_within(const std::string& text, const std::string& where,
                                 const JsonLimits& limits) {
  return parse_within<nlohmann::json>(text, where, limits);
}

nlohmann::ordered_json parse_ordered_json_within(const std::string& text, const std::string& where,
                                                 const JsonLimits& limits) {
  return parse_within<nlohmann::ordered_json>(text, where, limits);
}

nlohmann::ordered_json parse_ordered_json_within(const std::string& text, const std::string& where,
                                                 const JsonLimits& limits,
                                                 const OrderedJsonCallback& reader) {
  return parse_within<nlohmann::ordered_json>(text, where, limits, reader);
}

void check_json_value(const nlohmann::json& value, const std::string& where, const std::string& pointer,
                      const JsonLimits& limits) {
  std::string at = pointer;
  check_value(value, where, at, limits, 0);
}

void check_utf8(std::string_view text, const std::string& where) {
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  std::size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = byte(i);
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte (RFC 3629 table)
    if (c < 0x80) len = 1;
    else if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // no overlong forms
      if (c == 0xED) hi = 0x9F;  // no UTF-16 surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
    }
    bool ok = len > 0 && i + len <= text.size();
    for (std::size_t k = 1; ok && k < len; ++k) {
      const unsigned char b = byte(i + k);
      ok = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    }
    if (!ok) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", c);
      throw InputError(where + ": expected UTF-8 text, got byte " + hex + " at offset " + std::to_string(i));
    }
    i += len;
  }
}

std::pair<std::size_t, std::size_t> line_and_column(const std::string& text, std::size_t byte) {
  const std::size_t end = std::min<std::size_t>(byte ? byte - 1 : 0, text.size());
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

std::string read_json_file(const std::string& path, const JsonLimits& limits) {
  const std::string cannot = path + ": cannot read " + limits.kind;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw InputError(errno_message(cannot, errno));
  // Refused by its size before reading; a pipe is read up to one byte past the limit.
  struct stat st {};
  if (::fstat(::fileno(f), &st) == 0 && S_ISREG(st.st_mode) && std::uint64_t(st.st_size) > limits.max_bytes) {
    std::fclose(f);
    check_json_size(std::uint64_t(st.st_size), path, limits);
  }
  std::string text;
  if (S_ISREG(st.st_mode)) text.reserve(std::size_t(st.st_size) + 1);  // not twice it by doubling
  char buf[1 << 16];
  std::size_t n;
  while (text.size() <= limits.max_bytes && (n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  const int err = std::ferror(f) ? errno : 0;
  std::fclose(f);
  if (err) throw InputError(errno_message(cannot, err));
  return text;
}

bool is_non_negative_integer(const nlohmann::json& value) {
  return value.is_number_unsigned() || (value.is_number_integer() && value.get<std::int64_t>() >= 0);
}

}  // namespace feedbench
