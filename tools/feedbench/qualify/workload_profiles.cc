#include "workload_profiles.h"

#include <algorithm>
#include <array>

#include "feedbench/base/error.h"
#include "feedbench/loader/loader.h"

namespace feedbench {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

constexpr std::uint64_t kKiB = 1024, kMiB = 1024 * kKiB;

// The figures of MLPerf Storage v2.0's workload configs for the H100 (mlcommons/storage, the
// same in argonne-lcf/dlio_benchmark): batch_size, computation_time, metric.au, read_threads,
// record_length_bytes. docs/qualify.md cites each.
WorkloadProfile images_profile() {
  WorkloadProfile p;
  p.name = "images";
  p.like = "resnet50-like: ImageNet JPEGs, decoded and RandomResizedCrop(224)";
  p.source =
      "MLPerf Storage v2.0 resnet50_h100: batch 400, 0.224 s a step, AU 90%; "
      "images of 64-160 KiB at 0.8 bytes a pixel (ImageNet's ~110 KiB)";
  p.batch_size = 400;
  p.step = milliseconds(224);
  p.target_au = 0.90;
  p.workers = 4;
  p.prefetch = 2;
  p.samples = "files";
  p.transform = "random_resized_crop:224";
  p.layout = GenLayout::kClasses;
  p.format = GenFormat::kJpeg;
  p.min_size = 64 * kKiB;
  p.max_size = 160 * kKiB;
  p.default_max_accelerators = 2;
  return p;
}

WorkloadProfile volumes_profile() {
  WorkloadProfile p;
  p.name = "volumes";
  p.like = "unet3d-like: ~140 MiB arrays read whole";
  p.source =
      "MLPerf Storage v2.0 unet3d_h100: batch 7, 0.323 s a step, AU 90%, 4 read threads; "
      "files of 100-180 MiB (mean 140 MiB: the config's 146.6 MB)";
  p.batch_size = 7;
  p.step = milliseconds(323);
  p.target_au = 0.90;
  p.workers = 4;
  p.prefetch = 1;
  p.samples = "files";
  p.transform = "none";
  p.layout = GenLayout::kFlat;
  p.format = GenFormat::kBin;
  p.min_size = 100 * kMiB;
  p.max_size = 180 * kMiB;
  p.default_max_accelerators = 1;
  return p;
}

WorkloadProfile records_profile() {
  WorkloadProfile p;
  p.name = "records";
  p.like = "cosmoflow-like: TFRecord files of 2.7 MiB";
  p.source =
      "MLPerf Storage v2.0 cosmoflow_h100: batch 1, 3.5 ms a step, AU 70%, 4 read threads; "
      "one record of 2,828,486 bytes a file";
  p.batch_size = 1;
  p.step = microseconds(3500);
  p.target_au = 0.70;
  p.workers = 4;
  p.prefetch = 2;
  p.samples = "tfrecord";
  p.transform = "none";
  p.layout = GenLayout::kTfrecord;
  p.format = GenFormat::kBin;
  p.min_size = 2828486;
  p.max_size = 2828486;
  p.shards = 0;             // one record a file, as the config's num_samples_per_file 1
  p.min_epoch_steps = 144;  // 0.5 s of steps
  p.default_max_accelerators = 8;
  return p;
}

WorkloadProfile tokens_profile() {
  WorkloadProfile p;
  p.name = "tokens";
  p.like = "LLM pre-training: sequences of 8,192 int32 tokens from large shards";
  p.source =
      "Llama 3 8B on an H100 at 40% MFU (Meta's Llama 3 report: 38-43%): "
      "6 x 8.03e9 x 8192 FLOPs a sequence at 396 TFLOP/s, 1.0 s a step of 1 sequence";
  p.batch_size = 1;
  p.step = milliseconds(1000);
  p.target_au = 0.90;
  p.workers = 2;
  p.prefetch = 2;
  p.samples = "records:32KiB";
  p.transform = "none";
  p.layout = GenLayout::kShards;
  p.format = GenFormat::kBin;
  p.min_size = 32 * kKiB;
  p.max_size = 32 * kKiB;
  p.shards = 8;
  p.default_max_accelerators = 64;
  return p;
}

const std::array<WorkloadProfile, 4>& profiles() {
  static const std::array<WorkloadProfile, 4> all = {images_profile(), volumes_profile(), records_profile(),
                                                     tokens_profile()};
  return all;
}

}  // namespace

std::span<const WorkloadProfile> workload_profiles() { return profiles(); }

const WorkloadProfile& find_workload_profile(const std::string& name) {
  for (const WorkloadProfile& p : profiles())
    if (name == p.name) return p;
  throw InputError("--workload: unknown workload '" + name + "' (images, volumes, records or tokens)");
}

std::int64_t steps_to_judge(const WorkloadProfile& p) {
  return std::int64_t(p.prefetch) * p.workers +
         std::max<std::int64_t>(kMinMeasuredSteps, 2 * std::int64_t(p.workers));
}

std::int64_t epoch_steps(const WorkloadProfile& p) { return std::max(steps_to_judge(p), p.min_epoch_steps); }

std::uint64_t samples_for(const WorkloadProfile& p, int accelerators) {
  if (p.listing) return p.listing->files.size() * std::uint64_t(std::max(accelerators, 1));
  return std::uint64_t(epoch_steps(p)) * std::uint64_t(p.batch_size) *
         std::uint64_t(std::max(accelerators, 1));
}

std::string data_files_glob(const WorkloadProfile& p) {
  if (p.format == GenFormat::kJpeg) return "**/*.jpg";
  if (p.layout == GenLayout::kTfrecord) return "*.tfrecord";
  return p.layout == GenLayout::kClasses ? "**/*.bin" : "*.bin";
}

GenOptions gen_options_for(const WorkloadProfile& p, const std::string& out, std::uint64_t samples,
                           std::uint64_t seed) {
  GenOptions g;
  g.out = out;
  g.seed = seed;
  if (p.listing) {  // a trace's files, as gen --like TRACE writes them
    g.layout = GenLayout::kListed;
    g.listed = p.listing;
    g.files = p.listing->files.size();
    return g;
  }
  g.files = samples;
  g.min_size = p.min_size;
  g.max_size = p.max_size;
  g.layout = p.layout;
  g.format = p.format;
  g.seed = seed;
  if (p.layout == GenLayout::kClasses) g.classes = std::clamp<std::uint64_t>(samples / 1000, 1, 100);
  if (p.layout == GenLayout::kShards || p.layout == GenLayout::kTfrecord)
    g.shards = p.shards == 0 ? samples : std::min<std::uint64_t>(p.shards, samples);
  if (p.format == GenFormat::kJpeg) {
    g.jpeg.quality = 90;
    g.jpeg.bytes_per_pixel = 0.8;  // ImageNet's photographs (gen --help)
  }
  return g;
}

}  // namespace feedbench
