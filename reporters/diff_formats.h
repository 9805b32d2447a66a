// How `feedbench diff` shows a Comparison: a table for a terminal (colour only there),
// Markdown for a pull request, JSON for tools, JUnit XML so CI shows each regressed case as a
// failed test.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "feedbench/results/comparison.h"

namespace feedbench {

enum class DiffFormat { kTable, kMarkdown, kJson, kJunit };

// RETURNS: the format named "table", "markdown", "json" or "junit". Throws InputError otherwise.
DiffFormat parse_diff_format(const std::string& text);

struct DiffFormatOptions {
  bool colour = false;  // ANSI colour in the table (the caller decides: a terminal, no NO_COLOR)
  bool strict = false;  // comparability warnings fail the diff (shown as such)
};

// RETURNS: the comparison as the whole text of one output (ends with a newline).
std::string format_diff(const Comparison& comparison, DiffFormat format,
                        const DiffFormatOptions& options = {});

// RETURNS: {"schema": "feedbench-diff/2", "base", "new", "options", "warnings", "load",
// "notes", ["rerun"], "cases", "geomean", "regressions", "improvements", "noisy", "excluded",
// "missing", "compared", "exit_code"}; a change or p that is not finite is null. Version 2 added
// the verdict "noisy" and per metric base_cv, new_cv, noise_band, below_floor, why_noisy; then,
// additively, per metric base_set_aside and new_set_aside ([{repetition_index, value, median}]:
// the outliers; base_values and new_values are the values judged), load.differ, and the
// outlier lines among the notes.
nlohmann::ordered_json diff_to_json(const Comparison& comparison, bool strict);

// RETURNS: a metric's value for people: "812 MiB/s", "153 us", "0.031", ...
std::string format_metric_value(const std::string& metric, double value);

// RETURNS: "repetition 3 of bytes_per_second: 19 MiB/s, median 39.7 MiB/s".
std::string outlier_text(const OutlierRepetition& o);

// RETURNS: the outlier rule in words: "farther than 3.5 scaled MADs and 10% from the median".
std::string outlier_rule_text();

}  // namespace feedbench
