// Staging a local cache, as phases: plan (stage_plan.h: refusals, resume diff, free space),
// copy (stage_copy.h: removals, then copies proved by their read-back), record (stage_verify.h:
// the manifest, written last, only when every file is in place). And the cheap checks of a
// cache against its source, with the commands that repair it.
#include "feedbench/cache/stager.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "feedbench/base/clock.h"
#include "feedbench/base/sha256.h"
#include "feedbench/base/text.h"
#include "feedbench/cache/manifest.h"
#include "feedbench/results/environment.h"

#include "stage_copy.h"
#include "stage_io.h"
#include "stage_plan.h"
#include "stage_verify.h"

namespace feedbench {

std::string stage_temporary_path(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  const std::string folder = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return folder + ".fb-" + sha256_hex(name).substr(0, 16) + kStageTmpSuffix;
}

int StageResult::exit_code() const {
  if (stopped_by_signal) return 128 + stopped_by_signal;
  return errors.empty() && manifest_written ? 0 : 1;
}

int default_workers(const std::string& path) {
  try {
    PathInfo info = describe_path("cache", path);
    // A spinning disk seeks between parallel copies: one worker. Virtual disks (virtio "vd*",
    // Xen "xvd*") report rotational by default whatever backs them, and copies in parallel
    // measured faster on one here, so they count as solid state.
    const bool is_virtual = info.device.rfind("vd", 0) == 0 || info.device.rfind("xvd", 0) == 0;
    if (info.device_info.contains("rotational") && info.device_info["rotational"].is_boolean() &&
        info.device_info["rotational"].get<bool>() && !is_virtual)
      return 1;
  } catch (const std::exception&) {
  }
  return 4;
}

StageResult stage(const StageOptions& options) {
  const auto start = StageClock::now();
  const double cpu_start = process_cpu_seconds();
  auto log = [&](const std::string& line) {
    if (!options.quiet) std::fprintf(stderr, "feedbench stage: %s\n", printable(line).c_str());
  };

  // Planning: every refusal is thrown there, before the cache changes; the plan holds its lock.
  const StagePlan plan = plan_stage(options);
  StageResult result;
  result.files_selected = plan.selection.size();
  result.bytes_selected = plan.selection.total_bytes();
  result.files_skipped = plan.files_kept();
  result.source_fingerprint = plan.source_fingerprint;
  result.label = plan.label;
  for (const std::string& note : plan.notes) {
    result.notes.push_back(note);
    log("note: " + note);
  }
  if (std::size_t n = remove_stale_temporaries(plan))
    log("removed " + plural(n, "temporary file", "temporary files") + " left by an interrupted stage");
  for (const std::string& warning : plan.warnings) {
    result.warnings.push_back(warning);
    log("warning: " + warning);
  }
  // Measured once the temporaries are gone: they may hold a large file's reserved blocks.
  if (std::string refusal = space_refusal(plan, cache_space(plan.cache)); !refusal.empty()) {
    result.errors.push_back(refusal);
    result.seconds = seconds_since(start);
    return result;
  }

  // Copying: removals first, then each copy proved by its read-back and journalled.
  std::vector<std::string> hashes = plan.hashes;
  if (plan.changes() && !begin_changes(plan, result)) {
    result.seconds = seconds_since(start);
    return result;
  }
  if (!plan.to_copy.empty()) copy_files(options, plan, hashes, result);
  if (options.stop && options.stop->load()) result.stopped_by_signal = options.stop->load();

  // Recording: the manifest goes last, only when every file is in place.
  if (!result.stopped_by_signal && result.errors.empty()) record_stage(options, plan, hashes, result);
  result.seconds = seconds_since(start);
  result.cpu_seconds = process_cpu_seconds() - cpu_start;
  return result;
}

std::string check_cache(const std::string& cache_root, const FileSet& source_selection) {
  std::string why;
  const std::optional<Manifest> m = read_manifest(cache_root, &why);
  return check_cache(cache_root, source_selection, m, why);
}

std::string check_cache(const std::string& cache_root, const FileSet& source_selection,
                        const std::optional<Manifest>& m, const std::string& why,
                        const std::vector<std::string>* run_include) {
  if (!m)
    return "the cache " + cache_root + " has no complete manifest (" + why + "): run `" +
           stage_command(source_selection.root(), cache_root,
                         run_include ? *run_include : std::vector<std::string>{}, "") +
           "`";
  // Staged with other globs than the run reads: staging again with the manifest's globs would
  // change nothing, so the command stages the run's selection (keeping the label).
  if (run_include && *run_include != m->include)
    return "the cache " + cache_root +
           " holds another selection than this run reads (the cache: " + m->selection_text() + ", label " +
           m->label + "; the run: " + selection_text(*run_include) +
           "): to cache the run's selection, run `" +
           stage_command(source_selection.root(), cache_root, *run_include, m->label, true) + "`";
  if (m->source_fingerprint != source_selection.fingerprint())
    return "the cache " + cache_root + " does not match the source selection (manifest fingerprint " +
           m->source_fingerprint.substr(0, 12) + ", source now " +
           source_selection.fingerprint().substr(0, 12) + "): the source changed since staging; run `" +
           restage_command(source_selection.root(), cache_root, *m) + "`";
  return "";
}

std::string stage_command(const std::string& source_root, const std::string& cache_root,
                          const std::vector<std::string>& include, const std::string& label, bool prune) {
  std::string cmd = "feedbench stage --from " + shell_quote(source_root) + " --to " + shell_quote(cache_root);
  for (const std::string& g : include) cmd += " --include " + shell_quote(g);
  // A label of the data version is kept; the default one names the old fingerprint and is not.
  if (!label.empty() && label.rfind("fp-", 0) != 0) cmd += " --label " + shell_quote(label);
  if (prune) cmd += " --prune";
  return cmd;
}

std::string restage_command(const std::string& source_root, const std::string& cache_root, const Manifest& m,
                            bool prune) {
  if (!m.hot_set) return stage_command(source_root, cache_root, m.include, m.label, prune);
  // The spec that made the hot set, not its paths: the same ranking of the source as it is now.
  std::string cmd = stage_command(source_root, cache_root, m.hot_set->of, m.label, prune);
  return cmd + " --hot-set " + shell_quote(m.hot_set->share) + " --seed " + std::to_string(m.hot_set->seed);
}

std::optional<nlohmann::json> read_manifest_json(const std::string& cache_root) {
  std::optional<Manifest> m = read_manifest(cache_root);
  if (!m) return std::nullopt;
  return nlohmann::json(m->to_json());
}

}  // namespace feedbench
