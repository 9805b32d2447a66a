#include "feedbench/results/recorded_variables.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <utility>

#include "feedbench/base/env_settings.h"
#include "feedbench/base/error.h"

namespace feedbench {
namespace {

bool is_variable_name(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

bool is_feedbench_variable(std::string_view name) {
  const std::vector<std::string_view>& own = feedbench_variable_names();
  return std::find(own.begin(), own.end(), name) != own.end();
}

void replace_all(std::string& s, const std::string& value, const std::string& by) {
  for (std::size_t at = s.find(value); at != std::string::npos; at = s.find(value, at + by.size()))
    s.replace(at, value.size(), by);
}

void withhold_in(nlohmann::json& j, const std::vector<std::pair<std::string, std::string>>& order) {
  auto clean = [&order](std::string s) {
    for (const auto& [value, by] : order) replace_all(s, value, by);
    return s;
  };
  if (j.is_string()) {
    j = clean(j.get<std::string>());
  } else if (j.is_array()) {
    for (auto& e : j) withhold_in(e, order);
  } else if (j.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto& [key, value] : j.items()) {
      withhold_in(value, order);
      out[clean(key)] = std::move(value);
    }
    j = std::move(out);
  }
}

// RETURNS: `name` as command names compare: upper case, '-' as '_'.
std::string command_name(std::string_view name) {
  std::string out(name);
  for (char& c : out) c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

// RETURNS: the name of `word` when it is an assignment or an option (NAME=..., --NAME=...,
// --NAME, -NAME), with *has_value whether '=' follows it; "" when it is neither.
std::string_view word_name(std::string_view word, bool* has_value) {
  std::size_t start = 0;
  while (start < word.size() && start < 2 && word[start] == '-') ++start;
  std::size_t end = start;
  while (end < word.size() && is_name_char(word[end])) ++end;
  if (end == start || std::isdigit(static_cast<unsigned char>(word[start])) || word[start] == '-') return {};
  *has_value = end < word.size() && word[end] == '=';
  if (!*has_value && end != word.size()) return {};
  // An assignment's name is a variable's (no '-'); an option alone needs its dashes.
  if (start == 0 && (!*has_value || word.substr(0, end).find('-') != std::string_view::npos)) return {};
  return word.substr(start, end - start);
}

// Withholds, in one argument, the values its words give credential-like names; `pending`: the
// previous word was such an option alone, so this argument's first word is its value.
std::string withhold_words(const std::string& arg, const std::vector<std::string>& redact, bool& pending) {
  const auto secret = [&](std::string_view name) {
    const std::string n = command_name(name);
    return looks_like_credential(n) ||
           std::any_of(redact.begin(), redact.end(), [&](const std::string& r) { return n == r; });
  };
  // An option's value given as the next argument is that whole argument, spaces and all.
  if (pending && !arg.starts_with("-")) {
    pending = false;
    return std::string(kValueWithheld);
  }
  pending = false;
  std::string out;
  std::size_t i = 0;
  // RETURNS: where the value starting at `at` ends: its closing quote's end, or the next space.
  const auto value_end = [&](std::size_t at) {
    if (at < arg.size() && (arg[at] == '\'' || arg[at] == '"')) {
      const std::size_t close = arg.find(arg[at], at + 1);
      return close == std::string::npos ? arg.size() : close + 1;
    }
    const std::size_t space = arg.find_first_of(" \t\n", at);
    return space == std::string::npos ? arg.size() : space;
  };
  while (i < arg.size()) {
    if (std::isspace(static_cast<unsigned char>(arg[i]))) {
      out += arg[i++];
      continue;
    }
    if (pending) {  // a word after an option alone within this argument
      pending = false;
      if (arg[i] != '-') {
        out += kValueWithheld;
        i = value_end(i);
        continue;
      }
    }
    const std::size_t end = value_end(i);
    const std::string_view word(arg.data() + i, end - i);
    bool has_value = false;
    const std::string_view name = word_name(word, &has_value);
    if (!name.empty() && secret(name)) {
      if (has_value) {
        const std::size_t eq = i + std::size_t(name.data() - word.data()) + name.size();
        out.append(arg, i, eq + 1 - i);
        out += kValueWithheld;
        // An argument that starts with it is its value to the end (env's HF_TOKEN=a b, or
        // --passphrase='two words' as the shell hands it over); within a shell's line, one word.
        if (i == 0) return out;
        i = value_end(eq + 1);
        continue;
      }
      pending = true;
    }
    out.append(word);
    i = end;
  }
  return out;
}

}  // namespace

void check_redact_command_names(const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    std::size_t dashes = 0;
    while (dashes < n.size() && dashes < 2 && n[dashes] == '-') ++dashes;
    const std::string_view name = std::string_view(n).substr(dashes);
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) || name[0] == '-' ||
        !std::all_of(name.begin(), name.end(), is_name_char))
      throw InputError(
          "--redact: expected a variable's or an option's name (letters, digits, _ and -), got '" + n + "'");
  }
}

std::vector<std::string> withhold_in_command(const std::vector<std::string>& argv,
                                             const std::vector<std::string>& redact,
                                             const char* const* environ) {
  std::vector<std::string> names;
  for (const std::string& r : redact) {
    std::size_t dashes = 0;
    while (dashes < r.size() && r[dashes] == '-') ++dashes;
    names.push_back(command_name(std::string_view(r).substr(dashes)));
  }
  std::vector<std::string> out;
  bool pending = false;
  for (const std::string& a : argv) out.push_back(withhold_words(a, names, pending));
  // A credential passed by value (python3 train.py "$HF_TOKEN"): its variable names it.
  std::map<std::string, std::string> withheld;
  for (const char* const* e = environ; e && *e; ++e) {
    const std::string_view kv = *e;
    const std::size_t eq = kv.find('=');
    if (eq == std::string_view::npos || kv.size() - eq - 1 < 8) continue;
    const std::string name(kv.substr(0, eq));
    const std::string n = command_name(name);
    if (looks_like_credential(n) || std::find(names.begin(), names.end(), n) != names.end())
      withheld[name] = std::string(kv.substr(eq + 1));
  }
  if (!withheld.empty()) {
    nlohmann::json j = out;
    withhold_values(j, withheld);
    out = j.get<std::vector<std::string>>();
  }
  return out;
}

bool looks_like_credential(std::string_view name) {
  static constexpr std::array<std::string_view, 8> kWords = {"TOKEN",      "SECRET",     "PASSWORD", "PASSWD",
                                                             "PASSPHRASE", "CREDENTIAL", "AUTH",     "KEY"};
  std::string upper(name);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return std::any_of(kWords.begin(), kWords.end(),
                     [&upper](std::string_view w) { return upper.find(w) != std::string::npos; });
}

void check_redact_names(const std::vector<std::string>& names) {
  for (const std::string& n : names)
    if (!is_variable_name(n))
      throw InputError("--redact: expected an environment variable's name (letters, digits, _), got '" + n +
                       "'");
}

RecordedVariables recorded_variables(const std::map<std::string, std::string>& expanded,
                                     const std::vector<std::string>& redact, const char* const* environ) {
  std::map<std::string, std::string> set = expanded;
  for (const char* const* e = environ; e && *e; ++e) {
    const std::string_view kv = *e;
    const std::size_t eq = kv.find('=');
    const std::string_view name = kv.substr(0, eq);
    const bool benchmark_flag = name.rfind("BENCHMARK_", 0) == 0;
    if (benchmark_flag || is_feedbench_variable(name))
      set[std::string(name)] = eq == std::string_view::npos ? "" : std::string(kv.substr(eq + 1));
  }
  RecordedVariables r;
  for (auto& [name, value] : set) {
    const bool withhold =
        looks_like_credential(name) || std::find(redact.begin(), redact.end(), name) != redact.end();
    if (!withhold) {
      r.recorded[name] = value;
      continue;
    }
    r.recorded[name] = std::string(kValueWithheld);
    if (!value.empty()) r.withheld[name] = value;
  }
  return r;
}

void withhold_values(nlohmann::json& j, const std::map<std::string, std::string>& withheld) {
  if (withheld.empty()) return;
  std::vector<std::pair<std::string, std::string>> order;
  for (const auto& [name, value] : withheld) order.emplace_back(value, "${" + name + "}");
  std::sort(order.begin(), order.end(),
            [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  withhold_in(j, order);
}

}  // namespace feedbench
