// What a loader worker does for one batch (see batch.h).
#include "batch.h"

#include "feedbench/base/clock.h"
#include "feedbench/base/error.h"
#include "feedbench/base/splitmix.h"

namespace feedbench {

void burn_cpu_ns(std::int64_t ns) {
  if (ns <= 0) return;
  const std::int64_t end = thread_cpu_ns() + ns;
  volatile std::uint64_t sink = 0;
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  do {
    for (int i = 0; i < 256; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink = sink + x;
  } while (thread_cpu_ns() < end);
}

namespace {

std::int64_t transform_ns(const TransformCost& t, std::uint64_t bytes) {
  switch (t.per) {
    case TransformCost::Per::none: return 0;
    case TransformCost::Per::sample: return t.ns;
    case TransformCost::Per::mib: return std::int64_t(double(t.ns) * double(bytes) / (1 << 20));
    case TransformCost::Per::decode: return 0;  // real work, done apart
  }
  return 0;
}

}  // namespace

Batch build_batch(SampleReader& reader, const std::vector<std::size_t>* indices, std::size_t from,
                  std::size_t to, const TransformCost& transform, WorkerTotals& totals, JpegDecoder* decoder,
                  std::vector<std::vector<std::byte>>* held) {
  Batch b;
  if (held) held->resize(to - from);
  const std::uint64_t streamed = indices ? 0 : reader.stream_bytes_read();
  for (std::size_t k = from; k < to; ++k) {
    std::int64_t t0 = now_ns();
    std::size_t index = 0;
    std::uint64_t n = 0;
    if (indices) {
      index = (*indices)[k];
      n = reader.read(index);
    } else {
      index = reader.read_next();
      n = reader.planned_bytes(index);
    }
    std::int64_t t1 = now_ns();
    // The transform's CPU time apart from its wall time: on a busy host the wall time holds the
    // waits for a core, the CPU time what the transform costs (what the cores of a node need).
    const std::int64_t c1 = transform.per == TransformCost::Per::none ? 0 : thread_cpu_ns();
    if (transform.per == TransformCost::Per::decode) {
      FB_CHECK(decoder != nullptr, "a decode transform without a decoder");
      // A random crop's draws: a function of the sample and its place in the epoch's seeded order.
      const DecodedImage img =
          transform.crop == TransformCost::Crop::random_resized
              ? decoder->decode_random_resized_crop(reader.data(), transform.size,
                                                    mix64(index * kSplitmixGolden) ^ k,
                                                    reader.sample_name(index))
              : decoder->decode(reader.data(), transform.size, reader.sample_name(index));
      // A corrupt JPEG is not a decoded sample: the loader's rule for a sample that is not a JPEG
      // (the case stops, naming the file) holds for it too, so no figure counts its pixels.
      if (!img.corrupt.empty())
        throw RunError(reader.sample_name(index) + ": a corrupt JPEG (" + img.corrupt + ")");
      totals.pixels += img.pixels();
    } else {
      burn_cpu_ns(transform_ns(transform, n));
    }
    std::int64_t t2 = now_ns();
    if (transform.per != TransformCost::Per::none) totals.transform_cpu_ns += thread_cpu_ns() - c1;
    if (held) {  // the sample's output, held until the batch is collated (not the transform's time)
      std::vector<std::byte>& out = (*held)[k - from];
      if (transform.per == TransformCost::Per::decode) {
        const auto* p = reinterpret_cast<const std::byte*>(decoder->pixels().data());
        out.assign(p, p + decoder->pixels().size());
      } else if (const std::span<const std::byte> data = reader.data(); data.size() == n) {
        out.assign(data.begin(), data.end());
      } else {
        out.assign(std::size_t(n), std::byte{0});
      }
    }
    totals.read_ns += t1 - t0;
    totals.transform_ns += t2 - t1;
    totals.bytes += n;
    ++totals.samples;
    b.bytes += n;
    b.planned += reader.planned_bytes(index);
    ++b.samples;
    if (indices) b.read += n;
  }
  if (!indices) b.read = reader.stream_bytes_read() - streamed;
  b.ready = true;
  return b;
}

}  // namespace feedbench
