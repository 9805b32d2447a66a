// Real JPEG images for the data sets `gen --format jpeg` writes, and the loader's real decode
// (`transform: "decode"`), both through libjpeg-turbo: a CPU-bound verdict then comes from what
// decoding costs on this CPU, not from a configured number.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace feedbench {

// RETURNS: a baseline JPEG (RGB, 4:4:4, quality 95) of width × height pixels whose content is a
// pure function of (seed, index): a gradient under per-pixel noise, so that its size per pixel
// is that of a detailed photograph (about 2.3 bytes a pixel) and deterministic for a seed.
// REQUIRES: 8 <= width, height <= 16384. Throws RunError when the encoder fails.
std::vector<std::uint8_t> encode_noise_jpeg(std::uint64_t seed, std::uint64_t index, int width, int height);

// RETURNS: a JPEG of about `target_bytes` (within a few percent above 8 KiB) with a seeded
// aspect ratio among those of photographs (4:3, 3:2, 1:1, 3:4, 2:3, 16:9): the dimensions are
// chosen from the size, one re-encode corrects the estimate. Deterministic in (seed, index).
std::vector<std::uint8_t> make_sized_jpeg(std::uint64_t seed, std::uint64_t index,
                                          std::uint64_t target_bytes);

// The most pixels a JPEG's header may declare (width × height of the source, before any DCT
// scaling): decode() refuses a larger image before allocating anything. docs/limits.md says why.
inline constexpr std::uint64_t kMaxJpegPixels = 178'956'970;

// What a decode produced.
struct DecodedImage {
  int width = 0;  // of the output (after resize and crop); 0 when corrupt
  int height = 0;
  int source_width = 0;  // of the JPEG, as its header declares (0 when it has none)
  int source_height = 0;
  // Why the JPEG is corrupt (libjpeg-turbo's reason, e.g. "Premature end of JPEG file"), empty
  // when every pixel decoded.
  std::string corrupt;
  std::uint64_t pixels() const { return std::uint64_t(width) * std::uint64_t(height); }
};

// Decodes one JPEG per call, reusing its buffers; one per loader worker (not thread-safe).
class JpegDecoder {
 public:
  JpegDecoder();
  ~JpegDecoder();
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;

  // Decodes `data` to RGB. `size` 0: the whole image. `size` S > 0: what a training pipeline's
  // Resize(S) + CenterCrop(S) does: the decoder's DCT scaling to the smallest scale whose
  // shorter side is still at least S, a bilinear resize of the shorter side to S, and the
  // centred S × S crop.
  // RETURNS: the output's dimensions; or, for a JPEG that libjpeg-turbo cannot decode whole
  // (cut short, stray bytes after a marker, a bad table, a warning of any kind), `corrupt` set
  // to its reason and no output (0 × 0, pixels() empty): not a decoded sample (the loader stops
  // the case naming it, harness/loader/batch.cc). Throws RunError "<name>: not a JPEG (...)" when `data` does
  // not start as a JPEG does, "<name>: W x H pixels declared ..." when its header declares more than
  // kMaxJpegPixels pixels (checked before anything is allocated), and "<name>: a CMYK JPEG ..."
  // for a CMYK or YCCK image, which libjpeg-turbo does not convert to RGB.
  DecodedImage decode(std::span<const std::byte> data, int size, const std::string& name);

  // The last output, width × height × 3 bytes.
  const std::vector<std::uint8_t>& pixels() const { return out_; }

 private:
  // RETURNS: `img` as corrupt for `why`, with a fresh libjpeg-turbo handle.
  DecodedImage mark_corrupt(DecodedImage img, std::string why);

  void* handle_ = nullptr;
  std::vector<std::uint8_t> full_, out_;
};

// RETURNS: whether `data` starts as a JPEG does (SOI marker FF D8 FF).
bool looks_like_jpeg(std::span<const std::byte> data);

}  // namespace feedbench
