// Fuzzes watch's reader of the read recorder's files (parse_read_log): a job's processes write
// them, so any bytes must give records or one InputError, never a crash. Input: one process's file.
#include <sstream>
#include <string>

#include "feedbench/watch/read_log.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  feedbench::ReadLogVisitor visit;
  std::uint64_t bytes = 0;
  visit.file = [&](const feedbench::FileRecord& r) {
    bytes += r.bytes + (feedbench::is_code_path(r.path) ? 1 : 0);
  };
  visit.read = [&](const feedbench::ReadRecord& r) { bytes += std::uint64_t(r.t1_ns - r.t0_ns); };
  std::uint64_t torn = 0;
  feedbench::fuzz::expect_only_input_errors(
      [&] { feedbench::parse_read_log("reads-1.txt", in, visit, &torn); });
  return 0;
}
