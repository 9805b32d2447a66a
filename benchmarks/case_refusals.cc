// Why the run would skip a case, known before any case runs: `run --dry-run` lists each case
// with the reason its family would give, so a dry run that lists a case as planned is a run that
// measures it. Each check is the family's own, in its words (case_run.cc, file_read_family.cc,
// loader_family.cc, stage_family.cc).
#include <filesystem>
#include <string>

#include "families.h"
#include "feedbench/gpu/gpu.h"
#include "feedbench/io/page_cache.h"
#include "feedbench/io/skew.h"

namespace feedbench {
namespace {

// CaseRun::find_selection's reasons.
std::string selection_refusal(const RunContext& context, const std::string& role) {
  const FileSet* files = context.files_for(role);
  if (!files) return "no " + role + " root in the config's dataset";
  if (files->empty()) return "the " + role + " selection holds no files";
  return "";
}

std::string cuda_refusal() {
  std::string why;
  cuda_device_count(&why);  // "no CUDA device: ..."
  return why;
}

std::string file_read_refusal(const Case& c, const RunContext& context) {
  const FileReadParameters& p = c.file_read();
  const FileSet& files = *context.files_for(p.path);
  const bool direct = p.cache_state == "direct" || p.engine == "libaio";
  if (direct)
    if (std::string why = probe_direct_io(files.root()); !why.empty()) return why;
  if (p.sink.value_or("host") == "gpu") return cuda_refusal();
  return "";
}

std::string loader_refusal(const Case& c, RunContext& context) {
  const LoaderParameters& p = c.loader();
  if (p.cache_state != "cold" && p.cache_state != "warm")
    return "the loader reads through the page cache: cache_state must be cold or warm, not " + p.cache_state;
  if (p.accelerator.value_or("cpu") == "cuda")
    if (std::string why = cuda_refusal(); !why.empty()) return why;
  const std::string& role = p.path;
  const FileSet* files = context.files_for(role);
  // A partial cache's loader reads the source's selection, each file where the cache holds it.
  std::optional<FileSet> tiered;
  if (role == "cache" && context.partial_cache && context.source)
    tiered = tiered_files(*context.source, *files);
  return loader_schedule_refusal(c, context, tiered ? *tiered : *files);
}

std::string stage_refusal(RunContext& context) {
  if (context.ranks().size() > 1)
    return "stage cases run in one process, not across ranks (each would write the cache); "
           "stage each node's cache with feedbench stage";
  if (std::string why = selection_refusal(context, "source"); !why.empty()) return why;
  const std::string cache_root = context.config ? context.config->cache_root : "";
  if (cache_root.empty())
    return "no cache root in the config's dataset: the stage family stages into a scratch "
           "folder inside it (set dataset.cache or --cache)";
  std::error_code ec;
  if (!std::filesystem::is_directory(cache_root, ec))
    return "the cache root " + cache_root + " is not an existing folder";
  return "";
}

}  // namespace

std::string planned_refusal(const Case& c, RunContext& context) {
  try {
    if (c.family == "stage") return stage_refusal(context);
    if (c.family == "checkpoint")
      return context.ranks().size() > 1
                 ? "checkpoint writes from threads of one process; across MPI ranks it is not built yet"
                 : "";
    const std::string& role = *c.path();
    if (std::string why = selection_refusal(context, role); !why.empty()) return why;
    if (role == "cache" && context.partial_cache && context.ranks().size() > 1)
      return "a partial cache (dataset.partial_cache) is read by one process only, not across ranks";
    if (c.family == "file_read") return file_read_refusal(c, context);
    if (c.family == "loader") return loader_refusal(c, context);
    if (c.family == "replay" && context.ranks().size() > 1)
      return "replay runs a recorded job in one process: run it without mpirun";
  } catch (const std::exception& e) {  // a source's set-up: the run skips the case with it
    return e.what();
  }
  return "";
}

}  // namespace feedbench
