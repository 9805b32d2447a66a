// The loader family's part of a run's summary: per-case verdicts against the target AU, the
// smallest worker count that reaches it, the largest accelerator count every trainer keeps at it.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "feedbench/result.h"

namespace feedbench {

// RETURNS: {"verdicts": [...], "min_workers": [...], "max_accelerators": [...]}; an empty
// object when the document has no loader cases.
nlohmann::json summarize_loader(const ResultDocument& doc);

// RETURNS: the lines a person reads at the end of a run (empty for an empty summary).
std::string format_loader_summary(const nlohmann::json& summary);

}  // namespace feedbench
