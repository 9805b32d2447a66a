// The fio job file equivalent to each file_read case (`feedbench run --emit-fio DIR`), so any
// number can be cross-checked with the tool people already trust.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "feedbench/dataset/dataset.h"
#include "feedbench/plan/plan.h"

namespace feedbench {

// RETURNS: why an fio job file cannot name the file `relative` of the folder `root` (fio would
// read another name, or more than a name: a new line in it starts an option line, such as
// exec_prerun=, which runs a command), or "" when it can. What fio reads specially and a job
// can quote (':', blanks at either end, a '\' last) is quoted; what it cannot (a new line, ';'
// and '#', which cut the line as a comment, ${VAR} and fio's $keywords, which fio replaces,
// paths over fio's 4,096 characters) is refused.
std::string fio_cannot_hold(std::string_view root, std::string_view relative);

// RETURNS: the text of an fio job file reading `files` the way `c` does, less the files fio
// cannot hold (fio_cannot_hold), which a comment names; "" when it can hold none of them.
// REQUIRES: c.family == "file_read".
std::string fio_job_for(const Case& c, const FileSet& files);

// What write_fio_jobs did: the jobs it wrote, and the files it left out of them.
struct FioJobsWritten {
  std::size_t jobs = 0;
  std::size_t files_left_out = 0;  // over the data sets the jobs read, each file once
  std::string first_left_out;      // its path relative to its data set's root
  std::string first_why;           // fio_cannot_hold's answer for it
};

// Writes DIR/<n>-<sanitised case name>.fio for each file_read case whose path (`source` or
// `cache`, either may be null) holds files fio can name. Throws RunError when DIR cannot be
// written.
FioJobsWritten write_fio_jobs(const Plan& plan, const FileSet* source, const FileSet* cache,
                              const std::string& dir);

// RETURNS: the warning for the files `written` left out, naming how many and the first (its
// name escaped, so a new line in it cannot end the line), or "" when it left none out.
std::string fio_left_out_warning(const FioJobsWritten& written);

}  // namespace feedbench
