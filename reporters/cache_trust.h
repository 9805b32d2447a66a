// A cache measured though it failed its checks (--allow-unverified-cache, or a cache that
// changed while the cases read it): the result records `dataset.cache.verified: false`, and
// every figure or answer measured on the cache path says so where a person reads it, in one
// wording. The rule and the words live here; the summary (console and Markdown) and the HTML
// page use them.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "feedbench/results/result.h"

namespace feedbench {

// The words beside a figure or an answer measured on an unverified cache.
inline constexpr char kCacheUnverified[] = "(cache unverified)";

// RETURNS: true when the document records its cache as not verified (dataset.cache.verified
// is false). Without the field (no cache read, or a file from a writer before it) the
// verification is unknown, which is not said to have failed: false.
bool cache_unverified(const ResultDocument& doc);

// RETURNS: true when the summary's answers say their cache was unverified
// (answers.cache_unverified is true, summary.h); false for anything else there.
bool answers_cache_unverified(const nlohmann::json& answers);

// RETURNS: true when `case_name` reads the cache path: one of its parts is "path:cache".
bool on_cache_path(const std::string& case_name);

// RETURNS: " (cache unverified)" when `qualify`, else "": what a line, a row or a sentence that
// states a cache figure carries after it.
std::string cache_note(bool qualify);

}  // namespace feedbench
