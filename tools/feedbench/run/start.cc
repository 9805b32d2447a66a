// The start of a run across ranks: every rank ready to run the same plan, or all stop with the
// reason of the first that is not; and the cores a launcher left each rank, checked once.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "benchmarks/cluster_launch.h"
#include "command_line.h"
#include "feedbench/base/cores.h"
#include "feedbench/base/error.h"
#include "feedbench/base/sha256.h"
#include "run/run_steps.h"

namespace feedbench::run_steps {
namespace {

// A launcher's binding that holds a rank to fewer cores than its reading threads: said once,
// before any case, and recorded (environment.cpu_affinity).
// RETURNS: the record, null when not launched by MPI.
nlohmann::json check_affinity(const RunSetup& run) {
  if (!launched_by_mpi()) return nullptr;
  const RunOptions& o = run.options;
  std::vector<Case> matched;
  cases_to_run(run.plan, o.filter, o.repetitions_from_flag, o.flag_repetitions, &matched);
  int threads = 0;
  for (const Case& c : matched) threads = std::max(threads, c.reader_threads());
  const std::vector<RankCores> cores =
      all_gather(run.cluster, RankCores{std::int32_t(usable_cores()), std::int32_t(online_cpus())});
  const std::string warning =
      affinity_warning(cores, run.cluster.host_of_rank(), run.cluster.host_names(), threads);
  nlohmann::json by_rank = nlohmann::json::array();
  for (const RankCores& c : cores) by_rank.push_back({{"affinity", c.affinity}, {"online", c.online}});
  nlohmann::json record = {{"cores_by_rank", by_rank},
                           {"reading_threads", threads},
                           {"warning", warning.empty() ? nlohmann::json(nullptr) : nlohmann::json(warning)}};
  if (!warning.empty()) say(stderr, "warning: " + warning + "\n");
  return record;
}

}  // namespace

void agree_to_start(Cluster& cluster, RankProgress& progress, const std::exception_ptr& error,
                    const std::string& plan) {
  progress.started = true;
  if (cluster.size() == 1) {
    if (error) std::rethrow_exception(error);
    return;
  }
  struct Status {
    std::uint8_t failed;
    std::uint8_t input;  // exit 2 (bad input) rather than 1
    FixedText<900> why;
    FixedText<72> plan;
  } mine{};
  mine.plan.set(plan);
  if (error) {
    mine.failed = 1;
    const VerbFailure f = verb_failure(error, "run");
    mine.input = f.exit_code == 2;
    mine.why.set(f.reason);
  }
  const std::vector<Status> all = all_gather(cluster, mine);
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (!all[r].failed) continue;
    progress.finished = true;
    const std::string why = "rank " + std::to_string(r) + " (host " +
                            cluster.host_names()[std::size_t(cluster.host_of_rank()[r])] +
                            "): " + all[r].why.str();
    if (all[r].input) throw InputError(why);
    throw RunError(why);
  }
  for (std::size_t r = 1; r < all.size(); ++r)
    if (all[r].plan.str() != all[0].plan.str()) {
      progress.finished = true;
      throw InputError("rank " + std::to_string(r) + " (host " +
                       cluster.host_names()[std::size_t(cluster.host_of_rank()[r])] +
                       ") would run other cases than rank 0 (another config, --set or --benchmark_* flag): "
                       "every rank must run the same plan");
    }
}

void start_together(RunSetup& run) {
  const RunOptions& o = run.options;
  Cluster& cluster = run.cluster;
  // Every rank is ready, or all stop here with the reason of the first that is not.
  std::string plan_text = o.filter + "\n" + o.repetitions_flag + "\n";
  for (const Case& c : run.plan.cases) plan_text += c.name() + " " + std::to_string(c.repetitions) + "\n";
  agree_to_start(cluster, run.together, nullptr, sha256_hex(plan_text));
  if (o.many)
    std::fprintf(o.human, "ranks: %d on %d %s (%s), share %s\n", cluster.size(), cluster.hosts(),
                 cluster.hosts() == 1 ? "host" : "hosts", cluster.implementation().c_str(),
                 run.config.share.c_str());
  run.affinity_record = check_affinity(run);
}

}  // namespace feedbench::run_steps
