// The checks of a cache a run measures: a cache that does not match its source, or whose
// folder no longer holds what its manifest lists, is refused, not measured, before any case,
// so nothing half-runs; --allow-unverified-cache measures it anyway, recorded.
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "feedbench/base/error.h"
#include "feedbench/base/text.h"
#include "feedbench/cache/cache_verification.h"
#include "feedbench/cache/manifest.h"
#include "feedbench/cache/stager.h"
#include "feedbench/dataset/dataset.h"
#include "run/run_steps.h"

namespace feedbench::run_steps {
namespace {

// RETURNS: the files of `selection` that `include` selects (exact paths by lookup, others by
// glob): the part of a selection a partial cache was staged with.
FileSet selection_part(const FileSet& selection, const std::vector<std::string>& include) {
  std::set<std::string_view> exact;
  std::vector<std::string> globs;
  for (const std::string& g : include)
    (g.find_first_of("*?[") == std::string::npos ? exact.insert(g), void() : globs.push_back(g));
  FileSet part(selection.root());
  for (std::size_t i = 0; i < selection.size(); ++i) {
    const std::string_view rel = selection.relative_path(i);
    bool in = include.empty() || exact.count(rel) > 0;
    for (std::size_t k = 0; !in && k < globs.size(); ++k) in = glob_match(globs[k], rel);
    if (in) part.add(rel, selection.file_size(i), selection.mtime_ns(i));
  }
  part.sort();
  return part;
}

// RETURNS: what to do about a cache whose folder no longer holds what its manifest lists: the
// command that copies the listed files again (changed copies removed first: they keep their
// size and mtime, so stage would take them as in place), and what stage leaves alone.
std::string cache_fix(const CacheVerification& v, const Config& config, const Manifest& m) {
  const std::string content = "content differs from the manifest's SHA-256: ";
  std::string rm, extra;
  for (const std::string& p : v.problems) {
    if (p.rfind(content, 0) == 0) rm += " " + shell_quote(config.cache_root + "/" + p.substr(content.size()));
    if (p.rfind("not in the manifest: ", 0) == 0) extra = p;
  }
  std::string out = "to copy the listed files again, run `" + (rm.empty() ? "" : "rm -f --" + rm + " && ") +
                    restage_command(config.source_root, config.cache_root, m) + "`";
  if (!extra.empty())
    out += "; files not in the manifest are not feedbench's and stage leaves them: move them out of " +
           config.cache_root;
  return out;
}

}  // namespace

void check_measured_cache(RunSetup& run) {
  const Config& config = run.config;
  RunContext& context = run.context;
  context.partial_cache = config.partial_cache;
  if (!uses_path(run.plan, "cache")) return;
  // MANIFEST.sha256 is read once (a large cache's is tens of MB) and serves every check.
  std::string why_no_manifest;
  const std::optional<Manifest> staged = read_manifest(config.cache_root, &why_no_manifest);
  // A partial cache (a hot set) is checked against the files of the source it holds.
  std::optional<FileSet> held_part;
  if (config.partial_cache && staged) held_part = selection_part(*context.source, staged->include);
  const FileSet& cached_selection = held_part ? *held_part : *context.source;
  std::string why = check_cache(config.cache_root, cached_selection, staged, why_no_manifest,
                                held_part ? &staged->include : &config.include);
  if (held_part && held_part->size() != staged->files.size())
    why = "the partial cache " + config.cache_root + " lists " + std::to_string(staged->files.size()) +
          " files of which the run's selection holds " + std::to_string(held_part->size()) +
          ": it is not part of this selection";
  // Another selection than the cache's: measuring the cached one is a config change.
  if (staged && staged->include != config.include && !config.include_from_cache && !config.partial_cache) {
    std::string again;
    for (const std::string& word : run.options.command_line)
      again += (again.empty() ? "" : " ") + shell_quote(word);
    why += "; or, to measure the cached selection, run `" + again +
           " --include-from-cache` (or set \"include\": \"from-cache\" under \"dataset\" in " + config.file +
           ")";
  }
  if (why.empty() && context.cache) {
    CacheVerification v = run.options.verify_cache && !run.options.dry_run
                              ? rehash_cache(config.cache_root, *staged, *context.cache, cached_selection,
                                             context.show_progress)
                              : check_cache_listing(*staged, *context.cache, cached_selection);
    run.verification = v.to_json();
    run.cache_verified = v.ok;
    why = v.summary(config.cache_root);
    if (!v.ok) why += "; " + cache_fix(v, config, *staged);
  } else if (!why.empty()) {
    run.verification = {{"method", run.options.verify_cache ? "sha256" : "listing+sizes+mtimes"},
                        {"ok", false},
                        {"problems", {why}},
                        {"files_checked", 0},
                        {"bytes_checked", 0}};
  }
  if (!why.empty()) {
    if (!context.allow_unverified_cache)
      throw InputError(why + " (or pass --allow-unverified-cache to measure it anyway)");
    say(stderr, "warning: measuring an unverified cache: " + why + "\n");
  }
  if (staged) run.manifest = nlohmann::json(staged->to_json());
}

void recheck_measured_cache(RunSetup& run) {
  const RunOptions& o = run.options;
  if (!run.context.cache) return;
  // Only a cache the cases read: a --benchmark_filter that left its cases out measured none of it.
  Plan ran;
  cases_to_run(run.plan, o.filter, o.repetitions_from_flag, o.flag_repetitions, &ran.cases);
  if (!uses_path(ran, "cache")) return;
  const CacheVerification v = recheck_cache_files(*run.context.cache);
  run.cache_recheck = v.to_json();
  if (v.ok) return;
  run.cache_verified = false;
  run.cache_changed = "the cache " + run.config.cache_root + " changed during the run (" + v.problem_list() +
                      "): its figures are not those of the cache verified before the first case, and the "
                      "result records it unverified (dataset.cache.verification_after_run); stage it again "
                      "and run again";
}

}  // namespace feedbench::run_steps
