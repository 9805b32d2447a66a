// The closing summary of a run: what a person reads after the table, and what the result
// file keeps under `summary`. Per path and cache state the best throughput and where it was
// reached; cold vs warm; source vs cache; rounds whose cache state was not achieved; skips.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "feedbench/result.h"

namespace feedbench {

// RETURNS: {"file_read": {"best": [{path, cache_state, bytes_per_second, case, workers,
//   pattern, engine, block_size, repetitions}], "cold_vs_warm": [{path, cold_bytes_per_second,
//   warm_bytes_per_second, ratio}], "cache_vs_source": [{cache_state, source_bytes_per_second,
//   cache_bytes_per_second, ratio}]}, "excluded": [{case, repetition_index, reason, requested,
//   residency_before}], "skipped": [{case, reason}], "loader": summarize_loader(doc)}.
// Throughputs are the fold's (case_view.h): the median of bytes_per_second over a case's
// achieved repetitions; excluded repetitions are listed, calibration cases left out.
// Parts with nothing to say are left out.
nlohmann::json summarize(const ResultDocument& doc);

// RETURNS: the summary as lines for the console ("" when there is nothing to say).
std::string format_summary(const nlohmann::json& summary);

}  // namespace feedbench
