// The closing summary of a run: what a person reads after the table, and what the result
// file keeps under `summary`. First the answers (the verdicts every reporter prints); then per
// path and cache state the best throughput and where it was reached; where more workers stop
// paying; cold vs warm and source vs cache on matched cases; rounds whose cache state was not
// achieved; skips.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "feedbench/results/result.h"

namespace feedbench {

// RETURNS: {"file_read": {"best": [{path, cache_state, bytes_per_second, case, workers,
//   pattern, engine, block_size, repetitions}],
//   "scaling": [{parameter ("workers" or "queue_depth"), group (the other params), description,
//   points: [{value, bytes_per_second, case}], best, best_bytes_per_second, best_case, knee,
//   knee_bytes_per_second, slower_than_best: [{value, slower_by, case}], still_rising}],
//   "cold_vs_warm": [{every param but cache_state, cold_case, warm_case, cold_bytes_per_second,
//   warm_bytes_per_second, ratio}], "cold_vs_warm_overall": [{path, pairs, geomean_ratio,
//   min_ratio, min_pair, max_ratio, max_pair}], "cache_vs_source": [{every param but path,
//   source_case, cache_case, source_bytes_per_second, cache_bytes_per_second, ratio}],
//   "cache_vs_source_overall": [{cache_state, pairs, geomean_ratio, ...}]},
//   "excluded": [{case, repetition_index, reason, requested, residency_before}],
//   "outliers": [{case, metric, repetition_index, value, median}] (comparison.h's
//   outlier_repetitions: what diff sets aside when this result is its BASE or NEW),
//   "skipped": [{case, reason}], "loader": summarize_loader(doc), "answers": (below)}. `run`
//   adds "sizing": {selection_bytes, memory_bytes, smaller_than_memory, note}, which
//   format_summary prints.
// Scaling: per group of cases equal in all but workers (or queue depth), the best value, the
// knee (the smallest value within 5% of the best) and the larger values more than 5% slower.
// Comparisons pair cases equal in everything but the cache state (or the path): never the best
// of one shape against the best of another.
// Throughputs are the fold's (case_view.h): the median of bytes_per_second over a case's
// achieved repetitions; excluded repetitions are listed, calibration cases left out.
// Parts with nothing to say are left out, except "answers": always there, for its version.
nlohmann::json summarize(const ResultDocument& doc);

// The summary's "answers", which open it: the one verdict engine. Every reporter prints these
// as the summary stores them (format_answers for the console and Markdown, answer_sentences
// for the HTML page), none judges again:
//   {"version": kAnswersVersion,
//    "loader_not_judged": N?  (loader cases measured too few steps, when none could be judged),
//    "node": {accelerators, from, target_au, samples_per_second, bytes_per_second,
//             transform_cores, case}?  (what a node needs, loader_summary.h),
//    "paths": [{path, "feeds": {cold|warm: {fed, au, target_au, workers?, case, limit?,
//                                           accelerators_fed?, accelerators_fed_at_least?,
//                                           accelerators_fed_case?, accelerators_fed_by_store?, demand?,
//                                           storage_alone?: {the same, for no transform}}}?,
//               "keeps": {accelerators (0: none), target_au}?,
//               "reads": {cold|warm|direct: {bytes_per_second, workers?, pattern?, case}}?}],
//    "cache_helps": [{cache_state (cold|warm|direct), ratio (cache / source, geometric mean),
//                     pairs}]?,
//    "stage": {bytes_per_second, workers?, case}?,
//    "checkpoint": {bytes, ranks, write_s, restore_s, interval_s, blocking_share,
//                   async_bytes_per_second, generation_bytes_per_second, case}? (the largest
//                   checkpoint case: a line in training terms, its detail indented under it),
//    "cache_unverified": true (the document's cache was measured though it failed its checks:
//                        dataset.cache.verified false, cache_trust.h)?}.
// feeds and keeps: loader_summary.h's loader_answers; a feeds answer is its path's most
// realistic pipeline's (a transform over none), storage_alone the no-transform cases' beside it;
// limit: what limited or fed its case (harness/loader limit.h: {by, fed, memory_share,
// device_bytes_per_second, reread_share, transform_share, cpu_busy, idle_cores, text}). reads: the best of
// file_read's best per cache state; a case read with O_DIRECT measures the device, so `direct` is a state of
// its own. stage: the fastest staging case (a copy, not a read: said apart). cache_unverified: every printed
// answer, and every line of format_summary, that states a figure measured on the cache path carries
// kCacheUnverified ("cache (cache unverified): reads at best
// ...", "... differs only in its path (cache unverified)").
// Version 1 (no "version" key) had no loader_not_judged, keeps, direct, pattern or stage;
// version 2 no accelerators_fed, demand or node; version 3 no limit or storage_alone, and its
// feeds came from the best case of any pipeline, not the most realistic one; version 4 no
// accelerators_fed_by_store (a feeds answer the page cache fed: what the store alone feeds) and no
// case_label (beside each case: what sets it apart from its family's other cases); version 5 no
// checkpoint.
inline constexpr int kAnswersVersion = 6;

// RETURNS: the summary as lines for the console, the answers first ("" when there is nothing
// to say); the caller wraps them to its width (console_table.h: wrap_text). With the answers'
// cache_unverified, every line of a figure measured on the cache path ends "(cache unverified)".
std::string format_summary(const nlohmann::json& summary);

// RETURNS: the answers' lines: per path "source: can storage feed the simulated trainers?
// cold: no (AU 61.0% at best, target 90.0%, 2 workers); warm: yes (...)", what accelerators
// it keeps fed, what it reads, then "does the cache help? cold: yes, ... 3.0× faster than the
// source (12 matched pairs)" and what staging copies. Parts the answers lack are left out,
// with their punctuation. With cache_unverified, the cache's line and the cache answer say
// "(cache unverified)".
std::string format_answers(const nlohmann::json& answers);

// RETURNS: the table that opens the answers on the console, in Markdown and on the HTML page:
// titles (path, state, accelerators fed, limit, rate), then a row per path and state the answers
// hold (cold, warm, direct): the accelerators its supply keeps at the target ("0.31 + ≥ 0.70 page
// cache" where the page cache fed it: the store's part first), what limited or fed it (storage,
// transform CPU, the job's waits; "fed: storage", "fed: page cache"), and its rate (file_read's
// best read, else what the store delivered to the loader); "-" for what the answers lack. None
// when the answers hold no path.
std::vector<std::vector<std::string>> answer_table(const nlohmann::json& answers);

// RETURNS: the answers as the HTML page's sentences, one per item: "Source path keeps 2
// simulated accelerators at AU ≥ 90%; cache path keeps 8.", "Source path feeds the simulated
// trainers cold: AU 97.0% with 1 worker — meets the 90% target.", "Source path reads at best
// 296 MiB/s cold (4 workers, random) and 1 GiB/s warm (1 worker).", "Does the cache help?
// ...", "Staging to the cache copies at best 600 MiB/s (4 workers)."; none when the answers
// say nothing. The same answers as format_answers, in the same order, worded for a page; with
// cache_unverified, "Cache path (cache unverified) reads at best ...".
std::vector<std::string> answer_sentences(const nlohmann::json& answers);

// RETURNS: the document's summary as the run stored it when its answers are of this engine's
// version or newer (and well formed); else (a file from an older feedbench, none, or answers
// edited out of shape) summarize(doc), keeping the stored "sizing", which only the run could
// measure. Either way its answers' cache_unverified is the document's (cache_unverified(doc)):
// a file written before the answers carried it still says its cache was unverified.
nlohmann::json summary_of(const ResultDocument& doc);

// RETURNS: per item of the summary's "outliers", the line `run` warns with when it writes the
// result: "outlier repetition: CASE repetition 3 of bytes_per_second: 19 MiB/s, median 39.7
// MiB/s (farther than 3.5 scaled MADs and 10% from the median): diff judges without it; measure
// again before keeping this result as a baseline"; none when there are none.
std::vector<std::string> outlier_warning_lines(const nlohmann::json& summary);

}  // namespace feedbench
