// `feedbench gen`: writes a deterministic synthetic data set (harness/generator.cc).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include <boost/program_options.hpp>

#include "feedbench/error.h"
#include "feedbench/generator.h"
#include "feedbench/units.h"
#include "command_line.h"
#include "verbs.h"

namespace po = boost::program_options;

namespace feedbench {
namespace {

constexpr const char* kUsage =
    "usage: feedbench gen --out DIR --files N --file-size SIZE|MIN..MAX [options]\n"
    "\n"
    "Writes a deterministic synthetic data set: same seed, same names, sizes and bytes.\n"
    "Contents are incompressible pseudo-random bytes, or with --format jpeg real JPEG images\n"
    "(noisy photographs' bytes per pixel, a few hundred pixels a side, about the drawn size;\n"
    "--file-size defaults to 64KiB..512KiB). Refuses a non-empty DIR unless --force,\n"
    "and, before writing anything, more files than --max-files or more bytes than DIR's free space.\n"
    "--layout shards: fixed-size records back to back (the loader's samples records:SIZE);\n"
    "--layout tfrecord: TensorFlow's TFRecord format (length, masked CRC-32C of it, data, masked\n"
    "CRC-32C of the data), --files records of --file-size each over --shards shards (samples tfrecord).\n"
    "\n"
    "examples:\n"
    "  feedbench gen --out /var/tmp/imagenet-mini --files 20000 --file-size 64KiB..256KiB \\\n"
    "                --layout classes --classes 100 --seed 7\n"
    "  feedbench gen --out /var/tmp/jpegs --files 2000 --format jpeg --classes 20 --seed 7\n"
    "  feedbench gen --out /var/tmp/shards --files 100000 --file-size 4KiB --layout shards --shards 8\n"
    "  feedbench gen --out /var/tmp/tfrecords --files 20000 --file-size 16KiB..256KiB --layout tfrecord --shards 16\n"
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
               static_cast<unsigned long long>(p.files_done),
               static_cast<unsigned long long>(p.files_total), format_size(double(p.bytes_done)).c_str(),
               format_size(double(p.bytes_total)).c_str(), pct, format_rate(rate).c_str(),
               s > 0 ? double(p.files_done) / s : 0.0);
  std::fflush(stderr);
}

}  // namespace

int gen_main(int argc, char** argv) {
  std::string out, files_text, size_text, format_text = "bin", layout_text = "classes", classes_text = "10",
                                         shards_text = "4", seed_text = "0",
                                         max_files_text = std::to_string(kDefaultMaxGenFiles);
  bool force = false;
  po::options_description opts("options");
  opts.add_options()
      ("help,h", "print this help")
      ("out", po::value(&out)->value_name("DIR"), "folder to write (created when missing)")
      ("files", po::value(&files_text)->value_name("N"), "number of files (records with --layout shards or tfrecord)")
      ("file-size", po::value(&size_text)->value_name("SIZE"),
       "bytes per file (record): 4KiB, or a range 64KiB..1MiB drawn per file from the seed")
      ("format", po::value(&format_text)->value_name("F"),
       "bin (pseudo-random bytes) or jpeg (real JPEG images, img_NNNNNN.jpg)  [bin]")
      ("layout", po::value(&layout_text)->value_name("L"),
       "classes (class_NNN/img_NNNNNN.bin), flat (file_NNNNNN.bin), shards or tfrecord  [classes]")
      ("classes", po::value(&classes_text)->value_name("K"), "class folders, --layout classes  [10]")
      ("shards", po::value(&shards_text)->value_name("K"), "shard files, --layout shards or tfrecord  [4]")
      ("seed", po::value(&seed_text)->value_name("S"), "seed: same seed, same data set  [0]")
      ("force", po::bool_switch(&force), "write into a non-empty folder (files of the same name are replaced)")
      ("max-files", po::value(&max_files_text)->value_name("N"),
       ("refuse to write more files than N  [" + std::to_string(kDefaultMaxGenFiles) + "]").c_str());
  po::variables_map vm;
  if (parse_command_line(argc, argv, opts, vm)) {
    std::cout << kUsage << "\noptions:\n" << options_help(opts);
    return 0;
  }
  const GenFormat format = parse_format(format_text);
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
  o.classes = parse_count(classes_text, "--classes");
  o.shards = parse_count(shards_text, "--shards");
  o.seed = parse_count(seed_text, "--seed");
  o.force = force;
  o.max_files = parse_count(max_files_text, "--max-files");
  if (vm.count("classes") && o.layout != GenLayout::kClasses)
    throw InputError("--classes: only with --layout classes");
  if (vm.count("shards") && o.layout != GenLayout::kShards && o.layout != GenLayout::kTfrecord)
    throw InputError("--shards: only with --layout shards or tfrecord");

  // Progress on a terminal only: CI logs stay clean.
  std::function<void(const GenProgress&)> progress;
  auto start = std::chrono::steady_clock::now();
  bool tty = ::isatty(STDERR_FILENO) != 0;
  if (tty) progress = [start](const GenProgress& p) { print_progress(p, start); };
  GenSummary s = generate_dataset(o, progress);
  if (tty) std::fprintf(stderr, "\n");
  double mib = double(s.bytes) / (1024.0 * 1024.0);
  std::printf("wrote %llu files, %.*f MiB in %llu %s to %s (seed %llu)\n",
              static_cast<unsigned long long>(s.files), mib >= 1 ? 1 : 3, mib,
              static_cast<unsigned long long>(s.folders), s.folders == 1 ? "folder" : "folders", out.c_str(),
              static_cast<unsigned long long>(o.seed));
  return 0;
}

}  // namespace feedbench
