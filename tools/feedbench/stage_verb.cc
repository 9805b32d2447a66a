// `feedbench stage --from SRC --to CACHE [--include GLOB]... [--workers N] [--label VERSION]
// [--prune] [--force]`:
// copies a selection to a local cache, proves every file by SHA-256 read back from the device,
// and writes the manifest last. Ctrl-C stops cleanly; a re-run resumes.
#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>
#include <boost/program_options.hpp>

#include "benchmarks/cluster_launch.h"
#include "command_line.h"
#include "feedbench/base/error.h"
#include "feedbench/base/text.h"
#include "feedbench/base/units.h"
#include "feedbench/cache/manifest.h"
#include "feedbench/cache/stager.h"
#include "feedbench/cluster/cluster.h"
#include "feedbench/io/page_cache.h"
#include "feedbench/io/skew.h"
#include "verbs.h"

namespace po = boost::program_options;

namespace feedbench {
namespace {

constexpr const char* kUsage =
    "usage: feedbench stage --from SRC --to CACHE [--include GLOB]... [--workers N] [--label VERSION]\n"
    "                       [--prune] [--force] [--evict]\n"
    "       feedbench stage --evict --to CACHE\n"
    "\n"
    "Copies the selected files of SRC to CACHE keeping relative paths and modification times.\n"
    "Each source file is read once; its SHA-256 is computed on that read. Each copy is flushed,\n"
    "read back from the device and compared before it takes its real name. When every file is\n"
    "in place, CACHE/MANIFEST.sha256 (for `sha256sum -c`) and CACHE/feedbench-manifest.json are\n"
    "written, last. Re-running resumes: files in place are skipped, changed ones copied again,\n"
    "files of ours no longer selected removed. Ctrl-C stops cleanly (no manifest; the next run\n"
    "resumes).\n"
    "\n"
    "feedbench removes only files it provably wrote: those its feedbench-manifest.json (or the\n"
    "journal of an interrupted stage) lists. Refused (exit 2, nothing changed): a cache that is\n"
    "the source, inside it or around it (by device and inode: symlinks and bind mounts count); a\n"
    "selection of no files; a non-empty folder that is not a cache (unless --force); a file it did\n"
    "not write where the selection goes; removing more than 10% of a cache's files (unless\n"
    "--prune).\n"
    "\n"
    "exit codes: 0 staged, 1 failed (no space, I/O error, mismatch), 2 bad input (see above;\n"
    "a symlink out of the source), 130/143 interrupted\n"
    "\n"
    "Under mpirun with one rank per node (-npernode 1) each node stages its own cache from the\n"
    "shared source, with its own manifest, and rank 0 prints one summary, a line per host; the\n"
    "exit code is the first failing host's, named. Two ranks on one host are refused.\n"
    "\n"
    "examples:\n"
    "  feedbench stage --from /mnt/nfs/imagenet --to /local/nvme/cache --include 'val/**'\n"
    "  feedbench stage --from data --to /var/tmp/cache --label v2 --workers 8\n"
    "  mpirun -npernode 1 --hostfile nodes feedbench stage --from /mnt/lustre/imagenet --to /nvme/cache\n"
    "\n";

// One host's stage, as every rank hands it to rank 0 (a plain struct).
struct HostStage {
  std::uint64_t files_selected = 0, files_copied = 0, files_skipped = 0, files_removed = 0;
  std::uint64_t bytes_selected = 0, bytes_copied = 0, errors = 0;
  double seconds = 0;
  std::int32_t exit_code = 0;
  std::uint8_t staged = 0;  // ran to its end (a result), rather than refused before
  std::uint8_t manifest_written = 0;
  FixedText<600> error;    // the refusal, or the first error
  FixedText<300> warning;  // the first warning (source and cache on one device)
  FixedText<300> cache_root;
  FixedText<100> label;
};

int stage_here(int argc, char** argv, HostStage* gathered);

// RETURNS: why the ranks cannot stage, "" when each is on a host of its own: two ranks of one
// host would stage the same cache folder at once.
std::string ranks_sharing_a_host(const Cluster& cluster) {
  for (int r = 1; r < cluster.size(); ++r)
    for (int q = 0; q < r; ++q)
      if (cluster.host_of_rank()[std::size_t(r)] == cluster.host_of_rank()[std::size_t(q)])
        return "ranks " + std::to_string(q) + " and " + std::to_string(r) + " are both on host " +
               cluster.host_names()[std::size_t(cluster.host_of_rank()[std::size_t(r)])] +
               ": stage across ranks takes one rank per node (mpirun -npernode 1), as each node stages its "
               "own cache";
  return "";
}

// RETURNS: one host's line of the summary after its padded name: its figures, or why it failed.
std::string host_stage_text(const HostStage& h) {
  if (!h.staged) return "FAILED: " + h.error.str();
  const double rate = h.seconds > 0 ? double(h.bytes_copied) / h.seconds : 0;
  char text[512];
  std::snprintf(
      text, sizeof text, "%llu files (%s): copied %llu, skipped %llu, removed %llu; %s in %s, %s; ",
      static_cast<unsigned long long>(h.files_selected), format_size(double(h.bytes_selected)).c_str(),
      static_cast<unsigned long long>(h.files_copied), static_cast<unsigned long long>(h.files_skipped),
      static_cast<unsigned long long>(h.files_removed), format_size(double(h.bytes_copied)).c_str(),
      format_duration_ns(h.seconds * 1e9).c_str(), format_rate(rate).c_str());
  std::string line = text;
  line += h.manifest_written ? "verified, label " + h.label.str() + ", " + h.cache_root.str()
                             : "FAILED, no manifest";
  if (h.errors > 0)
    line += " (" + std::to_string(h.errors) + (h.errors == 1 ? " error: " : " errors, the first: ") +
            h.error.str() + ")";
  return line;
}

// Rank 0 prints every host's stage, a line each, and the hosts that failed.
// RETURNS: the first failing host's exit code, 0 when every host staged.
int print_host_stages(const Cluster& cluster, const std::vector<HostStage>& all) {
  std::printf("stage across %d hosts (%s):\n", cluster.size(), cluster.implementation().c_str());
  std::size_t width = 4;
  for (int r = 0; r < cluster.size(); ++r)
    width = std::max(width, cluster.host_names()[std::size_t(cluster.host_of_rank()[std::size_t(r)])].size());
  std::vector<std::string> failed;
  int rc = 0;
  std::uint64_t files = 0, bytes = 0;
  for (std::size_t r = 0; r < all.size(); ++r) {
    const HostStage& h = all[r];
    const std::string host = cluster.host_names()[std::size_t(cluster.host_of_rank()[r])];
    const std::string line = "  " + host + std::string(width - host.size(), ' ') + "  " + host_stage_text(h);
    if (h.staged) {
      files += h.files_selected;
      bytes += h.bytes_selected;
    }
    std::printf("%s\n", printable(line).c_str());
    if (!h.warning.str().empty())
      std::printf("  %s  warning: %s\n", std::string(width, ' ').c_str(), printable(h.warning.str()).c_str());
    if (h.exit_code != 0) {
      failed.push_back(host + " (rank " + std::to_string(r) + ")");
      if (rc == 0) rc = h.exit_code;
    }
  }
  if (failed.empty()) {
    std::printf("every host staged and verified its cache: %llu files, %s in all\n",
                static_cast<unsigned long long>(files), format_size(double(bytes)).c_str());
  } else {
    std::string names;
    for (std::size_t i = 0; i < failed.size(); ++i) names += (i ? ", " : "") + failed[i];
    std::fflush(stdout);
    std::fprintf(stderr, "feedbench stage: %zu of %d hosts failed: %s\n", failed.size(), cluster.size(),
                 printable(names).c_str());
  }
  std::fflush(stdout);
  return rc;
}

// RETURNS: the exit code of a stage across ranks, one per node, every host's stage gathered
// into one summary printed by rank 0: the first failing host's code (0 when all staged).
int stage_across_ranks(int argc, char** argv, Cluster& cluster) {
  HostStage mine;
  const std::string crowded = ranks_sharing_a_host(cluster);
  if (!crowded.empty()) {
    mine.exit_code = 2;
    mine.error.set(crowded);
  } else {
    try {
      mine.exit_code = stage_here(argc, argv, &mine);
    } catch (const std::exception&) {
      const VerbFailure f = verb_failure(std::current_exception(), "stage");
      mine.exit_code = f.exit_code;
      mine.error.set(f.message());
    }
  }
  const std::vector<HostStage> all = all_gather(cluster, mine);
  // Every rank ends with the same code, so mpirun's is the run's.
  int first_failed = 0;
  bool any_staged = false;
  for (const HostStage& h : all) {
    if (first_failed == 0) first_failed = h.exit_code;
    any_staged |= h.staged != 0;
  }
  if (!cluster.is_root()) return first_failed;
  if (!crowded.empty()) throw InputError(crowded);
  if (!any_staged && first_failed == 0) return 0;  // --help, or --evict alone
  return print_host_stages(cluster, all);
}

}  // namespace

int stage_main(int argc, char** argv) {
  std::unique_ptr<Cluster> cluster = start_cluster(&argc, &argv);
  if (cluster->size() == 1) return stage_here(argc, argv, nullptr);
  // Rank 0 alone prints: the others' figures and reasons reach it in the gather.
  if (!cluster->is_root()) {
    silence_output();
  }
  return stage_across_ranks(argc, argv, *cluster);
}

namespace {

// RETURNS: stage's options, each parsed into its field of `options` (--hot-set, --seed and
// --evict into the variables map only).
po::options_description describe_options(StageOptions& options) {
  po::options_description opts("options");
  opts.add_options()("help,h", "print this help")("from", po::value(&options.source_root)->value_name("SRC"),
                                                  "the source folder (read only)")(
      "to", po::value(&options.cache_root)->value_name("CACHE"), "the cache folder (created when missing)")(
      "include", po::value(&options.include)->value_name("GLOB")->composing(),
      "stage only files matching GLOB ('*' within a folder, '**' across); repeatable")(
      "workers", po::value(&options.workers)->value_name("N"),
      "parallel copies (default: 4 on SSD, NVMe and virtual disks, 1 on a spinning disk)")(
      "hot-set", po::value<std::string>()->value_name("F%"),
      "stage only the hottest F% of files, ranked as zipf:/hot_set: patterns rank them")(
      "seed", po::value<std::string>()->value_name("S"),
      "the ranking's seed for --hot-set: the run's seed  [42]")(
      "label", po::value(&options.label)->value_name("VERSION"),
      "the data version recorded in the manifest (default: fp-<source fingerprint>)")(
      "prune", po::bool_switch(&options.prune),
      "allow removing more than 10% of the cache's files (those that left the selection)")(
      "evict", "then evict the cache's files from the page cache, per file; without --from, only that")(
      "force", po::bool_switch(&options.force),
      "stage into a non-empty folder that is not a cache, beside its files (never removing them)");
  return opts;
}

// The staged cache's files leave the page cache: the next cold round reads the device.
void evict_cache(const std::string& cache_root, const std::vector<std::string>& include) {
  const FileSet files = scan_dataset(cache_root, include);
  const Residency before = measure_residency(files);
  const Residency after = evict(files);
  std::printf("evicted: %s of the cache was resident in the page cache, %s now (%.1f%%, %s)\n",
              format_size(double(before.resident_bytes)).c_str(),
              format_size(double(after.resident_bytes)).c_str(), after.fraction() * 100,
              after.method.c_str());
}

// A cache just staged is mostly in the page cache (its copy and read-back went through it): a
// job or run started now reads it from memory, which is said, with how to measure the disk.
void say_residency(const std::string& cache_root, const std::vector<std::string>& include) {
  const FileSet files = scan_dataset(cache_root, include);
  const Residency r = measure_residency(files);
  const std::string advice = r.fraction() >= 0.5
                                 ? ": a job run now reads it from memory; `feedbench stage --evict --to " +
                                       shell_quote(cache_root) + "` first to measure the disk"
                                 : "";
  std::printf("resident in the page cache now: %s of %s (%.1f%%, %s)%s\n",
              format_size(double(r.resident_bytes)).c_str(), format_size(double(r.total_bytes)).c_str(),
              r.fraction() * 100, r.method.c_str(), printable(advice).c_str());
}

// RETURNS: --seed, the hot set's ranking seed (42 without it). Throws InputError naming --seed.
std::uint64_t parse_seed(const po::variables_map& vm) {
  std::uint64_t seed = 42;
  if (vm.count("seed")) {
    const std::string st = vm["seed"].as<std::string>();
    std::size_t used = 0;
    try {
      if (!st.empty() && st[0] != '-') seed = std::stoull(st, &used, 10);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != st.size()) throw InputError("--seed: expected a whole number, got '" + st + "'");
  }
  return seed;
}

// --hot-set F%: the hottest files become the selection's globs, each an exact path: the
// manifest, verify and run's cache checks then treat the hot set as any other staged selection.
void choose_hot_set(const po::variables_map& vm, StageOptions& options) {
  const std::string text = vm["hot-set"].as<std::string>();
  Skew skew;
  try {
    skew = parse_skew("hot_set:" + text + ":100%", "--hot-set");
  } catch (const InputError&) {
    throw InputError(
        "--hot-set: expected a percentage of the files above 0% and below 100%, such as 10%, got '" + text +
        "'");
  }
  const std::uint64_t seed = parse_seed(vm);
  const FileSet selection = scan_dataset(options.source_root, options.include);
  if (selection.empty())
    throw InputError("--hot-set: the selection of " + options.source_root + " holds no files");
  options.hot_set = HotSetSpec{text, seed, options.include};
  options.include = hot_set_paths(selection, skew.hot_files, seed);
  for (const std::string& path : options.include)
    if (path.find_first_of("*?[\\") != std::string::npos)
      throw InputError("--hot-set: the hot file '" + path +
                       "' has a glob character in its name; it cannot be "
                       "listed as an exact --include path");
  std::fprintf(stderr, "stage: hot set: %zu of %zu files (%s, seed %llu)\n", options.include.size(),
               selection.size(), text.c_str(), static_cast<unsigned long long>(seed));
}

// Across ranks: this host's figures, as rank 0 prints them in its line of the summary.
void gather_host_stage(const StageResult& r, const StageOptions& options, HostStage& h) {
  h.staged = 1;
  h.files_selected = r.files_selected;
  h.files_copied = r.files_copied;
  h.files_skipped = r.files_skipped;
  h.files_removed = r.files_removed;
  h.bytes_selected = r.bytes_selected;
  h.bytes_copied = r.bytes_copied;
  h.seconds = r.seconds;
  h.manifest_written = r.manifest_written ? 1 : 0;
  h.errors = r.errors.size();
  if (!r.errors.empty()) h.error.set(r.errors.front());
  if (!r.warnings.empty()) h.warning.set(r.warnings.front());
  if (r.stopped_by_signal)
    h.error.set(r.stopped_by_signal == SIGINT ? "interrupted by SIGINT" : "interrupted by SIGTERM");
  h.cache_root.set(options.cache_root);
  h.label.set(r.label);
}

// One process: what the stage removed and its errors on stderr, its figures and outcome on stdout.
void print_stage_result(const StageResult& r, const StageOptions& options) {
  for (const std::string& rel : r.removed)
    std::fprintf(stderr, "feedbench stage: removed %s (no longer in the selection)\n",
                 printable(rel).c_str());
  constexpr std::size_t kShown = 20;
  for (std::size_t i = 0; i < r.errors.size() && i < kShown; ++i)
    std::fprintf(stderr, "feedbench stage: error: %s\n", printable(r.errors[i]).c_str());
  if (r.errors.size() > kShown)
    std::fprintf(stderr, "feedbench stage: ... and %zu more errors\n", r.errors.size() - kShown);

  const double rate = r.seconds > 0 ? double(r.bytes_copied) / r.seconds : 0;
  std::printf(
      "%zu files selected (%s): copied %zu, skipped %zu (already in place), removed %zu; "
      "%s copied in %s, %s\n",
      r.files_selected, format_size(double(r.bytes_selected)).c_str(), r.files_copied, r.files_skipped,
      r.files_removed, format_size(double(r.bytes_copied)).c_str(),
      format_duration_ns(r.seconds * 1e9).c_str(), format_rate(rate).c_str());
  if (r.stopped_by_signal) {
    std::printf("interrupted by %s: no manifest written; run the same command again to resume\n",
                r.stopped_by_signal == SIGINT ? "SIGINT" : "SIGTERM");
  } else if (r.manifest_written) {
    std::printf("cache ready: label %s, source fingerprint %s, manifest %s/MANIFEST.sha256\n",
                printable(r.label).c_str(), r.source_fingerprint.substr(0, 12).c_str(),
                printable(options.cache_root).c_str());
  } else {
    std::printf(
        "staging failed: no manifest written (%s above); fix and run the same "
        "command again to resume\n",
        plural(r.errors.size(), "error", "errors").c_str());
  }
}

// Stages on this host. `gathered`: across ranks, where this host's figures go instead of the
// closing lines (nullptr: one process, printing them).
int stage_here(int argc, char** argv, HostStage* gathered) {
  StageOptions options;
  const po::options_description opts = describe_options(options);
  po::variables_map vm;
  if (parse_command_line(argc, argv, opts, vm)) {
    std::cout << kUsage << "\noptions:\n" << options_help(opts);
    return 0;
  }
  const bool evict_after = vm.count("evict") > 0;
  if (!vm.count("from") && evict_after && vm.count("to")) {
    std::string why;
    const std::optional<Manifest> m = read_manifest(options.cache_root, &why);
    if (!m)
      throw InputError("--evict without --from: " + options.cache_root + " has no complete manifest (" + why +
                       ")");
    evict_cache(options.cache_root, m->include);
    return 0;
  }
  if (!vm.count("from")) throw InputError("--from SRC is required (see --help)");
  if (!vm.count("to")) throw InputError("--to CACHE is required (see --help)");
  if (vm.count("workers") && options.workers < 1)
    throw InputError("--workers: expected a whole number of at least 1, got " +
                     std::to_string(options.workers));
  if (vm.count("seed") && !vm.count("hot-set")) throw InputError("--seed: only with --hot-set");
  if (vm.count("hot-set")) choose_hot_set(vm, options);
  options.progress = !gathered && interactive_terminal(STDERR_FILENO);
  options.quiet = gathered != nullptr;  // its warnings go into the host's line of the summary
  StageResult r;
  {
    StopOnSignals stop;
    options.stop = stop.flag();
    r = stage(options);
  }
  if (gathered) {
    gather_host_stage(r, options, *gathered);
    if (evict_after && r.manifest_written) evict_cache(options.cache_root, options.include);
    return r.exit_code();
  }
  print_stage_result(r, options);
  if (evict_after && r.manifest_written) evict_cache(options.cache_root, options.include);
  else if (r.manifest_written) say_residency(options.cache_root, options.include);
  std::fflush(stdout);
  return r.exit_code();
}

}  // namespace

}  // namespace feedbench
