// A recorded job's stand-in: the files it read, listed for `gen --like TRACE` to write at their
// paths and sizes (what `feedbench gen --like TRACE` and `feedbench qualify --like TRACE` write).
// Apart from recorded_job.h, so that reading a trace needs no data set generator.
#pragma once

#include <string>

#include "feedbench/dataset/generator.h"
#include "feedbench/replay/recorded_job.h"

namespace feedbench {

// RETURNS: what `gen --like TRACE` writes for `job` (read from `trace`): every file it read, at its
// path under its data folder and its size (a JPEG's dimensions with it), the folders they need
// (parents first) and where the list came from (feedbench-gen.json's "like").
GenListing gen_listing_of(const RecordedJob& job, const std::string& trace);

}  // namespace feedbench
