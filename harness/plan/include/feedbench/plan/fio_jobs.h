// The fio job file equivalent to each file_read case (`feedbench run --emit-fio DIR`), so any
// number can be cross-checked with the tool people already trust.
#pragma once

#include <cstddef>
#include <string>

#include "feedbench/dataset/dataset.h"
#include "feedbench/plan/plan.h"

namespace feedbench {

// RETURNS: the text of an fio job file reading `files` the way `c` does.
// REQUIRES: c.family == "file_read".
std::string fio_job_for(const Case& c, const FileSet& files);

// Writes DIR/<n>-<sanitised case name>.fio for each file_read case whose path (`source` or
// `cache`, either may be null) holds files. RETURNS: files written. Throws RunError when DIR
// cannot be written.
std::size_t write_fio_jobs(const Plan& plan, const FileSet* source, const FileSet* cache,
                           const std::string& dir);

}  // namespace feedbench
