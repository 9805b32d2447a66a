// `feedbench verify --cache CACHE [--source SRC [--fingerprint content]] [--workers N]`:
// re-hashes every file of the cache's manifest from the device and reports missing, changed
// and extra files; with --source, checks the source selection still matches the manifest's
// (metadata) fingerprint, and with --fingerprint content also compares sampled blocks of each
// source file with its cached copy (an edit that kept size and mtime).
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <unistd.h>

#include "feedbench/dataset.h"
#include "feedbench/error.h"
#include "feedbench/manifest.h"
#include "feedbench/stager.h"
#include "feedbench/units.h"
#include "command_line.h"
#include "verbs.h"

namespace po = boost::program_options;

namespace feedbench {
namespace {

constexpr const char* kUsage =
    "usage: feedbench verify --cache CACHE [--source SRC [--fingerprint content]] [--workers N]\n"
    "\n"
    "Re-hashes every file listed in CACHE's manifest, reading from the device (not the page\n"
    "cache), and reports files missing, changed, or present but not in the manifest. With\n"
    "--source, also checks that the source selection (the manifest's --include globs) still\n"
    "has the fingerprint recorded when the cache was staged: a metadata fingerprint (names,\n"
    "sizes, mtimes). With --fingerprint content, it also reads the first, middle and last\n"
    "4 KiB of each source file and compares them with the cached copy, which finds an edit\n"
    "that kept the size and the mtime.\n"
    "\n"
    "exit codes: 0 everything matches, 1 something differs, 2 bad input (no complete manifest)\n"
    "\n"
    "examples:\n"
    "  feedbench verify --cache /local/nvme/cache\n"
    "  feedbench verify --cache /local/nvme/cache --source /mnt/nfs/imagenet\n"
    "  feedbench verify --cache /local/nvme/cache --source /mnt/nfs/imagenet --fingerprint content\n"
    "\n";


void list(const char* what, const std::vector<std::string>& paths) {
  constexpr std::size_t kShown = 50;
  for (std::size_t i = 0; i < paths.size() && i < kShown; ++i)
    std::printf("%s %s\n", what, paths[i].c_str());
  if (paths.size() > kShown) std::printf("%s ... and %zu more\n", what, paths.size() - kShown);
}

// RETURNS: "content differs from the cached copy: <path>" for each file of the source selection
// whose sampled blocks differ from its copy in the cache (files in only one of them are the
// listing checks' business).
std::vector<std::string> compare_sampled_content(const std::string& source_root,
                                                 const std::string& cache_root,
                                                 const std::vector<std::string>& include) {
  const FileSet source = scan_dataset(source_root, include);
  const FileSet cache = scan_dataset(cache_root, include);
  std::unordered_map<std::string_view, std::size_t> cached;
  for (std::size_t i = 0; i < cache.size(); ++i) cached.emplace(cache.relative_path(i), i);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < source.size(); ++i) {
    auto c = cached.find(source.relative_path(i));
    if (c == cached.end()) continue;
    if (sampled_content_digest(source, i) != sampled_content_digest(cache, c->second))
      out.push_back("content differs from the cached copy: " + std::string(source.relative_path(i)));
  }
  return out;
}

}  // namespace

int verify_main(int argc, char** argv) {
  VerifyOptions options;
  std::string fingerprint_kind = "metadata";
  po::options_description opts("options");
  opts.add_options()
      ("help,h", "print this help")
      ("cache", po::value(&options.cache_root)->value_name("CACHE"), "the cache folder to check")
      ("source", po::value(&options.source_root)->value_name("SRC"),
       "also check that this source still matches the manifest's fingerprint")
      ("fingerprint", po::value(&fingerprint_kind)->value_name("KIND"),
       "with --source: metadata (default: names, sizes, mtimes) or content (also compare the first, "
       "middle and last 4 KiB of each source file with its cached copy)")
      ("workers", po::value(&options.workers)->value_name("N"),
       "parallel readers (default: 4 on SSD, NVMe and virtual disks, 1 on a spinning disk)");
  po::variables_map vm;
  if (parse_command_line(argc, argv, opts, vm)) {
    std::cout << kUsage << opts << "\n";
    return 0;
  }
  if (!vm.count("cache")) throw InputError("--cache CACHE is required (see --help)");
  if (fingerprint_kind != "metadata" && fingerprint_kind != "content")
    throw InputError("--fingerprint: expected metadata or content, got '" + fingerprint_kind + "'");
  if (fingerprint_kind == "content" && !vm.count("source"))
    throw InputError("--fingerprint content: compares the source with the cache; give --source SRC");
  if (vm.count("workers") && options.workers < 1)
    throw InputError("--workers: expected a whole number of at least 1, got " +
                     std::to_string(options.workers));
  options.progress = ::isatty(STDERR_FILENO);
  StopOnSignals stop;
  options.stop = stop.flag();
  VerifyResult r = verify_cache(options);
  const bool content = fingerprint_kind == "content";
  if (content && !r.stopped_by_signal) {
    const std::optional<Manifest> m = read_manifest(options.cache_root);
    std::vector<std::string> differ =
        compare_sampled_content(options.source_root, options.cache_root, m ? m->include : std::vector<std::string>{});
    if (!differ.empty()) r.source_matches = false;
    r.source_differences.insert(r.source_differences.end(), differ.begin(), differ.end());
  }
  list("missing", r.missing);
  list("changed", r.changed);
  list("extra  ", r.extra);
  for (const std::string& e : r.errors) std::printf("error   %s\n", e.c_str());
  if (r.source_checked && !r.source_matches) list("source ", r.source_differences);
  if (r.stopped_by_signal) {
    std::printf("interrupted: %zu files checked\n", r.files_checked);
    return 128 + r.stopped_by_signal;
  }
  std::printf("%s: %zu files (%s) re-hashed from the device in %s: %zu missing, %zu changed, "
              "%zu extra%s\n",
              r.ok() ? "verified" : "MISMATCH", r.files_checked,
              format_size(double(r.bytes_checked)).c_str(), format_duration_ns(r.seconds * 1e9).c_str(),
              r.missing.size(), r.changed.size(), r.extra.size(),
              !r.source_checked ? "; source not checked (give --source)"
              : r.source_matches
                  ? (content ? "; source matches the manifest's metadata fingerprint (names, sizes, mtimes) "
                               "and the cache's sampled content (first, middle, last 4 KiB of each file)"
                             : "; source matches the manifest's metadata fingerprint (names, sizes, "
                               "mtimes; --fingerprint content also compares contents)")
                  : "; the SOURCE NO LONGER MATCHES the manifest: re-run feedbench stage");
  return r.ok() ? 0 : 1;
}

}  // namespace feedbench
