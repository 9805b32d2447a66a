// Fuzzes replay's reader of a watched job's trace (read_trace): a trace travels between machines
// and may be cut short or edited, so any bytes must give events or one InputError, never a
// crash. Input: a whole trace file.
#include <sstream>
#include <string>

#include "feedbench/replay/trace_reader.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  feedbench::TraceVisitor visit;
  std::uint64_t sum = 0;
  visit.header = [&](const feedbench::TraceHeader& h) { sum += h.passes.size() + h.name.size(); };
  visit.batch = [&](const feedbench::TraceBatch& b) { sum += std::uint64_t(b.batch); };
  visit.fetch = [&](const feedbench::TraceFetch& f) { sum += std::uint64_t(f.samples); };
  visit.open = [&](const feedbench::TraceOpen& o) { sum += o.path.size() + o.size; };
  visit.read = [&](const feedbench::TraceRead& r) { sum += r.bytes + r.offset; };
  feedbench::fuzz::expect_only_input_errors([&] { feedbench::read_trace(in, "trace.json", visit); });
  return 0;
}
