// `--csv FILE`: per case, one row per repetition and one "case" row with the case's figures as
// every reporter folds them (case_view.h), in a stable column order, for spreadsheets and
// pandas. Numbers are written unformatted, strings quoted.
#pragma once

#include <string>
#include <vector>

#include "feedbench/results/result.h"

namespace feedbench {

// RETURNS: the parameter columns in their fixed order (every known parameter of every family),
// then any other parameter the document holds, alphabetically. Shared with the Markdown writer.
std::vector<std::string> param_columns(const ResultDocument& doc);

// RETURNS: the counter columns in their fixed order (file_read's, then the loader's), then
// any other counter the document holds, alphabetically.
std::vector<std::string> counter_columns(const ResultDocument& doc);

// RETURNS: the CSV text: header "case,family,<params>,repetition_index,run_type,
// aggregate_name,real_time,time_unit,<counters>,error,excluded,achieved_repetitions", then per
// case its repetitions (run_type "iteration", `excluded` saying why one does not count) and a
// row with run_type "case", aggregate_name "median_of_achieved" ("median" where the file had
// only Google Benchmark's aggregates), the medians over achieved repetitions (empty when none
// was achieved), the exclusion note and the achieved count. Google Benchmark's own aggregate
// rows are left out: they fold every repetition, excluded ones included.
std::string format_csv(const ResultDocument& doc);

// Writes format_csv(doc) to `path` atomically. Throws RunError when it cannot.
void write_csv(const ResultDocument& doc, const std::string& path);

}  // namespace feedbench
