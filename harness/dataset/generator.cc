// The synthetic data set writer behind `feedbench gen`.
//
// Every byte is a pure function of (seed, file index, offset): a counter-based splitmix64
// stream, so files can be written by several threads in any order and still come out the
// same, and any file can be regenerated or checked on its own.
#include "feedbench/dataset/generator.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "feedbench/base/cores.h"
#include "feedbench/base/error.h"
#include "feedbench/base/file_system.h"
#include "feedbench/base/open_beneath.h"
#include "feedbench/base/splitmix.h"
#include "feedbench/base/text.h"
#include "feedbench/base/threads.h"
#include "feedbench/base/unique_fd.h"
#include "feedbench/base/units.h"
#include "feedbench/build_info.h"
#include "feedbench/dataset/jpeg.h"
#include "feedbench/dataset/tfrecord.h"

namespace feedbench {
namespace {

// A per-file key; the "stream" constant keeps sizes independent of contents.
constexpr std::uint64_t file_key(std::uint64_t seed, std::uint64_t index, std::uint64_t stream) {
  return mix64(mix64(seed ^ (stream * 0xD6E8FEB86659FD93ull)) + (index + 1) * kSplitmixGolden);
}

std::uint64_t ceil_div_mul(std::uint64_t a, std::uint64_t n, std::uint64_t k) {
  // ceil(a * n / k) without overflow
  unsigned __int128 p = static_cast<unsigned __int128>(a) * n;
  return static_cast<std::uint64_t>((p + k - 1) / k);
}

int digits(std::uint64_t v) {
  int d = 1;
  while (v >= 10) {
    v /= 10;
    ++d;
  }
  return d;
}

bool sharded(const GenOptions& o) {
  return o.layout == GenLayout::kShards || o.layout == GenLayout::kTfrecord;
}

std::uint64_t files_written(const GenOptions& o) { return sharded(o) ? o.shards : o.files; }

// RETURNS: the size drawn for file (record) `index`: uniform in [min, max] by multiply-shift
// (no modulo bias worth the name).
std::uint64_t drawn_size(const GenOptions& o, std::uint64_t index) {
  if (o.min_size == o.max_size) return o.min_size;
  std::uint64_t span = o.max_size - o.min_size + 1;
  std::uint64_t r = file_key(o.seed, index, 1);
  if (span == 0) return r;  // the full 64-bit range
  return o.min_size + static_cast<std::uint64_t>((static_cast<unsigned __int128>(r) * span) >> 64);
}

std::uint64_t class_of(const GenOptions& o, std::uint64_t index) {
  // Classes hold contiguous, evenly sized runs of files (sizes differ by at most one).
  return static_cast<std::uint64_t>(static_cast<unsigned __int128>(index) * o.classes / o.files);
}

std::string class_folder(const GenOptions& o, std::uint64_t c) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "class_%0*llu", std::min(20, std::max(3, digits(o.classes - 1))),
                static_cast<unsigned long long>(c));
  return buf;
}

bool folder_is_empty(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (!dir) throw InputError(errno_message("--out '" + path + "'", errno));
  bool empty = true;
  while (struct dirent* d = ::readdir(dir)) {
    if (std::strcmp(d->d_name, ".") != 0 && std::strcmp(d->d_name, "..") != 0) {
      empty = false;
      break;
    }
  }
  ::closedir(dir);
  return empty;
}

// Refuses a data set larger than the free space where `out` is (or would be created), before
// anything is written: a full disk half-way through helps nobody.
void check_free_space(const GenOptions& o, std::uint64_t bytes) {
  std::string at = o.out;
  struct statvfs fs {};
  // `out` may not exist yet: ask its nearest existing parent.
  while (::statvfs(at.c_str(), &fs) != 0) {
    if ((errno != ENOENT && errno != ENOTDIR) || at == "/" || at == ".") return;  // the create names it
    const auto slash = at.find_last_of('/');
    at = slash == std::string::npos ? "." : slash == 0 ? "/" : at.substr(0, slash);
  }
  const unsigned __int128 free_bytes = static_cast<unsigned __int128>(fs.f_bavail) * fs.f_frsize;
  if (bytes <= free_bytes) return;
  const std::string need =
      bytes == UINT64_MAX ? "more than " + std::to_string(UINT64_MAX) : std::to_string(bytes);
  const char* option =
      o.layout == GenLayout::kLike || o.layout == GenLayout::kListed ? "--like" : "--files/--file-size";
  throw InputError(std::string(option) + ": the data set needs " + need + " bytes (" +
                   format_size(double(bytes)) + "), more than the " +
                   std::to_string(static_cast<std::uint64_t>(free_bytes)) + " bytes (" +
                   format_size(double(free_bytes)) + ") free on the file system at '" + at + "'");
}

// Writes shard `index` of a kTfrecord data set to `fd`: each record framed as TensorFlow frames
// it, through `buffer`. RETURNS: bytes written.
std::uint64_t write_tfrecord_shard(const GenOptions& o, int fd, std::uint64_t index, char* buffer,
                                   std::size_t buffer_size, const std::string& where) {
  std::size_t used = 0;
  std::uint64_t written = 0;
  auto flush = [&] {
    for (std::size_t done = 0; done < used;) {
      ssize_t n = ::write(fd, buffer + done, used - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw RunError(errno_message("gen: write '" + where + "'", errno));
      }
      done += static_cast<std::size_t>(n);
    }
    written += used;
    used = 0;
  };
  auto put = [&](const void* bytes, std::size_t n) {
    if (buffer_size - used < n) flush();
    std::memcpy(buffer + used, bytes, n);
    used += n;
  };
  for (std::uint64_t r = gen_first_record(o, index); r < gen_first_record(o, index + 1); ++r) {
    const std::uint64_t length = gen_record_size(o, r);
    unsigned char header[kTfRecordHeaderBytes];
    tfrecord_header(length, header);
    put(header, sizeof header);
    std::uint32_t crc = 0;
    // The data straight into the buffer, a chunk (a multiple of 8 bytes) at a time.
    for (std::uint64_t offset = 0; offset < length;) {
      if (buffer_size - used < 8) flush();
      std::size_t len = static_cast<std::size_t>(
          std::min<std::uint64_t>((buffer_size - used) & ~std::size_t(7), length - offset));
      if (len == 0) {
        flush();
        continue;
      }
      gen_fill(o.seed, r, offset, buffer + used, len);
      crc = crc32c_extend(crc, buffer + used, len);
      used += len;
      offset += len;
    }
    unsigned char footer[4];
    const std::uint32_t masked = mask_crc(crc);
    for (int i = 0; i < 4; ++i) footer[i] = static_cast<unsigned char>(masked >> (8 * i));
    put(footer, sizeof footer);
  }
  flush();
  return written;
}

// RETURNS: the folder of `path` (relative to out_fd) opened beneath out_fd without following a
// symbolic link (out_fd itself, not owned, for a file at the root), and in *leaf its last name.
UniqueFd open_parent_beneath(const GenOptions& o, int out_fd, const std::string& path, std::string* leaf) {
  const auto slash = path.find_last_of('/');
  *leaf = slash == std::string::npos ? path : path.substr(slash + 1);
  if (slash == std::string::npos) return UniqueFd();
  const std::string parent = path.substr(0, slash);
  UniqueFd fd(open_beneath(out_fd, parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) throw RunError(errno_message("gen: open folder '" + o.out + "/" + parent + "'", errno));
  return fd;
}

// RETURNS: the temporary file `index` is written to in its folder: a short name of its own
// whatever the file's (a name of 250 bytes has no room for a suffix), ending as every feedbench
// temporary does, so that a scan skips one left behind.
std::string temporary_name(std::uint64_t index) {
  char tmp_name[40];
  std::snprintf(tmp_name, sizeof tmp_name, ".fb-%016llx.fbtmp", static_cast<unsigned long long>(index));
  return tmp_name;
}

// RETURNS: listed file `index`'s JPEG of exactly `size` bytes: at its original's dimensions where
// the listing has them and an image of them fits (*dims 1), else at dimensions from the size (*dims
// -1 when the listing had dimensions, else 0); empty when no image fits the size.
std::vector<std::uint8_t> listed_image(const GenOptions& o, std::uint64_t index, std::uint64_t size,
                                       int* dims) {
  const ListedFile& f = o.listed->files[index];
  if (f.width > 0 && f.height > 0) {
    std::vector<std::uint8_t> image = make_exact_jpeg_at(o.seed, index, size, {f.width, f.height});
    *dims = image.empty() ? -1 : 1;
    if (!image.empty()) return image;
  }
  return make_exact_jpeg(o.seed, index, size);
}

// Writes file `index` under `out_fd`: ".fb-<index in hex>.fbtmp" in its folder, then renamed.
// RETURNS bytes written;
// *pixels the image's where it is one; *dims as listed_image says for a listed JPEG, else 0.
std::uint64_t write_one(const GenOptions& o, int out_fd, std::uint64_t index, char* buffer,
                        std::size_t buffer_size, std::uint64_t* pixels, int* dims) {
  const std::string name = gen_file_name(o, index);
  std::string leaf;
  const UniqueFd parent = open_parent_beneath(o, out_fd, name, &leaf);
  const int dir_fd = parent ? parent.get() : out_fd;
  const std::string tmp = temporary_name(index);
  std::uint64_t size = gen_file_size(o, index);
  std::vector<std::uint8_t> image;
  if (o.format == GenFormat::kJpeg) image = make_sized_jpeg(o.seed, index, size, o.jpeg);
  else if (o.layout == GenLayout::kListed && listed_as_jpeg(name))
    image = listed_image(o, index, size, dims);  // empty: too small for one, written as bytes
  const bool is_image = !image.empty();
  if (is_image) {
    size = image.size();
    *pixels = jpeg_header_pixels(image);
  }
  // Created exclusively: a file, link or FIFO planted at the temporary name is never opened.
  int fd = create_temporary(dir_fd, tmp, 0644);
  if (fd < 0)
    throw RunError("gen: " +
                   temporary_refusal("'" + o.out + "/" + name + "' (its temporary " + tmp + ")", errno));
  std::uint64_t offset = 0;
  try {
    if (o.layout == GenLayout::kTfrecord)
      offset = size = write_tfrecord_shard(o, fd, index, buffer, buffer_size, o.out + "/" + tmp);
    while (offset < size) {
      std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(buffer_size, size - offset));
      if (is_image) std::memcpy(buffer, image.data() + offset, len);
      else gen_fill(o.seed, index, offset, buffer, len);
      if (!is_image && offset == 0 && size < 16 &&
          std::all_of(buffer, buffer + len, [](char c) { return c == 0; }))
        buffer[0] = 0x5A;  // never an all-zero file, even of a few bytes
      for (std::size_t done = 0; done < len;) {
        ssize_t n = ::write(fd, buffer + done, len - done);
        if (n < 0) {
          if (errno == EINTR) continue;
          throw RunError(errno_message("gen: write '" + o.out + "/" + name + "'", errno));
        }
        done += static_cast<std::size_t>(n);
      }
      offset += len;
    }
    if (::close(fd) != 0) {
      fd = -1;
      throw RunError(errno_message("gen: close '" + o.out + "/" + name + "'", errno));
    }
    fd = -1;
    if (::renameat(dir_fd, tmp.c_str(), dir_fd, leaf.c_str()) != 0)
      throw RunError(errno_message("gen: rename to '" + o.out + "/" + name + "'", errno));
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlinkat(dir_fd, tmp.c_str(), 0);
    throw;
  }
  return size;
}

// Writes <out>/feedbench-gen.json (temporary name, then renamed): the data set's origin (kLike)
// or its images' style (kJpeg).
void write_gen_record(const GenOptions& o, int out_fd, const GenSummary& summary) {
  nlohmann::ordered_json j;
  j["schema"] = kGenRecordSchema;
  // An image folder's record has no time: the same seed and options write the same bytes.
  if (o.like || o.listed) j["created_utc"] = utc_timestamp();
  j["feedbench_version"] = build::kVersion;
  j["seed"] = o.seed;
  if (o.like) j["like"] = o.like->origin;
  if (o.listed) j["like"] = o.listed->origin;
  j["generated"] = {{"files", summary.files}, {"bytes", summary.bytes}, {"folders", summary.folders}};
  if (o.listed)
    j["generated"]["images"] = {{"jpeg", summary.images},
                                {"named_jpeg_written_as_bytes", summary.images_as_bytes},
                                {"at_original_dimensions", summary.images_at_dimensions},
                                {"not_at_original_dimensions", summary.images_off_dimensions},
                                {"pixels", summary.pixels}};
  if (o.format == GenFormat::kJpeg) {
    // What was asked for, and what the images hold (what decoding them costs follows the pixels).
    const double pixels = double(summary.pixels);
    j["jpeg"] = {
        {"quality", o.jpeg.quality},
        {"subsampling", "4:4:4"},
        {"bytes_per_pixel_asked",
         o.jpeg.bytes_per_pixel > 0 ? nlohmann::json(o.jpeg.bytes_per_pixel) : nlohmann::json(nullptr)},
        {"pixels_asked", o.jpeg.pixels > 0 ? nlohmann::json(o.jpeg.pixels) : nlohmann::json(nullptr)},
        {"bytes_per_pixel", pixels > 0 ? double(summary.bytes) / pixels : 0.0},
        {"pixels_mean", summary.files ? pixels / double(summary.files) : 0.0}};
  }
  // A path that is no UTF-8 (the trace's, its job's data folder) is shown, not refused.
  const std::string text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  const std::string tmp = std::string(kGenRecordName) + ".fbtmp";
  int fd = create_temporary(out_fd, tmp, 0644);  // exclusively, as every temporary
  if (fd < 0) throw RunError("gen: " + temporary_refusal("'" + o.out + "/" + tmp + "'", errno));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      ::unlinkat(out_fd, tmp.c_str(), 0);
      throw RunError(errno_message("gen: write '" + o.out + "/" + tmp + "'", err));
    }
    done += std::size_t(n);
  }
  if (::close(fd) != 0 || ::renameat(out_fd, tmp.c_str(), out_fd, kGenRecordName) != 0) {
    const int err = errno;
    ::unlinkat(out_fd, tmp.c_str(), 0);
    throw RunError(errno_message("gen: write '" + o.out + "/" + kGenRecordName + "'", err));
  }
}

bool writes_record(const GenOptions& o) {
  return o.layout == GenLayout::kLike || o.layout == GenLayout::kListed || o.format == GenFormat::kJpeg;
}

// Refuses, before anything is written into a folder that already holds something (--force), a
// path gen would write that cannot be written as asked: a folder to make that is a symbolic
// link (gen never writes through one) or not a folder, a file's name that is a folder, and any
// file gen would write (or its temporary) that is one of `o.inputs` (compared by device and
// inode, so that no spelling of a path, hard link or bind mount lets an output land on an input).
// An empty folder has nothing to collide with: nothing is looked at.
void check_paths_to_write(const GenOptions& o, int out_fd) {
  if (folder_is_empty(o.out)) return;
  std::vector<std::pair<std::string, struct stat>> inputs;
  for (const auto& [option, path] : o.inputs) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) inputs.emplace_back(option + " '" + path + "'", st);
  }
  const std::string at = "--out '" + o.out + "': ";
  auto folder = [&](const std::string& path) {
    struct stat st {};
    if (::fstatat(out_fd, path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return;  // made, then
    if (S_ISLNK(st.st_mode)) {
      char target[4096];
      const ssize_t n = ::readlinkat(out_fd, path.c_str(), target, sizeof target - 1);
      throw InputError(at + "'" + o.out + "/" + path + "' is a symbolic link" +
                       (n > 0 ? " (to " + std::string(target, std::size_t(n)) + ")" : std::string()) +
                       ", where gen makes a folder; gen writes only through real folders beneath --out: "
                       "remove the link, or choose another folder");
    }
    if (!S_ISDIR(st.st_mode))
      throw InputError(
          at + "'" + o.out + "/" + path +
          "' exists and is not a folder, where gen makes one; remove it, or choose another folder");
  };
  auto file = [&](const std::string& path, bool final_name) {
    struct stat st {};
    if (::fstatat(out_fd, path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return;
    if (final_name && S_ISDIR(st.st_mode))
      throw InputError(at + "'" + o.out + "/" + path +
                       "' is a folder, where gen writes a file; remove it, or choose another folder");
    for (const auto& [input, in] : inputs)
      if (st.st_dev == in.st_dev && st.st_ino == in.st_ino)
        throw InputError(at + "gen would write '" + o.out + "/" + path + "' over " + input +
                         ", which it reads (the same file, compared by device and inode); choose another "
                         "--out, or move " +
                         input.substr(0, input.find(' ')) + "'s file out of it");
  };
  if (o.layout == GenLayout::kLike)
    for (const std::string& d : o.like->dirs) folder(d);
  if (o.layout == GenLayout::kListed)
    for (const std::string& d : o.listed->dirs) folder(d);
  if (o.layout == GenLayout::kClasses)
    for (std::uint64_t c = 0; c < o.classes; ++c) folder(class_folder(o, c));
  for (std::uint64_t i = 0; i < files_written(o); ++i) {
    const std::string name = gen_file_name(o, i);
    file(name, true);
    const auto slash = name.find_last_of('/');
    file((slash == std::string::npos ? "" : name.substr(0, slash + 1)) + temporary_name(i), false);
  }
  if (writes_record(o)) {
    file(kGenRecordName, true);
    file(std::string(kGenRecordName) + ".fbtmp", false);
  }
}

// Makes --out ready to write into: a folder, created with its missing parents (mkdir -p) when
// absent, locked against another gen (flock on its descriptor: two gens into one folder would
// leave files of both seeds under one record), then empty unless --force. RETURNS: the folder
// opened and locked (the lock goes with the descriptor when it is closed).
int open_out_folder(const GenOptions& o) {
  struct stat st;
  if (::stat(o.out.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw InputError("--out '" + o.out + "': exists and is not a folder");
  } else {
    std::string partial;
    for (std::size_t pos = 0; pos != std::string::npos;) {
      pos = o.out.find('/', pos + 1);
      partial = o.out.substr(0, pos);
      if (!partial.empty() && ::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
        throw InputError(errno_message("--out '" + o.out + "': cannot create '" + partial + "'", errno));
    }
  }
  int out_fd = ::open(o.out.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (out_fd < 0) throw InputError(errno_message("--out '" + o.out + "'", errno));
  // A file system without flock (some network ones answer ENOLCK or EOPNOTSUPP) is written
  // unlocked, as before; only another holder of the lock is refused.
  if (::flock(out_fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    ::close(out_fd);
    throw InputError("--out '" + o.out +
                     "': another feedbench gen is writing into this folder now; wait for it to finish, "
                     "or choose another folder");
  }
  try {
    // Checked under the lock: a gen that started first has its files there by now.
    if (!o.force && !folder_is_empty(o.out))
      throw InputError("--out '" + o.out +
                       "': folder is not empty; choose an empty one, or pass --force to write into it");
    check_paths_to_write(o, out_fd);
  } catch (...) {
    ::close(out_fd);
    throw;
  }
  return out_fd;
}

// Creates under `out_fd` the folders the files go in: kLike's and kListed's (parents first),
// kClasses' one per class, each in its parent opened beneath out_fd (a symbolic link on the way
// is refused, not followed). RETURNS: how many folders hold files. Closes out_fd when it throws.
std::uint64_t create_folders(const GenOptions& o, int out_fd) {
  auto create = [&](const std::string& folder) {
    try {
      std::string leaf;
      const UniqueFd parent = open_parent_beneath(o, out_fd, folder, &leaf);
      if (::mkdirat(parent ? parent.get() : out_fd, leaf.c_str(), 0755) != 0 && errno != EEXIST)
        throw RunError(errno_message("gen: create folder '" + o.out + "/" + folder + "'", errno));
    } catch (...) {
      ::close(out_fd);
      throw;
    }
  };
  if (o.layout == GenLayout::kLike) {
    for (const std::string& folder : o.like->dirs) create(folder);
    return o.like->folders.size();
  }
  if (o.layout == GenLayout::kListed) {
    for (const std::string& folder : o.listed->dirs) create(folder);
    return o.listed->folders;
  }
  if (o.layout == GenLayout::kClasses) {
    for (std::uint64_t c = 0; c < o.classes; ++c) create(class_folder(o, c));
    return o.classes;
  }
  return 1;
}

// What the writer threads share: the next file to take, what is written, the first failure.
struct WriteState {
  std::atomic<std::uint64_t> next{0}, files_done{0}, bytes_done{0}, pixels_done{0}, images_done{0};
  std::atomic<std::uint64_t> at_dimensions{0}, off_dimensions{0};  // listed JPEGs (listed_image)
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::string error;  // the first failure; read once every writer is done
};

// One writer: takes the next of `files` files from `state` and writes it, until none is left
// or a writer failed.
void write_files(const GenOptions& o, int out_fd, std::uint64_t files, WriteState& state) {
  constexpr std::size_t kBuffer = 1 << 20;
  std::unique_ptr<char[]> buffer(new char[kBuffer]);
  while (!state.failed.load(std::memory_order_relaxed)) {
    std::uint64_t i = state.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= files) break;
    try {
      std::uint64_t pixels = 0;
      int dims = 0;
      std::uint64_t n = write_one(o, out_fd, i, buffer.get(), kBuffer, &pixels, &dims);
      if (dims != 0) (dims > 0 ? state.at_dimensions : state.off_dimensions).fetch_add(1);
      state.bytes_done.fetch_add(n, std::memory_order_relaxed);
      state.pixels_done.fetch_add(pixels, std::memory_order_relaxed);
      if (pixels > 0) state.images_done.fetch_add(1, std::memory_order_relaxed);
      state.files_done.fetch_add(1, std::memory_order_relaxed);
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(state.error_mutex);
      if (state.error.empty()) state.error = e.what();
      state.failed.store(true);
    }
  }
}

// RETURNS: how many writers to run for `files` files: --threads, else two for many files or
// shards (two overlap one file's syscalls with another's generation; more rarely helps), else
// one; never more than the files.
unsigned writer_count(const GenOptions& o, std::uint64_t files) {
  unsigned threads = o.threads;
  if (threads == 0) threads = files >= 64 || sharded(o) ? std::min(2u, usable_cores()) : 1u;
  return static_cast<unsigned>(std::min<std::uint64_t>(threads, files));
}

// Writes the `files` files with writer threads, `progress` (when set) told from this thread
// every 100ms through `shown`; without progress, or when no writer thread starts, this thread
// writes too.
void run_writers(const GenOptions& o, int out_fd, std::uint64_t files,
                 const std::function<void(const GenProgress&)>& progress, GenProgress& shown,
                 WriteState& state) {
  auto worker = [&] { write_files(o, out_fd, files, state); };
  const unsigned threads = writer_count(o, files);
  std::vector<std::thread> pool;
  // Writers the system refuses (a pids limit) are done without: this thread writes too.
  for (unsigned t = progress ? 0 : 1; t < threads; ++t)
    if (!start_thread(pool, worker, "writer", t, threads).empty()) break;
  if (!progress || pool.empty()) {
    worker();  // without progress, or when no writer thread could start
  } else {
    auto last = std::chrono::steady_clock::now();
    progress(shown);
    while (state.files_done.load() < files && !state.failed.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      auto now = std::chrono::steady_clock::now();
      if (now - last >= std::chrono::milliseconds(100)) {
        last = now;
        shown.files_done = state.files_done.load();
        shown.bytes_done = state.bytes_done.load();
        progress(shown);
      }
    }
  }
  for (std::thread& t : pool) t.join();
}

// --jpeg-quality, --bytes-per-pixel and --jpeg-pixels of a kJpeg set: a density these images
// can take at that quality, for every size of the range.
void validate_jpeg_style(const GenOptions& o) {
  const JpegStyle& s = o.jpeg;
  if (s.quality < 1 || s.quality > 100)
    throw InputError("--jpeg-quality: expected a quality from 1 to 100, got " + std::to_string(s.quality));
  if (s.bytes_per_pixel > 0 && s.pixels > 0)
    throw InputError("--bytes-per-pixel: not with --jpeg-pixels (the size over the pixels is the density)");
  if (s.bytes_per_pixel == 0 && s.pixels == 0) return;
  const JpegDensity& d = JpegDensity::of(s.quality);
  const std::string range = format_printf("%.2f", d.least()) + " to " + format_printf("%.2f", d.most());
  const std::string at_quality =
      "at --jpeg-quality " + std::to_string(s.quality) + " these images take " + range + " bytes a pixel";
  if (s.bytes_per_pixel > 0) {
    if (s.bytes_per_pixel < d.least() || s.bytes_per_pixel > d.most())
      throw InputError("--bytes-per-pixel: " + at_quality + "; got " +
                       format_printf("%g", s.bytes_per_pixel) + " (a lower quality takes fewer)");
    if (double(o.max_size) / s.bytes_per_pixel > double(kMaxGenJpegPixels))
      throw InputError("--bytes-per-pixel: " + format_printf("%g", s.bytes_per_pixel) +
                       " bytes a pixel makes an image of " + std::to_string(o.max_size) +
                       " bytes more than " + std::to_string(kMaxGenJpegPixels) +
                       " pixels; expected more bytes a pixel or a smaller --file-size");
    return;
  }
  if (s.pixels < kMinGenJpegPixels || s.pixels > kMaxGenJpegPixels)
    throw InputError("--jpeg-pixels: expected from " + std::to_string(kMinGenJpegPixels) + " to " +
                     std::to_string(kMaxGenJpegPixels) + " pixels an image, got " + std::to_string(s.pixels));
  const double lo = double(o.min_size) / double(s.pixels), hi = double(o.max_size) / double(s.pixels);
  if (lo < d.least() || hi > d.most())
    throw InputError("--jpeg-pixels: " + std::to_string(s.pixels) + " pixels in images of " +
                     std::to_string(o.min_size) + ".." + std::to_string(o.max_size) + " bytes take " +
                     format_printf("%.2f", lo) + " to " + format_printf("%.2f", hi) + " bytes a pixel, but " +
                     at_quality + "; expected other pixels, --file-size or --jpeg-quality");
}

}  // namespace

void validate_gen_options(const GenOptions& o) {
  if (o.out.empty()) throw InputError("--out: expected a folder to write into");
  if (o.layout == GenLayout::kListed) {
    FB_CHECK(o.listed && o.listed->files.size() == o.files, "a listed data set needs its list");
    if (o.format != GenFormat::kBin)
      throw InputError("--format: --like TRACE writes JPEGs where the job read them; expected bin");
    if (o.files == 0) throw InputError("--like: expected at least 1 file to write");
    if (o.files > o.max_files)
      throw InputError("--like: the data set would hold " + std::to_string(o.files) + " files, more than " +
                       std::to_string(o.max_files) + " (raise the limit with --max-files N)");
    const std::set<std::string> dirs(o.listed->dirs.begin(), o.listed->dirs.end());
    for (const ListedFile& f : o.listed->files) {
      if (const std::string problem = beneath_path_problem(f.path); !problem.empty())
        throw InputError("--like: the file '" + f.path + "' " + problem + "; expected a path beneath --out");
      if (dirs.count(f.path))
        throw InputError("--like: '" + f.path + "' is listed as a file and as a folder holding files");
      if (f.path.ends_with(".fbtmp") || f.path == kGenRecordName)
        throw InputError("--like: the file '" + f.path + "' has a name of feedbench's own (" +
                         kGenRecordName + ", *.fbtmp), which a scan leaves out; expected another");
    }
    return;
  }
  if (o.layout == GenLayout::kLike) {
    FB_CHECK(o.like && o.like->files == o.files && !o.like->folders.empty(), "--like needs its shape");
    if (o.format != GenFormat::kBin)
      throw InputError("--format: --like writes pseudo-random bytes of the real sizes; expected bin");
    if (o.files > o.max_files)
      throw InputError("--scale: the data set would hold " + std::to_string(o.files) + " files, more than " +
                       std::to_string(o.max_files) +
                       " (lower --scale, or raise the limit with --max-files N)");
    return;
  }
  if (o.files == 0) throw InputError("--files: expected at least 1 file");
  if (o.min_size == 0) throw InputError("--file-size: expected at least 1 byte");
  if (o.min_size > o.max_size) throw InputError("--file-size: the range MIN..MAX must have MIN <= MAX");
  if (!sharded(o) && o.files > o.max_files)
    throw InputError("--files: expected at most " + std::to_string(o.max_files) +
                     " files (raise the limit with --max-files N), got " + std::to_string(o.files));
  // Each record of a TFRecord set is drawn and framed on its own, as a file is.
  if (o.layout == GenLayout::kTfrecord && o.files > o.max_files)
    throw InputError("--files: expected at most " + std::to_string(o.max_files) +
                     " records (raise the limit with --max-files N), got " + std::to_string(o.files));
  if (o.format == GenFormat::kJpeg) {
    if (sharded(o))
      throw InputError(
          "--format jpeg: writes one image per file; expected --layout classes or flat, not shards or "
          "tfrecord");
    if (o.min_size < kMinJpegSize)
      throw InputError("--file-size: --format jpeg needs at least " + std::to_string(kMinJpegSize) +
                       " bytes per image, got " + std::to_string(o.min_size));
    if (o.max_size > (std::uint64_t(256) << 20))
      throw InputError("--file-size: --format jpeg writes images of at most 256MiB, got " +
                       std::to_string(o.max_size) + " bytes");
    validate_jpeg_style(o);
  } else if (!o.jpeg.is_default()) {
    throw InputError("--jpeg-quality, --bytes-per-pixel, --jpeg-pixels: only with --format jpeg");
  }
  switch (o.layout) {
    case GenLayout::kClasses:
      if (o.classes == 0) throw InputError("--classes: expected at least 1 class");
      if (o.classes > o.files)
        throw InputError("--classes: " + std::to_string(o.classes) + " classes for " +
                         std::to_string(o.files) + " files would leave classes empty");
      break;
    case GenLayout::kShards:
    case GenLayout::kTfrecord:
      if (o.shards == 0) throw InputError("--shards: expected at least 1 shard");
      if (o.shards > o.files)
        throw InputError("--shards: " + std::to_string(o.shards) + " shards for " + std::to_string(o.files) +
                         " records would leave shards empty");
      if (o.layout == GenLayout::kShards && o.min_size != o.max_size)
        throw InputError(
            "--file-size: --layout shards holds fixed-size records; expected one size, not a range");
      if (o.shards > o.max_files)
        throw InputError("--shards: expected at most " + std::to_string(o.max_files) +
                         " files (raise the limit with --max-files N), got " + std::to_string(o.shards));
      break;
    case GenLayout::kFlat:
    case GenLayout::kLike:  // checked above
    case GenLayout::kListed: break;
  }
}

std::uint64_t gen_total_bytes(const GenOptions& o) {
  if (o.layout == GenLayout::kTfrecord) {
    // Every record's data and framing.
    std::uint64_t total = 0;
    for (std::uint64_t r = 0; r < o.files; ++r) {
      const std::uint64_t size = gen_record_size(o, r);
      if (size > UINT64_MAX - kTfRecordFramingBytes || total > UINT64_MAX - kTfRecordFramingBytes - size)
        return UINT64_MAX;
      total += size + kTfRecordFramingBytes;
    }
    return total;
  }
  if (o.layout == GenLayout::kShards ||
      (o.layout != GenLayout::kLike && o.layout != GenLayout::kListed && o.min_size == o.max_size)) {
    // Records (or files) of one size: a product, saturated.
    const std::uint64_t count = o.files;
    return o.min_size != 0 && count > UINT64_MAX / o.min_size ? UINT64_MAX : count * o.min_size;
  }
  std::uint64_t total = 0;
  for (std::uint64_t i = 0; i < o.files; ++i) {
    const std::uint64_t size = gen_file_size(o, i);
    if (total > UINT64_MAX - size) return UINT64_MAX;
    total += size;
  }
  return total;
}

std::string gen_file_name(const GenOptions& o, std::uint64_t index) {
  char buf[96];
  const auto i = static_cast<unsigned long long>(index);
  const char* ext = o.format == GenFormat::kJpeg ? "jpg" : "bin";
  switch (o.layout) {
    case GenLayout::kClasses:
      std::snprintf(buf, sizeof buf, "%s/img_%0*llu.%s", class_folder(o, class_of(o, index)).c_str(),
                    std::max(6, digits(o.files - 1)), i, ext);
      break;
    case GenLayout::kFlat:
      std::snprintf(buf, sizeof buf, "file_%0*llu.%s", std::max(6, digits(o.files - 1)), i, ext);
      break;
    case GenLayout::kShards:
      std::snprintf(buf, sizeof buf, "shard_%0*llu.bin", std::max(5, digits(o.shards - 1)), i);
      break;
    case GenLayout::kLike: {
      // The folder whose run of consecutive indices holds `index`.
      const auto& folders = o.like->folders;
      const auto it = std::upper_bound(folders.begin(), folders.end(), index,
                                       [](std::uint64_t v, const ShapeFolder& f) { return v < f.first; });
      const std::string& folder = std::prev(it)->path;
      std::snprintf(buf, sizeof buf, "file_%0*llu.bin", std::max(6, digits(o.files - 1)), i);
      return folder.empty() ? std::string(buf) : folder + "/" + buf;
    }
    case GenLayout::kTfrecord:
      std::snprintf(buf, sizeof buf, "shard_%0*llu.tfrecord", std::max(5, digits(o.shards - 1)), i);
      break;
    case GenLayout::kListed: return o.listed->files[index].path;
  }
  return buf;
}

std::uint64_t gen_file_size(const GenOptions& o, std::uint64_t index) {
  if (o.layout == GenLayout::kShards) {
    std::uint64_t first = ceil_div_mul(index, o.files, o.shards);
    std::uint64_t last = ceil_div_mul(index + 1, o.files, o.shards);
    return (last - first) * o.min_size;
  }
  if (o.layout == GenLayout::kTfrecord) {
    std::uint64_t total = 0;
    for (std::uint64_t r = gen_first_record(o, index); r < gen_first_record(o, index + 1); ++r)
      total += gen_record_size(o, r) + kTfRecordFramingBytes;
    return total;
  }
  if (o.layout == GenLayout::kLike) return shape_file_size(o.like->sizes, o.files, o.seed, index);
  if (o.layout == GenLayout::kListed) return o.listed->files[index].size;
  return drawn_size(o, index);
}

std::uint64_t gen_record_size(const GenOptions& o, std::uint64_t record) { return drawn_size(o, record); }

bool listed_as_jpeg(const std::string& path) {
  const auto dot = path.find_last_of("./");
  if (dot == std::string::npos || path[dot] != '.') return false;
  const char* ext = path.c_str() + dot + 1;
  return ::strcasecmp(ext, "jpg") == 0 || ::strcasecmp(ext, "jpeg") == 0;
}

std::uint64_t gen_first_record(const GenOptions& o, std::uint64_t shard) {
  return ceil_div_mul(shard, o.files, o.shards);
}

void gen_fill(std::uint64_t seed, std::uint64_t index, std::uint64_t offset, char* buffer, std::size_t size) {
  FB_CHECK(offset % 8 == 0, "gen_fill: offset must be a multiple of 8");
  const std::uint64_t key = file_key(seed, index, 0);
  std::uint64_t counter = key + (offset / 8) * kSplitmixGolden;
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    counter += kSplitmixGolden;
    std::uint64_t w = mix64(counter);
    std::memcpy(buffer + i, &w, 8);
  }
  if (i < size) {
    counter += kSplitmixGolden;
    std::uint64_t w = mix64(counter);
    std::memcpy(buffer + i, &w, size - i);
  }
}

GenSummary generate_dataset(const GenOptions& o, const std::function<void(const GenProgress&)>& progress) {
  validate_gen_options(o);
  const std::uint64_t total_bytes = gen_total_bytes(o);
  // Images come out within a few percent of their drawn size: leave room for that.
  check_free_space(o, o.format == GenFormat::kJpeg && total_bytes < UINT64_MAX / 2
                          ? total_bytes + total_bytes / 16
                          : total_bytes);
  const int out_fd = open_out_folder(o);

  GenSummary summary;
  summary.files = files_written(o);
  summary.folders = create_folders(o, out_fd);

  GenProgress total_progress;
  total_progress.files_total = summary.files;
  total_progress.bytes_total = total_bytes;
  WriteState state;
  run_writers(o, out_fd, summary.files, progress, total_progress, state);
  summary.bytes = state.bytes_done.load();
  summary.pixels = state.pixels_done.load();
  summary.images = state.images_done.load();
  summary.images_at_dimensions = state.at_dimensions.load();
  summary.images_off_dimensions = state.off_dimensions.load();
  if (o.listed)
    for (const ListedFile& f : o.listed->files) summary.images_as_bytes += listed_as_jpeg(f.path) ? 1 : 0;
  summary.images_as_bytes -= std::min(summary.images_as_bytes, summary.images);
  std::string& error = state.error;
  // Written last: a folder with the record holds every file it describes.
  if (error.empty() && writes_record(o)) {
    try {
      write_gen_record(o, out_fd, summary);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  ::close(out_fd);
  if (!error.empty()) throw RunError(error);
  if (progress) {
    total_progress.files_done = summary.files;
    total_progress.bytes_done = summary.bytes;
    progress(total_progress);
  }
  return summary;
}

}  // namespace feedbench
