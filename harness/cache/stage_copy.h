// Copying, the phase of a stage that changes the cache: removals first (after the journal that
// keeps the cache's ownership while its manifest is gone), then the copies, each written under
// a temporary name, flushed, read back from the device and renamed. Private to the harness:
// stage() in feedbench/cache/stager.h runs the phases.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "feedbench/cache/stager.h"
#include "stage_plan.h"

namespace feedbench {

// Removes plan.stale_temporaries from the cache.
// RETURNS: how many were removed.
std::size_t remove_stale_temporaries(const StagePlan& plan);

// Starts changing the cache: writes the journal of every file of ours (plan.owned) first, then
// removes the manifest, then the files of plan.to_remove (each in result.removed, or an error
// in result.errors) and the folders they leave empty.
// REQUIRES: plan.changes(). Throws RunError when the journal cannot be renamed into place.
// RETURNS: false when the journal could not be written (result.errors says why; the cache is
// unchanged).
bool begin_changes(const StagePlan& plan, StageResult& result);

// Copies plan.to_copy into plan.cache with options.workers workers (0: default_workers), each
// file proved by SHA-256 read back from the device (options.verify) before it takes its name,
// and appended to the journal.
// REQUIRES: plan.hashes.size() == hashes.size() == plan.selection.size().
// RETURNS: through `hashes` the hash of each file copied (others left as they were), and through
// `result` files_copied, bytes_copied and the errors (one fatal reason stops every worker).
void copy_files(const StageOptions& options, const StagePlan& plan, std::vector<std::string>& hashes,
                StageResult& result);

}  // namespace feedbench
