#include "run_context.h"

namespace feedbench {

void RunLog::add(CaseRecord record) {
  // Result files carry the family inside `params` (a case's name always starts with it), so
  // a reader needs no second field to know what the parameters mean.
  if (!record.params.contains("family")) {
    nlohmann::ordered_json params = {{"family", record.case_name.substr(0, record.case_name.find('/'))}};
    for (auto& [key, value] : record.params.items()) params[key] = value;
    record.params = std::move(params);
  }
  std::lock_guard lock(mutex_);
  std::string key = record.case_name;
  records_[key].push_back(std::move(record));
}

const CaseRecord* RunLog::find(const std::string& case_name, std::int64_t repetition_index) const {
  std::lock_guard lock(mutex_);
  auto it = records_.find(case_name);
  if (it == records_.end() || repetition_index < 0 || std::size_t(repetition_index) >= it->second.size())
    return nullptr;
  return &it->second[std::size_t(repetition_index)];
}

std::vector<const CaseRecord*> RunLog::all(const std::string& case_name) const {
  std::lock_guard lock(mutex_);
  std::vector<const CaseRecord*> out;
  auto it = records_.find(case_name);
  if (it != records_.end())
    for (const CaseRecord& r : it->second) out.push_back(&r);
  return out;
}

Cluster& RunContext::ranks() {
  if (cluster) return *cluster;
  static LocalCluster alone;
  return alone;
}

const FileSet* RunContext::files_for(const std::string& path_role) const {
  if (path_role == "source") return source ? &*source : nullptr;
  if (path_role == "cache") return cache ? &*cache : nullptr;
  return nullptr;
}

}  // namespace feedbench
