// Fuzzes replay's reader of a watched job's trace (read_trace): a trace travels between machines
// and may be cut short or edited, so any bytes must give events or one InputError, never a
// crash. Input: a whole trace file.
#include <sstream>
#include <string>

#include "feedbench/replay/recorded_job.h"
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
  // The job a replay builds of it, and its what-ifs: every count, range and sum within bounds.
  std::istringstream again(std::string(reinterpret_cast<const char*>(data), size));
  feedbench::fuzz::expect_only_input_errors([&] {
    const feedbench::RecordedJob job = feedbench::read_recorded_job(again, "trace.json");
    for (const int batch : {0, 1, 3}) {
      feedbench::ReplayKnobs k;
      if (batch > 0) k.batch_size = batch;
      k.epochs = 2;
      k.step_scale = batch == 3 ? 1000 : 0.5;
      const feedbench::RecordedLoading l = feedbench::replay_loading(job, k);
      for (const auto& e : l.epochs)
        for (const auto& b : e.batches)
          if (b.first + b.count > job.samples.size() || b.cpu_ns < 0 || b.idle_ns < 0) __builtin_trap();
    }
  });
  return 0;
}
