// A deterministic synthetic data set (`feedbench gen`): same seed, same names, sizes and bytes.
// Contents are incompressible pseudo-random bytes: compressible or sparse data would flatter
// file systems that compress or deduplicate.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "feedbench/dataset/jpeg.h"
#include "feedbench/dataset/shape.h"

namespace feedbench {

enum class GenLayout {
  kClasses,   // class_000/img_000000.bin … (ImageNet-like), files spread evenly over the classes
  kFlat,      // file_000000.bin …
  kShards,    // shard_00000.bin …: few large files of fixed-size records back to back
  kLike,      // dir_000/…/file_000000.bin: a real data set's folders, count and sizes (shape.h)
  kTfrecord,  // shard_00000.tfrecord …: TFRecord shards (tfrecord.h) of records of drawn sizes
  kListed,    // files named and sized one by one (GenListing): a traced job's, at its paths
};

enum class GenFormat {
  kBin,   // *.bin: incompressible pseudo-random bytes of exactly the drawn size
  kJpeg,  // *.jpg: real JPEG images (jpeg.h) of about the drawn size, dimensions from the size
};

// The size range of --format jpeg when --file-size is not given: an image folder's photographs.
inline constexpr std::uint64_t kDefaultJpegMinSize = 64 << 10;
inline constexpr std::uint64_t kDefaultJpegMaxSize = 512 << 10;
// Below it a noisy JPEG cannot be made to size (headers alone are over 600 bytes).
inline constexpr std::uint64_t kMinJpegSize = 4 << 10;

// Files one `gen` writes unless --max-files raises it: every file is named, sized and written
// up front, so a typo in --files should not mean hours of work.
inline constexpr std::uint64_t kDefaultMaxGenFiles = 10'000'000;

// The files of a kListed data set: gen --like TRACE lists every file the traced job read, at its
// path under the job's data folder and its size. A file named *.jpg or *.jpeg (any case) is
// written as a real JPEG of exactly its size, at the original's dimensions where the listing has
// them (make_exact_jpeg_at, else make_exact_jpeg), the rest as pseudo-random bytes.
struct ListedFile {
  std::string path;  // relative to the written root; beneath it (open_beneath.h's rules)
  std::uint64_t size = 0;
  // The original JPEG's dimensions (0 × 0: not known): its stand-in is made at them
  // (make_exact_jpeg_at), at dimensions from its size only where no image of them fits its size.
  int width = 0, height = 0;
};
struct GenListing {
  std::vector<std::string> dirs;  // every folder to create, parents first (the root not listed)
  std::vector<ListedFile> files;
  std::uint64_t folders = 0;      // folders holding files
  nlohmann::ordered_json origin;  // where the list came from: feedbench-gen.json's "like"
};

// RETURNS: whether a listed file named `path` is written as a JPEG (it ends in .jpg or .jpeg).
bool listed_as_jpeg(const std::string& path);

struct GenOptions {
  std::string out;             // folder to write into (created when missing)
  std::uint64_t files = 0;     // files (records for kShards and kTfrecord), at least 1
  std::uint64_t min_size = 0;  // bytes per file (record data); equal to max_size for a fixed size
  std::uint64_t max_size = 0;  // a range picks each file's (record's) size with the seeded generator
  GenLayout layout = GenLayout::kClasses;
  GenFormat format = GenFormat::kBin;
  std::uint64_t classes = 10;  // kClasses
  std::uint64_t shards = 4;    // kShards, kTfrecord
  std::uint64_t seed = 0;
  bool force = false;    // write into a non-empty folder
  unsigned threads = 0;  // 0: up to 2, when there are many files
  std::uint64_t max_files =
      kDefaultMaxGenFiles;  // files written (shards for kShards, kTfrecord), --max-files
  // kJpeg: how the images are made (quality, and the bytes a pixel or the pixels an image: at
  // most one of the two). The default is full noise at quality 95, about 2.3 bytes a pixel.
  JpegStyle jpeg;
  // kLike: the shape to write (files must equal like->files; min_size and max_size are unused).
  // Its origin is written to <out>/feedbench-gen.json once every file is in place.
  std::shared_ptr<const DataShape> like;
  // kListed: the files to write (files must equal listed->files.size()); its origin is written
  // to <out>/feedbench-gen.json once every file is in place.
  std::shared_ptr<const GenListing> listed;
  // Files gen reads, each with the option that named it ("--like", path): no file gen writes
  // (nor its temporary) may be one of them, compared by device and inode.
  std::vector<std::pair<std::string, std::string>> inputs;
};

struct GenProgress {
  std::uint64_t files_done = 0;
  std::uint64_t files_total = 0;  // files written in the end (shards for kShards)
  std::uint64_t bytes_done = 0;
  std::uint64_t bytes_total = 0;
};

struct GenSummary {
  std::uint64_t files = 0;  // files written
  std::uint64_t bytes = 0;
  std::uint64_t folders = 0;  // folders holding files
  std::uint64_t pixels = 0;   // kJpeg, kListed: of every image written
  std::uint64_t images = 0;   // kJpeg, kListed: files written as JPEG images
  // kListed: files named as JPEGs too small for one (under a few hundred bytes), written as bytes
  std::uint64_t images_as_bytes = 0;
  // kListed: images whose original's dimensions were listed, made at them; and those no image of
  // those dimensions fits the size of (even at quality 1), made at dimensions from their size
  std::uint64_t images_at_dimensions = 0, images_off_dimensions = 0;
};

// The most pixels --jpeg-pixels takes, and the least bytes a pixel --bytes-per-pixel does (an
// image's dimensions stay within 16384 a side and the decoder's limit, kMaxJpegPixels).
inline constexpr std::uint64_t kMaxGenJpegPixels = 100'000'000;
inline constexpr std::uint64_t kMinGenJpegPixels = 4096;

// Checks options without writing. Throws InputError naming the option (--files, --file-size,
// --classes, --shards, --out; --scale for kLike; --jpeg-quality, --bytes-per-pixel, --jpeg-pixels
// for kJpeg: a density these images cannot take at that quality, JpegDensity; --like for
// kListed: a listed path that is not beneath --out) and what was expected, also for more files
// than max_files.
void validate_gen_options(const GenOptions& options);

// RETURNS: the bytes the data set holds (the sum of every file's size), UINT64_MAX when that
// does not fit; for kJpeg the sum of the drawn sizes, which the images match within a few percent. REQUIRES:
// valid options. Linear in the files written (bounded by max_files).
std::uint64_t gen_total_bytes(const GenOptions& options);

// RETURNS: the name of file `index` (relative to out) and its size, without writing; what
// generate_dataset writes (for kJpeg the size drawn, which the image matches within a few percent). REQUIRES:
// valid options; index < number of files written.
std::string gen_file_name(const GenOptions& options, std::uint64_t index);
std::uint64_t gen_file_size(const GenOptions& options, std::uint64_t index);

// RETURNS: the data bytes of record `record` (0-based over the whole data set) of a kTfrecord
// data set, and the first record of shard `shard` (shard == shards: the record count). The
// record's data is gen_fill(seed, record, …); shards hold consecutive records, as evenly
// spread as the counts allow. REQUIRES: valid options of kTfrecord.
std::uint64_t gen_record_size(const GenOptions& options, std::uint64_t record);
std::uint64_t gen_first_record(const GenOptions& options, std::uint64_t shard);

// Fills `buffer` with the bytes at `offset` of file `index` (deterministic in seed, index and
// offset). REQUIRES: offset is a multiple of 8.
void gen_fill(std::uint64_t seed, std::uint64_t index, std::uint64_t offset, char* buffer, std::size_t size);

// Writes the data set. Each file goes to a temporary ".fb-<index in hex>.fbtmp" beside it and is renamed into
// place when complete, so an interrupted run never leaves a short file under a real name; every folder and
// file is made beneath `out` without following a symbolic link (open_beneath.h). The record
// <out>/feedbench-gen.json follows the last file for kLike and kListed (its origin) and kJpeg
// (the style asked for and the bytes a pixel and pixels an image written).
// `out` is locked (flock) while it is written: a second gen into it is refused, not mixed in.
// Throws InputError, before anything is written, for bad options, a data set larger than the
// free space of the file system at `out`, `out` locked by another gen, a non-empty `out` without
// `force`, and in a non-empty `out` a folder to make that is a symbolic link or not a folder, a
// file's name that is a folder, or a file to write that is one of `inputs`; RunError on I/O.
// `progress` is called from the calling thread, about every 100 ms.
GenSummary generate_dataset(const GenOptions& options,
                            const std::function<void(const GenProgress&)>& progress = {});

}  // namespace feedbench
