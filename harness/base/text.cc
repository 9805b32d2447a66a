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

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
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
