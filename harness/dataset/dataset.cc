// FileSet, glob matching and the recursive scan of a data set root.
//
// The scan must handle ten million files in well under a minute on 2 cores. Each folder is
// read with getdents64 relative to an open directory fd (no path lookups from the root, no
// std::filesystem objects per entry), its kept files are stat'ed relative to that fd in inode
// order (ext4 and xfs keep inodes in tables by number: a cold scan reads them in order), and
// its entries are sorted by path there, so the set needs no global sort. Several threads read
// folders at once; one of them at a time appends finished folders to the FileSet in path order.
#include "feedbench/dataset/dataset.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "feedbench/base/env_settings.h"
#include "feedbench/base/error.h"
#include "feedbench/base/sha256.h"
#include "feedbench/base/threads.h"
#include "feedbench/base/unique_fd.h"
#include "feedbench/dataset/data_file.h"

namespace feedbench {

// ---------------------------------------------------------------------------------------------
// FileSet

UniqueFd FileSet::open_root() const {
  return UniqueFd(::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

std::string FileSet::absolute_path(std::size_t i) const {
  std::string_view rel = relative_path(i);
  std::string out;
  out.reserve(root_.size() + 1 + rel.size());
  out += root_;
  if (out.empty() || out.back() != '/') out += '/';
  out += rel;
  return out;
}

void FileSet::add(std::string_view prefix, std::string_view name, std::uint64_t size, std::int64_t mtime_ns) {
  const std::uint64_t length = prefix.size() + name.size();
  if (entries_.size() >= limits_.max_files)
    throw InputError("dataset '" + root_ + "': more than " + std::to_string(limits_.max_files) +
                     " files selected, the most one run indexes; select a part of it with include globs "
                     "(/dataset/include)");
  if (length > kMaxPathLength)
    throw InputError("dataset '" + root_ + "': a relative path of " + std::to_string(length) +
                     " bytes, above the limit of " + std::to_string(kMaxPathLength) + ": " +
                     (std::string(prefix) + std::string(name.substr(0, 200))).substr(0, 200) + "...");
  if (arena_.size() + length > limits_.max_path_bytes)
    throw InputError("dataset '" + root_ + "': the selected files' relative paths take more than " +
                     std::to_string(limits_.max_path_bytes) +
                     " bytes together, the most one file set holds; select a part of it with include globs "
                     "(/dataset/include)");
  entries_.push_back(Entry{size, mtime_ns, (std::uint64_t(arena_.size()) << 24) | length});
  arena_.append(prefix.data(), prefix.size());
  arena_.append(name.data(), name.size());
  total_bytes_ += size;
}

void FileSet::add_left_out(std::string_view relative_path, std::string kind) {
  left_out_.push_back(LeftOut{std::string(relative_path), std::move(kind)});
}

void FileSet::sort() {
  std::sort(left_out_.begin(), left_out_.end(),
            [](const LeftOut& a, const LeftOut& b) { return a.path < b.path; });
  auto less = [this](const Entry& a, const Entry& b) { return path_of(a) < path_of(b); };
  // scan_dataset adds files in order already: checking first saves an O(n log n) pass over
  // paths spread across the arena.
  if (!std::is_sorted(entries_.begin(), entries_.end(), less))
    std::sort(entries_.begin(), entries_.end(), less);
}

void FileSet::shrink_to_fit() {
  arena_.shrink_to_fit();
  entries_.shrink_to_fit();
}

std::string FileSet::fingerprint() const {
  Sha256 hash;
  std::string line;
  line.reserve(256);
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    line.clear();
    line += relative_path(i);
    line += '\0';
    line += std::to_string(entries_[i].size);
    line += '\0';
    line += std::to_string(entries_[i].mtime_ns);
    line += '\n';
    hash.update(line);
  }
  return hash.hex_digest();
}

std::string left_out_note(const FileSet& files, const std::vector<std::string>& ignore, std::size_t shown) {
  std::vector<const FileSet::LeftOut*> kept;
  for (const FileSet::LeftOut& e : files.left_out())
    if (std::find(ignore.begin(), ignore.end(), e.kind) == ignore.end()) kept.push_back(&e);
  if (kept.empty()) return "";
  std::string note = "left out " + std::to_string(kept.size()) +
                     (kept.size() == 1 ? " entry that is not a regular file or is feedbench's own: "
                                       : " entries that are not regular files or are feedbench's own: ");
  for (std::size_t i = 0; i < kept.size() && i < shown; ++i) {
    if (i) note += ", ";
    note += kept[i]->path + " (" + kept[i]->kind + ")";
  }
  if (kept.size() > shown) note += " and " + std::to_string(kept.size() - shown) + " more";
  return note;
}

std::string sampled_content_digest(const FileSet& files, std::size_t i) {
  const std::string path = files.absolute_path(i);
  const DataFile f = open_data_file(AT_FDCWD, path);
  const int fd = f.fd;
  if (fd < 0) throw RunError("content fingerprint: " + f.reason(path));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw RunError(errno_message("content fingerprint: cannot stat " + path, err));
  }
  const std::uint64_t size = std::uint64_t(st.st_size);
  constexpr std::uint64_t kBlock = kContentSampleBytes;
  std::uint64_t offsets[3] = {0, 0, 0};
  std::uint64_t lengths[3] = {size, 0, 0};
  if (size > 3 * kBlock) {
    offsets[1] = size / 2 / kBlock * kBlock;
    offsets[2] = size - kBlock;
    lengths[0] = lengths[1] = lengths[2] = kBlock;
  }
  Sha256 hash;
  std::string buffer(std::max(kBlock * 3, std::uint64_t(1)), '\0');
  for (int k = 0; k < 3; ++k) {
    std::uint64_t done = 0;
    while (done < lengths[k]) {
      const ssize_t n = ::pread(fd, buffer.data(), std::size_t(lengths[k] - done), off_t(offsets[k] + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int err = errno;
        ::close(fd);
        throw RunError(errno_message("content fingerprint: cannot read " + path, err));
      }
      if (n == 0) break;  // shorter than it was: the digest says so
      hash.update(buffer.data(), std::size_t(n));
      done += std::uint64_t(n);
    }
    hash.update(std::to_string(done) + "\n");
  }
  ::close(fd);
  return hash.hex_digest();
}

std::string content_fingerprint(const FileSet& files) {
  Sha256 hash;
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::string line(files.relative_path(i));
    line += '\0';
    line += std::to_string(files.file_size(i));
    line += '\0';
    line += sampled_content_digest(files, i);
    line += '\n';
    hash.update(line);
  }
  return hash.hex_digest();
}

// ---------------------------------------------------------------------------------------------
// Globs

namespace {

// Matches one path component against one glob component with fnmatch(3): "*", "?", "[a-z]",
// "[!x]", "\\c". "**" spans components and is handled by match_from, above fnmatch.
bool match_component(std::string_view pat, std::string_view name) {
  // NUL-terminated copies, reused per thread: the scan matches every entry of a large tree.
  thread_local std::string pattern, component;
  pattern.assign(pat);
  component.assign(name);
  return ::fnmatch(pattern.c_str(), component.c_str(), 0) == 0;
}

void split_components(std::string_view path, std::vector<std::string_view>& out) {
  out.clear();
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) out.push_back(path.substr(start, slash - start));  // skip empty ("a//b")
    start = slash + 1;
  }
}

std::vector<std::string_view> split_components(std::string_view path) {
  std::vector<std::string_view> out;
  split_components(path, out);
  return out;
}

bool match_from(const std::vector<std::string_view>& g, std::size_t gi,
                const std::vector<std::string_view>& p, std::size_t pi) {
  while (true) {
    if (gi == g.size()) return pi == p.size();
    if (g[gi] == "**") {
      // A trailing "**" matches what is inside a folder, not the folder name itself.
      if (gi + 1 == g.size()) return pi < p.size();
      for (std::size_t k = pi; k <= p.size(); ++k)
        if (match_from(g, gi + 1, p, k)) return true;
      return false;
    }
    if (pi == p.size() || !match_component(g[gi], p[pi])) return false;
    ++gi;
    ++pi;
  }
}

// True when some path below folder `dir` (given by its components) could match the glob.
bool may_match_below(const std::vector<std::string_view>& g, std::size_t gi,
                     const std::vector<std::string_view>& d, std::size_t di) {
  while (true) {
    if (di == d.size()) return gi < g.size();
    if (gi == g.size()) return false;
    if (g[gi] == "**") return true;  // "**" can absorb the rest of the folder and more
    if (!match_component(g[gi], d[di])) return false;
    ++gi;
    ++di;
  }
}

}  // namespace

bool glob_match(std::string_view glob, std::string_view relative_path) {
  return match_from(split_components(glob), 0, split_components(relative_path), 0);
}

// ---------------------------------------------------------------------------------------------
// Scan

namespace {

// The kernel's record from getdents64; glibc's struct dirent is not guaranteed to match it.
struct LinuxDirent64 {
  std::uint64_t d_ino;
  std::int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

// A folder's entries in path order, kept from the thread that read it until its files are
// appended to the FileSet.
struct Folder {
  struct Child {
    std::uint64_t size;
    std::int64_t mtime_ns;
    std::uint64_t name;  // offset into names << 9 | length (at most NAME_MAX) << 1 | is a folder
    std::string_view name_in(const PodArray<char>& names) const {
      return {names.data() + (name >> 9), std::size_t((name >> 1) & 0xff)};
    }
    bool is_folder() const { return name & 1; }
  };

  std::string rel;                   // "" for the root, else "a/b/"
  std::string name;                  // its name in the parent ("b")
  std::shared_ptr<UniqueFd> parent;  // open until this folder opened itself (the root: its own)
  PodArray<char> names;              // each name NUL-terminated
  PodArray<Child> children;          // files and folders, in path order
  std::vector<std::unique_ptr<Folder>> subfolders;  // the folder children, in the same order
  std::vector<FileSet::LeftOut> left_out;
  std::exception_ptr error;  // why it could not be read
  bool done = false;         // under the scan's emit mutex
};

// True when the path of child `a` sorts before child `b`'s in the same folder: a folder
// compares as its name with '/' after it, as every path below it starts so.
bool child_less(std::string_view a, bool a_folder, std::string_view b, bool b_folder) {
  const std::size_t n = std::min(a.size(), b.size());
  if (int c = std::memcmp(a.data(), b.data(), n); c != 0) return c < 0;
  if (a.size() == b.size()) return !a_folder && b_folder;
  if (a.size() < b.size()) return !a_folder || '/' < static_cast<unsigned char>(b[n]);
  return b_folder && static_cast<unsigned char>(a[n]) < '/';
}

bool is_temporary(std::string_view name) {
  return name.size() >= 6 && name.substr(name.size() - 6) == ".fbtmp";
}

// feedbench's own files: cache and gen metadata at the root and temporaries anywhere.
// RETURNS: the kind for left_out(), or nullptr for a file of the data set.
const char* ours_kind(std::string_view name, bool at_root) {
  if (is_temporary(name)) return "feedbench temporary";
  if (at_root && (name == "MANIFEST.sha256" || name == "feedbench-manifest.json"))
    return "feedbench manifest";
  if (at_root && name == "feedbench-gen.json") return "feedbench metadata";  // gen --like's record
  return nullptr;
}

const char* kind_of(unsigned char type) {
  switch (type) {
    case DT_LNK: return "symlink";
    case DT_FIFO: return "FIFO";
    case DT_SOCK: return "socket";
    case DT_CHR:
    case DT_BLK: return "device";
    default: return "other";
  }
}

std::int64_t mtime_of(const struct stat& st) {
  return std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

// Stats `name` in `dir_fd` without following a link. RETURNS: false when it is gone or is not
// a regular file now. (statx with AT_STATX_DONT_SYNC and only the fields used measured the
// same as fstatat on ext4: the time is in the lookup of the name, which both do.)
bool stat_regular(int dir_fd, const char* name, std::uint64_t& size, std::int64_t& mtime_ns) {
  struct stat st;
  if (::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) return false;
  size = static_cast<std::uint64_t>(st.st_size);
  mtime_ns = mtime_of(st);
  return true;
}

class Scanner {
 public:
  Scanner(FileSet& out, const std::vector<std::string>& include) : out_(out) {
    for (const std::string& g : include) globs_.push_back(split_components(g));
  }

  // Scans the root (`fd`, the FileSet's root opened) with `threads` threads. Throws the error of
  // the first folder in path order that could not be read, or the FileSet's refusal.
  void run(UniqueFd fd, unsigned threads) {
    root_.parent = std::make_shared<UniqueFd>(std::move(fd));  // the root's own: read_folder takes it
    queue_.push_back(&root_);
    stack_.push_back(Frame{&root_, 0, 0});
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t)
      if (!start_thread(
               pool, [this] { work(); }, "scan thread", t, threads)
               .empty())
        break;  // fewer
    work();
    for (std::thread& t : pool) t.join();
    if (emit_error_) std::rethrow_exception(emit_error_);
    FB_CHECK(stack_.empty(), "the scan ended before every folder was added");
  }

 private:
  struct Frame {
    Folder* folder;
    std::size_t child;
    std::size_t subfolder;
  };

  static constexpr std::size_t kBufferSize = std::size_t{256} * 1024;  // getdents64's: ~8000 names a call

  // One thread's reusable buffers: nothing is allocated per file.
  struct Buffers {
    struct Item {
      std::uint64_t ino;
      std::uint64_t name_offset;
      std::uint8_t name_length;
      unsigned char type;
      bool have_stat;
      bool keep;
      std::uint64_t size;
      std::int64_t mtime_ns;
    };
    std::unique_ptr<char[]> dirents = std::make_unique_for_overwrite<char[]>(kBufferSize);
    std::vector<Item> items;
    std::vector<std::uint32_t> order;
    std::string rel;
    std::vector<std::string_view> parts;
  };

  void work() {
    Buffers buffers;
    std::unique_lock<std::mutex> lock(queue_mutex_);
    while (true) {
      queue_ready_.wait(lock, [this] { return !queue_.empty() || busy_ == 0; });
      if (queue_.empty()) break;  // and no thread busy: nothing more will come
      Folder* folder = queue_.back();
      queue_.pop_back();
      const bool skip = pruned(*folder);
      ++busy_;
      lock.unlock();
      if (skip) folder->parent.reset();
      if (!skip) {
        try {
          read_folder(*folder, buffers);
        } catch (...) {
          // Subfolders it queued stay: they come after it in path order, so they are pruned.
          folder->error = std::current_exception();
        }
      }
      if (folder->error) note_failure(folder->rel);
      {
        std::lock_guard<std::mutex> emit_lock(emit_mutex_);
        folder->done = true;
        emit_ready();
      }
      lock.lock();
      --busy_;
      if (busy_ == 0 && queue_.empty()) queue_ready_.notify_all();
    }
  }

  // A folder after one that failed, in path order, is not read: the scan reports the first.
  bool pruned(const Folder& folder) const { return failed_ && folder.rel > first_failed_; }

  void note_failure(const std::string& rel) {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    if (!failed_ || rel < first_failed_) first_failed_ = rel;
    failed_ = true;
  }

  std::string where(const std::string& rel) const {
    const std::string& root = out_.root();  // fixed at construction: no lock needed
    if (rel.empty()) return root;
    return root + (root.back() == '/' ? "" : "/") + rel.substr(0, rel.size() - 1);
  }

  // Reads one folder: its entries, which of them the selection keeps, their sizes and times,
  // and its subfolders queued for the threads.
  void read_folder(Folder& folder, Buffers& b) {
    const bool at_root = &folder == &root_;
    std::shared_ptr<UniqueFd> self = open_folder(folder, at_root);
    if (!self) return;  // removed, or replaced by a file or a link, while scanning
    const int dir_fd = self->get();
    read_entries(folder, dir_fd, at_root, b);
    classify_entries(folder, dir_fd, at_root, b);
    stat_kept_files(folder, dir_fd, b);
    add_children(folder, self, b);
    queue_subfolders(folder);
  }

  // Takes the folder's parent from it. RETURNS: the folder opened (the root: its own, already
  // open), or nullptr when it is gone or is no folder now.
  std::shared_ptr<UniqueFd> open_folder(Folder& folder, bool at_root) const {
    std::shared_ptr<UniqueFd> self = std::move(folder.parent);
    if (at_root) return self;
    UniqueFd fd(::openat(self->get(), folder.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    const int err = errno;
    self.reset();  // the parent closes once its last subfolder is open
    // Removed, or replaced by a file or a link, while scanning: not ours to fail on.
    if (!fd && (err == ENOENT || err == ENOTDIR || err == ELOOP)) return nullptr;
    if (!fd) throw InputError(errno_message("dataset: cannot open folder '" + where(folder.rel) + "'", err));
    return std::make_shared<UniqueFd>(std::move(fd));
  }

  // Reads the folder's entries into b.items, their names into folder.names.
  void read_entries(Folder& folder, int dir_fd, bool at_root, Buffers& b) const {
    b.items.clear();
    PodArray<char>& names = folder.names;
    while (true) {
      const long n = ::syscall(SYS_getdents64, dir_fd, b.dirents.get(), kBufferSize);
      if (n < 0) {
        const int err = errno;
        // A folder removed after it was opened reads as ENOENT: it has nothing left to scan.
        if (err == ENOENT && !at_root) break;
        throw InputError(errno_message("dataset: cannot read folder '" + where(folder.rel) + "'", err));
      }
      if (n == 0) break;
      for (long off = 0; off < n;) {
        auto* d = reinterpret_cast<LinuxDirent64*>(b.dirents.get() + off);
        off += d->d_reclen;
        const char* name = d->d_name;
        if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
        const std::size_t length = std::strlen(name);
        FB_CHECK(length <= 255, "a name longer than NAME_MAX from getdents64");
        b.items.push_back(
            Buffers::Item{d->d_ino, names.size(), std::uint8_t(length), d->d_type, false, false, 0, 0});
        names.append(name, length + 1);
      }
    }
  }

  // What each entry is, and which the selection keeps; those it would have reached but does
  // not keep noted as left out.
  void classify_entries(Folder& folder, int dir_fd, bool at_root, Buffers& b) {
    const PodArray<char>& names = folder.names;
    for (Buffers::Item& item : b.items) {
      const char* name = names.data() + item.name_offset;
      const std::string_view file_name(name, item.name_length);
      if (item.type == DT_UNKNOWN) {  // some file systems (xfs without ftype, fuse) do not say
        struct stat st;
        if (::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // vanished
        item.type = static_cast<unsigned char>(IFTODT(st.st_mode));
        item.have_stat = true;
        item.size = static_cast<std::uint64_t>(st.st_size);
        item.mtime_ns = mtime_of(st);
      }
      if (item.type == DT_DIR) {
        // Another run's scratch staging: it may vanish at any moment, and is not data.
        if (is_temporary(file_name)) note_left_out(folder, b, file_name, "feedbench temporary", true);
        else item.keep = folder_selected(folder.rel, file_name, b);
        continue;
      }
      if (item.type != DT_REG) {  // symlinks, devices, sockets: never part of a data set
        note_left_out(folder, b, file_name, kind_of(item.type), item.type == DT_LNK);
        continue;
      }
      if (const char* ours = ours_kind(file_name, at_root)) {
        note_left_out(folder, b, file_name, ours, false);
        continue;
      }
      item.keep = selected(folder.rel, file_name, b);
    }
  }

  // Stats the kept files in inode order: on a cold cache the inode tables are read in order.
  static void stat_kept_files(const Folder& folder, int dir_fd, Buffers& b) {
    b.order.clear();
    for (std::uint32_t i = 0; i < b.items.size(); ++i)
      if (b.items[i].keep && b.items[i].type == DT_REG && !b.items[i].have_stat) b.order.push_back(i);
    std::sort(b.order.begin(), b.order.end(),
              [&](std::uint32_t x, std::uint32_t y) { return b.items[x].ino < b.items[y].ino; });
    for (std::uint32_t i : b.order) {
      Buffers::Item& item = b.items[i];
      // Vanished, or replaced between getdents and stat: not kept.
      item.keep = stat_regular(dir_fd, folder.names.data() + item.name_offset, item.size, item.mtime_ns);
    }
  }

  // The kept entries in path order as the folder's children; each subfolder's parent `self`.
  static void add_children(Folder& folder, const std::shared_ptr<UniqueFd>& self, Buffers& b) {
    const PodArray<char>& names = folder.names;
    b.order.clear();
    for (std::uint32_t i = 0; i < b.items.size(); ++i)
      if (b.items[i].keep) b.order.push_back(i);
    auto name_of = [&](const Buffers::Item& item) {
      return std::string_view(names.data() + item.name_offset, item.name_length);
    };
    std::sort(b.order.begin(), b.order.end(), [&](std::uint32_t x, std::uint32_t y) {
      const Buffers::Item& a = b.items[x];
      const Buffers::Item& c = b.items[y];
      return child_less(name_of(a), a.type == DT_DIR, name_of(c), c.type == DT_DIR);
    });
    for (std::uint32_t i : b.order) {
      const Buffers::Item& item = b.items[i];
      const bool is_folder = item.type == DT_DIR;
      folder.children.push_back(Folder::Child{
          item.size, item.mtime_ns,
          item.name_offset << 9 | std::uint64_t(item.name_length) << 1 | (is_folder ? 1u : 0u)});
      if (!is_folder) continue;
      auto sub = std::make_unique<Folder>();
      sub->name.assign(name_of(item));
      sub->rel = folder.rel + sub->name + "/";
      sub->parent = self;
      folder.subfolders.push_back(std::move(sub));
    }
  }

  void queue_subfolders(const Folder& folder) {
    if (folder.subfolders.empty()) return;
    std::lock_guard<std::mutex> lock(queue_mutex_);
    // Last in, first out, the first subfolder on top: the threads walk about depth first, so
    // the folders read but not yet added stay few.
    for (auto it = folder.subfolders.rbegin(); it != folder.subfolders.rend(); ++it)
      queue_.push_back(it->get());
    queue_ready_.notify_all();
  }

  // Appends to the FileSet every finished folder next in path order. Under emit_mutex_.
  void emit_ready() {
    while (!stack_.empty() && !emit_error_) {
      const std::size_t top = stack_.size() - 1;
      Folder& folder = *stack_[top].folder;
      if (!folder.done) return;
      if (folder.error) {
        emit_error_ = folder.error;
        return;
      }
      if (stack_[top].child == 0)
        for (FileSet::LeftOut& l : folder.left_out) out_.add_left_out(l.path, std::move(l.kind));
      bool descended = false;
      while (stack_[top].child < folder.children.size()) {
        const Folder::Child& c = folder.children[stack_[top].child++];
        if (c.is_folder()) {
          stack_.push_back(Frame{folder.subfolders[stack_[top].subfolder++].get(), 0, 0});
          descended = true;
          break;
        }
        try {
          out_.add(folder.rel, c.name_in(folder.names), c.size, c.mtime_ns);
        } catch (...) {
          emit_error_ = std::current_exception();
          std::lock_guard<std::mutex> lock(queue_mutex_);
          failed_ = true;  // nothing more is read
          first_failed_.clear();
          return;
        }
      }
      if (descended) continue;
      // Finished: its memory goes now, not at the end of the scan.
      folder.names = {};
      folder.children = {};
      folder.subfolders.clear();
      folder.left_out.clear();
      stack_.pop_back();
    }
  }

  // Records an entry the scan does not keep, when the selection would have reached it (a
  // folder or a link to one: when something below it could be selected).
  void note_left_out(Folder& folder, Buffers& b, std::string_view name, const char* kind,
                     bool may_be_folder) {
    b.rel.assign(folder.rel);
    b.rel += name;
    if (selected_path(b.rel, b) || (may_be_folder && folder_path_selected(b.rel, b)))
      folder.left_out.push_back(FileSet::LeftOut{b.rel, kind});
  }

  bool selected(const std::string& rel, std::string_view name, Buffers& b) {
    if (globs_.empty()) return true;
    b.rel.assign(rel);
    b.rel += name;
    return selected_path(b.rel, b);
  }

  bool folder_selected(const std::string& rel, std::string_view name, Buffers& b) {
    if (globs_.empty()) return true;
    b.rel.assign(rel);
    b.rel += name;
    return folder_path_selected(b.rel, b);
  }

  // Reuses b.parts for the split: no allocation per file.
  bool selected_path(std::string_view rel, Buffers& b) const {
    if (globs_.empty()) return true;
    split_components(rel, b.parts);
    for (const auto& g : globs_)
      if (match_from(g, 0, b.parts, 0)) return true;
    return false;
  }

  // Prunes folders no include glob can reach, so "validation/**" never walks "train/".
  bool folder_path_selected(std::string_view rel, Buffers& b) const {
    if (globs_.empty()) return true;
    split_components(rel, b.parts);
    for (const auto& g : globs_)
      if (may_match_below(g, 0, b.parts, 0)) return true;
    return false;
  }

  FileSet& out_;
  Folder root_;  // its name is the root's absolute path, for messages
  std::vector<std::vector<std::string_view>> globs_;

  std::mutex queue_mutex_;  // guards queue_, busy_, failed_, first_failed_
  std::condition_variable queue_ready_;
  std::vector<Folder*> queue_;
  unsigned busy_ = 0;
  bool failed_ = false;
  std::string first_failed_;

  std::mutex emit_mutex_;  // guards stack_, emit_error_, out_ and every Folder::done
  std::vector<Frame> stack_;
  std::exception_ptr emit_error_;
};

unsigned scan_threads(unsigned asked) {
  if (asked > 0) return asked;
  return scan_threads_setting(kDefaultScanThreads);
}

}  // namespace

FileSet scan_dataset(const std::string& root, const std::vector<std::string>& include,
                     const ScanOptions& options) {
  if (root.empty()) throw InputError("dataset root: expected a folder, got an empty path");
  char* resolved = ::realpath(root.c_str(), nullptr);
  if (!resolved) throw InputError(errno_message("dataset root '" + root + "'", errno));
  std::string real(resolved);
  std::free(resolved);
  struct stat st;
  if (::stat(real.c_str(), &st) != 0) throw InputError(errno_message("dataset root '" + root + "'", errno));
  if (!S_ISDIR(st.st_mode)) throw InputError("dataset root '" + root + "': not a folder");
  FileSet files(real, options.limits);
  UniqueFd fd = files.open_root();
  if (!fd) throw InputError(errno_message("dataset root '" + root + "'", errno));
  Scanner scanner(files, include);
  scanner.run(std::move(fd), scan_threads(options.threads));
  files.sort();
  files.shrink_to_fit();
  return files;
}

}  // namespace feedbench
