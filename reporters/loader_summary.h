// The loader family's part of a run's summary: per-case verdicts against the target AU, the
// smallest worker count that reaches it (and any count after which AU falls), the largest
// accelerator count every trainer keeps at it; cases with too few measured steps carry no
// verdict and are no point of a sweep; multi-epoch cases list each epoch.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "feedbench/results/result.h"

namespace feedbench {

// RETURNS: {"verdicts": [...], "min_workers": [... with "worse": [...]], "max_accelerators":
// [...]}; an empty
// object when the document has no loader cases.
nlohmann::json summarize_loader(const ResultDocument& doc);

// RETURNS: the lines a person reads at the end of a run (empty for an empty summary).
std::string format_loader_summary(const nlohmann::json& summary);

}  // namespace feedbench
