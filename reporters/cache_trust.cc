#include "cache_trust.h"

namespace feedbench {

bool cache_unverified(const ResultDocument& doc) {
  if (!doc.dataset.is_object()) return false;
  const auto cache = doc.dataset.find("cache");
  if (cache == doc.dataset.end() || !cache->is_object()) return false;
  const auto verified = cache->find("verified");
  return verified != cache->end() && verified->is_boolean() && !verified->get<bool>();
}

bool answers_cache_unverified(const nlohmann::json& answers) {
  if (!answers.is_object()) return false;
  const auto flag = answers.find("cache_unverified");
  return flag != answers.end() && flag->is_boolean() && flag->get<bool>();
}

bool on_cache_path(const std::string& case_name) {
  // A part of the name, whole: "path:cache" followed by the end or the next part.
  constexpr const char kPart[] = "path:cache";
  constexpr std::size_t kLength = sizeof kPart - 1;
  for (std::size_t at = 0; (at = case_name.find(kPart, at)) != std::string::npos; at += kLength) {
    const bool starts = at == 0 || case_name[at - 1] == '/';
    const bool ends = at + kLength == case_name.size() || case_name[at + kLength] == '/';
    if (starts && ends) return true;
  }
  return false;
}

std::string cache_note(bool qualify) { return qualify ? std::string(" ") + kCacheUnverified : std::string(); }

}  // namespace feedbench
