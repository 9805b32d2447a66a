// Outputs apart from inputs: no file a verb writes is a file it reads, a folder of the data it
// measures, or another of its outputs. Identity is the kernel's (device and inode), so a
// symlink or a bind mount of an input is that input.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <deque>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "feedbench/base/error.h"
#include "feedbench/base/file_system.h"
#include "feedbench/base/unique_fd.h"
#include "feedbench/base/units.h"
#include "feedbench/plan/preflight.h"

namespace feedbench {
namespace {

namespace fs = std::filesystem;

struct Identity {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const Identity& o) const { return dev == o.dev && ino == o.ino; }
};

Identity identity_of(const struct stat& st) { return {st.st_dev, st.st_ino}; }

// Where a path is, or will be once written: the deepest part of it that exists (symlinks
// followed), and the rest of it, still to be made (lexically normal; "" when it all exists).
struct Place {
  fs::path existing;
  Identity id;
  std::string rest;
  bool operator==(const Place& o) const { return id == o.id && rest == o.rest; }
};

std::optional<Place> place_of(const std::string& path) {
  fs::path p = path.empty() ? fs::path(".") : fs::path(path);
  while (!p.has_filename() && p.parent_path() != p) p = p.parent_path();  // "a/b/" is "a/b"; "/" is "/"
  fs::path rest;
  while (true) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0) {
      // "none/../c.json" is c.json here once "none" is made: a ".." past a folder still to be
      // made is resolved by looking again at what the tail names, not at where it starts.
      const fs::path normal = rest.lexically_normal();
      if (!rest.empty() && normal != rest) return place_of((p / normal).string());
      return Place{p, identity_of(st), normal.string()};
    }
    fs::path up = p.parent_path();
    if (up.empty()) up = ".";
    if (up == p) return std::nullopt;  // not even "/" or "." can be looked at
    rest = rest.empty() ? p.filename() : p.filename() / rest;
    p = up;
  }
}

// A folder as the kernel knows it: its identity, its parents' by "..", its mount.
struct Folder {
  UniqueFd fd;
  Identity id;
  std::vector<Identity> parents;  // "..", "../..", up to "/"
  std::optional<std::uint64_t> mount;
};

std::optional<Folder> open_folder(const fs::path& path) {
  Folder f;
  f.fd = UniqueFd(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  struct stat st {};
  if (!f.fd || ::fstat(f.fd.get(), &st) != 0) return std::nullopt;
  f.id = identity_of(st);
  UniqueFd here(::fcntl(f.fd.get(), F_DUPFD_CLOEXEC, 0));
  Identity below = f.id;
  for (int depth = 0; depth < 4096 && here; ++depth) {
    UniqueFd up(::openat(here.get(), "..", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!up || ::fstat(up.get(), &st) != 0) break;
    if (identity_of(st) == below) break;  // "/" is its own parent
    below = identity_of(st);
    f.parents.push_back(below);
    here = std::move(up);
  }
  struct statx sx {};
  if (::statx(f.fd.get(), "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) == 0 && (sx.stx_mask & STATX_MNT_ID))
    f.mount = sx.stx_mnt_id;
  return f;
}

// RETURNS: whether a folder below `root` (its own file system's folders, symlinks not followed)
// is `target`. The walk that finds a folder reached through another mount of the root's file
// system (a bind mount of one of its folders), whose parents by ".." are the mount point's.
bool folder_below(const Folder& root, const Identity& target) {
  std::deque<std::string> pending{"."};
  while (!pending.empty()) {
    const std::string rel = std::move(pending.front());
    pending.pop_front();
    UniqueFd fd(::openat(root.fd.get(), rel.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) continue;  // unreadable: what cannot be listed cannot be scanned as data either
    DIR* dir = ::fdopendir(fd.release());
    if (!dir) continue;
    while (const dirent* e = ::readdir(dir)) {
      const std::string name = e->d_name;
      if (name == "." || name == ".." || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)) continue;
      struct stat st {};
      if (::fstatat(::dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) continue;
      if (identity_of(st) == target) {
        ::closedir(dir);
        return true;
      }
      if (st.st_dev == root.id.dev) pending.push_back(rel == "." ? name : rel + "/" + name);
    }
    ::closedir(dir);
  }
  return false;
}

enum class Overlap { kNone, kSame, kInside };

// RETURNS: whether the folder `dir` is `root`, lies inside it, or neither.
Overlap folder_in_root(const Folder& dir, const Folder& root) {
  if (dir.id == root.id) return Overlap::kSame;
  for (const Identity& up : dir.parents)
    if (up == root.id) return Overlap::kInside;
  if (dir.id.dev != root.id.dev) return Overlap::kNone;
  // One file system, one mount: the parents by ".." are exact. Through another mount of it
  // (or where the kernel does not say), only a walk of the root's folders can tell.
  if (dir.mount && root.mount && *dir.mount == *root.mount) return Overlap::kNone;
  return folder_below(root, dir.id) ? Overlap::kInside : Overlap::kNone;
}

std::string named(const NamedPath& p) { return p.option + " " + p.path; }

void refuse_inputs(const NamedPath& out, const Place& at, const std::vector<NamedPath>& inputs) {
  if (!at.rest.empty()) return;  // still to be made: no input is there
  for (const NamedPath& in : inputs) {
    struct stat st {};
    if (::stat(in.path.c_str(), &st) != 0 || !(identity_of(st) == at.id)) continue;
    throw InputError(named(out) + ": the same file as " + named(in) +
                     " (compared by device and inode): writing it would destroy what this command reads; "
                     "choose another path");
  }
}

void refuse_roots(const NamedPath& out, const Place& at, const std::vector<NamedPath>& roots) {
  // The folder written into: an output folder itself, else the file's folder; or, where either
  // is still to be made, the deepest folder of its path that exists.
  std::optional<Place> into = out.folder ? at : place_of(fs::path(out.path).parent_path().string());
  if (!into) return;
  const std::optional<Folder> dir = open_folder(into->existing);
  if (!dir) return;  // not a folder: the writer refuses it (require_writable_*)
  for (const NamedPath& r : roots) {
    const std::optional<Folder> root = r.path.empty() ? std::nullopt : open_folder(r.path);
    if (!root) continue;
    const Overlap o = folder_in_root(*dir, *root);
    if (o == Overlap::kNone) continue;
    const bool same = o == Overlap::kSame && out.folder && into->rest.empty();
    throw InputError(named(out) + (same ? ": is " : ": inside ") + named(r) +
                     " (compared by device and inode, so symlinks and bind mounts count): feedbench never "
                     "writes into the data; choose a path outside it");
  }
}

}  // namespace

bool folder_holds(const std::string& outer, const std::string& inner) {
  const std::optional<Folder> out = open_folder(outer), in = open_folder(inner);
  return out && in && folder_in_root(*in, *out) == Overlap::kInside;
}

void check_outputs_apart(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs,
                         const std::vector<NamedPath>& data_roots) {
  std::vector<std::pair<Place, const NamedPath*>> placed;
  for (const NamedPath& out : outputs) {
    const std::optional<Place> at = place_of(out.path);
    if (!at) continue;
    refuse_inputs(out, *at, inputs);
    refuse_roots(out, *at, data_roots);
    for (const auto& [earlier_at, earlier] : placed)
      if (earlier_at == *at)
        throw InputError(named(out) + ": the same file as " + named(*earlier) +
                         " (compared by device and inode): each output needs a path of its own");
    placed.emplace_back(*at, &out);
  }
}

void check_checkpoint_scratch(const Plan& plan, const NamedPath& scratch,
                              const std::vector<NamedPath>& data_roots) {
  std::uint64_t need = 0;
  for (const Case& c : plan.cases)
    if (c.family == "checkpoint") need = std::max(need, checkpoint_layout(c.checkpoint()).bytes());
  if (need == 0) return;
  std::error_code ec;
  if (!std::filesystem::is_directory(scratch.path, ec))
    throw InputError(scratch.option + " " + scratch.path + ": " +
                     (std::filesystem::exists(scratch.path, ec) ? "is not a folder" : "does not exist") +
                     " (the checkpoint family writes beneath it): nothing was written");
  // The scratch may not be, or lie in, a data root (the checkpoint would land on the data), nor
  // hold one (its removal walks only its own subfolder, but a full disk there is the data's).
  check_outputs_apart({{scratch.option, scratch.path, true}}, {}, data_roots);
  for (const NamedPath& r : data_roots)
    if (!r.path.empty() && folder_holds(scratch.path, r.path))
      throw InputError(scratch.option + " " + scratch.path + ": holds " + r.option + " " + r.path +
                       " (compared by device and inode, so symlinks and bind mounts count): the checkpoint "
                       "family writes only in a folder apart from the data; choose one outside it");
  const std::int64_t free = free_bytes_at(scratch.path);
  if (free < 0)
    throw InputError(errno_message(scratch.option + " " + scratch.path + ": cannot ask its room", errno));
  if (std::uint64_t(free) >= need) return;
  throw InputError(scratch.option + " " + scratch.path + ": the largest checkpoint of the plan needs " +
                   std::to_string(need) + " bytes (" + format_size(double(need)) + "), the file system has " +
                   std::to_string(free) + " bytes (" + format_size(double(free)) +
                   ") free: nothing was written; lower size or scale, or free room");
}

}  // namespace feedbench
