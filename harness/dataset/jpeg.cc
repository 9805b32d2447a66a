// JPEG encode (for gen) and decode (for the loader's transform) through the TurboJPEG API.
#include "feedbench/dataset/jpeg.h"

#include <turbojpeg.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>

#include "feedbench/base/clock.h"
#include "feedbench/base/error.h"
#include "feedbench/base/splitmix.h"

namespace feedbench {
namespace {

// Measured on this content: 4:4:4 at quality 95 and full noise takes about 2.3 bytes a pixel.
constexpr double kBytesPerPixel = 2.3;

struct Aspect {
  int w, h;
};
constexpr Aspect kAspects[] = {{4, 3}, {3, 2}, {1, 1}, {3, 4}, {2, 3}, {16, 9}};

std::string tj_error(void* handle) {
  const char* e = tjGetErrorStr2(handle);
  return e ? e : "unknown error";
}

}  // namespace

std::vector<std::uint8_t> encode_noise_jpeg(std::uint64_t seed, std::uint64_t index, int width, int height,
                                            int quality, int noise) {
  FB_CHECK(width >= 8 && height >= 8 && width <= 16384 && height <= 16384, "jpeg dimensions out of range");
  FB_CHECK(quality >= 1 && quality <= 100 && noise >= 0 && noise <= 2 * kFullNoise,
           "jpeg style out of range");
  const std::uint64_t key = mix64(mix64(seed ^ 0x4A504547ull /* "JPEG" */) + (index + 1) * kSplitmixGolden);
  // A per-image gradient direction and tint, under noise of +-noise/16 levels per channel.
  const int tint[3] = {int(key & 63), int((key >> 6) & 63), int((key >> 12) & 63)};
  std::vector<std::uint8_t> rgb(std::size_t(width) * std::size_t(height) * 3);
  std::uint64_t counter = key;
  std::size_t k = 0;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      counter += kSplitmixGolden;
      const std::uint64_t r = mix64(counter);
      const int base = (x * 128) / width + (y * 64) / height;
      for (int c = 0; c < 3; ++c) {
        const int level = ((int((r >> (c * 16)) & 0xFF) * noise) >> 11) - noise / 16;
        rgb[k++] = std::uint8_t(std::clamp(base + tint[c] + level + 32, 0, 255));
      }
    }
  }
  tjhandle handle = tjInitCompress();
  if (!handle) throw RunError("jpeg: cannot start the libjpeg-turbo encoder");
  unsigned char* out = nullptr;
  unsigned long out_size = 0;
  const int rc = tjCompress2(handle, rgb.data(), width, 0, height, TJPF_RGB, &out, &out_size, TJSAMP_444,
                             quality, TJFLAG_ACCURATEDCT);
  if (rc != 0) {
    const std::string why = tj_error(handle);
    tjFree(out);
    tjDestroy(handle);
    throw RunError("jpeg: encode failed: " + why);
  }
  std::vector<std::uint8_t> jpeg(out, out + out_size);
  tjFree(out);
  tjDestroy(handle);
  return jpeg;
}

const JpegDensity& JpegDensity::of(int quality) {
  FB_CHECK(quality >= 1 && quality <= 100, "jpeg quality out of range");
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<JpegDensity>> curves;
  const std::lock_guard lock(mutex);
  std::unique_ptr<JpegDensity>& d = curves[quality];
  if (!d) {
    d = std::make_unique<JpegDensity>();
    constexpr int kW = 512, kH = 384;
    for (int noise : {0, 16, 32, 64, 128, 192, 256, 384, 512, 768, 1024, 1280, 1536, 2048, 2560, 3072}) {
      const double bpp = double(encode_noise_jpeg(0xC0FFEE, 0, kW, kH, quality, noise).size()) / (kW * kH);
      d->noise_.push_back(noise);
      d->bpp_.push_back(d->bpp_.empty() ? bpp : std::max(bpp, d->bpp_.back()));
    }
  }
  return *d;
}

int JpegDensity::noise_for(double bytes_per_pixel) const {
  if (bytes_per_pixel <= bpp_.front()) return noise_.front();
  for (std::size_t i = 1; i < bpp_.size(); ++i)
    if (bytes_per_pixel <= bpp_[i]) {
      const double f = (bytes_per_pixel - bpp_[i - 1]) / std::max(bpp_[i] - bpp_[i - 1], 1e-12);
      return int(std::lround(noise_[i - 1] + f * (noise_[i] - noise_[i - 1])));
    }
  return noise_.back();
}

double JpegDensity::at(int noise) const {
  if (noise <= noise_.front()) return bpp_.front();
  for (std::size_t i = 1; i < noise_.size(); ++i)
    if (noise <= noise_[i])
      return bpp_[i - 1] +
             (bpp_[i] - bpp_[i - 1]) * double(noise - noise_[i - 1]) / (noise_[i] - noise_[i - 1]);
  return bpp_.back();
}

std::vector<std::uint8_t> make_sized_jpeg(std::uint64_t seed, std::uint64_t index, std::uint64_t target_bytes,
                                          const JpegStyle& style) {
  const Aspect a = kAspects[mix64(seed * 31 + index * kSplitmixGolden + 7) % std::size(kAspects)];
  auto dims = [&](double pixels, int* w, int* h) {
    const double unit = std::sqrt(std::max(pixels, 64.0) / double(a.w * a.h));
    *w = std::clamp(int(std::lround(unit * a.w)), 8, 16384);
    *h = std::clamp(int(std::lround(unit * a.h)), 8, 16384);
  };
  const double target = double(target_bytes);
  auto off = [&](const std::vector<std::uint8_t>& jpeg) {
    const double ratio = target / double(jpeg.size());
    return ratio < 0.97 || ratio > 1.03;
  };
  int w = 0, h = 0;
  if (style.bytes_per_pixel == 0 && style.pixels == 0) {
    // Full noise: the dimensions follow from the size.
    const double bpp = style.is_default() ? kBytesPerPixel : JpegDensity::of(style.quality).most();
    dims(target / bpp, &w, &h);
    std::vector<std::uint8_t> jpeg = encode_noise_jpeg(seed, index, w, h, style.quality);
    // One correction: headers make small images cost more per pixel than the estimate.
    if (off(jpeg)) {
      dims(double(w) * double(h) * target / double(jpeg.size()), &w, &h);
      jpeg = encode_noise_jpeg(seed, index, w, h, style.quality);
    }
    return jpeg;
  }
  // The pixels asked for: the noise makes the size.
  const JpegDensity& density = JpegDensity::of(style.quality);
  dims(style.pixels > 0 ? double(style.pixels) : target / style.bytes_per_pixel, &w, &h);
  int noise = density.noise_for(target / (double(w) * double(h)));
  std::vector<std::uint8_t> jpeg = encode_noise_jpeg(seed, index, w, h, style.quality, noise);
  if (off(jpeg)) {
    // This image's content and headers take other bytes than the curve's: scale what is asked of it.
    noise = density.noise_for(density.at(noise) * target / double(jpeg.size()));
    jpeg = encode_noise_jpeg(seed, index, w, h, style.quality, noise);
  }
  return jpeg;
}

void pad_jpeg_with_comments(std::vector<std::uint8_t>& jpeg, std::uint64_t gap, std::uint64_t key) {
  constexpr std::uint64_t kMostSegment = 2 + 65535;  // the marker, and the most a length names
  std::vector<std::uint8_t> pad;
  pad.reserve(gap);
  std::uint64_t counter = key;
  while (gap > 0) {
    std::uint64_t n = std::min(gap, kMostSegment);
    if (gap - n > 0 && gap - n < 4) n = gap - 4;  // leave room for one more whole segment
    const std::uint64_t length = n - 2;
    pad.insert(pad.end(), {0xFF, 0xFE, std::uint8_t(length >> 8), std::uint8_t(length & 0xFF)});
    for (std::uint64_t i = 4; i < n; ++i) {
      if ((i - 4) % 8 == 0) counter += kSplitmixGolden;
      pad.push_back(std::uint8_t(mix64(counter) >> (8 * ((i - 4) % 8))));
    }
    gap -= n;
  }
  std::size_t at = 2;
  if (jpeg.size() >= 6 && jpeg[2] == 0xFF && jpeg[3] == 0xE0)
    at = std::min(jpeg.size(), 4 + (std::size_t(jpeg[4]) << 8 | jpeg[5]));
  jpeg.insert(jpeg.begin() + std::ptrdiff_t(at), pad.begin(), pad.end());
}

std::vector<std::uint8_t> make_exact_jpeg(std::uint64_t seed, std::uint64_t index, std::uint64_t bytes,
                                          const JpegStyle& style) {
  if (bytes > (std::uint64_t(256) << 20)) return {};  // gen's largest image
  // make_sized_jpeg lands within a few percent above 8 KiB, further below: aim lower and lower
  // until the image leaves room for a comment segment (or is the size itself).
  for (const double aim : {0.97, 0.93, 0.85, 0.7, 0.5, 0.3}) {
    const auto target = std::uint64_t(double(bytes) * aim);
    if (target < 64) break;
    std::vector<std::uint8_t> jpeg = make_sized_jpeg(seed, index, target, style);
    if (jpeg.size() == bytes) return jpeg;
    if (jpeg.size() + 4 <= bytes) {
      pad_jpeg_with_comments(jpeg, bytes - jpeg.size(),
                             mix64(seed ^ (index + 1) * kSplitmixGolden ^ 0x434F4DULL));
      return jpeg;
    }
  }
  return {};
}

std::uint64_t jpeg_header_pixels(const std::vector<std::uint8_t>& jpeg) {
  tjhandle handle = tjInitDecompress();
  if (!handle) throw RunError("jpeg: cannot start the libjpeg-turbo decoder");
  int w = 0, h = 0, subsamp = 0, colorspace = 0;
  const int rc = tjDecompressHeader3(handle, jpeg.data(), jpeg.size(), &w, &h, &subsamp, &colorspace);
  tjDestroy(handle);
  if (rc != 0 || w <= 0 || h <= 0) throw RunError("jpeg: an image without dimensions");
  return std::uint64_t(w) * std::uint64_t(h);
}

std::vector<std::uint8_t> make_exact_jpeg_at(std::uint64_t seed, std::uint64_t index, std::uint64_t bytes,
                                             JpegDimensions dims) {
  const int w = dims.width, h = dims.height;
  if (w < 8 || h < 8 || w > 16384 || h > 16384 || std::uint64_t(w) * std::uint64_t(h) > kMaxJpegPixels ||
      bytes > (std::uint64_t(256) << 20))
    return {};
  const double pixels = double(w) * double(h);
  const double target = double(bytes) * 0.97;  // room for one comment segment and the estimate's error
  const std::uint64_t key = mix64(seed ^ (index + 1) * kSplitmixGolden ^ 0x434F4DULL);
  // The quality stays at gen's unless the noise alone cannot bring the image within `bytes`: an
  // original denser in pixels than gen's smooth gradient at quality 95 (a small file of a large image).
  for (const int quality : {kDefaultJpegQuality, 85, 75, 50, 25, 10, 1}) {
    const JpegDensity& density = JpegDensity::of(quality);
    // Far above the size even without noise (the curve's image is smaller, its headers a larger
    // share): not encoded, a large image costing seconds at each quality.
    if (density.least() * pixels > 2 * double(bytes)) continue;
    int noise = density.noise_for(target / pixels);
    std::vector<std::uint8_t> jpeg = encode_noise_jpeg(seed, index, w, h, quality, noise);
    if (jpeg.size() + 4 > bytes && jpeg.size() != bytes && noise > 0) {
      // This image's headers and content take more than the curve says: one correction, then none.
      noise = density.noise_for(density.at(noise) * target / double(jpeg.size()));
      jpeg = encode_noise_jpeg(seed, index, w, h, quality, noise);
      if (jpeg.size() + 4 > bytes && jpeg.size() != bytes)
        jpeg = encode_noise_jpeg(seed, index, w, h, quality, 0);
    }
    if (jpeg.size() == bytes) return jpeg;
    if (jpeg.size() + 4 <= bytes) {
      pad_jpeg_with_comments(jpeg, bytes - jpeg.size(), key);
      return jpeg;
    }
  }
  return {};
}

std::optional<JpegDimensions> read_jpeg_dimensions(int fd) {
  constexpr std::size_t kFirst = 4 << 10, kMost = 4 << 20;
  std::vector<unsigned char> head;
  for (std::size_t want = kFirst; want <= kMost; want *= 4) {
    const std::size_t had = head.size();
    head.resize(want);
    std::size_t got = had;
    while (got < want) {
      const ssize_t n = ::pread(fd, head.data() + got, want - got, off_t(got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return std::nullopt;
      if (n == 0) break;
      got += std::size_t(n);
    }
    head.resize(got);
    if (!looks_like_jpeg(std::as_bytes(std::span(head)))) return std::nullopt;
    tjhandle handle = tjInitDecompress();
    if (!handle) return std::nullopt;
    int w = 0, h = 0, subsamp = 0, colorspace = 0;
    const int rc = tjDecompressHeader3(handle, head.data(), head.size(), &w, &h, &subsamp, &colorspace);
    tjDestroy(handle);  // a fresh handle each try: one left inside a header it failed on is not reused
    if (rc == 0 && w > 0 && h > 0) return JpegDimensions{w, h};
    if (got < want) return std::nullopt;  // the whole file read: its header does not parse
  }
  return std::nullopt;
}

bool looks_like_jpeg(std::span<const std::byte> data) {
  return data.size() >= 3 && data[0] == std::byte{0xFF} && data[1] == std::byte{0xD8} &&
         data[2] == std::byte{0xFF};
}

namespace {

// STOPONWARNING: libjpeg-turbo otherwise reports data that ends early or holds stray bytes as a
// warning and returns an image with the missing part filled in; a training pipeline fails on
// a file cut short (Pillow: "image file is truncated"), so it is corrupt, not decoded. For stray
// bytes before a marker this is stricter than Pillow, which decodes such a file. It also makes a
// failure's code certain: TurboJPEG 2.1 reports a fatal error that follows a warning as a
// warning (tjGetErrorCode), which once let a header without a frame "decode" to 0 × 0 pixels.
// LIMITSCANS: a progressive JPEG of more than 500 scans, whose decoding time grows with the
// square of its scans, is refused as libjpeg-turbo's own fuzzers refuse it.
constexpr int kDecodeFlags = TJFLAG_ACCURATEDCT | TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS;

tjhandle start_decoder() {
  tjhandle h = tjInitDecompress();
  if (!h) throw RunError("jpeg: cannot start the libjpeg-turbo decoder");
  return h;
}

// RETURNS: the dimensions of the smallest DCT scale of a width × height image whose shorter
// side is still at least `size` (the image's own for `size` 0): the decoder then does less work,
// as Pillow's draft mode and DALI do.
std::pair<int, int> dct_scaled(int width, int height, int size) {
  int w = width, h = height;
  if (size <= 0) return {w, h};
  int n = 0;
  const tjscalingfactor* f = tjGetScalingFactors(&n);
  for (int i = 0; i < n; ++i) {
    const int sw = TJSCALED(width, f[i]), sh = TJSCALED(height, f[i]);
    if (std::min(sw, sh) >= size && std::uint64_t(sw) * sh < std::uint64_t(w) * h) {
      w = sw;
      h = sh;
    }
  }
  return {w, h};
}

// Writes to `out` the size × size centre crop of `rgb` (w × h) resized so that its shorter
// side is `size`, bilinear, computed only inside the crop. REQUIRES: w, h, size > 0.
void resize_centre_crop(const std::vector<std::uint8_t>& rgb, int w, int h, int size,
                        std::vector<std::uint8_t>& out) {
  const double scale = double(size) / double(std::min(w, h));
  const double rw = double(w) * scale, rh = double(h) * scale;
  const double ox = std::floor((rw - size) / 2), oy = std::floor((rh - size) / 2);
  out.resize(std::size_t(size) * std::size_t(size) * 3);
  for (int y = 0; y < size; ++y) {
    const double sy = std::clamp((y + oy + 0.5) / scale - 0.5, 0.0, double(h - 1));
    const int y0 = int(sy), y1 = std::min(y0 + 1, h - 1);
    const double fy = sy - y0;
    for (int x = 0; x < size; ++x) {
      const double sx = std::clamp((x + ox + 0.5) / scale - 0.5, 0.0, double(w - 1));
      const int x0 = int(sx), x1 = std::min(x0 + 1, w - 1);
      const double fx = sx - x0;
      for (int c = 0; c < 3; ++c) {
        auto at = [&](int xx, int yy) { return double(rgb[(std::size_t(yy) * w + xx) * 3 + c]); };
        const double v = (at(x0, y0) * (1 - fx) + at(x1, y0) * fx) * (1 - fy) +
                         (at(x0, y1) * (1 - fx) + at(x1, y1) * fx) * fy;
        out[(std::size_t(y) * size + x) * 3 + c] = std::uint8_t(std::lround(v));
      }
    }
  }
}

// One output pixel's taps in PIL's bilinear resampling (ImagingResample's precompute_coeffs):
// the triangle filter, its support one source pixel widened by the reduction.
struct Taps {
  std::vector<int> first;     // first source index of each output pixel
  std::vector<int> count;     // taps of each output pixel
  std::vector<float> weight;  // `stride` weights per output pixel, normalised
  int stride = 0;
};

Taps taps_of(int in_size, int out_size) {
  const double scale = double(in_size) / double(out_size);
  const double filter_scale = std::max(scale, 1.0);
  const double support = filter_scale;  // the triangle's support is 1
  Taps t;
  t.stride = int(std::ceil(support)) * 2 + 1;
  t.first.resize(std::size_t(out_size));
  t.count.resize(std::size_t(out_size));
  t.weight.assign(std::size_t(out_size) * std::size_t(t.stride), 0.0f);
  for (int o = 0; o < out_size; ++o) {
    const double centre = (o + 0.5) * scale;
    // PIL's (int)(x + 0.5): a truncation, the same as floor where it counts (lo is at least 0).
    const int lo = std::max(int(std::floor(centre - support + 0.5)), 0);
    const int hi = std::min(int(std::floor(centre + support + 0.5)), in_size);
    double sum = 0;
    float* w = &t.weight[std::size_t(o) * std::size_t(t.stride)];
    const int n = std::min(hi - lo, t.stride);
    for (int k = 0; k < n; ++k) {
      const double x = std::abs((k + lo - centre + 0.5) / filter_scale);
      w[k] = float(x < 1 ? 1 - x : 0);
      sum += w[k];
    }
    for (int k = 0; k < n && sum > 0; ++k) w[k] = float(w[k] / sum);
    t.first[std::size_t(o)] = lo;
    t.count[std::size_t(o)] = n;
  }
  return t;
}

std::uint8_t clamp_byte(float v) { return std::uint8_t(std::clamp(int(std::lround(v)), 0, 255)); }

// Writes to `out` the crop `box` of `rgb` (an image `width` pixels wide) resized to size × size
// as PIL resizes: horizontally into `rows` (box.height × size, rounded to bytes), then vertically.
void resize_box_bilinear(const std::vector<std::uint8_t>& rgb, int width, const CropBox& box, int size,
                         std::vector<std::uint8_t>& rows, std::vector<std::uint8_t>& out) {
  const Taps across = taps_of(box.width, size), down = taps_of(box.height, size);
  rows.resize(std::size_t(box.height) * std::size_t(size) * 3);
  for (int y = 0; y < box.height; ++y) {
    const std::uint8_t* in = &rgb[(std::size_t(box.y + y) * std::size_t(width) + std::size_t(box.x)) * 3];
    std::uint8_t* row = &rows[std::size_t(y) * std::size_t(size) * 3];
    for (int x = 0; x < size; ++x) {
      const float* w = &across.weight[std::size_t(x) * std::size_t(across.stride)];
      const std::uint8_t* p = in + std::size_t(across.first[std::size_t(x)]) * 3;
      float r = 0, g = 0, b = 0;
      for (int k = 0; k < across.count[std::size_t(x)]; ++k, p += 3) {
        r += w[k] * p[0];
        g += w[k] * p[1];
        b += w[k] * p[2];
      }
      std::uint8_t* px = row + std::size_t(x) * 3;
      px[0] = clamp_byte(r);
      px[1] = clamp_byte(g);
      px[2] = clamp_byte(b);
    }
  }
  out.resize(std::size_t(size) * std::size_t(size) * 3);
  const std::size_t line = std::size_t(size) * 3;
  for (int y = 0; y < size; ++y) {
    const float* w = &down.weight[std::size_t(y) * std::size_t(down.stride)];
    const std::uint8_t* col = &rows[std::size_t(down.first[std::size_t(y)]) * line];
    for (std::size_t i = 0; i < line; ++i) {
      float v = 0;
      for (int k = 0; k < down.count[std::size_t(y)]; ++k) v += w[k] * col[std::size_t(k) * line + i];
      out[std::size_t(y) * line + i] = clamp_byte(v);
    }
  }
}

// Python's round(): halves to even, as torchvision's int(round(...)) does.
int round_half_even(double v) { return int(std::nearbyint(v)); }

}  // namespace

CropBox random_resized_crop_box(int width, int height, std::uint64_t seed) {
  FB_CHECK(width > 0 && height > 0, "a crop of an empty image");
  std::uint64_t state = seed;
  auto uniform = [&] { return double(splitmix64(state) >> 11) * 0x1.0p-53; };
  auto below = [&](int n) { return int(splitmix64(state) % std::uint64_t(n)); };  // torch.randint(0, n)
  const double area = double(width) * double(height);
  const double log_lo = std::log(3.0 / 4.0), log_hi = std::log(4.0 / 3.0);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * (0.08 + uniform() * (1.0 - 0.08));
    const double ratio = std::exp(log_lo + uniform() * (log_hi - log_lo));
    const int w = round_half_even(std::sqrt(target * ratio));
    const int h = round_half_even(std::sqrt(target / ratio));
    if (w > 0 && w <= width && h > 0 && h <= height) {
      const int y = below(height - h + 1);
      const int x = below(width - w + 1);
      return {x, y, w, h};
    }
  }
  // torchvision's fallback: the centre crop of the whole image, clamped to the ratio range.
  const double in_ratio = double(width) / double(height);
  int w = width, h = height;
  if (in_ratio < 3.0 / 4.0) h = std::min(height, round_half_even(w / (3.0 / 4.0)));
  else if (in_ratio > 4.0 / 3.0) w = std::min(width, round_half_even(h * (4.0 / 3.0)));
  return {(width - w) / 2, (height - h) / 2, w, h};
}

JpegDecoder::JpegDecoder() : handle_(start_decoder()) {}

JpegDecoder::~JpegDecoder() { tjDestroy(handle_); }

DecodedImage JpegDecoder::mark_corrupt(DecodedImage img, std::string why) {
  // TurboJPEG 2.1's tjDecompressHeader3 leaves its handle inside the header it failed on, and
  // every later header then fails too: a fresh handle, so that one bad sample spoils no other.
  tjDestroy(std::exchange(handle_, nullptr));
  handle_ = start_decoder();
  // Nor is memory kept for it: a short file may declare hundreds of megapixels.
  full_ = {};
  out_ = {};
  rows_ = {};
  img.width = img.height = 0;
  img.corrupt = std::move(why);
  return img;
}

DecodedImage JpegDecoder::decode_full(std::span<const std::byte> data, int size, const std::string& name,
                                      int* w, int* h) {
  const auto* buf = reinterpret_cast<const unsigned char*>(data.data());
  if (!looks_like_jpeg(data))
    throw RunError(name + ": not a JPEG (it does not start with the JPEG SOI marker FF D8 FF)");
  DecodedImage img;
  int subsamp = 0, colorspace = 0;
  if (tjDecompressHeader3(handle_, buf, data.size(), &img.source_width, &img.source_height, &subsamp,
                          &colorspace) != 0)
    return mark_corrupt(std::move(img), tj_error(handle_));
  // TurboJPEG 2.1 reads data that ends before the frame header as a tables-only JPEG: success,
  // with no dimensions.
  if (img.source_width <= 0 || img.source_height <= 0) {
    img.source_width = img.source_height = 0;
    return mark_corrupt(std::move(img), "no frame header (the data ends before the image's dimensions)");
  }
  if (std::uint64_t(img.source_width) * std::uint64_t(img.source_height) > kMaxJpegPixels)
    throw RunError(
        name + ": " + std::to_string(img.source_width) + " x " + std::to_string(img.source_height) +
        " pixels declared in its header, more than the decoder's limit of " + std::to_string(kMaxJpegPixels) +
        " (Pillow's, past which it refuses an image as a decompression bomb)");
  // A valid image, not a corrupt one, that this decoder cannot make RGB of (Pillow converts it).
  if (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK)
    throw RunError(name + ": a CMYK JPEG, which libjpeg-turbo does not decode to RGB");
  std::tie(*w, *h) = dct_scaled(img.source_width, img.source_height, size);
  full_.resize(std::size_t(*w) * std::size_t(*h) * 3);
  if (tjDecompress2(handle_, buf, data.size(), full_.data(), *w, 0, *h, TJPF_RGB, kDecodeFlags) != 0)
    return mark_corrupt(std::move(img), tj_error(handle_));
  return img;
}

DecodedImage JpegDecoder::decode(std::span<const std::byte> data, int size, const std::string& name) {
  int w = 0, h = 0;
  DecodedImage img = decode_full(data, size, name, &w, &h);
  if (!img.corrupt.empty()) return img;
  if (size <= 0) {
    img.width = w;
    img.height = h;
    out_.swap(full_);
    return img;
  }
  resize_centre_crop(full_, w, h, size, out_);
  img.width = size;
  img.height = size;
  return img;
}

DecodedImage JpegDecoder::decode_random_resized_crop(std::span<const std::byte> data, int size,
                                                     std::uint64_t seed, const std::string& name) {
  FB_CHECK(size > 0, "a random resized crop needs a size");
  int w = 0, h = 0;
  DecodedImage img = decode_full(data, 0, name, &w, &h);
  if (!img.corrupt.empty()) return img;
  resize_box_bilinear(full_, w, random_resized_crop_box(w, h, seed), size, rows_, out_);
  img.width = size;
  img.height = size;
  return img;
}

double decode_seconds_per_byte(int size, bool random_resized_crop) {
  static std::mutex mutex;
  static std::map<std::pair<int, bool>, double> measured;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(size, random_resized_crop);
  if (const auto it = measured.find(key); it != measured.end()) return it->second;
  const std::vector<std::uint8_t> jpeg = make_sized_jpeg(1, 0, 128 << 10);
  const std::span<const std::byte> data(reinterpret_cast<const std::byte*>(jpeg.data()), jpeg.size());
  JpegDecoder decoder;
  std::int64_t fastest = INT64_MAX;
  for (int i = 0; i < 5; ++i) {  // the fastest: a first decode pays its buffers, a busy host its waits
    const std::int64_t t0 = thread_cpu_ns();
    if (random_resized_crop) decoder.decode_random_resized_crop(data, size, std::uint64_t(i), "probe");
    else decoder.decode(data, size, "probe");
    fastest = std::min(fastest, thread_cpu_ns() - t0);
  }
  return measured[key] = double(fastest) * 1e-9 / double(jpeg.size());
}

}  // namespace feedbench
