// Fuzzes watch's reader of a job's records (parse_job_log) and the figures and verdict on what it
// read: a job writes those files, so any bytes must give records or one InputError, never a crash.
// Input: the files' texts, separated by lines "----".
#include <string>
#include <string_view>
#include <vector>

#include "feedbench/watch/job_figures.h"
#include "feedbench/watch/job_log.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view all(reinterpret_cast<const char*>(data), size);
  std::vector<feedbench::JobRecordFile> files;
  for (std::size_t at = 0;;) {
    const std::size_t cut = all.find("\n----\n", at);
    files.push_back({std::to_string(files.size()) + ".jsonl",
                     std::string(all.substr(at, cut - at + (cut != std::string_view::npos)))});
    if (cut == std::string_view::npos) break;
    at = cut + 6;
  }
  feedbench::fuzz::expect_only_input_errors([&] {
    const feedbench::JobFigures f = feedbench::job_figures(feedbench::parse_job_log(files));
    (void)feedbench::job_verdict(f, 0.9, 0.5, 2, 0);
  });
  return 0;
}
