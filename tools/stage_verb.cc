// `feedbench stage --from SRC --to CACHE [--include GLOB]... [--workers N] [--label VERSION]
// [--prune] [--force]`:
// copies a selection to a local cache, proves every file by SHA-256 read back from the device,
// and writes the manifest last. Ctrl-C stops cleanly; a re-run resumes.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <unistd.h>

#include "feedbench/error.h"
#include "feedbench/manifest.h"
#include "feedbench/page_cache.h"
#include "feedbench/skew.h"
#include "feedbench/stager.h"
#include "feedbench/units.h"
#include "command_line.h"
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
    "examples:\n"
    "  feedbench stage --from /mnt/nfs/imagenet --to /local/nvme/cache --include 'val/**'\n"
    "  feedbench stage --from data --to /var/tmp/cache --label v2 --workers 8\n"
    "\n";


}  // namespace

int stage_main(int argc, char** argv) {
  StageOptions options;
  po::options_description opts("options");
  opts.add_options()
      ("help,h", "print this help")
      ("from", po::value(&options.source_root)->value_name("SRC"), "the source folder (read only)")
      ("to", po::value(&options.cache_root)->value_name("CACHE"), "the cache folder (created when missing)")
      ("include", po::value(&options.include)->value_name("GLOB")->composing(),
       "stage only files matching GLOB ('*' within a folder, '**' across); repeatable")
      ("workers", po::value(&options.workers)->value_name("N"),
       "parallel copies (default: 4 on SSD, NVMe and virtual disks, 1 on a spinning disk)")
      ("hot-set", po::value<std::string>()->value_name("F%"),
       "stage only the hottest F% of files, ranked as zipf:/hot_set: patterns rank them")
      ("seed", po::value<std::string>()->value_name("S"), "the ranking's seed for --hot-set: the run's seed  [42]")
      ("label", po::value(&options.label)->value_name("VERSION"),
       "the data version recorded in the manifest (default: fp-<source fingerprint>)")
      ("prune", po::bool_switch(&options.prune),
       "allow removing more than 10% of the cache's files (those that left the selection)")
      ("evict", "then evict the cache's files from the page cache, per file; without --from, only that")
      ("force", po::bool_switch(&options.force),
       "stage into a non-empty folder that is not a cache, beside its files (never removing them)");
  po::variables_map vm;
  if (parse_command_line(argc, argv, opts, vm)) {
    std::cout << kUsage << "\noptions:\n" << options_help(opts);
    return 0;
  }
  const bool evict_after = vm.count("evict") > 0;
  // The staged cache's files leave the page cache: the next cold round reads the device.
  auto evict_cache = [&](const std::vector<std::string>& include) {
    const FileSet files = scan_dataset(options.cache_root, include);
    const Residency before = measure_residency(files);
    const Residency after = evict(files);
    std::printf("evicted: %s of the cache was resident in the page cache, %s now (%.1f%%, %s)\n",
                format_size(double(before.resident_bytes)).c_str(),
                format_size(double(after.resident_bytes)).c_str(), after.fraction() * 100, after.method.c_str());
  };
  if (!vm.count("from") && evict_after && vm.count("to")) {
    std::string why;
    const std::optional<Manifest> m = read_manifest(options.cache_root, &why);
    if (!m) throw InputError("--evict without --from: " + options.cache_root + " has no complete manifest (" + why + ")");
    evict_cache(m->include);
    return 0;
  }
  if (!vm.count("from")) throw InputError("--from SRC is required (see --help)");
  if (!vm.count("to")) throw InputError("--to CACHE is required (see --help)");
  if (vm.count("workers") && options.workers < 1)
    throw InputError("--workers: expected a whole number of at least 1, got " +
                     std::to_string(options.workers));
  if (vm.count("seed") && !vm.count("hot-set")) throw InputError("--seed: only with --hot-set");
  if (vm.count("hot-set")) {
    const std::string text = vm["hot-set"].as<std::string>();
    Skew skew;
    try {
      skew = parse_skew("hot_set:" + text + ":100%", "--hot-set");
    } catch (const InputError&) {
      throw InputError("--hot-set: expected a percentage of the files above 0% and below 100%, such as 10%, got '" +
                       text + "'");
    }
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
    // The hot files become the selection's globs, each an exact path: the manifest, verify and
    // run's cache checks then treat the hot set as any other staged selection.
    const FileSet selection = scan_dataset(options.source_root, options.include);
    if (selection.empty()) throw InputError("--hot-set: the selection of " + options.source_root + " holds no files");
    options.include = hot_set_paths(selection, skew.hot_files, seed);
    for (const std::string& path : options.include)
      if (path.find_first_of("*?[\\") != std::string::npos)
        throw InputError("--hot-set: the hot file '" + path + "' has a glob character in its name; it cannot be "
                         "listed as an exact --include path");
    std::fprintf(stderr, "stage: hot set: %zu of %zu files (%s, seed %llu)\n", options.include.size(),
                 selection.size(), text.c_str(), static_cast<unsigned long long>(seed));
  }
  options.progress = ::isatty(STDERR_FILENO);
  StageResult r;
  {
    StopOnSignals stop;
    options.stop = stop.flag();
    r = stage(options);
  }

  for (const std::string& rel : r.removed)
    std::fprintf(stderr, "feedbench stage: removed %s (no longer in the selection)\n", rel.c_str());
  constexpr std::size_t kShown = 20;
  for (std::size_t i = 0; i < r.errors.size() && i < kShown; ++i)
    std::fprintf(stderr, "feedbench stage: error: %s\n", r.errors[i].c_str());
  if (r.errors.size() > kShown)
    std::fprintf(stderr, "feedbench stage: ... and %zu more errors\n", r.errors.size() - kShown);

  const double rate = r.seconds > 0 ? double(r.bytes_copied) / r.seconds : 0;
  std::printf("%zu files selected (%s): copied %zu, skipped %zu (already in place), removed %zu; "
              "%s copied in %s, %s\n",
              r.files_selected, format_size(double(r.bytes_selected)).c_str(), r.files_copied,
              r.files_skipped, r.files_removed, format_size(double(r.bytes_copied)).c_str(),
              format_duration_ns(r.seconds * 1e9).c_str(), format_rate(rate).c_str());
  if (r.stopped_by_signal) {
    std::printf("interrupted by %s: no manifest written; run the same command again to resume\n",
                r.stopped_by_signal == SIGINT ? "SIGINT" : "SIGTERM");
  } else if (r.manifest_written) {
    std::printf("cache ready: label %s, source fingerprint %s, manifest %s/MANIFEST.sha256\n",
                r.label.c_str(), r.source_fingerprint.substr(0, 12).c_str(), options.cache_root.c_str());
  } else {
    std::printf("staging failed: no manifest written (%zu error%s above); fix and run the same "
                "command again to resume\n", r.errors.size(), r.errors.size() == 1 ? "" : "s");
  }
  if (evict_after && r.manifest_written) evict_cache(options.include);
  std::fflush(stdout);
  return r.exit_code();
}

}  // namespace feedbench
