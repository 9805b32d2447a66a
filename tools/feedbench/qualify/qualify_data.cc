#include "qualify_data.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "feedbench/base/error.h"
#include "feedbench/cache/manifest.h"
#include "feedbench/cache/stager.h"
#include "feedbench/dataset/dataset.h"
#include "trial.h"

namespace fs = std::filesystem;

namespace feedbench {

GenOptions QualifyDataSet::unit_options(int i) const {
  // Each unit its own seed, so no two hold the same bytes (a deduplicating store sees them all).
  return gen_options_for(*profile, store_dir + "/" + unit_folder(i), samples_for(*profile, 1),
                         seed * 1000003 + std::uint64_t(i));
}

std::uint64_t QualifyDataSet::bytes() const {
  std::uint64_t total = 0;
  for (int i = 0; i < units; ++i) total += gen_total_bytes(unit_options(i));
  return total;
}

Residency evict_store_copy(const QualifyDataSet& data) {
  FileSet written(data.store_dir);
  for (const std::string& f : data.store_files()) {
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(data.store_dir + "/" + f, ec);
    if (!ec) written.add(f, size, 0);
  }
  written.sort();
  return evict(written);
}

std::vector<std::string> QualifyDataSet::store_files() const {
  std::vector<std::string> files;
  for (int i = 0; i < units; ++i) {
    const GenOptions g = unit_options(i);
    if (g.listed) {
      for (const ListedFile& f : g.listed->files) files.push_back(unit_folder(i) + "/" + f.path);
      files.push_back(unit_folder(i) + "/feedbench-gen.json");
      continue;
    }
    const bool sharded = g.layout == GenLayout::kShards || g.layout == GenLayout::kTfrecord;
    const std::uint64_t written = sharded ? g.shards : g.files;
    for (std::uint64_t f = 0; f < written; ++f) files.push_back(unit_folder(i) + "/" + gen_file_name(g, f));
    files.push_back(unit_folder(i) + "/feedbench-gen.json");  // gen's record, where it writes one
  }
  return files;
}

std::vector<std::string> QualifyDataSet::cache_files() const {
  std::vector<std::string> files = store_files();
  files.push_back(kManifestSumsName);
  files.push_back(kManifestJsonName);
  files.push_back(kStageJournalName);
  return files;
}

std::string QualifyDataSet::marker(bool complete) const {
  const nlohmann::json m = {{"written_by", "feedbench qualify"},
                            {"workload", profile->name},
                            {"trace", profile->trace},
                            {"units", units},
                            {"unit_samples", samples_for(*profile, 1)},
                            {"seed", seed},
                            {"complete", complete}};
  return m.dump() + "\n";
}

QualifyDataSet qualify_data_set(const WorkloadProfile& profile, int units, std::uint64_t seed,
                                const std::string& store, const std::string& cache) {
  QualifyDataSet d;
  d.profile = &profile;
  d.units = units;
  d.seed = seed;
  const std::string name = std::string("feedbench-qualify-") + profile.name;
  d.store_dir = store + "/" + name;
  if (!cache.empty()) d.cache_dir = cache + "/" + name;
  return d;
}

FolderState folder_state(const std::string& dir, const QualifyDataSet& data, std::string* why) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return FolderState::kMissing;
  if (!S_ISDIR(st.st_mode)) {
    if (why) *why = "exists and is not a folder";
    return FolderState::kNotOurs;
  }
  std::ifstream in(dir + "/" + kQualifyMarker);
  if (!in) {
    if (why)
      *why = std::string("exists without a ") + kQualifyMarker + " marker: feedbench qualify did not make it";
    return FolderState::kNotOurs;
  }
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json m = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!m.is_object() || m.value("written_by", "") != "feedbench qualify") {
    if (why) *why = std::string("its ") + kQualifyMarker + " marker was not written by feedbench qualify";
    return FolderState::kNotOurs;
  }
  return text.str() == data.marker(true) ? FolderState::kComplete : FolderState::kOurs;
}

namespace {

void write_marker(const std::string& dir, const std::string& text) {
  const std::string path = dir + "/" + kQualifyMarker;
  const std::string tmp = path + ".fbtmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out.flush()) throw RunError("cannot write " + tmp + ": " + std::strerror(errno));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    throw RunError("cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
}

}  // namespace

void make_qualify_folder(const std::string& dir, const QualifyDataSet& data) {
  if (::mkdir(dir.c_str(), 0755) != 0) throw RunError("cannot create " + dir + ": " + std::strerror(errno));
  write_marker(dir, data.marker(false));
}

void mark_complete(const std::string& dir, const QualifyDataSet& data) {
  write_marker(dir, data.marker(true));
}

std::string remove_qualify_folder(const std::string& dir, const std::vector<std::string>& files) {
  for (const std::string& f : files) ::unlink((dir + "/" + f).c_str());  // missing ones: nothing to do
  // Folders beneath, deepest first: rmdir removes only an empty one.
  std::vector<std::string> folders;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end; !ec && it != end;
       it.increment(ec))
    if (it->is_directory(ec) && !it->is_symlink(ec)) folders.push_back(it->path().string());
  for (auto it = folders.rbegin(); it != folders.rend(); ++it) ::rmdir(it->c_str());
  ::unlink((dir + "/" + kQualifyMarker).c_str());
  if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return "";
  const int err = errno;
  std::string left;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end; !ec && it != end;
       it.increment(ec))
    if (!it->is_directory(ec)) {
      left = it->path().string();
      break;
    }
  return dir + " stays: " +
         (left.empty() ? std::string(std::strerror(err)) : left + ", which qualify did not write");
}

}  // namespace feedbench
