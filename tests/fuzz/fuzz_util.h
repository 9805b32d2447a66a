// Shared by the fuzz targets: what counts as an expected outcome of bad input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "feedbench/base/error.h"

namespace feedbench::fuzz {

// Splits the fuzzer's bytes at the first "\n": {first line, the rest}. No newline: {all, ""}.
inline std::pair<std::string, std::string> split_first_line(const std::uint8_t* data, std::size_t size) {
  std::string_view all(reinterpret_cast<const char*>(data), size);
  std::size_t nl = all.find('\n');
  if (nl == std::string_view::npos) return {std::string(all), std::string()};
  return {std::string(all.substr(0, nl)), std::string(all.substr(nl + 1))};
}

// Runs `body`; InputError and RunError are how a reader refuses bad input, so they are the
// expected outcome. Anything else (another exception, an abort, a sanitizer report) escapes
// and libFuzzer reports it as a crash.
template <class F>
void expect_only_input_errors(F&& body) {
  try {
    body();
  } catch (const InputError&) {
  } catch (const RunError&) {
  }
}

}  // namespace feedbench::fuzz
