#include "feedbench/base/text.h"

#include <algorithm>
#include <cctype>
#include <ctime>

namespace feedbench {

std::string shell_quote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                              "0123456789_/.,:=+-@%") == std::string::npos)
    return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

namespace {

// Appends `text` escaped as printable() says; '\n' kept when `keep_newlines`.
std::string escape_controls(std::string_view text, bool keep_newlines) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  auto byte_escape = [&](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
  };
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if ((c < 0x20 && !(keep_newlines && c == '\n')) || c == 0x7f) byte_escape(c);
      else out += char(c);
      ++i;
      continue;
    }
    // A UTF-8 sequence: its length from the lead byte, then each continuation byte checked,
    // overlong forms, surrogates and code points past U+10FFFF refused (RFC 3629).
    std::size_t len = 0;
    char32_t cp = 0;
    if (c >= 0xc2 && c <= 0xdf) len = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef) len = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4) len = 4, cp = c & 0x07;
    bool valid = len > 0 && i + len <= text.size();
    for (std::size_t k = 1; valid && k < len; ++k) {
      const auto b = static_cast<unsigned char>(text[i + k]);
      valid = (b & 0xc0) == 0x80;
      cp = (cp << 6) | (b & 0x3f);
    }
    if (valid) {
      valid = !(len == 3 && cp < 0x800) && !(len == 4 && (cp < 0x10000 || cp > 0x10ffff)) &&
              !(cp >= 0xd800 && cp <= 0xdfff);
    }
    if (!valid) {
      byte_escape(c);
      ++i;
      continue;
    }
    // C1 controls (U+0085 is a newline to some terminals, U+009B a CSI), and the characters
    // that reorder or break what follows them on the line.
    const bool hidden = cp <= 0x9f || cp == 0x2028 || cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
                        (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e || cp == 0x200f;
    if (hidden) {
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 15];
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
  }
  return out;
}

}  // namespace

std::string printable(std::string_view text) { return escape_controls(text, false); }

std::string printable_lines(std::string_view text) { return escape_controls(text, true); }

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::vector<std::string> clauses(std::string_view text) {
  static constexpr std::string_view kDash = " \xe2\x80\x94 ", kSemicolon = "; ";
  std::vector<std::string> out;
  auto add = [&out](std::string_view c) {
    if (std::string t = trim_space(std::string(c)); !t.empty()) out.push_back(std::move(t));
  };
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    else if (text[i] == ')' && depth > 0) --depth;
    if (depth > 0) continue;
    for (std::string_view sep : {kDash, kSemicolon})
      if (text.substr(i, sep.size()) == sep) {
        add(text.substr(start, i - start));
        start = i + sep.size();
        i = start - 1;
        break;
      }
  }
  add(text.substr(start));
  return out;
}

std::string trim_space(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

std::string utc_timestamp(bool compact) {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, compact ? "%Y%m%dT%H%M%SZ" : "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string local_date_time() {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  ::localtime_r(&now, &local);
  char buf[64];
  std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", &local);
  std::string s(buf, n);
  if (s.size() >= 5 && (s[s.size() - 5] == '+' || s[s.size() - 5] == '-')) s.insert(s.size() - 2, ":");
  return s;
}

std::string selection_text(const std::vector<std::string>& globs, std::size_t shown) {
  return globs.empty() ? "every file" : "include " + globs_text(globs, shown);
}

std::string globs_text(const std::vector<std::string>& globs, std::size_t shown) {
  std::string out;
  const std::size_t n = globs.size() <= shown + 1 ? globs.size() : shown;
  for (std::size_t i = 0; i < n; ++i) out += (i ? ", '" : "'") + globs[i] + "'";
  if (n < globs.size()) out += " and " + std::to_string(globs.size() - n) + " more";
  return out;
}

}  // namespace feedbench
