// The loader family's part of a run's summary: per-case verdicts against the target AU, the
// smallest worker count that reaches it (and any count after which AU falls), the largest
// accelerator count every trainer keeps at it; cases with too few measured steps carry no
// verdict and are no point of a sweep; multi-epoch cases list each epoch. And the loader's
// part of the summary's answers (loader_answers), which every reporter prints.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "case_view.h"
#include "feedbench/results/result.h"

namespace feedbench {

// RETURNS: {"verdicts": [...], "min_workers": [... with "worse": [...]], "max_accelerators":
// [...]}; an empty
// object when the document has no loader cases.
nlohmann::json summarize_loader(const ResultDocument& doc);

// RETURNS: the lines a person reads at the end of a run (empty for an empty summary).
// `cache_unverified`: the run's cache failed its checks (cache_trust.h), so each line of a case
// or a sweep on the cache path ends "(cache unverified)".
std::string format_loader_summary(const nlohmann::json& summary, bool cache_unverified = false);

// The loader's part of the summary's answers (summary.h: summarize), per path: "feeds", for
// cold and warm, the case that answers whether storage feeds the simulated trainers (among
// those reaching their target the one with the fewest workers, else the highest AU; a cold
// case of several epochs answers cold with its first and warm with a last one served from
// memory); "keeps", where accelerators were swept, the largest count at which some sweep keeps
// every trainer at the target (the best of summarize_loader's max_accelerators on that path).
// Cases too short to judge and calibration cases answer nothing.
// In accelerators (loader_demand.h): each "feeds" answer says how many accelerators the path's
// supply keeps at the target (the most any of its cases in that state does, a lower bound when
// that case met its target) and one accelerator's demand; "node" what a node of
// `node_accelerators` accelerators (0: the most any loader case ran) needs at the target AU.
// REQUIRES: node_accelerators >= 0.
// RETURNS: {"paths": {PATH: {"feeds": {cold|warm: {fed, au, target_au, workers?, case,
//   accelerators_fed?, accelerators_fed_at_least?, accelerators_fed_case?, accelerators_fed_by_store?,
//   demand?}}?, "keeps": {accelerators (0: none), target_au}?}}?, "node": {accelerators, from (run|cases),
//   target_au, samples_per_second, bytes_per_second, transform_cores, demand, case}?, "not_judged": N
//   (loader cases measured too few steps to judge, only when none was judged)?}; empty without
//   loader cases.
nlohmann::json loader_answers(const std::vector<CaseView>& cases, std::int64_t node_accelerators);

// RETURNS: {accelerators, from, target_au, samples_per_second, bytes_per_second, transform_cores,
// demand, case}: what a node of `node` accelerators (0: the most any of `cases` ran) needs at the
// target AU, from the heaviest pipeline among `cases` (the most transform per accelerator, then
// the most bytes); null when none recorded its demand. The "node" of loader_answers, and of a
// replay's answer. REQUIRES: node >= 0.
nlohmann::json node_answer(const std::vector<const CaseView*>& cases, std::int64_t node);

}  // namespace feedbench
