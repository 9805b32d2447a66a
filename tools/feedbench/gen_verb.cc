// `feedbench gen`: writes a deterministic synthetic data set (harness/dataset/generator.cc).
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include <boost/program_options.hpp>

#include "command_line.h"
#include "feedbench/base/error.h"
#include "feedbench/base/statistics.h"
#include "feedbench/base/text.h"
#include "feedbench/base/units.h"
#include "feedbench/cache/manifest.h"
#include "feedbench/dataset/dataset.h"
#include "feedbench/dataset/generator.h"
#include "feedbench/dataset/shape.h"
#include "feedbench/plan/preflight.h"
#include "feedbench/replay/recorded_job.h"
#include "feedbench/replay/stand_in.h"
#include "verbs.h"

namespace po = boost::program_options;

namespace feedbench {
namespace {

constexpr const char* kUsage =
    "usage: feedbench gen --out DIR --files N --file-size SIZE|MIN..MAX [options]\n"
    "       feedbench gen --out DIR --like DIR|MANIFEST [--scale F] [--seed S]\n"
    "       feedbench gen --out DIR --like TRACE [--seed S]\n"
    "\n"
    "Writes a deterministic synthetic data set: same seed, same names, sizes and bytes.\n"
    "Contents are incompressible pseudo-random bytes, or with --format jpeg real JPEG images\n"
    "(noisy photographs' bytes per pixel, a few hundred pixels a side, about the drawn size;\n"
    "--file-size defaults to 64KiB..512KiB; --jpeg-quality, and --bytes-per-pixel or\n"
    "--jpeg-pixels, give them a photograph's pixels: ImageNet's take about 0.8 bytes a pixel).\n"
    "Refuses a non-empty DIR "
    "unless --force,\n"
    "and, before writing anything, more files than --max-files or more bytes than DIR's free space.\n"
    "--layout shards: fixed-size records back to back (the loader's samples records:SIZE);\n"
    "--layout tfrecord: TensorFlow's TFRecord format (length, masked CRC-32C of it, data, masked\n"
    "CRC-32C of the data), --files records of --file-size each over --shards shards (samples tfrecord).\n"
    "\n"
    "--like writes a data set shaped like a real one: its folder depth and files per folder, its file\n"
    "count and its file-size distribution, scaled by --scale. The real tree is scanned (names and\n"
    "sizes; no file is opened); a stage manifest (feedbench-manifest.json or MANIFEST.sha256) takes\n"
    "the files it lists from its cache folder. DIR/feedbench-gen.json records where the shape came\n"
    "from, and a run's result carries it (dataset.source.generated_like).\n"
    "--like TRACE (a trace `feedbench watch --trace` wrote) writes every file the job read, at its\n"
    "path under the job's data folder and its exact size: real JPEG images where the job read\n"
    "*.jpg or *.jpeg files (padded to the byte with comment segments), pseudo-random bytes\n"
    "elsewhere. A stand-in for data that cannot travel: `feedbench replay TRACE --source DIR`\n"
    "then replays the job on it.\n"
    "\n"
    "examples:\n"
    "  feedbench gen --out /var/tmp/imagenet-mini --files 20000 --file-size 64KiB..256KiB \\\n"
    "                --layout classes --classes 100 --seed 7\n"
    "  feedbench gen --out /var/tmp/jpegs --files 2000 --format jpeg --classes 20 --seed 7\n"
    "  feedbench gen --out /var/tmp/imagenet-px --files 2000 --format jpeg --file-size 64KiB..160KiB \\\n"
    "                --jpeg-quality 90 --bytes-per-pixel 0.8 --classes 20 --seed 7\n"
    "  feedbench gen --out /var/tmp/shards --files 100000 --file-size 4KiB --layout shards --shards 8\n"
    "  feedbench gen --out /var/tmp/like-train --like /data/train --scale 0.1 --seed 7\n"
    "  feedbench gen --out /var/tmp/stand-in --like job.trace.json\n"
    "  feedbench gen --out /var/tmp/tfrecords --files 20000 --file-size 16KiB..256KiB --layout tfrecord "
    "--shards 16\n"
    "\n";

GenLayout parse_layout(const std::string& text) {
  if (text == "classes") return GenLayout::kClasses;
  if (text == "flat") return GenLayout::kFlat;
  if (text == "shards") return GenLayout::kShards;
  if (text == "tfrecord") return GenLayout::kTfrecord;
  throw InputError("--layout: expected classes, flat, shards or tfrecord, got '" + text + "'");
}

GenFormat parse_format(const std::string& text) {
  if (text == "bin") return GenFormat::kBin;
  if (text == "jpeg") return GenFormat::kJpeg;
  throw InputError("--format: expected bin or jpeg, got '" + text + "'");
}

std::uint64_t parse_count(const std::string& text, const char* option) {
  std::size_t used = 0;
  unsigned long long v = 0;
  try {
    if (!text.empty() && text[0] != '-') v = std::stoull(text, &used, 10);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size())
    throw InputError(std::string(option) + ": expected a whole number, got '" + text + "'");
  return v;
}

void print_progress(const GenProgress& p, std::chrono::steady_clock::time_point start) {
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double rate = s > 0 ? double(p.bytes_done) / s : 0;
  double pct = p.bytes_total ? 100.0 * double(p.bytes_done) / double(p.bytes_total) : 100.0;
  std::fprintf(stderr, "\r  gen: %llu/%llu files, %s of %s (%.0f%%), %s, %.0f files/s   ",
               static_cast<unsigned long long>(p.files_done), static_cast<unsigned long long>(p.files_total),
               format_size(double(p.bytes_done)).c_str(), format_size(double(p.bytes_total)).c_str(), pct,
               format_rate(rate).c_str(), s > 0 ? double(p.files_done) / s : 0.0);
  std::fflush(stderr);
}

// Writes the data set, with a progress line on a terminal only (CI logs stay clean).
GenSummary generate_with_progress(const GenOptions& o) {
  std::function<void(const GenProgress&)> progress;
  const auto start = std::chrono::steady_clock::now();
  const bool tty = interactive_terminal(STDERR_FILENO);
  if (tty) progress = [start](const GenProgress& p) { print_progress(p, start); };
  GenSummary s = generate_dataset(o, progress);
  if (tty) std::fprintf(stderr, "\n");
  return s;
}

// --bytes-per-pixel: a number above 0 (JpegDensity bounds it further).
double parse_bytes_per_pixel(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double v = text.empty() ? 0 : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno != 0 || !std::isfinite(v) || !(v > 0))
    throw InputError("--bytes-per-pixel: expected a number of bytes above 0, such as 0.8, got '" + text +
                     "'");
  return v;
}

// --jpeg-pixels: N, or W x H as "500x375".
std::uint64_t parse_jpeg_pixels(const std::string& text) {
  const auto x = text.find('x');
  if (x == std::string::npos) return parse_count(text, "--jpeg-pixels");
  try {
    const std::uint64_t w = parse_count(text.substr(0, x), "--jpeg-pixels");
    const std::uint64_t h = parse_count(text.substr(x + 1), "--jpeg-pixels");
    if (w > 0 && h > 0 && w <= 16384 && h <= 16384) return w * h;
  } catch (const InputError&) {
  }
  throw InputError("--jpeg-pixels: expected pixels an image (N, or W x H such as 500x375), got '" + text +
                   "'");
}

// The JPEG options given, for `format`. Throws InputError naming an option given without --format jpeg.
JpegStyle jpeg_style(const po::variables_map& vm, GenFormat format, const std::string& quality,
                     const std::string& bpp, const std::string& pixels) {
  JpegStyle style;
  for (const char* option : {"jpeg-quality", "bytes-per-pixel", "jpeg-pixels"})
    if (vm.count(option) && format != GenFormat::kJpeg)
      throw InputError(std::string("--") + option + ": only with --format jpeg");
  if (vm.count("jpeg-quality")) {
    const std::uint64_t q = parse_count(quality, "--jpeg-quality");
    if (q < 1 || q > 100)
      throw InputError("--jpeg-quality: expected a quality from 1 to 100, got '" + quality + "'");
    style.quality = int(q);
  }
  if (vm.count("bytes-per-pixel")) style.bytes_per_pixel = parse_bytes_per_pixel(bpp);
  if (vm.count("jpeg-pixels")) style.pixels = parse_jpeg_pixels(pixels);
  return style;
}

// --scale: a fraction of the real data set, above 0 and at most 1.
double parse_scale(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double v = text.empty() ? 0 : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno != 0 || !std::isfinite(v) || !(v > 0) ||
      v > 1)
    throw InputError(
        "--scale: expected a number above 0 and at most 1 (0.1 writes a tenth of the files), got '" + text +
        "'");
  return v;
}

// RETURNS: the selection `like` names (a folder, or the files a stage manifest lists, from the
// cache folder beside it), with what it is ("folder" or "manifest") and how to name it. Throws
// InputError naming --like.
FileSet scan_like(const std::string& like, std::string& kind, std::string& where) {
  struct stat st {};
  if (::stat(like.c_str(), &st) != 0) throw InputError(errno_message("--like '" + like + "'", errno));
  if (S_ISDIR(st.st_mode)) {
    kind = "folder";
    FileSet files = scan_dataset(like);
    where = files.root();
    return files;
  }
  const std::filesystem::path path(like);
  const std::string name = path.filename().string();
  if (!S_ISREG(st.st_mode) || (name != kManifestJsonName && name != kManifestSumsName))
    throw InputError("--like '" + like + "': expected a folder, a stage manifest (" + kManifestJsonName +
                     " or " + kManifestSumsName + ") or a watch trace");
  const std::string dir = path.has_parent_path() ? path.parent_path().string() : ".";
  std::string why;
  const std::optional<Manifest> manifest = read_manifest(dir, &why);
  if (!manifest) throw InputError("--like '" + like + "': not a complete stage manifest: " + why);
  kind = "manifest";
  where = std::filesystem::absolute(path).lexically_normal().string();
  // The files it lists, stat'ed where it lists them: its cache folder.
  const FileSet all = scan_dataset(dir);
  FileSet listed(all.root());
  std::vector<std::string> missing;
  std::size_t j = 0;
  for (const ManifestEntry& e : manifest->files) {
    while (j < all.size() && all.relative_path(j) < e.path) ++j;
    if (j < all.size() && all.relative_path(j) == e.path)
      listed.add(e.path, all.file_size(j), all.mtime_ns(j));
    else missing.push_back(e.path);
  }
  if (!missing.empty())
    throw InputError("--like '" + like + "': " + std::to_string(missing.size()) + " of the " +
                     std::to_string(manifest->files.size()) + " files it lists are not in " + all.root() +
                     " (first: " + missing.front() + "), where --like takes their sizes");
  listed.sort();
  return listed;
}

// gen --like: the real data set's shape, scaled, written like any other gen.
int gen_like(GenOptions o, const std::string& like, double scale) {
  std::string kind, where;
  const auto t0 = std::chrono::steady_clock::now();
  FileSet real;
  try {
    real = scan_like(like, kind, where);
  } catch (const InputError& e) {
    const std::string what = e.what();
    throw InputError(what.starts_with("--like") ? what : "--like '" + like + "': " + what);
  }
  const double scan_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (real.empty()) throw InputError("--like '" + like + "': holds no files; there is no shape to copy");
  if (const std::string note = left_out_note(real, {"feedbench metadata"}); !note.empty())
    std::fprintf(stderr, "feedbench gen: note: --like: %s\n", printable(note).c_str());
  // The real data set is never written to, not even by accident of --out (a symlink or a bind
  // mount of it counts).
  check_outputs_apart({{"--out", o.out, true}}, {}, {{"the --like data set", real.root()}});

  auto shape = std::make_shared<DataShape>(data_shape(real, scale, where, kind));
  if (kind == "manifest") o.inputs = {{"--like", like}};
  o.layout = GenLayout::kLike;
  o.files = shape->files;
  o.like = shape;
  validate_gen_options(o);
  // How close the sizes to be written are to the real ones (they are known before writing).
  std::vector<std::uint64_t> real_sizes(real.size()), sizes(o.files);
  for (std::size_t i = 0; i < real.size(); ++i) real_sizes[i] = real.file_size(i);
  for (std::uint64_t i = 0; i < o.files; ++i) sizes[i] = gen_file_size(o, i);
  const double ks = ks_statistic(std::move(real_sizes), std::move(sizes));
  shape->origin["size_ks_statistic"] = ks;
  std::printf("like %s: %zu files, %s in %s folders (scanned in %.2f s); scale %g, seed %llu\n",
              printable(where).c_str(), real.size(), format_size(double(real.total_bytes())).c_str(),
              shape->origin["folders"].dump().c_str(), scan_s, scale,
              static_cast<unsigned long long>(o.seed));

  GenSummary s = generate_with_progress(o);
  double mib = double(s.bytes) / (1024.0 * 1024.0);
  std::printf(
      "wrote %llu files, %.*f MiB in %llu %s to %s; sizes at Kolmogorov-Smirnov distance %.4f from the "
      "real ones; origin in %s\n",
      static_cast<unsigned long long>(s.files), mib >= 1 ? 1 : 3, mib,
      static_cast<unsigned long long>(s.folders), s.folders == 1 ? "folder" : "folders",
      printable(o.out).c_str(), ks, kGenRecordName);
  return 0;
}

// RETURNS: whether --like names a trace: a regular file that is not a stage manifest.
bool like_is_trace(const std::string& like) {
  struct stat st {};
  if (::stat(like.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  const std::string name = std::filesystem::path(like).filename().string();
  return name != kManifestJsonName && name != kManifestSumsName;
}

// gen --like TRACE: every file the traced job read, at its path and size.
int gen_like_trace(GenOptions o, const std::string& trace) {
  // A file that does not open as a JSON object is no trace: say what --like takes.
  char first = 0;
  {
    std::ifstream in(trace, std::ios::binary);
    while (in.get(first) && std::isspace(static_cast<unsigned char>(first))) {
    }
    if (!in) first = 0;
  }
  if (first != '{')
    throw InputError("--like '" + trace + "': expected a folder, a stage manifest (" + kManifestJsonName +
                     " or " + kManifestSumsName + ") or a watch trace (feedbench watch --trace); it is none");
  RecordedJob job;
  try {
    job = load_recorded_job(trace);
  } catch (const InputError& e) {
    throw InputError(std::string("--like: ") + e.what());
  }
  // The job's own data (where it still is, here) and the trace are never written to. A trace
  // of relative paths names no data folder: only the trace is checked.
  std::vector<NamedPath> roots;
  if (!job.data_root.empty()) roots.push_back({"the traced job's data folder", job.data_root});
  check_outputs_apart({{"--out", o.out, true}}, {{"--like", trace}}, roots);
  if (!job.data_root.empty() && folder_holds(o.out, job.data_root))
    throw InputError(
        "--out " + o.out + ": holds the traced job's data folder " + job.data_root +
        " (compared by device and inode): feedbench never writes over the data; choose a path outside it");
  auto listing = std::make_shared<GenListing>(gen_listing_of(job, trace));
  // No file written lands on the trace, whatever --out and --force say (gen checks by inode).
  o.inputs = {{"--like", trace}};
  o.layout = GenLayout::kListed;
  o.files = listing->files.size();
  o.listed = listing;
  validate_gen_options(o);
  std::printf(
      "like %s (job %s, read from %s): %zu files, %s in %llu %s, %llu named as JPEGs; seed %llu\n",
      printable(trace).c_str(), printable(job.name).c_str(),
      job.data_root.empty() ? "its data folder (paths relative to it)" : printable(job.data_root).c_str(),
      listing->files.size(), format_size(double(listing->origin["bytes"].get<std::uint64_t>())).c_str(),
      static_cast<unsigned long long>(listing->folders), listing->folders == 1 ? "folder" : "folders",
      static_cast<unsigned long long>(listing->origin["jpeg_files"].get<std::uint64_t>()),
      static_cast<unsigned long long>(o.seed));
  const GenSummary s = generate_with_progress(o);
  std::printf("wrote %llu files, %s in %llu %s to %s, each at its recorded path and size",
              static_cast<unsigned long long>(s.files), format_size(double(s.bytes)).c_str(),
              static_cast<unsigned long long>(s.folders), s.folders == 1 ? "folder" : "folders",
              printable(o.out).c_str());
  if (s.images > 0)
    std::printf("; %llu real JPEGs, %s pixels an image on average", static_cast<unsigned long long>(s.images),
                format_count(double(s.pixels) / double(s.images)).c_str());
  if (s.images_at_dimensions + s.images_off_dimensions > 0)
    std::printf("; %llu at their original's dimensions",
                static_cast<unsigned long long>(s.images_at_dimensions));
  if (s.images_off_dimensions > 0)
    std::printf(
        "; %llu too small for an image of their original's dimensions even at quality 1, made at "
        "dimensions from their size",
        static_cast<unsigned long long>(s.images_off_dimensions));
  if (s.images_as_bytes > 0)
    std::printf("; %llu named as JPEGs too small for one, written as bytes",
                static_cast<unsigned long long>(s.images_as_bytes));
  std::printf("; origin in %s\nreplay it: feedbench replay %s --source %s\n", kGenRecordName,
              printable(shell_quote(trace)).c_str(), printable(shell_quote(o.out)).c_str());
  return 0;
}

}  // namespace

int gen_main(int argc, char** argv) {
  std::string out, files_text, size_text, format_text = "bin", layout_text = "classes", classes_text = "10",
                                          shards_text = "4", seed_text = "0",
                                          max_files_text = std::to_string(kDefaultMaxGenFiles);
  std::string like_text, scale_text = "1", quality_text, bpp_text, pixels_text;
  bool force = false;
  po::options_description opts("options");
  opts.add_options()("help,h", "print this help")("out", po::value(&out)->value_name("DIR"),
                                                  "folder to write (created when missing)")(
      "files", po::value(&files_text)->value_name("N"),
      "number of files (records with --layout shards or tfrecord)")(
      "file-size", po::value(&size_text)->value_name("SIZE"),
      "bytes per file (record): 4KiB, or a range 64KiB..1MiB drawn per file from the seed")(
      "format", po::value(&format_text)->value_name("F"),
      "bin (pseudo-random bytes) or jpeg (real JPEG images, img_NNNNNN.jpg)  [bin]")(
      "jpeg-quality", po::value(&quality_text)->value_name("Q"),
      "with --format jpeg: the encoder's quality, 1 to 100  [95]")(
      "bytes-per-pixel", po::value(&bpp_text)->value_name("B"),
      "with --format jpeg: bytes a pixel; pixels follow from each size (ImageNet: 0.8)  [about 2.3]")(
      "jpeg-pixels", po::value(&pixels_text)->value_name("N|WxH"),
      "with --format jpeg: pixels an image, whatever its size (ImageNet: about 400x350)")(
      "layout", po::value(&layout_text)->value_name("L"),
      "classes (class_NNN/img_NNNNNN.bin), flat (file_NNNNNN.bin), shards or tfrecord  [classes]")(
      "classes", po::value(&classes_text)->value_name("K"), "class folders, --layout classes  [10]")(
      "shards", po::value(&shards_text)->value_name("K"), "shard files, --layout shards or tfrecord  [4]")(
      "like", po::value(&like_text)->value_name("PATH"),
      "a data set (folder, stage manifest) whose shape to copy, or a watch trace whose files to write")(
      "scale", po::value(&scale_text)->value_name("F"),
      "with --like: files and folders × F, 0 < F <= 1  [1]")("seed", po::value(&seed_text)->value_name("S"),
                                                             "seed: same seed, same data set  [0]")(
      "force", po::bool_switch(&force),
      "write into a non-empty folder (files of the same name are replaced)")(
      "max-files", po::value(&max_files_text)->value_name("N"),
      ("refuse to write more files than N  [" + std::to_string(kDefaultMaxGenFiles) + "]").c_str());
  po::variables_map vm;
  if (parse_command_line(argc, argv, opts, vm)) {
    std::cout << kUsage << "\noptions:\n" << options_help(opts);
    return 0;
  }
  const GenFormat format = parse_format(format_text);
  const JpegStyle style = jpeg_style(vm, format, quality_text, bpp_text, pixels_text);
  if (vm.count("scale") && !vm.count("like"))
    throw InputError("--scale: only with --like (it scales the real data set's files and folders)");
  if (vm.count("like")) {
    if (!vm.count("out")) throw InputError("--out is required (see feedbench gen --help)");
    const bool trace = like_is_trace(like_text);
    if (vm.count("scale") && trace)
      throw InputError("--scale: not with --like TRACE: a replay reads every file the job read");
    const char* contents = trace ? "it writes JPEGs where the job read them, pseudo-random bytes elsewhere"
                                 : "it writes pseudo-random bytes of the real sizes (bin)";
    for (const auto& [option, why] :
         {std::pair{"files", "the file count is the real data set's, times --scale"},
          {"file-size", "sizes are drawn from the real data set's"},
          {"layout", "the folders are shaped like the real data set's"},
          {"classes", "the folders are shaped like the real data set's"},
          {"shards", "the folders are shaped like the real data set's"},
          {"jpeg-quality", contents},
          {"bytes-per-pixel", contents},
          {"jpeg-pixels", contents}})
      if (vm.count(option)) throw InputError(std::string("--") + option + ": not with --like: " + why);
    if (format != GenFormat::kBin) throw InputError(std::string("--format: not with --like: ") + contents);
    GenOptions o;
    o.out = out;
    o.format = format;
    o.seed = parse_count(seed_text, "--seed");
    o.force = force;
    o.max_files = parse_count(max_files_text, "--max-files");
    if (trace) return gen_like_trace(o, like_text);
    return gen_like(o, like_text, parse_scale(scale_text));
  }
  if (format == GenFormat::kJpeg && !vm.count("file-size"))
    size_text = std::to_string(kDefaultJpegMinSize) + ".." + std::to_string(kDefaultJpegMaxSize);
  for (const char* required : {"out", "files", "file-size"})
    if (!vm.count(required) && !(format == GenFormat::kJpeg && std::string(required) == "file-size"))
      throw InputError(std::string("--") + required + " is required (see feedbench gen --help)");

  GenOptions o;
  o.out = out;
  o.files = parse_count(files_text, "--files");
  auto dots = size_text.find("..");
  if (dots == std::string::npos) {
    o.min_size = o.max_size = parse_size(size_text, "--file-size");
  } else {
    o.min_size = parse_size(size_text.substr(0, dots), "--file-size");
    o.max_size = parse_size(size_text.substr(dots + 2), "--file-size");
  }
  o.layout = parse_layout(layout_text);
  o.format = format;
  o.jpeg = style;
  o.classes = parse_count(classes_text, "--classes");
  o.shards = parse_count(shards_text, "--shards");
  o.seed = parse_count(seed_text, "--seed");
  o.force = force;
  o.max_files = parse_count(max_files_text, "--max-files");
  if (vm.count("classes") && o.layout != GenLayout::kClasses)
    throw InputError("--classes: only with --layout classes");
  if (vm.count("shards") && o.layout != GenLayout::kShards && o.layout != GenLayout::kTfrecord)
    throw InputError("--shards: only with --layout shards or tfrecord");

  GenSummary s = generate_with_progress(o);
  double mib = double(s.bytes) / (1024.0 * 1024.0);
  std::printf("wrote %llu files, %.*f MiB in %llu %s to %s (seed %llu)\n",
              static_cast<unsigned long long>(s.files), mib >= 1 ? 1 : 3, mib,
              static_cast<unsigned long long>(s.folders), s.folders == 1 ? "folder" : "folders",
              printable(out).c_str(), static_cast<unsigned long long>(o.seed));
  if (format == GenFormat::kJpeg && s.pixels > 0)
    std::printf("images: quality %d, %.2f bytes a pixel, %s pixels an image on average; style in %s\n",
                o.jpeg.quality, double(s.bytes) / double(s.pixels),
                format_count(double(s.pixels) / double(s.files)).c_str(), kGenRecordName);
  return 0;
}

}  // namespace feedbench
