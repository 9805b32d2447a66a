// `feedbench verify --cache CACHE [--source SRC [--fingerprint content|full]] [--workers N]`:
// re-hashes every file of the cache's manifest from the device and reports missing, changed
// and extra files; with --source, checks the source selection still matches the manifest's
// (metadata) fingerprint; --fingerprint content also compares sampled blocks of each source
// file with its cached copy, --fingerprint full re-hashes every byte of each source file
// against the manifest's SHA-256 (either finds an edit that kept size and mtime; full, any).
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <unistd.h>
#include <boost/program_options.hpp>

#include "command_line.h"
#include "feedbench/base/error.h"
#include "feedbench/base/text.h"
#include "feedbench/base/units.h"
#include "feedbench/cache/manifest.h"
#include "feedbench/cache/stager.h"
#include "feedbench/dataset/dataset.h"
#include "feedbench/io/page_cache.h"
#include "verbs.h"

namespace po = boost::program_options;

namespace feedbench {
namespace {

constexpr const char* kUsage =
    "usage: feedbench verify --cache CACHE [--source SRC [--fingerprint content|full]] [--label VERSION] "
    "[--workers N]\n"
    "\n"
    "Re-hashes every file listed in CACHE's manifest, reading from the device (not the page\n"
    "cache), and reports files missing, changed, or present but not in the manifest. With\n"
    "--source, also checks that the source selection (the manifest's --include globs) still\n"
    "has the fingerprint recorded when the cache was staged: a metadata fingerprint (names,\n"
    "sizes, mtimes). With --fingerprint content, it also samples each source file: its first,\n"
    "middle and last 4 KiB, compared with the cached copy's, which finds most edits that kept\n"
    "the size and the mtime (not one between the samples). With --fingerprint full, it re-hashes\n"
    "every byte of each source file the manifest lists, from the device, and compares it with\n"
    "the SHA-256 the file was staged with: any changed byte is found (it reads the whole source).\n"
    "\n"
    "With --label, also checks that the cache holds that data version.\n"
    "\n"
    "It says what is stale (cache copies changed or missing, source files changed, added or\n"
    "removed since staging, source files modified after the manifest was written, another\n"
    "label) and prints the command that fixes it, and how much of the cache is resident in the\n"
    "page cache now (measured before re-hashing, which reads from the device).\n"
    "\n"
    "exit codes: 0 everything matches, 1 something differs, 2 bad input (no complete manifest)\n"
    "\n"
    "examples:\n"
    "  feedbench verify --cache /local/nvme/cache\n"
    "  feedbench verify --cache /local/nvme/cache --source /mnt/nfs/imagenet\n"
    "  feedbench verify --cache /local/nvme/cache --source /mnt/nfs/imagenet --fingerprint content\n"
    "  feedbench verify --cache /local/nvme/cache --source /mnt/nfs/imagenet --fingerprint full\n"
    "\n";

void list(const char* what, const std::vector<std::string>& paths) {
  constexpr std::size_t kShown = 50;
  for (std::size_t i = 0; i < paths.size() && i < kShown; ++i)
    std::printf("%s %s\n", what, printable(paths[i]).c_str());
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

// RETURNS: seconds since the epoch of "YYYY-MM-DDTHH:MM:SSZ", or -1.
std::int64_t parse_utc(const std::string& text) {
  std::tm tm{};
  if (std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec) != 6)
    return -1;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return std::int64_t(timegm(&tm));
}

std::string residency_line(const Residency& r) {
  char pct[32];
  std::snprintf(pct, sizeof pct, "%.1f%%", r.fraction() * 100);
  return format_size(double(r.resident_bytes)) + " of " + format_size(double(r.total_bytes)) + " (" + pct +
         ", " + r.method + ")";
}

// RETURNS: verify's options, each parsed into its field of `options` or `fingerprint_kind`
// (--label into the variables map only).
po::options_description describe_options(VerifyOptions& options, std::string& fingerprint_kind) {
  po::options_description opts("options");
  opts.add_options()("help,h", "print this help")(
      "cache", po::value(&options.cache_root)->value_name("CACHE"), "the cache folder to check")(
      "source", po::value(&options.source_root)->value_name("SRC"),
      "also check that this source still matches the manifest's fingerprint")(
      "fingerprint", po::value(&fingerprint_kind)->value_name("KIND"),
      "with --source: metadata (default), content (samples of each file) or full (every byte)")(
      "label", po::value<std::string>()->value_name("VERSION"),
      "also check that the cache holds this data version (the manifest's label)")(
      "workers", po::value(&options.workers)->value_name("N"),
      "parallel readers (default: 4 on SSD, NVMe and virtual disks, 1 on a spinning disk)");
  return opts;
}

// The files that differ, a line each.
void print_differences(const VerifyResult& r) {
  list("missing", r.missing);
  list("changed", r.changed);
  list("extra  ", r.extra);
  for (const std::string& e : r.errors) std::printf("error   %s\n", printable(e).c_str());
  if (r.source_checked && !r.source_matches) list("source ", r.source_differences);
}

// RETURNS: what a source that matched was checked for, by --fingerprint `kind`.
std::string source_match_text(const VerifyResult& r, const std::string& kind) {
  if (kind == "full")
    return "; source matches the manifest's metadata fingerprint (names, sizes, mtimes) and every byte: " +
           std::to_string(r.source_files_hashed) + " files (" + format_size(double(r.source_bytes_hashed)) +
           ") re-hashed against the manifest's SHA-256";
  if (kind == "content")
    return "; source matches the manifest's metadata fingerprint (names, sizes, mtimes) and the cache's "
           "sampled content (first, middle, last 4 KiB of each file; --fingerprint full compares every byte)";
  return "; source matches the manifest's metadata fingerprint (names, sizes, mtimes; --fingerprint "
         "content samples the contents, full re-hashes them)";
}

// The verdict line: what was re-hashed, what differs, and what the source check found.
void print_verdict(const VerifyResult& r, const std::string& kind) {
  std::printf("%s: %zu files (%s) re-hashed from the device in %s: %zu missing, %zu changed, %zu extra%s\n",
              r.ok() ? "verified" : "MISMATCH", r.files_checked, format_size(double(r.bytes_checked)).c_str(),
              format_duration_ns(r.seconds * 1e9).c_str(), r.missing.size(), r.changed.size(), r.extra.size(),
              !r.source_checked ? "; source not checked (give --source)"
              : r.source_matches
                  ? source_match_text(r, kind).c_str()
                  : "; the SOURCE NO LONGER MATCHES the manifest: stage again (the command below)");
}

// What is stale, each a line after "stale: ".
struct Staleness {
  std::vector<std::string> lines;
  bool removed_from_source = false;  // stage must be let remove their copies (--prune)
};

// RETURNS: what is stale: another label than `want_label`, source files changed since staging
// or modified after the manifest was written (with --source), cache copies missing or changed.
Staleness find_stale(const VerifyOptions& options, const VerifyResult& r, const Manifest& m,
                     const std::string& want_label) {
  Staleness stale;
  if (want_label != m.label)
    stale.lines.push_back("label mismatch: the cache holds \"" + m.label + "\", expected \"" + want_label +
                          "\"");
  if (r.source_checked) {
    const FileSet source = scan_dataset(options.source_root, m.include);
    const std::int64_t staged = parse_utc(m.created_utc);
    std::size_t newer = 0;
    for (std::size_t i = 0; i < source.size(); ++i)
      if (staged >= 0 && source.mtime_ns(i) / 1000000000 > staged) ++newer;
    if (newer)
      stale.lines.push_back("manifest older than the source: " + std::to_string(newer) + " source file" +
                            (newer == 1 ? " was" : "s were") + " modified after the manifest was written (" +
                            m.created_utc + ")");
    std::size_t changed = 0, added = 0, removed = 0;
    for (const std::string& d : r.source_differences) {
      if (d.rfind("changed in the source", 0) == 0 || d.rfind("content differs", 0) == 0) ++changed;
      if (d.rfind("added to the source", 0) == 0) ++added;
      if (d.rfind("removed from the source", 0) == 0) ++removed;
    }
    stale.removed_from_source = removed > 0;
    if (changed || added || removed)
      stale.lines.push_back("source files changed since staging: " + std::to_string(changed) + " changed, " +
                            std::to_string(added) + " added, " + std::to_string(removed) + " removed");
  }
  if (!r.missing.empty() || !r.changed.empty())
    stale.lines.push_back("cache copies: " + std::to_string(r.missing.size()) + " missing, " +
                          std::to_string(r.changed.size()) + " whose content no longer matches the manifest");
  return stale;
}

// The one command that fixes what is stale, and what stage leaves alone.
void print_fix(const VerifyOptions& options, const VerifyResult& r, const Manifest& m,
               const std::string& want_label, bool removed_from_source) {
  // A changed copy keeps its size and mtime, so stage would take it as in place: remove it first.
  // So is the copy of a source file whose content changed with its size and mtime kept.
  std::vector<std::string> stale_copies = r.changed;
  for (const std::string& d : r.source_differences)
    for (const char* prefix :
         {"content differs from the cached copy: ", "content differs from the manifest in the source: "})
      if (d.rfind(prefix, 0) == 0) stale_copies.push_back(d.substr(std::strlen(prefix)));
  std::string fix;
  if (!stale_copies.empty()) {
    fix = "rm -f --";
    for (const std::string& p : stale_copies) fix += " " + shell_quote(options.cache_root + "/" + p);
    fix += " && ";
  }
  const std::string source = r.source_checked ? options.source_root : m.source_root;
  Manifest again = m;  // staged again under the label wanted
  again.label = want_label;
  fix += restage_command(source, options.cache_root, again, removed_from_source);
  if (!r.missing.empty() || !r.changed.empty() || !r.source_matches || want_label != m.label)
    std::printf("to fix: `%s`%s\n", printable(fix).c_str(),
                r.source_checked ? "" : " (stages again from the manifest's source root)");
  if (!r.extra.empty())
    std::printf(
        "extra files are not feedbench's: stage never removes them; move them out of %s if "
        "they do not belong to the cache\n",
        printable(options.cache_root).c_str());
}

}  // namespace

int verify_main(int argc, char** argv) {
  VerifyOptions options;
  std::string fingerprint_kind = "metadata";
  const po::options_description opts = describe_options(options, fingerprint_kind);
  po::variables_map vm;
  if (parse_command_line(argc, argv, opts, vm)) {
    std::cout << kUsage << "\noptions:\n" << options_help(opts);
    return 0;
  }
  if (!vm.count("cache")) throw InputError("--cache CACHE is required (see --help)");
  if (fingerprint_kind != "metadata" && fingerprint_kind != "content" && fingerprint_kind != "full")
    throw InputError("--fingerprint: expected metadata, content or full, got '" + fingerprint_kind + "'");
  if (fingerprint_kind == "content" && !vm.count("source"))
    throw InputError("--fingerprint content: compares the source with the cache; give --source SRC");
  if (fingerprint_kind == "full" && !vm.count("source"))
    throw InputError("--fingerprint full: re-hashes the source against the manifest; give --source SRC");
  options.source_every_byte = fingerprint_kind == "full";
  if (vm.count("workers") && options.workers < 1)
    throw InputError("--workers: expected a whole number of at least 1, got " +
                     std::to_string(options.workers));
  options.progress = interactive_terminal(STDERR_FILENO);
  StopOnSignals stop;
  options.stop = stop.flag();
  // Residency now, before re-hashing reads every file from the device and changes it.
  const std::optional<Manifest> manifest = read_manifest(options.cache_root);
  std::optional<Residency> resident;
  if (manifest) resident = measure_residency(scan_dataset(options.cache_root, manifest->include));
  VerifyResult r = verify_cache(options);
  const bool content = fingerprint_kind == "content";
  if (content && !r.stopped_by_signal) {
    const std::optional<Manifest> m = read_manifest(options.cache_root);
    std::vector<std::string> differ = compare_sampled_content(options.source_root, options.cache_root,
                                                              m ? m->include : std::vector<std::string>{});
    if (!differ.empty()) r.source_matches = false;
    r.source_differences.insert(r.source_differences.end(), differ.begin(), differ.end());
  }
  print_differences(r);
  if (r.stopped_by_signal) {
    std::printf("interrupted: %zu files checked\n", r.files_checked);
    return 128 + r.stopped_by_signal;
  }
  print_verdict(r, fingerprint_kind);
  if (!manifest) return r.ok() ? 0 : 1;
  const Manifest& m = *manifest;

  // What is stale, named, and the one command that fixes it.
  const std::string want_label = vm.count("label") ? vm["label"].as<std::string>() : m.label;
  const bool ok = r.ok() && want_label == m.label;
  const Staleness stale = find_stale(options, r, m, want_label);
  for (const std::string& line : stale.lines) std::printf("stale: %s\n", printable(line).c_str());
  if (!ok && !r.stopped_by_signal) print_fix(options, r, m, want_label, stale.removed_from_source);
  std::printf("cache: label %s, %s, staged %s\n", printable(m.label).c_str(),
              printable(m.selection_text()).c_str(), printable(m.created_utc).c_str());
  if (resident) std::printf("resident in the page cache now: %s\n", residency_line(*resident).c_str());
  return ok ? 0 : 1;
}

}  // namespace feedbench
