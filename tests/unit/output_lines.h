// Output tests in Google Benchmark's style (its test/output_test.h): a text is read as lines,
// and each pattern must match the next line whole, in order, so a line that moves, goes or
// comes unasked fails the test (a substring check would pass). Patterns are ECMAScript regular
// expressions with Google Benchmark's shorthands:
//   %float   a decimal number (1, 0.5, 1.2e+09)      %int      a whole number
//   %pct     a signed percentage (+12.3%, -0.5%)     %ratio    a ratio like 1.25×
#pragma once

#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace feedbench::testing {

// RETURNS: `text`'s lines, without their line ends.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// RETURNS: `pattern` with the shorthands above replaced by their regular expressions.
inline std::string expand_output_pattern(std::string pattern) {
  static const std::vector<std::pair<std::string, std::string>> kShorthands = {
      {"%float", "[-+]?[0-9]*[.]?[0-9]+([eE][-+]?[0-9]+)?"},
      {"%int", "[-+]?[0-9]+"},
      {"%pct", "[-+][0-9]+([.][0-9]+)?%"},
      {"%ratio", "[0-9]+([.][0-9]+)?×"},
  };
  for (const auto& [from, to] : kShorthands)
    for (std::size_t at = pattern.find(from); at != std::string::npos;
         at = pattern.find(from, at + to.size()))
      pattern.replace(at, from.size(), to);
  return pattern;
}

// Each pattern must match the next line of `text`, whole; the counts must agree.
inline void expect_lines(const std::string& text, const std::vector<std::string>& patterns) {
  const std::vector<std::string> lines = lines_of(text);
  EXPECT_EQ(lines.size(), patterns.size()) << text;
  for (std::size_t i = 0; i < std::min(lines.size(), patterns.size()); ++i)
    EXPECT_TRUE(std::regex_match(lines[i], std::regex(expand_output_pattern(patterns[i]))))
        << "line " << i << ":\n  " << lines[i] << "\ndoes not match\n  " << patterns[i] << "\nin\n"
        << text;
}

}  // namespace feedbench::testing
