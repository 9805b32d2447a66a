// Real JPEG images for the data sets `gen --format jpeg` writes, and the loader's real decode
// (`transform: "decode"`), both through libjpeg-turbo: a CPU-bound verdict then comes from what
// decoding costs on this CPU, not from a configured number.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace feedbench {

// The noise's amplitude at full detail, in 1/16 of a level: +-96 levels per channel.
inline constexpr int kFullNoise = 96 * 16;
// The quality gen's images take unless told (--jpeg-quality).
inline constexpr int kDefaultJpegQuality = 95;

// RETURNS: a baseline JPEG (RGB, 4:4:4, `quality`) of width × height pixels whose content is a
// pure function of (seed, index): a gradient under per-pixel noise of +-noise/16 levels, so that
// at kFullNoise its size per pixel is that of a detailed photograph (about 2.3 bytes a pixel at
// quality 95), less detailed below. Deterministic for a seed.
// REQUIRES: 8 <= width, height <= 16384; 1 <= quality <= 100; 0 <= noise <= 2 * kFullNoise.
// Throws RunError when the encoder fails.
std::vector<std::uint8_t> encode_noise_jpeg(std::uint64_t seed, std::uint64_t index, int width, int height,
                                            int quality = kDefaultJpegQuality, int noise = kFullNoise);

// How gen's images are made (gen --jpeg-quality, --bytes-per-pixel, --jpeg-pixels).
struct JpegStyle {
  int quality = kDefaultJpegQuality;
  double bytes_per_pixel = 0;  // the density asked for; 0: the noise's at full detail
  std::uint64_t pixels = 0;    // pixels an image, whatever its size; 0: from the size and density
  bool is_default() const { return quality == kDefaultJpegQuality && bytes_per_pixel == 0 && pixels == 0; }
};

// The bytes a pixel gen's images take at one quality, as a function of their noise: measured
// once (a 512 × 384 image encoded at 15 noise levels, kept per quality), so that an image of a
// given size can be given the pixels a density asks for.
class JpegDensity {
 public:
  // RETURNS: the curve of `quality` (1..100), measured on first use and kept. Thread-safe.
  static const JpegDensity& of(int quality);
  double least() const { return bpp_.front(); }  // bytes a pixel of a smooth gradient
  double most() const { return bpp_.back(); }    // ...and at the noise's most
  // RETURNS: the noise (kFullNoise's scale) whose images take `bytes_per_pixel`, clamped to the
  // curve's ends.
  int noise_for(double bytes_per_pixel) const;
  // RETURNS: the bytes a pixel the curve gives `noise`.
  double at(int noise) const;

 private:
  std::vector<int> noise_;
  std::vector<double> bpp_;  // non-decreasing in noise_
};

// RETURNS: a JPEG of about `target_bytes` (within a few percent above 8 KiB) with a seeded
// aspect ratio among those of photographs (4:3, 3:2, 1:1, 3:4, 2:3, 16:9). The default style:
// full noise at quality 95, the dimensions chosen from the size, one re-encode corrects the
// estimate. Another style: the pixels it names (or the size over its density) at its quality,
// the noise chosen from JpegDensity::of(quality) so that the size is met with those pixels, one
// re-encode correcting the noise. Deterministic in (seed, index, style).
std::vector<std::uint8_t> make_sized_jpeg(std::uint64_t seed, std::uint64_t index, std::uint64_t target_bytes,
                                          const JpegStyle& style = {});

// Inserts comment segments of `gap` bytes in all after `jpeg`'s start marker (FF D8) and its JFIF
// header (APP0) where it has one, which must come first: each FF FE, a 16-bit length (its own 2
// bytes and the payload's), payload of pseudo-random bytes from `key` that do not compress.
// REQUIRES: `jpeg` starts with FF D8; gap == 0 or gap >= 4 (the smallest segment).
void pad_jpeg_with_comments(std::vector<std::uint8_t>& jpeg, std::uint64_t gap, std::uint64_t key);

// RETURNS: a JPEG of exactly `bytes` bytes (gen --like TRACE: a stand-in for an image the job
// read, at its size): make_sized_jpeg's image of somewhat fewer bytes, padded with comment (COM)
// segments of pseudo-random bytes after its JFIF header, which every decoder skips.
// Empty when no image of this style fits in `bytes` (a few hundred bytes of headers).
// Deterministic in (seed, index, bytes, style).
std::vector<std::uint8_t> make_exact_jpeg(std::uint64_t seed, std::uint64_t index, std::uint64_t bytes,
                                          const JpegStyle& style = {});

// A JPEG's dimensions as its header (its frame, SOFn) declares them.
struct JpegDimensions {
  int width = 0, height = 0;
};

// RETURNS: a JPEG of exactly `bytes` bytes whose header declares `dims` (gen --like TRACE: a
// stand-in that decodes what the original did): gen's image at those dimensions, its noise
// chosen so that it takes somewhat fewer bytes (at quality 95, or lower until it fits), padded
// with comment segments as make_exact_jpeg's. Empty when no image of those dimensions fits in
// `bytes` even at quality 1 without noise, or the dimensions are outside 8..16384 a side or
// above kMaxJpegPixels. Deterministic in (seed, index, bytes, dims).
std::vector<std::uint8_t> make_exact_jpeg_at(std::uint64_t seed, std::uint64_t index, std::uint64_t bytes,
                                             JpegDimensions dims);

// RETURNS: the dimensions the JPEG open at `fd` (a regular file) declares, read with
// libjpeg-turbo's header read from its first bytes only (4 KiB, then more while its header runs
// on, up to 4 MiB); nullopt when it does not start as a JPEG does, its header does not parse, or
// a read fails. Never throws for the file's content.
std::optional<JpegDimensions> read_jpeg_dimensions(int fd);

// RETURNS: width × height as the header of `jpeg` (one make_sized_jpeg wrote) declares them.
// Throws RunError when it has none.
std::uint64_t jpeg_header_pixels(const std::vector<std::uint8_t>& jpeg);

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

// A crop of an image: its top-left corner and size, in pixels.
struct CropBox {
  int x = 0, y = 0, width = 0, height = 0;
};

// RETURNS: the crop torchvision's RandomResizedCrop (scale 0.08..1 of the area, aspect ratio
// 3/4..4/3 drawn log-uniform) chooses in a width × height image, with its draws made from `seed`
// (splitmix64) instead of torch's generator: up to 10 tries of a scale and ratio whose crop
// fits, then its fallback, the centred crop of the whole image clamped to the ratio range.
// REQUIRES: width, height > 0.
CropBox random_resized_crop_box(int width, int height, std::uint64_t seed);

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

  // What torchvision's RandomResizedCrop(size) does after PIL's decode: the whole image decoded
  // (no DCT scaling: PIL decodes every pixel), random_resized_crop_box(w, h, seed) cropped and
  // resized to size × size by PIL's bilinear filter (antialiased: a reduction averages every
  // source pixel it covers). RETURNS and throws as decode() does. REQUIRES: size > 0.
  DecodedImage decode_random_resized_crop(std::span<const std::byte> data, int size, std::uint64_t seed,
                                          const std::string& name);

  // The last output, width × height × 3 bytes.
  const std::vector<std::uint8_t>& pixels() const { return out_; }

 private:
  // RETURNS: `img` as corrupt for `why`, with a fresh libjpeg-turbo handle.
  DecodedImage mark_corrupt(DecodedImage img, std::string why);
  // Decodes `data` into full_ at the DCT scale for `size` (dct_scaled), setting *w and *h.
  // RETURNS: the image, corrupt() when it did not decode whole; throws as decode() does.
  DecodedImage decode_full(std::span<const std::byte> data, int size, const std::string& name, int* w,
                           int* h);

  void* handle_ = nullptr;
  std::vector<std::uint8_t> full_, out_, rows_;
};

// RETURNS: the CPU seconds a loader worker's decode takes here per byte of JPEG: decode(`size`)
// or, with `random_resized_crop`, decode_random_resized_crop(`size`), measured once per process
// and kind (the fastest of 5 decodes of one of gen's images of 128 KiB, about 57 k pixels at
// full noise: a photograph's density) and kept. What the estimator prices a decode at. Thread-safe.
double decode_seconds_per_byte(int size, bool random_resized_crop);

// RETURNS: whether `data` starts as a JPEG does (SOI marker FF D8 FF).
bool looks_like_jpeg(std::span<const std::byte> data);

}  // namespace feedbench
