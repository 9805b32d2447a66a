// A cache's manifest: MANIFEST.sha256 (what `sha256sum -c` checks) beside
// feedbench-manifest.json (label, source root and fingerprint, counts, time, version).
// The JSON file is written last and carries the SHA-256 of MANIFEST.sha256, so a pair that
// does not belong together, or either file missing, is "no complete manifest".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace feedbench {

inline constexpr const char* kManifestSchema = "feedbench-manifest/1";
inline constexpr const char* kManifestSumsName = "MANIFEST.sha256";
inline constexpr const char* kManifestJsonName = "feedbench-manifest.json";

struct ManifestEntry {
  std::string path;    // relative to the cache root, '/'-separated
  std::string sha256;  // lowercase hex
};

// How a hot-set stage chose its files (stage --hot-set): the spec that made the selection's
// exact paths, so a person reads, and a repair command repeats, "--hot-set 10% --seed 42"
// rather than 600 paths.
struct HotSetSpec {
  std::string share;  // "10%", as given
  std::uint64_t seed = 42;
  std::vector<std::string> of;  // the globs the hot set was ranked within; empty = every file
};

struct Manifest {
  std::string label;
  std::string source_root;
  std::string source_fingerprint;
  std::vector<std::string> include;  // the selection's globs; empty = everything
  std::uint64_t total_bytes = 0;
  std::string created_utc;  // "2024-05-01T12:00:00Z"
  std::string feedbench_version;
  std::vector<ManifestEntry> files;   // sorted by path (byte order)
  std::optional<HotSetSpec> hot_set;  // a hot-set stage's spec (include: its exact paths)

  // RETURNS: the selection as a person reads it: "hot set 10% (seed 42) of every file, 600
  // files" for a hot set, else selection_text(include).
  std::string selection_text() const;

  // RETURNS: MANIFEST.sha256's text: "<hex>  <path>\n" per file, in `files` order (paths with
  // a backslash, newline or carriage return escaped the way GNU sha256sum 9 does it: the line
  // starts with a backslash, and the name has \\ for a backslash, \n and \r for the others).
  std::string sums_text() const;
  // RETURNS: feedbench-manifest.json's object; `sums_sha256` is the SHA-256 of sums_text().
  nlohmann::ordered_json to_json() const;
};

// RETURNS: Manifest::selection_text() of feedbench-manifest.json's object as a result records
// it (dataset.cache.manifest); "every file" where it holds no include.
std::string manifest_selection_text(const nlohmann::json& manifest_json);

// Parses sha256sum output ("<hex>  <path>" or "<hex> *<path>", GNU escapes).
// RETURNS: the entries in file order. Throws InputError naming `where` and the line.
std::vector<ManifestEntry> parse_sums(std::string_view text, const std::string& where);

// Writes MANIFEST.sha256 then feedbench-manifest.json into `cache_root`, each atomically.
// Throws RunError when a write fails (e.g. the disk is full).
void write_manifest(const std::string& cache_root, const Manifest& manifest);

// Removes feedbench-manifest.json first, then MANIFEST.sha256 (so the cache stops being a cache
// before anything else changes). Missing files are fine. Throws RunError on other failures.
void remove_manifest(const std::string& cache_root);

// RETURNS: the manifest of `cache_root` when it is complete (both files present, JSON valid with
// the right schema, sums matching `sums_sha256` and the file count), else nullopt with the reason
// in `*why` (when given).
std::optional<Manifest> read_manifest(const std::string& cache_root, std::string* why = nullptr);

// Same, from the two files' text already in memory (`json_path` and `sums_path` only name them
// in the reason); what read_manifest does once it has read them.
std::optional<Manifest> parse_manifest(const std::string& json_text, const std::string& sums_text,
                                       const std::string& json_path, const std::string& sums_path,
                                       std::string* why = nullptr);

}  // namespace feedbench
