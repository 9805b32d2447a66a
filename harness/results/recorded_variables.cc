#include "feedbench/results/recorded_variables.h"

#include <algorithm>
#include <array>
#include <cctype>
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

}  // namespace

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
