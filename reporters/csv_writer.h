// `--csv FILE`: one row per benchmark run (repetitions and aggregates) in a stable column
// order, for spreadsheets and pandas. Numbers are written unformatted, strings quoted.
#pragma once

#include <string>
#include <vector>

#include "feedbench/result.h"

namespace feedbench {

// RETURNS: the parameter columns in their fixed order (every known parameter of every family),
// then any other parameter the document holds, alphabetically. Shared with the Markdown writer.
std::vector<std::string> param_columns(const ResultDocument& doc);

// RETURNS: the counter columns in their fixed order (file_read's, then the loader's), then
// any other counter the document holds, alphabetically.
std::vector<std::string> counter_columns(const ResultDocument& doc);

// RETURNS: the CSV text: header "case,family,<params>,repetition_index,run_type,
// aggregate_name,real_time,time_unit,<counters>,error", then one row per entry.
std::string format_csv(const ResultDocument& doc);

// Writes format_csv(doc) to `path` atomically. Throws RunError when it cannot.
void write_csv(const ResultDocument& doc, const std::string& path);

}  // namespace feedbench
