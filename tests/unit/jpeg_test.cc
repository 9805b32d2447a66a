// Real JPEGs: gen --format jpeg writes decodable images of about the drawn size, the same bytes
// for the same seed; the decoder yields the image's pixels (or the crop's), names a file that is
// not a JPEG, reports a corrupt one as corrupt and refuses one that declares too many pixels.
#include "feedbench/dataset/jpeg.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <turbojpeg.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "feedbench/base/error.h"
#include "feedbench/dataset/dataset.h"
#include "feedbench/dataset/generator.h"
#include "feedbench/dataset/shape.h"
#include "feedbench/loader/loader.h"
#include "test_util.h"

namespace feedbench {
namespace {

using testing::read_file;
using testing::TempDir;

std::span<const std::byte> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

std::string text_of(const std::vector<std::uint8_t>& jpeg) { return {jpeg.begin(), jpeg.end()}; }

// RETURNS: the offset of the first marker FF `code` in `jpeg`, npos when there is none.
std::size_t marker_at(const std::string& jpeg, unsigned char code) {
  return jpeg.find(std::string{'\xFF', char(code)});
}

// RETURNS: `jpeg` (baseline, as encode_noise_jpeg writes it) with its frame header (SOF0: FF C0,
// length, precision, height, width) declaring width × height pixels.
std::string declaring(std::string jpeg, int width, int height) {
  const std::size_t sof = marker_at(jpeg, 0xC0);
  if (sof == std::string::npos || sof + 9 > jpeg.size()) throw std::logic_error("no SOF0 marker");
  jpeg[sof + 5] = char(height >> 8);
  jpeg[sof + 6] = char(height & 0xFF);
  jpeg[sof + 7] = char(width >> 8);
  jpeg[sof + 8] = char(width & 0xFF);
  return jpeg;
}

GenOptions jpeg_options(const std::string& out, std::uint64_t files, std::uint64_t seed) {
  GenOptions o;
  o.out = out;
  o.files = files;
  o.min_size = 64 << 10;
  o.max_size = 160 << 10;
  o.layout = GenLayout::kClasses;
  o.classes = 2;
  o.format = GenFormat::kJpeg;
  o.seed = seed;
  return o;
}

std::map<std::string, std::string> tree(const std::string& root) {
  std::map<std::string, std::string> out;
  FileSet set = scan_dataset(root);
  for (std::size_t i = 0; i < set.size(); ++i)
    out[std::string(set.relative_path(i))] = read_file(set.absolute_path(i));
  return out;
}

TEST(JpegTest, GeneratedImagesAreDeterministicPerSeedAndDecodeToTheirPixelCount) {
  TempDir dir;
  GenOptions a = jpeg_options(dir / "a", 6, 11);
  GenOptions b = a;
  b.out = dir / "b";
  b.threads = 1;
  GenOptions c = a;
  c.out = dir / "c";
  c.seed = 12;
  generate_dataset(a);
  generate_dataset(b);
  generate_dataset(c);
  const auto ta = tree(a.out), tb = tree(b.out), tc = tree(c.out);
  ASSERT_EQ(ta.size(), 6u);
  EXPECT_EQ(ta, tb);  // byte-identical for the same seed, whatever the writer threads
  EXPECT_NE(ta, tc);

  JpegDecoder decoder;
  std::size_t index = 0;
  for (const auto& [name, data] : ta) {
    EXPECT_TRUE(name.ends_with(".jpg")) << name;
    // About the drawn size: within 10% of it, and the drawn size within the range.
    const double drawn = double(gen_file_size(a, index));
    EXPECT_NEAR(double(data.size()), drawn, 0.10 * drawn) << name;
    const DecodedImage full = decoder.decode(bytes_of(data), 0, name);
    // A few hundred pixels a side, and every pixel decoded.
    EXPECT_GE(std::min(full.width, full.height), 100) << name;
    EXPECT_LE(std::max(full.width, full.height), 800) << name;
    EXPECT_EQ(full.width, full.source_width);
    EXPECT_EQ(full.pixels(), std::uint64_t(full.source_width) * std::uint64_t(full.source_height));
    EXPECT_EQ(decoder.pixels().size(), full.pixels() * 3);
    // Resize + centre crop to 96: 96 x 96 pixels out, whatever the source.
    const DecodedImage crop = decoder.decode(bytes_of(data), 96, name);
    EXPECT_EQ(crop.width, 96);
    EXPECT_EQ(crop.height, 96);
    EXPECT_EQ(decoder.pixels().size(), 96u * 96u * 3u);
    ++index;
  }
}

TEST(JpegTest, SizesFollowTheDrawnRange) {
  // Dimensions come from the size: a 64 KiB and a 512 KiB image, each within 10%.
  for (std::uint64_t target : {std::uint64_t(64) << 10, std::uint64_t(512) << 10}) {
    const auto jpeg = make_sized_jpeg(3, 0, target);
    EXPECT_NEAR(double(jpeg.size()), double(target), 0.10 * double(target)) << target;
  }
}

TEST(JpegTest, ExactImagesHaveTheSizeToTheByteAndDecodeWhole) {
  // From a few hundred bytes to beyond one comment segment's 64 KiB of padding, sizes on and off
  // any round number: each image exactly that size, every pixel decoding (the padding is
  // comment segments, which the decoder skips), and the same bytes again for the same seed.
  JpegDecoder decoder;
  for (std::uint64_t bytes : {std::uint64_t(900), std::uint64_t(4093), std::uint64_t(16384),
                              std::uint64_t(100'003), std::uint64_t(2'500'001)}) {
    const auto jpeg = make_exact_jpeg(5, bytes, bytes);
    ASSERT_EQ(jpeg.size(), bytes);
    const std::string name = "exact_" + std::to_string(bytes) + ".jpg";
    const std::string data(jpeg.begin(), jpeg.end());
    const DecodedImage img = decoder.decode(bytes_of(data), 0, name);
    EXPECT_TRUE(img.corrupt.empty()) << name << ": " << img.corrupt;
    EXPECT_GT(img.pixels(), 0u) << name;
    EXPECT_EQ(img.pixels(), jpeg_header_pixels(jpeg)) << name;
    EXPECT_EQ(make_exact_jpeg(5, bytes, bytes), jpeg) << name;
  }
  // Below the smallest image with its headers: none.
  EXPECT_TRUE(make_exact_jpeg(5, 0, 100).empty());
}

// gen --like TRACE's stand-in at the original's dimensions and size: exact to the byte and to
// the pixel, decoding whole, at a lower quality where quality 95 cannot fit the size (a small
// file of many pixels); none where even quality 1 without noise cannot, or the sides are out of range.
TEST(JpegTest, ExactImagesAtGivenDimensionsHaveBothTheSizeAndTheDimensions) {
  JpegDecoder decoder;
  struct Case {
    int w, h;
    std::uint64_t bytes;
  };
  for (const Case c :
       {Case{500, 375, 110'000}, Case{500, 375, 300'001}, Case{640, 480, 25'000}, Case{32, 24, 5'000}}) {
    const auto jpeg = make_exact_jpeg_at(7, 3, c.bytes, {c.w, c.h});
    const std::string name = std::to_string(c.w) + "x" + std::to_string(c.h) + "_" + std::to_string(c.bytes);
    ASSERT_EQ(jpeg.size(), c.bytes) << name;
    const std::string data(jpeg.begin(), jpeg.end());
    const DecodedImage img = decoder.decode(bytes_of(data), 0, name);
    EXPECT_TRUE(img.corrupt.empty()) << name << ": " << img.corrupt;
    EXPECT_EQ(img.width, c.w) << name;
    EXPECT_EQ(img.height, c.h) << name;
    EXPECT_EQ(make_exact_jpeg_at(7, 3, c.bytes, {c.w, c.h}), jpeg) << name;
  }
  EXPECT_TRUE(make_exact_jpeg_at(7, 3, 900, {4000, 3000}).empty());  // no image of 12 M pixels in 900 bytes
  EXPECT_TRUE(make_exact_jpeg_at(7, 3, 50'000, {4, 300}).empty());
  EXPECT_TRUE(make_exact_jpeg_at(7, 3, 50'000, {20'000, 300}).empty());
}

// watch's header read: a JPEG's dimensions from its first bytes, even past 64 KiB of comments
// before its frame; none for a file that is not a JPEG, is empty, or whose header is cut short.
TEST(JpegTest, ReadsTheDimensionsFromTheHeaderOnlyAndNoneOfANonJpeg) {
  TempDir dir;
  const auto dims_of = [&](const std::string& name, const std::string& content) {
    testing::write_file(dir / name, content);
    const int fd = ::open((dir / name).c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0) << name;
    const std::optional<JpegDimensions> d = read_jpeg_dimensions(fd);
    ::close(fd);
    return d ? std::to_string(d->width) + "x" + std::to_string(d->height) : std::string("none");
  };
  const auto plain = encode_noise_jpeg(1, 2, 120, 90);
  EXPECT_EQ(dims_of("plain.jpg", std::string(plain.begin(), plain.end())), "120x90");
  auto padded = encode_noise_jpeg(1, 2, 64, 200);
  pad_jpeg_with_comments(padded, 300'000, 9);  // the frame 300 kB in: read in growing steps
  EXPECT_EQ(dims_of("padded.jpg", std::string(padded.begin(), padded.end())), "64x200");
  EXPECT_EQ(dims_of("text.jpg", "not an image at all"), "none");
  EXPECT_EQ(dims_of("empty.jpg", ""), "none");
  EXPECT_EQ(dims_of("cut.jpg", std::string(padded.begin(), padded.begin() + 70'000)), "none");
}

TEST(JpegTest, CommentPaddingIsExactKeepsTheJfifHeaderFirstAndDecodes) {
  // Gaps at a segment's smallest, at its largest (65537 bytes) and just past it, where one
  // segment must leave room for a whole second one.
  const std::vector<std::uint8_t> image = encode_noise_jpeg(1, 2, 32, 24);
  ASSERT_EQ(std::string(image.begin() + 6, image.begin() + 10), "JFIF");
  JpegDecoder decoder;
  for (std::uint64_t gap : {4, 5, 65537, 65538, 65539, 65540, 65541, 131074, 131075}) {
    std::vector<std::uint8_t> jpeg = image;
    pad_jpeg_with_comments(jpeg, gap, 7);
    ASSERT_EQ(jpeg.size(), image.size() + gap) << gap;
    EXPECT_EQ(std::string(jpeg.begin() + 6, jpeg.begin() + 10), "JFIF") << gap;
    const std::string data(jpeg.begin(), jpeg.end());
    const DecodedImage img = decoder.decode(bytes_of(data), 0, "padded.jpg");
    EXPECT_TRUE(img.corrupt.empty()) << gap << ": " << img.corrupt;
    EXPECT_EQ(img.width, 32) << gap;
    EXPECT_EQ(decoder.pixels(), [&] {
      const std::string plain(image.begin(), image.end());
      JpegDecoder d;
      d.decode(bytes_of(plain), 0, "plain.jpg");
      return d.pixels();
    }()) << gap;  // the same pixels as the image unpadded
  }
}

TEST(JpegTest, NotAJpegIsARunErrorNamingTheSample) {
  JpegDecoder decoder;
  const std::string junk(4096, 'x');
  try {
    decoder.decode(bytes_of(junk), 0, "/data/class_000/img_000001.bin");
    FAIL() << "decoded junk";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("/data/class_000/img_000001.bin: not a JPEG"), std::string::npos)
        << e.what();
  }
  // A JPEG's first bytes and then nothing: a JPEG, but a corrupt one, not decoded to garbage.
  const std::string head = text_of(encode_noise_jpeg(1, 1, 64, 64)).substr(0, 40);
  const DecodedImage cut = decoder.decode(bytes_of(head), 0, "short.jpg");
  EXPECT_FALSE(cut.corrupt.empty());
  EXPECT_EQ(cut.pixels(), 0u);
}

// A JPEG cut short anywhere is corrupt: never a crash, never an image "decoded" with its full
// pixel count. Each cut follows a larger image, whose buffer a cut header once let the decoder
// read past when scaling (a header that ends before its frame read as 0 × 0 pixels: decode:224
// crashed), and is followed by a whole image, which must still decode.
TEST(JpegTest, AJpegCutShortAnywhereIsCorrupt) {
  const std::string small = text_of(encode_noise_jpeg(2, 0, 16, 16));
  const std::string large = text_of(encode_noise_jpeg(2, 1, 64, 48));
  ASSERT_LT(small.size(), 2000u);
  JpegDecoder decoder;
  for (int size : {24, 0}) {  // 24: a scaled decode, small enough to try every cut quickly
    std::size_t decoded = 0;
    for (std::size_t n = 3; n < small.size(); ++n) {
      ASSERT_TRUE(decoder.decode(bytes_of(large), size, "large.jpg").corrupt.empty())
          << size << " after " << n;
      const DecodedImage img = decoder.decode(bytes_of(small.substr(0, n)), size, "cut.jpg");
      if (img.corrupt.empty() || img.pixels() != 0) ++decoded;
    }
    EXPECT_EQ(decoded, 0u) << "decode:" << size << ": cuts of " << small.size() << " bytes decoded";
    const DecodedImage whole = decoder.decode(bytes_of(small), size, "whole.jpg");
    EXPECT_TRUE(whole.corrupt.empty()) << whole.corrupt;
    EXPECT_EQ(whole.width, size ? size : 16);
  }
}

// libjpeg-turbo 2.1 leaves its handle in the middle of a header that failed to parse, and every
// later header then fails too: one corrupt sample must not make the next good ones corrupt.
TEST(JpegTest, AJpegCutInsideItsHeaderLeavesTheDecoderWorking) {
  const std::string jpeg = text_of(encode_noise_jpeg(3, 0, 32, 32));
  const std::size_t dqt = marker_at(jpeg, 0xDB);
  ASSERT_NE(dqt, std::string::npos);
  JpegDecoder decoder;
  const DecodedImage cut = decoder.decode(bytes_of(jpeg.substr(0, dqt + 10)), 0, "cut.jpg");
  EXPECT_FALSE(cut.corrupt.empty());
  for (int i = 0; i < 2; ++i) {
    const DecodedImage whole = decoder.decode(bytes_of(jpeg), 0, "whole.jpg");
    EXPECT_TRUE(whole.corrupt.empty()) << whole.corrupt;
    EXPECT_EQ(whole.pixels(), 32u * 32u);
  }
}

TEST(JpegTest, AJpegWhoseHeaderDeclaresMoreThanItsDataHoldsIsCorrupt) {
  const std::string jpeg = declaring(text_of(encode_noise_jpeg(4, 0, 16, 16)), 2000, 1500);
  JpegDecoder decoder;
  for (int size : {0, 224}) {
    const DecodedImage img = decoder.decode(bytes_of(jpeg), size, "short.jpg");
    // libjpeg-turbo: "Corrupt JPEG data: premature end of data segment".
    EXPECT_NE(img.corrupt.find("premature end"), std::string::npos) << img.corrupt;
    EXPECT_EQ(img.pixels(), 0u);
    EXPECT_EQ(img.source_width, 2000);
    EXPECT_EQ(img.source_height, 1500);
  }
}

TEST(JpegTest, GarbageAfterAMarkerIsCorruptButBytesAfterTheEndAreNot) {
  std::string jpeg = text_of(encode_noise_jpeg(5, 0, 16, 16));
  JpegDecoder decoder;
  // Cameras and editors append trailers after the EOI marker, which decoders never read.
  const DecodedImage trailer = decoder.decode(bytes_of(jpeg + std::string(64, '\x5A')), 0, "trailer.jpg");
  EXPECT_TRUE(trailer.corrupt.empty()) << trailer.corrupt;
  EXPECT_EQ(trailer.pixels(), 16u * 16u);
  const std::size_t dht = marker_at(jpeg, 0xC4);
  ASSERT_NE(dht, std::string::npos);
  jpeg.insert(dht, std::string(16, '\x5A'));
  for (int size : {0, 224}) {
    const DecodedImage img = decoder.decode(bytes_of(jpeg), size, "garbage.jpg");
    EXPECT_NE(img.corrupt.find("extraneous bytes before marker"), std::string::npos) << img.corrupt;
    EXPECT_EQ(img.pixels(), 0u);
  }
}

// A short file whose header declares 65500 × 65500 pixels once took 12.5 GB (an RGB buffer of that
// size, zero-filled): the header's pixel count is checked before anything is allocated.
TEST(JpegTest, AJpegDeclaringMorePixelsThanTheLimitIsRefusedNamingIt) {
  const std::string jpeg = text_of(encode_noise_jpeg(6, 0, 16, 16));
  JpegDecoder decoder;
  for (int size : {0, 224}) {
    try {
      decoder.decode(bytes_of(declaring(jpeg, 65500, 65500)), size, "/data/bomb.jpg");
      FAIL() << "decoded a 65500 x 65500 header";
    } catch (const RunError& e) {
      EXPECT_NE(std::string(e.what()).find("/data/bomb.jpg: 65500 x 65500 pixels"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("178956970"), std::string::npos) << e.what();
    }
  }
  // The limit is on the source's pixels: 13378² is just past it, and refused.
  static_assert(13378ull * 13378ull > kMaxJpegPixels && 13377ull * 13377ull <= kMaxJpegPixels);
  EXPECT_THROW(decoder.decode(bytes_of(declaring(jpeg, 13378, 13378)), 224, "big.jpg"), RunError);
  // The decoder still decodes.
  EXPECT_TRUE(decoder.decode(bytes_of(jpeg), 0, "small.jpg").corrupt.empty());
}

// A CMYK JPEG (Photoshop writes them; ImageNet holds a few) is a valid image, not a corrupt one:
// the decoder cannot make RGB of it, and says so.
TEST(JpegTest, ACmykJpegIsARunErrorNamingIt) {
  std::vector<unsigned char> cmyk(16 * 16 * 4, 0x40);
  tjhandle encoder = tjInitCompress();
  ASSERT_NE(encoder, nullptr);
  unsigned char* out = nullptr;
  unsigned long out_size = 0;
  ASSERT_EQ(tjCompress2(encoder, cmyk.data(), 16, 0, 16, TJPF_CMYK, &out, &out_size, TJSAMP_444, 90, 0), 0);
  const std::string jpeg(reinterpret_cast<const char*>(out), out_size);
  tjFree(out);
  tjDestroy(encoder);
  JpegDecoder decoder;
  try {
    decoder.decode(bytes_of(jpeg), 0, "cmyk.jpg");
    FAIL() << "decoded a CMYK JPEG to RGB";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("cmyk.jpg: a CMYK JPEG"), std::string::npos) << e.what();
  }
}

LoaderOptions decode_options(int size) {
  LoaderOptions o;
  o.batch_size = 2;
  o.workers = 1;
  o.prefetch = 1;
  o.warmup_steps = 0;
  o.transform.per = TransformCost::Per::decode;
  o.transform.size = size;
  return o;
}

TEST(JpegTest, LoaderDecodesEverySampleItReads) {
  TempDir dir;
  GenOptions g = jpeg_options(dir / "d", 4, 5);
  generate_dataset(g);
  const FileSet files = scan_dataset(g.out);
  std::uint64_t pixels = 0;
  JpegDecoder decoder;
  for (std::size_t i = 0; i < files.size(); ++i)
    pixels += decoder.decode(bytes_of(read_file(files.absolute_path(i))), 0, "x").pixels();
  auto source = make_file_source(files, "psync", 16 << 10);  // images span several chunks
  LoaderResult whole = LoaderSim(decode_options(0), *source).run();
  EXPECT_EQ(whole.decoded_pixels, pixels);
  EXPECT_EQ(whole.transform_bytes, files.total_bytes());
  EXPECT_GT(whole.transform_s, 0);
  LoaderResult cropped = LoaderSim(decode_options(64), *source).run();
  EXPECT_EQ(cropped.decoded_pixels, 4u * 64u * 64u);
}

TEST(JpegTest, LoaderDecodeOfAFileThatIsNotAJpegFailsNamingIt) {
  TempDir dir;
  GenOptions g = jpeg_options(dir / "d", 3, 5);
  g.format = GenFormat::kBin;
  generate_dataset(g);
  const FileSet files = scan_dataset(g.out);
  auto source = make_file_source(files, "psync");
  LoaderOptions o = decode_options(0);
  o.batch_size = 1;
  try {
    LoaderSim(o, *source).run();
    FAIL() << "decoded .bin files";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find(g.out), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(".bin: not a JPEG"), std::string::npos) << e.what();
  }
}

TEST(JpegTest, GenRefusesJpegShardsAndTinyImages) {
  TempDir dir;
  GenOptions o = jpeg_options(dir / "x", 4, 1);
  o.layout = GenLayout::kShards;
  o.min_size = o.max_size = 64 << 10;
  EXPECT_THROW(validate_gen_options(o), InputError);
  o = jpeg_options(dir / "x", 4, 1);
  o.min_size = 100;
  EXPECT_THROW(validate_gen_options(o), InputError);
}

// torchvision's RandomResizedCrop(224): 224 × 224 × 3 out, whatever the image; the same draws for
// the same seed; crops inside the image, of 8% to all of its area and a ratio of 3/4 to 4/3.
TEST(JpegTest, RandomResizedCropIsTorchvisionsAndSeeded) {
  JpegDecoder decoder;
  for (auto [w, h] : {std::pair{500, 375}, {375, 500}, {224, 224}, {120, 90}, {1000, 160}}) {
    const std::string jpeg = text_of(encode_noise_jpeg(7, std::uint64_t(w), w, h));
    const DecodedImage a = decoder.decode_random_resized_crop(bytes_of(jpeg), 224, 42, "a.jpg");
    ASSERT_TRUE(a.corrupt.empty()) << a.corrupt;
    EXPECT_EQ(a.width, 224);
    EXPECT_EQ(a.height, 224);
    EXPECT_EQ(a.source_width, w);
    EXPECT_EQ(a.pixels(), 224u * 224u);
    const std::vector<std::uint8_t> first = decoder.pixels();
    EXPECT_EQ(first.size(), 224u * 224u * 3u);
    decoder.decode_random_resized_crop(bytes_of(jpeg), 224, 42, "a.jpg");
    EXPECT_EQ(decoder.pixels(), first) << "the same seed, the same crop";
    decoder.decode_random_resized_crop(bytes_of(jpeg), 224, 43, "a.jpg");
    EXPECT_NE(decoder.pixels(), first) << "another seed, another crop";
  }
  int fell_back = 0;
  for (std::uint64_t seed = 0; seed < 2000; ++seed) {
    const CropBox b = random_resized_crop_box(500, 375, seed);
    ASSERT_GE(b.x, 0);
    ASSERT_GE(b.y, 0);
    ASSERT_LE(b.x + b.width, 500);
    ASSERT_LE(b.y + b.height, 375);
    if (b.width == 500 && b.height == 375) {
      ++fell_back;
      continue;
    }
    const double area = double(b.width) * b.height / (500.0 * 375.0);
    const double ratio = double(b.width) / b.height;
    EXPECT_GE(area, 0.075) << seed;  // 0.08, less what rounding to whole pixels takes
    EXPECT_LE(area, 1.0) << seed;
    EXPECT_GE(ratio, 0.74) << seed;
    EXPECT_LE(ratio, 1.36) << seed;
  }
  EXPECT_LT(fell_back, 20) << "at 4:3 nearly every draw fits within 10 tries";
}

// torchvision's fallback after 10 tries that do not fit: the centred crop of the whole image at
// the nearest ratio of the range.
TEST(JpegTest, RandomResizedCropFallsBackToTheCentre) {
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    const CropBox tall = random_resized_crop_box(16, 2000, seed);  // no draw is 16 wide or less
    EXPECT_EQ(tall.width, 16);
    EXPECT_EQ(tall.height, 21);  // round(16 / (3/4))
    EXPECT_EQ(tall.x, 0);
    EXPECT_EQ(tall.y, (2000 - 21) / 2);
    const CropBox wide = random_resized_crop_box(2000, 16, seed);
    EXPECT_EQ(wide.width, 21);
    EXPECT_EQ(wide.height, 16);
    EXPECT_EQ(wide.x, (2000 - 21) / 2);
  }
}

// A corrupt JPEG fails as decode's does: corrupt, no pixels, and the next image decodes.
TEST(JpegTest, RandomResizedCropOfACorruptJpegIsCorrupt) {
  const std::string whole = text_of(encode_noise_jpeg(8, 0, 300, 200));
  JpegDecoder decoder;
  for (std::size_t cut : {std::size_t(40), whole.size() / 3, whole.size() - 10}) {
    const DecodedImage bad =
        decoder.decode_random_resized_crop(bytes_of(whole.substr(0, cut)), 224, 1, "cut.jpg");
    EXPECT_FALSE(bad.corrupt.empty()) << cut;
    EXPECT_EQ(bad.pixels(), 0u) << cut;
    const DecodedImage good = decoder.decode_random_resized_crop(bytes_of(whole), 224, 1, "whole.jpg");
    EXPECT_TRUE(good.corrupt.empty()) << good.corrupt;
    EXPECT_EQ(good.pixels(), 224u * 224u);
  }
  EXPECT_THROW(decoder.decode_random_resized_crop(bytes_of(std::string(4096, 'x')), 224, 1, "x.bin"),
               RunError);
}

TEST(JpegTest, LoaderRandomResizedCropDecodesEverySample) {
  TempDir dir;
  GenOptions g = jpeg_options(dir / "d", 4, 5);
  generate_dataset(g);
  const FileSet files = scan_dataset(g.out);
  auto source = make_file_source(files, "psync", 16 << 10);
  LoaderOptions o = decode_options(32);
  o.transform.crop = TransformCost::Crop::random_resized;
  LoaderResult r = LoaderSim(o, *source).run();
  EXPECT_EQ(r.decoded_pixels, 4u * 32u * 32u);
  EXPECT_EQ(r.transform_bytes, files.total_bytes());
  EXPECT_GT(r.transform_s, 0);
}

// --jpeg-quality with --bytes-per-pixel or --jpeg-pixels: images of the drawn sizes with the
// pixels asked for, deterministic, and the style recorded beside them.
TEST(JpegTest, GenGivesImagesThePixelsAskedFor) {
  TempDir dir;
  GenOptions a = jpeg_options(dir / "a", 6, 3);
  a.jpeg.quality = 90;
  a.jpeg.bytes_per_pixel = 0.8;
  const GenSummary s = generate_dataset(a);
  EXPECT_NEAR(double(s.bytes) / double(s.pixels), 0.8, 0.08);
  GenOptions b = a;
  b.out = dir / "b";
  generate_dataset(b);
  const auto ta = tree(a.out);
  EXPECT_EQ(ta, tree(b.out));
  std::size_t index = 0;
  JpegDecoder decoder;
  for (const auto& [name, data] : ta) {
    const double drawn = double(gen_file_size(a, index++));
    EXPECT_NEAR(double(data.size()), drawn, 0.10 * drawn) << name;
    const double pixels = double(decoder.decode(bytes_of(data), 0, name).pixels());
    EXPECT_NEAR(pixels, drawn / 0.8, 0.06 * drawn / 0.8) << name;
  }
  const std::string record = read_file(std::filesystem::path(a.out) / kGenRecordName);
  EXPECT_NE(record.find("\"quality\": 90"), std::string::npos) << record;
  EXPECT_NE(record.find("\"bytes_per_pixel_asked\": 0.8"), std::string::npos) << record;

  GenOptions p = jpeg_options(dir / "p", 4, 3);
  p.jpeg.pixels = 400 * 300;
  const GenSummary ps = generate_dataset(p);
  EXPECT_NEAR(double(ps.pixels) / 4, 120'000, 1'500);  // rounding to whole pixels at each aspect
}

TEST(JpegTest, GenRefusesAStyleTheImagesCannotTake) {
  TempDir dir;
  auto refused = [&](const GenOptions& o, const std::string& option) {
    try {
      validate_gen_options(o);
      ADD_FAILURE() << "accepted " << option;
    } catch (const InputError& e) {
      EXPECT_TRUE(std::string(e.what()).starts_with(option + ":")) << e.what();
    }
  };
  GenOptions o = jpeg_options(dir / "x", 4, 1);
  o.jpeg.quality = 0;
  refused(o, "--jpeg-quality");
  o = jpeg_options(dir / "x", 4, 1);
  o.jpeg.bytes_per_pixel = 50;
  refused(o, "--bytes-per-pixel");
  o.jpeg.bytes_per_pixel = 0.001;
  refused(o, "--bytes-per-pixel");
  o.jpeg.bytes_per_pixel = 0.8;
  o.jpeg.pixels = 100'000;
  refused(o, "--bytes-per-pixel");
  o.jpeg.bytes_per_pixel = 0;
  o.jpeg.pixels = 10;
  refused(o, "--jpeg-pixels");
  o.jpeg.pixels = 1'000;  // 64 KiB in 1000 pixels: 65 bytes a pixel
  refused(o, "--jpeg-pixels");
  o.jpeg.pixels = 100'000;
  EXPECT_NO_THROW(validate_gen_options(o));
  o.format = GenFormat::kBin;
  refused(o, "--jpeg-quality, --bytes-per-pixel, --jpeg-pixels");
  EXPECT_FALSE(std::filesystem::exists(dir / "x")) << "nothing written";
}

}  // namespace
}  // namespace feedbench
