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
  // Every number a replay keys or sums within what it keeps (trace_reader.cc's bounds): a pass
  // or batch beyond 32 bits once named another's and replayed its reads again.
  std::uint64_t batch_events = 0, read_events = 0;
  auto index_in_bounds = [](std::int64_t v) { return v >= -1 && v <= INT32_MAX; };
  visit.batch = [&](const feedbench::TraceBatch& b) {
    if (!index_in_bounds(b.pass) || b.pass < 0 || !index_in_bounds(b.batch) || b.batch < 0) __builtin_trap();
    sum += std::uint64_t(b.batch), ++batch_events;
  };
  visit.fetch = [&](const feedbench::TraceFetch& f) { sum += std::uint64_t(f.samples); };
  visit.open = [&](const feedbench::TraceOpen& o) {
    // A JPEG's dimensions: both or neither, each within a frame header's 16 bits.
    if (o.width < 0 || o.height < 0 || o.width > 65535 || o.height > 65535 ||
        (o.width == 0) != (o.height == 0))
      __builtin_trap();
    sum += o.path.size() + o.size + std::uint64_t(o.width) * std::uint64_t(o.height);
  };
  visit.read = [&](const feedbench::TraceRead& r) {
    if (!index_in_bounds(r.pass) || !index_in_bounds(r.batch) || r.bytes > UINT32_MAX ||
        r.offset > (std::uint64_t{1} << 62))
      __builtin_trap();
    sum += r.bytes + r.offset, ++read_events;
  };
  feedbench::fuzz::expect_only_input_errors([&] { feedbench::read_trace(in, "trace.json", visit); });
  // The job a replay builds of it, and its what-ifs: every count, range and sum within bounds.
  std::istringstream again(std::string(reinterpret_cast<const char*>(data), size));
  feedbench::fuzz::expect_only_input_errors([&] {
    const feedbench::RecordedJob job = feedbench::read_recorded_job(again, "trace.json");
    // What the job holds is bounded by the trace itself: no read, batch or pass twice.
    std::uint64_t batches = 0;
    for (const auto& p : job.passes) {
      batches += p.batches.size();
      if (p.id < 0 || p.id > INT32_MAX) __builtin_trap();
    }
    if (job.reads.size() > read_events || batches > batch_events || job.samples.size() > job.reads.size())
      __builtin_trap();
    for (const int batch : {0, 1, 3}) {
      feedbench::ReplayKnobs k;
      if (batch > 0) k.batch_size = batch;
      k.epochs = batch == 3 ? 10000 : 2;
      k.step_scale = batch == 3 ? 1000 : 0.5;
      const feedbench::RecordedLoading l = feedbench::replay_loading(job, k);
      // However many epochs, each recorded pass is built once.
      if (l.epochs != *k.epochs || l.passes.size() > job.passes.size()) __builtin_trap();
      for (const auto& e : l.passes)
        for (const auto& b : e.batches)
          if (b.first + b.count > job.samples.size() || b.cpu_ns < 0 || b.idle_ns < 0) __builtin_trap();
    }
  });
  return 0;
}
