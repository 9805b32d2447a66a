#include "storage_figures.h"

#include <algorithm>
#include <vector>

#include "feedbench/base/error.h"
#include "feedbench/base/units.h"
#include "feedbench/plan/plan.h"
#include "feedbench/results/result.h"
#include "reporters/case_view.h"
#include "trial.h"

namespace feedbench {

nlohmann::json reads_config(const WorkloadProfile& profile, const std::string& data, int units,
                            double pass_seconds) {
  nlohmann::json include = nlohmann::json::array();
  for (int i = 0; i < units; ++i) include.push_back(unit_folder(i) + "/" + data_files_glob(profile));
  nlohmann::json workers = nlohmann::json::array();
  for (int w : kReadsWorkers) workers.push_back(w);
  // Whole files in a shuffled order, as an epoch reads them, with nothing else to do: what the
  // storage itself gives this workload's file sizes. Time-bound, so a large set costs little.
  const nlohmann::json reads = {
      {"family", "file_read"}, {"pattern", "shuffled_files"},
      {"block_size", "1MiB"},  {"engine", "psync"},
      {"workers", workers},    {"cache_state", "cold"},
      {"path", "source"},      {"runtime", format_printf("%.0fs", std::max(1.0, pass_seconds))}};
  return {
      {"name", "qualify-reads-" + profile.name},
      {"description", "feedbench qualify: the best read rate of the " + profile.name + " data set's files"},
      {"dataset", {{"source", data}, {"include", include}}},
      {"defaults", {{"repetitions", 1}}},
      {"families", nlohmann::json::array({reads})}};
}

CardReads read_best_reads(const ResultDocument& document, const std::string& path,
                          double need_bytes_per_second) {
  CardReads best;
  best.path = path;
  for (const CaseView& c : fold_cases(document)) {
    if (c.family != "file_read" || c.achieved == 0) continue;
    const auto rate = c.counters.find("bytes_per_second");
    if (rate == c.counters.end() || rate->second <= best.bytes_per_second) continue;
    best.bytes_per_second = rate->second;
    best.seconds = time_to_ns(c.real_time, c.time_unit) * 1e-9;
    best.bytes = std::uint64_t(best.bytes_per_second * best.seconds);
    const auto workers = c.params.find("workers");
    best.workers =
        workers != c.params.end() && workers->is_number_integer() ? workers->get<std::int64_t>() : 1;
  }
  if (best.workers == 0) throw InputError("the reads' result holds no measured file_read case");
  best.accelerators = need_bytes_per_second > 0 ? best.bytes_per_second / need_bytes_per_second : 0;
  return best;
}

std::string limit_with_reads(const CardCell& cell, const CardReads& reads) {
  if (reads.accelerators <= 0 || cell.limit.rfind("the host's CPU", 0) != 0) return cell.limit;
  const std::string whose = reads.path == "store" ? "the store's" : "the cache disk's";
  const std::string worth = format_printf("%.3g", reads.accelerators);
  // Busy cores and a storage that cannot give more either: a cold epoch whose best reads feed
  // hardly more than it did is the storage's to limit, whatever the cores did.
  if (cell.state == "cold" && reads.accelerators < 1.25 * cell.accelerators_fed)
    return whose + " bandwidth: its best cold reads, " + format_rate(reads.bytes_per_second) + ", feed " +
           worth + " (and " + cell.limit + ")";
  return cell.limit + "; " + whose + " reads alone would feed " + worth;
}

std::uint64_t checkpoint_full_bytes(const std::string& model, std::int64_t* ranks) {
  for (const CheckpointModel& m : checkpoint_models())
    if (m.name == model) {
      *ranks = m.ranks;
      return m.bytes;
    }
  throw InputError("unknown checkpoint model '" + model + "'");
}

nlohmann::json checkpoint_config(const CheckpointPlan& plan) {
  const nlohmann::json checkpoint = {{"family", "checkpoint"}, {"model", plan.model}, {"scale", plan.scale}};
  return {{"name", "qualify-checkpoint"},
          {"description", "feedbench qualify: a " + plan.model + " checkpoint written and restored cold"},
          {"dataset", {{"source", plan.source}, {"scratch", plan.scratch}}},
          {"defaults", {{"repetitions", 1}}},
          {"families", nlohmann::json::array({checkpoint})}};
}

CardCheckpoint read_checkpoint(const ResultDocument& document, const std::string& path,
                               const CheckpointPlan& plan) {
  for (const CaseView& c : fold_cases(document)) {
    if (c.family != "checkpoint" || c.achieved == 0) continue;
    CardCheckpoint out;
    out.path = path;
    out.model = plan.model;
    out.scale = plan.scale;
    std::int64_t ranks = 1;
    out.full_bytes = checkpoint_full_bytes(plan.model, &ranks);
    const auto number = [&](const char* key) {
      const auto it = c.extra.find(key);
      return it != c.extra.end() && it->is_number() ? it->get<double>() : 0.0;
    };
    out.bytes = std::uint64_t(number("bytes"));
    out.ranks = std::int64_t(number("writer_ranks"));
    const auto counter = [&](const char* key) {
      const auto it = c.counters.find(key);
      return it != c.counters.end() ? it->second : 0.0;
    };
    out.write_bytes_per_second = counter("bytes_per_second");
    out.restore_bytes_per_second = counter("restore_bytes_per_second");
    if (out.bytes == 0 || out.ranks == 0) break;
    return out;
  }
  throw InputError("the checkpoint's result holds no measured checkpoint case");
}

}  // namespace feedbench
