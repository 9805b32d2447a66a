// PLACEHOLDER until the loader family lands.
#include "loader_summary.h"
namespace feedbench {
nlohmann::json summarize_loader(const ResultDocument&) { return nlohmann::json::object(); }
std::string format_loader_summary(const nlohmann::json&) { return {}; }
}  // namespace feedbench
