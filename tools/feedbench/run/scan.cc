// The roots a run reads, scanned once into the context every case reads from, with what the
// scans left out named and an empty selection refused.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "benchmarks/families.h"
#include "command_line.h"
#include "feedbench/base/error.h"
#include "feedbench/dataset/dataset.h"
#include "feedbench/plan/preflight.h"
#include "feedbench/replay/recorded_job.h"
#include "run/run_steps.h"

namespace feedbench::run_steps {
namespace {

// Nothing measured is never a success: an empty selection is bad input, found before any case
// runs. An empty folder is also what an unmounted mount point looks like.
void require_files(const FileSet& files, const char* role, const std::vector<std::string>& include) {
  if (!files.empty()) return;
  std::string globs;
  for (const std::string& g : include) globs += (globs.empty() ? "'" : ", '") + g + "'";
  std::error_code ec;
  const bool empty_folder = std::filesystem::is_empty(files.root(), ec) && !ec;
  throw InputError(std::string("dataset.") + role + ": the " + role + " selection under " + files.root() +
                   " holds no files" + (include.empty() ? std::string() : " (include: " + globs + ")") +
                   (empty_folder ? ": the folder is empty (is its file system mounted?)" : "") +
                   "; nothing to measure");
}

}  // namespace

void scan_roots(RunSetup& run) {
  const Config& config = run.config;
  const Plan& plan = run.plan;
  RunContext& context = run.context;
  context.config = &config;
  context.cluster = &run.cluster;
  context.record_latency = run.options.record_latency;
  context.allow_unverified_cache = run.options.allow_unverified_cache;
  context.show_progress = !run.options.quiet && interactive_terminal(STDERR_FILENO);

  // Each root is scanned once; every case reads from these FileSets.
  context.source = scan_dataset(config.source_root, config.include);
  require_files(*context.source, "source", config.include);
  if (uses_path(plan, "cache") || !config.cache_root.empty()) {
    if (!config.cache_root.empty() && std::filesystem::is_directory(config.cache_root))
      context.cache = scan_dataset(config.cache_root, config.include);
    if (context.cache && uses_path(plan, "cache")) require_files(*context.cache, "cache", config.include);
  }
  // An O_DIRECT read whose length the device does not align fails in every round of its case:
  // refused here, naming the case, instead of skipped after the cases before it ran.
  check_direct_block_sizes(plan, config.file, [&](const std::string& role) {
    const FileSet* files = context.files_for(role);
    const std::string at = files && !files->empty()
                               ? files->absolute_path(0)
                               : (role == "cache" ? config.cache_root : config.source_root);
    DirectAlignment a = direct_io_alignment(at);
    if (a.assumed)
      std::fprintf(stderr, "feedbench run: note: %s: %s\n", role.c_str(), printable(a.how).c_str());
    return a;
  });
  // A replay's recorded files are found under its root now: missing or resized ones are
  // refused before anything runs (the family maps them again, per case, to read them).
  for (const Case& c : plan.cases) {
    if (c.family != "replay") continue;
    const FileSet* files =
        c.replay().path == "cache" && !config.partial_cache ? context.files_for("cache") : &*context.source;
    if (files)
      recorded_file_set(*context.recorded_jobs.at(c.replay().trace), *files, *files,
                        c.replay().allow_resized.value_or(false));
  }
  run.plan_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - run.started).count();

  // What the scans left out is named, never dropped silently; a cache's own manifest,
  // journal and other runs' scratch folders are expected there, gen's record anywhere.
  if (std::string note = left_out_note(*context.source, {"feedbench metadata"}); !note.empty())
    say(stderr, "feedbench run: note: source: " + note + "\n");
  if (context.cache)
    if (std::string note = left_out_note(*context.cache,
                                         {"feedbench manifest", "feedbench temporary", "feedbench metadata"});
        !note.empty())
      say(stderr, "feedbench run: note: cache: " + note + "\n");
}

void fingerprint_contents(RunSetup& run) {
  // The content fingerprint reads samples of every file; cold and warm cases set their page
  // cache state afterwards, each before its own round.
  if (run.options.fingerprint_kind == "content" && run.cluster.is_root()) {
    run.source_content = content_fingerprint(*run.context.source);
    if (run.context.cache) run.cache_content = content_fingerprint(*run.context.cache);
  }
}

}  // namespace feedbench::run_steps
