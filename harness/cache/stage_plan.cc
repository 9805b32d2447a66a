// Planning a stage: the refusals (overlap, symlinks, ownership, the lock), the resume diff
// against the cache's manifest or journal, and the free-space check, all before the cache is
// changed (see stage_plan.h).
#include "stage_plan.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "feedbench/base/aligned_buffer.h"
#include "feedbench/base/error.h"
#include "feedbench/base/text.h"
#include "feedbench/base/units.h"
#include "feedbench/results/environment.h"
#include "stage_io.h"
#include "stage_verify.h"

namespace feedbench {
namespace {

namespace fs = std::filesystem;

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// --- Same folder or not, by identity: a symlink or a bind mount of the source is the source.

struct FolderId {
  dev_t dev;
  ino_t ino;
  bool operator==(const FolderId& o) const { return dev == o.dev && ino == o.ino; }
};

FolderId id_of(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw InputError(errno_message("cannot stat a folder", errno));
  return {st.st_dev, st.st_ino};
}

// RETURNS: the identities of folder `fd` and of every folder above it up to "/", found by
// walking "..": the kernel's parents, whatever path (symlink, bind mount) named the folder.
std::vector<FolderId> folder_and_parents(int fd) {
  std::vector<FolderId> chain{id_of(fd)};
  UniqueFd here(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
  for (int depth = 0; depth < 4096 && here; ++depth) {
    UniqueFd up(::openat(here.get(), "..", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!up) break;
    FolderId id = id_of(up.get());
    if (id == chain.back()) break;  // "/" is its own parent
    chain.push_back(id);
    here = std::move(up);
  }
  return chain;
}

// Opens `path` (a folder) or, when it does not exist yet, its deepest existing ancestor.
// RETURNS: an O_PATH descriptor; *exists tells which. Throws InputError (naming `option`) when
// the path or an ancestor is not a folder or cannot be reached.
UniqueFd open_folder_or_ancestor(const std::string& option, const std::string& path, bool* exists) {
  std::error_code ec;
  std::string p = fs::absolute(path, ec).string();
  if (ec) throw InputError(option + " " + path + ": " + ec.message());
  *exists = true;
  while (true) {
    UniqueFd fd(::open(p.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (fd) return fd;
    if (errno != ENOENT || p == "/")
      throw InputError(errno_message(option + " " + path + (p == path ? "" : ": " + p), errno));
    *exists = false;
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    std::size_t slash = p.find_last_of('/');
    p = slash == 0 ? "/" : p.substr(0, slash);
  }
}

// Where a folder lies inside its file system: the device ("major:minor") and the path from the
// file system's root, read from mountinfo. A bind mount of a sub-folder is found here: its
// parents by ".." are the mount point's, not the source's. RETURNS: false when unknown.
bool place_in_file_system(int fd, std::string* device, std::string* path) {
  struct statx stx {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) != 0 || !(stx.stx_mask & STATX_MNT_ID)) return false;
  char real[PATH_MAX];
  const std::string self = "/proc/self/fd/" + std::to_string(fd);
  ssize_t n = ::readlink(self.c_str(), real, sizeof real - 1);
  if (n <= 0) return false;
  real[n] = 0;
  // mountinfo escapes space, tab, newline and backslash as \ooo.
  auto unescape = [](const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\\' && i + 3 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
        out += char(std::stoi(s.substr(i + 1, 3), nullptr, 8));
        i += 3;
      } else {
        out += s[i];
      }
    }
    return out;
  };
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::uint64_t id = 0, parent = 0;
    std::string dev, root, mount_point;
    if (!(fields >> id >> parent >> dev >> root >> mount_point) || id != stx.stx_mnt_id) continue;
    root = unescape(root);
    mount_point = unescape(mount_point);
    const std::string r(real);
    if (!is_within(r, mount_point)) return false;
    std::string rest = mount_point == "/" ? r : r.substr(mount_point.size());
    *device = dev;
    *path = root == "/" ? (rest.empty() ? "/" : rest) : root + rest;
    return true;
  }
  return false;
}

// Refuses a cache that is the source, lies inside it or holds it, by identity (device and inode
// walking up both paths, and each folder's place in its file system), not by path strings.
void refuse_overlap(int source_fd, const std::string& source, int cache_fd, bool cache_exists,
                    const std::string& cache) {
  const std::vector<FolderId> up_from_source = folder_and_parents(source_fd);
  const std::vector<FolderId> up_from_cache = folder_and_parents(cache_fd);
  auto holds = [](const std::vector<FolderId>& chain, const FolderId& id) {
    return std::find(chain.begin(), chain.end(), id) != chain.end();
  };
  bool same = cache_exists && up_from_cache.front() == up_from_source.front();
  bool cache_inside = holds(up_from_cache, up_from_source.front());
  bool source_inside = cache_exists && holds(up_from_source, up_from_cache.front());
  std::string sdev, spath, cdev, cpath;
  if (place_in_file_system(source_fd, &sdev, &spath) && place_in_file_system(cache_fd, &cdev, &cpath) &&
      sdev == cdev) {
    same = same || (cache_exists && spath == cpath);
    cache_inside = cache_inside || is_within(cpath, spath);
    source_inside = source_inside || (cache_exists && is_within(spath, cpath));
  }
  const std::string how = " (compared by device and inode, so symlinks and bind mounts count)";
  if (same)
    throw InputError("the cache " + cache + " and the source " + source + " are the same folder" + how +
                     ": staging would remove or overwrite source files");
  if (cache_inside)
    throw InputError("the cache " + cache + " is inside the source " + source + how +
                     ": choose a cache folder outside the source");
  if (source_inside)
    throw InputError("the source " + source + " is inside the cache " + cache + how +
                     ": staging would remove or overwrite source files");
}

// Reads sha256sum lines, ignoring any that do not parse (a journal cut short by kill -9).
std::map<std::string, std::string> read_sums_lenient(const std::string& path) {
  std::map<std::string, std::string> out;
  std::ifstream in(path, std::ios::binary);
  std::string line;
  while (std::getline(in, line)) {
    try {
      for (ManifestEntry& e : parse_sums(line + "\n", path)) out[e.path] = e.sha256;
    } catch (const InputError&) {
    }
  }
  return out;
}

// Refuses a selection holding a symlink that leads out of the source root. scan_dataset never
// follows symlinks (it lists them in left_out()); this makes the refusal explicit instead of
// silently dropping the data behind them.
void refuse_symlinks_out_of(const FileSet& selection) {
  const std::string& root = selection.root();
  for (const FileSet::LeftOut& e : selection.left_out()) {
    if (e.kind != "symlink") continue;
    const fs::path link = fs::path(root) / e.path;
    std::error_code ec;
    fs::path target = fs::weakly_canonical(link, ec);
    std::string t = ec ? fs::read_symlink(link, ec).string() : target.string();
    if (ec || !is_within(t, root))
      throw InputError("source symlink '" + e.path + "' leads to '" + t + "', outside the source root " +
                       root +
                       ": refusing to stage (feedbench never follows links out of the source;"
                       " copy that data into the source or narrow --include)");
  }
}

// Holds an exclusive lock on the cache folder for the duration of a stage.
UniqueFd lock_cache(const std::string& cache_root) {
  UniqueFd fd(::open(cache_root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) throw InputError(errno_message("cannot open cache folder " + cache_root, errno));
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0)
    throw InputError("another feedbench stage is writing " + cache_root + " right now");
  return fd;
}

// RETURNS: true when `cache_root` holds nothing but lost+found and feedbench temporaries (a
// benchmark's scratch staging, say).
bool folder_is_empty(const std::string& cache_root) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cache_root, ec)) {
    std::string name = e.path().filename().string();
    if (name == "lost+found" || ends_with(name, kStageTmpSuffix)) continue;
    return false;
  }
  return true;
}

// What a cache folder proves feedbench wrote: the files its complete manifest lists, and the
// files the journal of an interrupted stage lists (the journal wins: it is newer). Nothing else
// in the folder is feedbench's.
struct Ownership {
  std::optional<Manifest> manifest;
  std::string why_no_manifest;
  bool journal = false;
  std::map<std::string, std::string> files;  // relative path -> sha256
  bool is_cache() const { return manifest.has_value() || journal; }
};

Ownership read_ownership(const std::string& cache_root) {
  Ownership own;
  own.manifest = read_manifest(cache_root, &own.why_no_manifest);
  if (own.manifest)
    for (const ManifestEntry& e : own.manifest->files) own.files[e.path] = e.sha256;
  const std::string journal = cache_root + "/" + kStageJournalName;
  struct stat st {};
  own.journal = ::lstat(journal.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  if (own.journal)
    for (auto& [path, hash] : read_sums_lenient(journal)) own.files[path] = hash;
  return own;
}

// RETURNS: up to `shown` of `names`, comma-separated, then "and N more".
std::string name_some(const std::vector<std::string>& names, std::size_t shown = 10) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < shown; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > shown) out += " and " + std::to_string(names.size() - shown) + " more";
  return out;
}

// Refuses a missing or empty --from/--to and a cache that overlaps the source.
// RETURNS: the resolved source root; *cache receives the resolved cache root.
std::string resolve_roots(const StageOptions& options, std::string* cache) {
  if (options.source_root.empty()) throw InputError("--from: the source folder is required");
  if (options.cache_root.empty()) throw InputError("--to: the cache folder is required");
  char buf[PATH_MAX];
  if (!::realpath(options.source_root.c_str(), buf))
    throw InputError(errno_message("--from " + options.source_root, errno));
  std::string source = buf;  // not const: returned by move
  if (!fs::is_directory(source)) throw InputError("--from " + options.source_root + ": not a folder");
  *cache = resolve_maybe_missing(options.cache_root);
  bool source_exists = false, cache_exists = false;
  UniqueFd source_fd = open_folder_or_ancestor("--from", source, &source_exists);
  UniqueFd cache_fd = open_folder_or_ancestor("--to", options.cache_root, &cache_exists);
  refuse_overlap(source_fd.get(), source, cache_fd.get(), cache_exists, *cache);
  return source;
}

// RETURNS: the selection of `source`; refuses an empty one (naming the globs) and a symlink in
// it that leads out of the source.
FileSet select_files(const std::string& source, const std::vector<std::string>& include) {
  FileSet selection = scan_dataset(source, include);
  if (selection.empty()) {
    if (include.empty())
      throw InputError("--from " + source + ": the source holds no regular files: nothing to stage");
    std::string globs;
    for (const std::string& g : include) globs += (globs.empty() ? "'" : ", '") + g + "'";
    throw InputError("--include " + globs + ": no file of the source " + source +
                     " matches (a typo?): nothing staged, nothing removed");
  }
  refuse_symlinks_out_of(selection);
  return selection;
}

// Refuses a folder that is not a cache of ours: non-empty (unless `force`), or holding manifest
// files feedbench did not complete.
void refuse_foreign_folder(const std::string& cache, const Ownership& own, bool force) {
  if (own.is_cache()) return;
  if (!force && !folder_is_empty(cache))
    throw InputError("the cache folder " + cache + " is not empty and is not a feedbench cache (" +
                     own.why_no_manifest + ", and no journal of an interrupted stage): refusing to " +
                     "stage into it; choose a new or empty folder, or add --force to stage beside " +
                     "its files (feedbench never removes or overwrites a file it did not write)");
  for (const char* name : {kManifestSumsName, kManifestJsonName}) {
    struct stat st {};
    if (::lstat((cache + "/" + name).c_str(), &st) == 0)
      throw InputError("the cache folder " + cache + " holds a " + name + " that is not part of a " +
                       "complete feedbench manifest (" + own.why_no_manifest + "): refusing to " +
                       "replace it, even with --force; move it away");
  }
}

// The cache's contents as the plan sees them. Built in place and never moved: `index` views
// the paths `files` holds.
struct CacheContents {
  FileSet files;
  std::unordered_map<std::string_view, std::size_t> index;  // relative path -> files index
  std::set<std::string> not_files;                          // symlinks, FIFOs and the like in the cache

  explicit CacheContents(const std::string& cache) : files(scan_dataset(cache)) {
    for (std::size_t i = 0; i < files.size(); ++i) index.emplace(files.relative_path(i), i);
    for (const FileSet::LeftOut& e : files.left_out())
      if (e.kind != "feedbench temporary" && e.kind != "feedbench manifest") not_files.insert(e.path);
  }
  CacheContents(const CacheContents&) = delete;
  CacheContents& operator=(const CacheContents&) = delete;
};

// Where the selection goes: never through a link, never over a file that is not ours unless
// it holds the source's very bytes (then it is adopted into `owned`: e.g. a copy of ours whose
// journal line a kill -9 lost). Throws InputError naming what is in the way.
void refuse_what_is_in_the_way(const std::string& cache, const FileSet& selection,
                               const CacheContents& in_cache, std::map<std::string, std::string>& owned) {
  std::vector<std::string> not_folders, in_the_way;
  std::set<std::string_view> parents_checked;
  AlignedBuffer hash_buf(kStageChunk);
  for (std::size_t i = 0; i < selection.size(); ++i) {
    std::string_view rel = selection.relative_path(i);
    for (std::size_t k = rel.find('/'); k != std::string_view::npos; k = rel.find('/', k + 1)) {
      std::string_view parent = rel.substr(0, k);
      if (!parents_checked.insert(parent).second) continue;
      if (in_cache.index.count(parent) || in_cache.not_files.count(std::string(parent)))
        not_folders.emplace_back(parent);
    }
    const std::string r(rel);
    if (in_cache.not_files.count(r)) not_folders.push_back(r);
    if (!in_cache.index.count(rel) || owned.count(r)) continue;
    const std::string here = hash_of_file(cache + "/" + r, hash_buf);
    if (!here.empty() && here == hash_of_file(selection.absolute_path(i), hash_buf)) owned[r] = here;
    else in_the_way.push_back(r);
  }
  if (!not_folders.empty())
    throw InputError("in the cache folder " + cache + ", " + name_some(not_folders) + ": a symlink " +
                     "or other non-folder where the selection needs a folder or a file: move it " +
                     "away (feedbench writes only into real folders of the cache)");
  if (!in_the_way.empty())
    throw InputError("the cache folder " + cache + " holds " + plural(in_the_way.size(), "file", "files") +
                     " that feedbench did not write where the selection goes, unlike the source: " +
                     name_some(in_the_way) + "; move them away (feedbench never overwrites a " +
                     "file it did not write)");
}

// What has to go: files of ours that left the selection; nothing else (the rest is left alone,
// and named in a note). Refuses removing more than kPruneShare of ours without `prune`.
void plan_removals(StagePlan& plan, const CacheContents& in_cache, bool prune) {
  std::set<std::string_view> selected;
  for (std::size_t i = 0; i < plan.selection.size(); ++i) selected.insert(plan.selection.relative_path(i));
  std::vector<std::string> left_alone;
  std::size_t ours_present = 0;
  for (std::size_t i = 0; i < in_cache.files.size(); ++i) {
    std::string_view rel = in_cache.files.relative_path(i);
    const bool ours = plan.owned.count(std::string(rel)) > 0;
    ours_present += ours;
    if (selected.count(rel)) continue;
    (ours ? plan.to_remove : left_alone).emplace_back(rel);
  }
  const std::vector<std::string>& to_remove = plan.to_remove;
  if (!to_remove.empty() && !prune && double(to_remove.size()) > kPruneShare * double(ours_present))
    throw InputError("staging this selection would remove " + std::to_string(to_remove.size()) + " of " +
                     plural(ours_present, "file", "files") + " from the cache " + plan.cache +
                     " (more than " + std::to_string(int(kPruneShare * 100)) +
                     "%: " + name_some(to_remove, 3) + "): add --prune to remove them, or check --include; " +
                     "nothing was removed");
  if (std::string note = left_out_note(plan.selection); !note.empty()) plan.notes.push_back(note);
  if (!left_alone.empty())
    plan.notes.push_back(
        "left alone " + plural(left_alone.size(), "file", "files") +
        " feedbench did not write (listed in no manifest of ours): " + name_some(left_alone));
}

// RETURNS: the temporaries in the cache that an interrupted stage left: only the names we would
// have written (for the selection, or for a file of ours).
std::vector<std::string> stale_temporaries(const StagePlan& plan, const FileSet& in_cache) {
  std::vector<std::string> temporaries;
  for (const FileSet::LeftOut& e : in_cache.left_out())
    if (e.kind == "feedbench temporary" && e.path != kStageJournalName) temporaries.push_back(e.path);
  if (temporaries.empty()) return temporaries;
  std::set<std::string> ours_tmp;
  for (std::size_t i = 0; i < plan.selection.size(); ++i)
    ours_tmp.insert(stage_temporary_path(std::string(plan.selection.relative_path(i))));
  for (const auto& [path, hash] : plan.owned) ours_tmp.insert(stage_temporary_path(path));
  std::erase_if(temporaries, [&](const std::string& t) { return !ours_tmp.count(t); });
  return temporaries;
}

// RETURNS: the warning that source and cache share a device, or "" (also when unknown).
std::string same_device_warning(const std::string& source, const std::string& cache) {
  try {
    PathInfo s = describe_path("source", source), c = describe_path("cache", cache);
    if (same_device(s, c))
      return "source and cache are on the same device" +
             (c.device.empty() ? std::string() : " (" + c.device + ")") +
             ": reads from the cache will not be faster, and the copy competes with itself";
  } catch (const std::exception&) {
  }
  return "";
}

// What is already in place (resume): a file of ours the cache holds with the source's size and
// mtime is kept with its known hash; every other selected file is copied.
void plan_copies(StagePlan& plan, const CacheContents& in_cache) {
  const FileSet& selection = plan.selection;
  plan.hashes.assign(selection.size(), "");
  for (std::size_t i = 0; i < selection.size(); ++i) {
    std::string_view rel = selection.relative_path(i);
    auto c = in_cache.index.find(rel);
    auto k = plan.owned.find(std::string(rel));
    if (c != in_cache.index.end() && k != plan.owned.end() &&
        in_cache.files.file_size(c->second) == selection.file_size(i) &&
        in_cache.files.mtime_ns(c->second) == selection.mtime_ns(i)) {
      plan.hashes[i] = k->second;
      continue;
    }
    plan.to_copy.push_back(i);
    plan.bytes_to_copy += selection.file_size(i);
  }
}

}  // namespace

StagePlan plan_stage(const StageOptions& options) {
  StagePlan plan;
  plan.source = resolve_roots(options, &plan.cache);
  plan.selection = select_files(plan.source, options.include);
  plan.source_fingerprint = plan.selection.fingerprint();
  plan.label = options.label.empty() ? "fp-" + plan.source_fingerprint.substr(0, 12) : options.label;

  std::error_code ec;
  fs::create_directories(plan.cache, ec);
  if (ec) throw InputError("cannot create the cache folder " + plan.cache + ": " + ec.message());
  plan.lock = lock_cache(plan.cache);

  // Whose files are these? Only what our manifest or journal lists is ours.
  Ownership own = read_ownership(plan.cache);
  refuse_foreign_folder(plan.cache, own, options.force);
  plan.old_manifest = std::move(own.manifest);
  plan.owned = std::move(own.files);
  const CacheContents in_cache(plan.cache);
  refuse_what_is_in_the_way(plan.cache, plan.selection, in_cache, plan.owned);
  plan_removals(plan, in_cache, options.prune);
  plan.stale_temporaries = stale_temporaries(plan, in_cache.files);
  if (std::string w = same_device_warning(plan.source, plan.cache); !w.empty()) plan.warnings.push_back(w);
  plan_copies(plan, in_cache);
  return plan;
}

CacheSpace cache_space(const std::string& path) {
  CacheSpace space;
  struct statvfs sv {};
  if (::statvfs(path.c_str(), &sv) != 0) return space;
  space.size = std::uint64_t(sv.f_blocks) * sv.f_frsize;
  space.block = sv.f_frsize ? sv.f_frsize : 4096;
  space.free = std::uint64_t(sv.f_bavail) * sv.f_frsize;
  return space;
}

std::string space_refusal(const StagePlan& plan, const CacheSpace& space) {
  std::uint64_t alloc = 0;  // what the copies take on disk: whole blocks
  for (std::size_t i : plan.to_copy)
    alloc += (plan.selection.file_size(i) + space.block - 1) / space.block * space.block;
  const std::uint64_t margin = alloc / 50 + std::min<std::uint64_t>(64ull << 20, space.size / 20);
  if (plan.to_copy.empty() || space.free == UINT64_MAX || space.free >= alloc + margin) return "";
  return "not enough space in " + plan.cache + ": " + std::to_string(plan.to_copy.size()) +
         " file(s) to copy need " + format_size(double(alloc)) + " plus a margin of " +
         format_size(double(margin)) + ", the file system has " + format_size(double(space.free)) +
         " free: short by " + format_size(double(alloc + margin - space.free));
}

}  // namespace feedbench
