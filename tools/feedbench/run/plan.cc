// What a run will do and write: the config read, the plan expanded and refused where it cannot
// run, every file it will write checked, all before a root is scanned.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "command_line.h"
#include "feedbench/base/error.h"
#include "feedbench/base/file_system.h"
#include "feedbench/base/text.h"
#include "feedbench/cache/manifest.h"
#include "feedbench/plan/preflight.h"
#include "feedbench/replay/recorded_job.h"
#include "run/run_steps.h"

namespace feedbench::run_steps {
namespace {

std::string host_name() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf[0] ? buf : "host";
}

// dataset.include "from-cache": the globs the cache was staged with, from its manifest.
std::vector<std::string> include_from_cache(const Config& config) {
  std::string why;
  const std::optional<Manifest> m = read_manifest(config.cache_root, &why);
  if (!m)
    throw InputError(config.file + ": /dataset/include: \"from-cache\": the cache " + config.cache_root +
                     " has no complete manifest (" + why +
                     ") to read the selection from: stage a selection "
                     "into it first (feedbench stage --from SRC --to CACHE --include GLOB)");
  return m->include;
}

// A throttle of the cache where the config has none would pace nothing: refused, not ignored.
void refuse_throttle_without_cache(const Config& config, const ConfigOverrides& overrides) {
  if (!config.cache_root.empty() || !config.throttle.count("cache")) return;
  const auto given = overrides.throttle.find("cache");
  if (given != overrides.throttle.end())
    throw InputError("--throttle cache=" + given->second + ": the config " + config.file +
                     " has no cache to throttle: set dataset.cache (or --cache), or throttle the source");
  throw InputError(config.file +
                   ": /dataset/throttle/cache: the config has no cache to throttle: set dataset.cache (or "
                   "--cache), or remove the cache's throttle");
}

}  // namespace

bool uses_path(const Plan& plan, const std::string& role) {
  for (const Case& c : plan.cases)
    if (c.path() && *c.path() == role) return true;
  return false;
}

// Every trace a replay case names, read once and checked before anything else: a case is
// named after the job its trace records, unless its config names it.
void read_replay_traces(RunSetup& run) {
  std::set<std::string> names;
  for (Case& c : run.plan.cases) {
    if (c.family != "replay") continue;
    const std::string trace = c.replay().trace;
    auto& job = run.context.recorded_jobs[trace];
    if (!job) job = std::make_shared<const RecordedJob>(load_recorded_job(trace));
    if (!c.replay().job) c.set("job", job->name);
    // For the estimate (estimator.h): what the recording waited and stepped.
    ReplayParameters& p = c.replay();
    p.recorded_wait_s = p.recorded_step_s = 0;
    for (const RecordedPass& pass : job->passes)
      for (const RecordedBatch& b : pass.batches)
        p.recorded_wait_s += double(b.wait_ns) * 1e-9,
            p.recorded_step_s += double(std::max<std::int64_t>(b.step_ns, 0)) * 1e-9;
    p.recorded_passes = job->passes.size();
    if (!names.insert(c.name()).second)
      throw InputError(run.config.file + ": " + c.group + ": two replay cases are named " + c.name() +
                       " (two traces of jobs with one name): give each family its own \"job\"");
  }
}

void load_plan(RunSetup& run) {
  const RunOptions& o = run.options;
  run.started = std::chrono::steady_clock::now();
  ConfigOverrides overrides;
  overrides.source = o.source;
  overrides.cache = o.cache;
  overrides.scratch = o.scratch;
  overrides.set = parse_sets(o.sets);
  overrides.throttle = parse_throttles(o.throttles);
  Config& config = run.config;
  config = run.config_document ? parse_config_document(*run.config_document, o.config_path, overrides)
                               : load_config(o.config_path, overrides);
  if (o.include_from_cache) {
    if (config.cache_root.empty())
      throw InputError("--include-from-cache: reads the cache's manifest: set dataset.cache (or --cache)");
    config.include_from_cache = true;
  }
  if (config.include_from_cache) config.include = include_from_cache(config);
  refuse_throttle_without_cache(config, overrides);
  run.plan = expand_plan(config, parse_whole_number(o.max_cases_text, "--max-cases", 1, UINT64_MAX));
  read_replay_traces(run);
  // A partial cache's hit share and ranking count files by their place in the source, which a
  // rank's share of the selection does not keep: refused before anything runs, not per case.
  if (o.many && config.partial_cache && uses_path(run.plan, "cache"))
    throw InputError(config.file +
                     ": /dataset/partial_cache: a partial cache is read by one process only, not "
                     "across ranks (its hit share counts files by their place in the source, which a rank's "
                     "share does not keep): run it without mpirun, or measure path cache of a full cache");
}

void check_output_files(RunSetup& run) {
  RunOptions& o = run.options;
  // Every file the run will write is checked now, not after the cases ran (the default result
  // path is fixed here, so the one checked is the one written).
  std::string out_option = "--out";
  if (o.out_path.empty()) {
    o.default_out = true;
    o.out_path = "results/" + run.config.name + "/" + host_name() + "-" + utc_timestamp(true) + ".json";
    out_option = "--out (default " + o.out_path + ")";
  }
  // Rank 0 alone writes files (Google Benchmark's --benchmark_out too: every rank's library
  // writes it, so across ranks it is refused).
  if (o.many && !o.benchmark_out.empty())
    throw InputError("--benchmark_out: not across ranks (each rank would write it); use --out");
  // Every rank checks the scratch of its own host before anything is written.
  {
    std::vector<NamedPath> data{{o.source ? "--source" : "dataset.source", run.config.source_root}};
    if (!run.config.cache_root.empty())
      data.push_back({o.cache ? "--cache" : "dataset.cache", run.config.cache_root});
    // The cases --benchmark_filter leaves: a run filtered to the read families needs no scratch.
    Plan running;
    cases_to_run(run.plan, o.filter, o.repetitions_from_flag, o.flag_repetitions, &running.cases);
    check_checkpoint_scratch(
        running, {o.scratch ? "--scratch" : "dataset.scratch", run.config.scratch_root, true}, data);
  }
  if (!run.cluster.is_root()) return;
  require_writable_file(out_option, o.out_path);
  if (!o.csv_path.empty()) require_writable_file("--csv", o.csv_path);
  if (!o.markdown_path.empty()) require_writable_file("--markdown", o.markdown_path);
  if (!o.benchmark_out.empty()) require_writable_file("--benchmark_out", o.benchmark_out);
  if (!o.emit_fio_dir.empty()) require_writable_folder("--emit-fio", o.emit_fio_dir);
  // No output lands on what the run reads: the config, the data (the cache's manifest, which
  // --include-from-cache reads, is in the cache's folder), or another output.
  std::vector<NamedPath> outputs{{out_option == "--out" ? out_option : "--out (default)", o.out_path}};
  if (!o.csv_path.empty()) outputs.push_back({"--csv", o.csv_path});
  if (!o.markdown_path.empty()) outputs.push_back({"--markdown", o.markdown_path});
  if (!o.benchmark_out.empty()) outputs.push_back({"--benchmark_out", o.benchmark_out});
  if (!o.emit_fio_dir.empty()) outputs.push_back({"--emit-fio", o.emit_fio_dir, true});
  std::vector<NamedPath> roots{{o.source ? "--source" : "dataset.source", run.config.source_root}};
  if (!run.config.cache_root.empty())
    roots.push_back({o.cache ? "--cache" : "dataset.cache", run.config.cache_root});
  std::vector<NamedPath> inputs;
  if (!run.config_document) inputs.push_back({"--config", o.config_path});
  for (const auto& [trace, job] : run.context.recorded_jobs) inputs.push_back({"the replayed trace", trace});
  check_outputs_apart(outputs, inputs, roots);
}

void print_plan(const RunSetup& run) {
  const Plan& plan = run.plan;
  std::FILE* human = run.options.human;
  std::fprintf(human, "feedbench run: %s — %zu %s", printable(run.config.name).c_str(), plan.cases.size(),
               plan.cases.size() == 1 ? "case" : "cases");
  if (!plan.dropped.empty()) std::fprintf(human, ", %zu combinations dropped", plan.dropped.size());
  std::fprintf(human, "\n");
  for (const std::string& why : plan.dropped) say(human, "  dropped: " + why + "\n");
}

}  // namespace feedbench::run_steps
