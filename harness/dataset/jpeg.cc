// JPEG encode (for gen) and decode (for the loader's transform) through the TurboJPEG API.
#include "feedbench/dataset/jpeg.h"

#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "feedbench/base/error.h"
#include "feedbench/base/splitmix.h"

namespace feedbench {
namespace {

// Measured on this content: 4:4:4 at quality 95 takes about 2.3 bytes a pixel.
constexpr double kBytesPerPixel = 2.3;
constexpr int kQuality = 95;

struct Aspect {
  int w, h;
};
constexpr Aspect kAspects[] = {{4, 3}, {3, 2}, {1, 1}, {3, 4}, {2, 3}, {16, 9}};

std::string tj_error(void* handle) {
  const char* e = tjGetErrorStr2(handle);
  return e ? e : "unknown error";
}

}  // namespace

std::vector<std::uint8_t> encode_noise_jpeg(std::uint64_t seed, std::uint64_t index, int width, int height) {
  FB_CHECK(width >= 8 && height >= 8 && width <= 16384 && height <= 16384, "jpeg dimensions out of range");
  const std::uint64_t key = mix64(mix64(seed ^ 0x4A504547ull /* "JPEG" */) + (index + 1) * kSplitmixGolden);
  // A per-image gradient direction and tint, under noise of +-96 levels per channel.
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
        const int noise = int((r >> (c * 16)) & 0xFF) * 3 / 4 - 96;
        rgb[k++] = std::uint8_t(std::clamp(base + tint[c] + noise + 32, 0, 255));
      }
    }
  }
  tjhandle handle = tjInitCompress();
  if (!handle) throw RunError("jpeg: cannot start the libjpeg-turbo encoder");
  unsigned char* out = nullptr;
  unsigned long out_size = 0;
  const int rc = tjCompress2(handle, rgb.data(), width, 0, height, TJPF_RGB, &out, &out_size, TJSAMP_444,
                             kQuality, TJFLAG_ACCURATEDCT);
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

std::vector<std::uint8_t> make_sized_jpeg(std::uint64_t seed, std::uint64_t index,
                                          std::uint64_t target_bytes) {
  const Aspect a = kAspects[mix64(seed * 31 + index * kSplitmixGolden + 7) % std::size(kAspects)];
  auto dims = [&](double pixels, int* w, int* h) {
    const double unit = std::sqrt(std::max(pixels, 64.0) / double(a.w * a.h));
    *w = std::clamp(int(std::lround(unit * a.w)), 8, 16384);
    *h = std::clamp(int(std::lround(unit * a.h)), 8, 16384);
  };
  int w = 0, h = 0;
  dims(double(target_bytes) / kBytesPerPixel, &w, &h);
  std::vector<std::uint8_t> jpeg = encode_noise_jpeg(seed, index, w, h);
  // One correction: headers make small images cost more per pixel than the estimate.
  const double ratio = double(target_bytes) / double(jpeg.size());
  if (ratio < 0.97 || ratio > 1.03) {
    dims(double(w) * double(h) * ratio, &w, &h);
    jpeg = encode_noise_jpeg(seed, index, w, h);
  }
  return jpeg;
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

}  // namespace

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
  img.width = img.height = 0;
  img.corrupt = std::move(why);
  return img;
}

DecodedImage JpegDecoder::decode(std::span<const std::byte> data, int size, const std::string& name) {
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
  const auto [w, h] = dct_scaled(img.source_width, img.source_height, size);
  full_.resize(std::size_t(w) * std::size_t(h) * 3);
  if (tjDecompress2(handle_, buf, data.size(), full_.data(), w, 0, h, TJPF_RGB, kDecodeFlags) != 0)
    return mark_corrupt(std::move(img), tj_error(handle_));
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

}  // namespace feedbench
