#include "result_builder.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <utility>

#include "feedbench/base/statistics.h"
#include "feedbench/base/units.h"
#include "feedbench/dataset/shape.h"
#include "feedbench/results/recorded_variables.h"
#include "summary.h"

namespace feedbench {

nlohmann::json describe_selection(const FileSet& files, const std::string& content) {
  nlohmann::json j = {{"root", files.root()},
                      {"files", files.size()},
                      {"bytes", files.total_bytes()},
                      {"fingerprint", files.fingerprint()},
                      {"fingerprint_kind", "metadata"}};
  // The size distribution: a change of file sizes changes reads per file, which diff names.
  if (!files.empty()) {
    std::vector<std::uint64_t> sizes(files.size());
    for (std::size_t i = 0; i < files.size(); ++i) sizes[i] = files.file_size(i);
    std::sort(sizes.begin(), sizes.end());
    auto at = [&](double q) { return quantile_of_sorted(sizes, q); };
    j["file_size"] = {
        {"min", sizes.front()}, {"p50", at(0.5)}, {"p90", at(0.9)}, {"p99", at(0.99)}, {"max", sizes.back()}};
  }
  // A data set gen --like wrote: the real one whose shape it has (path, counts, size quantiles, scale).
  if (std::optional<nlohmann::json> like = read_gen_like(files.root())) j["generated_like"] = *like;
  if (!content.empty()) {
    j["content_fingerprint"] = content;
    j["content_sample"] = kContentSampleDescription;
  }
  return j;
}

nlohmann::json sizing(std::uint64_t selection_bytes, std::uint64_t memory_bytes) {
  nlohmann::json j = {{"selection_bytes", selection_bytes},
                      {"memory_bytes", memory_bytes},
                      {"smaller_than_memory", memory_bytes > 0 && selection_bytes < memory_bytes},
                      {"note", ""}};
  if (j["smaller_than_memory"].get<bool>())
    j["note"] = "the selection (" + format_size(double(selection_bytes)) +
                ") is smaller than this "
                "machine's memory (" +
                format_size(double(memory_bytes)) +
                "): cold rounds rely on "
                "per-file eviction (checked, see residency_before), and loader epochs after the first "
                "can be served from memory; size the data set at about 1.5x memory to measure storage "
                "without relying on eviction";
  return j;
}

nlohmann::json describe_cluster(const Cluster& cluster, const std::string& share) {
  nlohmann::json hosts = nlohmann::json::array();
  for (int h = 0; h < cluster.hosts(); ++h) {
    std::vector<int> ranks;
    for (int r = 0; r < cluster.size(); ++r)
      if (cluster.host_of_rank()[std::size_t(r)] == h) ranks.push_back(r);
    hosts.push_back({{"name", cluster.host_names()[std::size_t(h)]}, {"ranks", ranks}});
  }
  return {{"implementation", cluster.implementation()},
          {"ranks", cluster.size()},
          {"hosts", hosts},
          {"share", share}};
}

ResultDocument build_result(RunFacts facts) {
  const Config& config = *facts.config;
  ResultDocument doc;
  doc.context = std::move(facts.context);
  doc.benchmarks = std::move(facts.benchmarks);
  doc.tool = std::move(facts.tool);
  doc.command_line = std::move(facts.command_line);
  doc.environment_variables = std::move(facts.environment_variables);
  doc.config = {{"file", config.file},
                {"name", config.name},
                {"sha256", config.sha256},
                {"resolved", config.resolved},
                {"dropped", facts.plan->dropped}};
  // The ${VAR:-default} fallbacks that applied: the user did not set these variables.
  doc.config["defaults_used"] = config.defaults_used;
  doc.config["seed"] = config.defaults.value("seed", std::uint64_t{42});
  doc.config["selection"] = {{"include", config.include},
                             {"from", config.include_from_cache ? "cache manifest" : "config"}};
  if (!facts.budget.is_null()) doc.config["budget"] = std::move(facts.budget);
  if (facts.node_accelerators > 0) doc.config["node_accelerators"] = facts.node_accelerators;
  doc.dataset["source"] = describe_selection(*facts.source, facts.source_content);
  if (facts.cache) {
    nlohmann::json& cache = doc.dataset["cache"] = describe_selection(*facts.cache, facts.cache_content);
    cache["manifest"] = std::move(facts.manifest);
    cache["verified"] = facts.cache_verified;
    cache["verification"] = std::move(facts.verification);
    cache["allow_unverified_cache"] = facts.allow_unverified_cache;
  }
  for (const auto& [role, rate] : config.throttle)
    if (doc.dataset.contains(role)) doc.dataset[role]["throttle_bytes_per_second"] = rate;
  doc.environment = std::move(facts.environment);
  doc.environment["host"]["load"] = std::move(facts.load);
  if (facts.cluster && facts.cluster->size() > 1)
    doc.environment["cluster"] = describe_cluster(*facts.cluster, config.share);
  if (!facts.cpu_affinity.is_null()) doc.environment["cpu_affinity"] = std::move(facts.cpu_affinity);
  // A credential the config expanded into a path or a parameter reads as ${NAME}.
  withhold_values(doc.config["resolved"], facts.withheld);
  withhold_values(doc.dataset, facts.withheld);
  withhold_values(doc.environment, facts.withheld);
  doc.summary = summarize(doc);
  doc.summary["sizing"] = std::move(facts.sizing);
  return doc;
}

std::string nothing_measured(const ResultDocument& doc) {
  std::vector<std::string> reasons;
  std::set<std::string> cases;
  for (const BenchmarkEntry& b : doc.benchmarks) {
    if (b.run_type != "iteration") continue;
    cases.insert(b.case_name);
    if (!b.error_occurred) return "";
    if (std::find(reasons.begin(), reasons.end(), b.error_message) == reasons.end())
      reasons.push_back(b.error_message);
  }
  std::string why;
  for (std::size_t i = 0; i < reasons.size() && i < 3; ++i) why += (i ? "; " : "") + reasons[i];
  if (reasons.size() > 3) why += "; and " + std::to_string(reasons.size() - 3) + " more";
  return "every case was skipped (" + std::to_string(cases.size()) +
         (cases.size() == 1 ? " case" : " cases") + "; the result file records why): " + why;
}

}  // namespace feedbench
