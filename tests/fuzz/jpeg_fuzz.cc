// Fuzzes the loader's JPEG decoder (JpegDecoder::decode, transform "decode" and "decode:N") on
// hostile image bytes: each input is decoded whole, then scaled (decode:12, which scales a small
// image down by the DCT and a smaller one up). One decoder serves every input, as one serves a
// loader worker's samples, so that a bad sample leaving it broken for the next one is caught.
// Input: the file's bytes.
// libjpeg-turbo is the system's, not instrumented: the fuzzer is guided by this project's code
// only, and ASan sees libjpeg-turbo's allocations, not its every access (libjpeg-turbo is
// fuzzed on its own, in OSS-Fuzz); what is checked is what the decoder makes of its answers.
#include <cstdlib>
#include <span>

#include "feedbench/dataset/jpeg.h"
#include "fuzz_util.h"

namespace {

// What a decode of any input must hold: a corrupt image has no output; a decoded one is
// width × height RGB pixels, size × size when scaled, within the declared source.
void check(const feedbench::DecodedImage& img, const feedbench::JpegDecoder& decoder, int size) {
  if (!img.corrupt.empty()) {
    if (img.width != 0 || img.height != 0 || !decoder.pixels().empty()) std::abort();
    return;
  }
  if (img.width <= 0 || img.height <= 0 || img.source_width <= 0 || img.source_height <= 0) std::abort();
  if (std::uint64_t(img.source_width) * std::uint64_t(img.source_height) > feedbench::kMaxJpegPixels)
    std::abort();
  if (decoder.pixels().size() != img.pixels() * 3) std::abort();
  if (size > 0 && (img.width != size || img.height != size)) std::abort();
  if (size == 0 && (img.width != img.source_width || img.height != img.source_height)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static feedbench::JpegDecoder decoder;
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  for (int out : {0, 12}) {
    // RunError: not a JPEG, or more pixels declared than kMaxJpegPixels.
    feedbench::fuzz::expect_only_input_errors(
        [&] { check(decoder.decode(bytes, out, "fuzz.jpg"), decoder, out); });
  }
  return 0;
}
