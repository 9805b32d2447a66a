// `--markdown FILE`: a result fit for a CI job summary or a pull request: the environment in
// a few lines, the paths, one table of median figures per family, the flags and the summary.
// A cache measured though it failed its checks: each of its rows, and each summary line of a
// cache figure, says "(cache unverified)" (cache_trust.h).
#pragma once

#include <string>

#include "feedbench/results/result.h"

namespace feedbench {

// RETURNS: the Markdown text.
std::string format_markdown(const ResultDocument& doc);

// Writes format_markdown(doc) to `path` atomically. Throws RunError when it cannot.
void write_markdown(const ResultDocument& doc, const std::string& path);

}  // namespace feedbench
