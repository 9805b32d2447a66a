// The read recorder's files read back (see read_log.h).
#include "feedbench/watch/read_log.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <string_view>

#include "feedbench/base/error.h"
#include "feedbench/base/file_system.h"
#include "feedbench/watch/guest_counters.h"

namespace feedbench {
namespace {

namespace fs = std::filesystem;

// One line's space-separated fields, read in turn; the path is the rest of the line.
class Fields {
 public:
  Fields(std::string_view line, std::string where) : rest_(line), where_(std::move(where)) {}

  template <class T>
  T number(const char* what) {
    const std::string_view f = next(what);
    T v{};
    const auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
    if (ec != std::errc() || end != f.data() + f.size())
      throw InputError(where_ + ": " + what + ": expected a number, got '" + std::string(f) + "'");
    return v;
  }
  // A time: never negative (a difference of two must not overflow).
  std::int64_t time(const char* what) {
    const auto v = number<std::int64_t>(what);
    if (v < 0) throw InputError(where_ + ": " + what + ": a time in ns, got " + std::to_string(v));
    return v;
  }
  // The rest of the line, %XX decoded.
  std::string path() {
    if (rest_.empty()) throw InputError(where_ + ": expected a path at the end of the line");
    std::string out;
    for (std::size_t i = 0; i < rest_.size(); ++i) {
      if (rest_[i] != '%') {
        out += rest_[i];
        continue;
      }
      unsigned v = 0;
      if (i + 2 >= rest_.size() ||
          std::from_chars(rest_.data() + i + 1, rest_.data() + i + 3, v, 16).ptr != rest_.data() + i + 3)
        throw InputError(where_ + ": a path's %XX escape is cut short or not hexadecimal");
      out += char(v);
      i += 2;
    }
    return out;
  }
  void end() {
    if (!rest_.empty())
      throw InputError(where_ + ": unexpected text at the end: '" + std::string(rest_) + "'");
  }

 private:
  std::string_view next(const char* what) {
    if (rest_.empty()) throw InputError(where_ + ": the line ends before its " + what);
    const std::size_t space = rest_.find(' ');
    const std::string_view f = rest_.substr(0, space);
    rest_ = space == std::string_view::npos ? std::string_view() : rest_.substr(space + 1);
    return f;
  }
  std::string_view rest_;
  std::string where_;
};

constexpr std::string_view kCodeFolders[] = {"/usr/",       "/lib/", "/lib64/", "/etc/",
                                             "/opt/conda/", "/bin/", "/sbin/"};
constexpr std::string_view kCodeSuffixes[] = {".py", ".pyc", ".so", ".pyi"};
// The kernel's own files: neither the job's data nor its code (the probe reads /proc too).
constexpr std::string_view kKernelFolders[] = {"/proc/", "/sys/"};

void add(ReadSummary::Folder& f, const FileRecord& r) {
  ++f.files;
  f.bytes += r.bytes;
  f.reads += r.reads;
  if (r.first_ns > 0 && (f.first_ns == 0 || r.first_ns < f.first_ns)) f.first_ns = r.first_ns;
  f.last_ns = std::max(f.last_ns, r.last_ns);
}

}  // namespace

bool is_kernel_path(const std::string& path) {
  for (const std::string_view d : kKernelFolders)
    if (path.starts_with(d)) return true;
  return false;
}

bool is_code_path(const std::string& path) {
  for (const std::string_view d : kCodeFolders)
    if (path.starts_with(d)) return true;
  // /dev/shm holds data staged in memory; the rest of /dev is no file a job reads as data.
  if (path.starts_with("/dev/") && !path.starts_with("/dev/shm/")) return true;
  // .pth is a site folder's path file there, and PyTorch's tensor file anywhere else.
  if (path.ends_with(".pth") && (path.find("/site-packages/") != std::string::npos ||
                                 path.find("/dist-packages/") != std::string::npos))
    return true;
  const std::string name = fs::path(path).filename().string();
  for (const std::string_view s : kCodeSuffixes)
    if (name.ends_with(s) || name.find(std::string(s) + ".") != std::string::npos) return true;  // libx.so.1
  return false;
}

void parse_read_log(const std::string& name, std::istream& in, const ReadLogVisitor& visit,
                    std::uint64_t* torn) {
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (in.eof()) {  // no newline after it: cut short by a killed process
      if (!line.empty() && torn != nullptr) ++*torn;
      break;
    }
    const std::string where = name + ":" + std::to_string(number);
    if (line.size() < 2 || line[1] != ' ')
      throw InputError(where + ": expected a record 'F ...', 'O ...' or 'R ...'");
    Fields f(std::string_view(line).substr(2), where);
    switch (line[0]) {
      case 'F': {
        FileRecord r;
        r.pid = f.number<std::int64_t>("pid");
        r.image = f.number<std::int64_t>("image");
        r.tid = f.number<std::int64_t>("tid");
        r.open_ns = f.time("open time");
        r.first_ns = f.time("first read's time");
        r.last_ns = f.time("last read's time");
        r.bytes = f.number<std::uint64_t>("bytes");
        r.reads = f.number<std::uint64_t>("reads");
        r.size = f.number<std::uint64_t>("size");
        r.dev_major = f.number<std::uint32_t>("device major");
        r.dev_minor = f.number<std::uint32_t>("device minor");
        r.inode = f.number<std::uint64_t>("inode");
        r.path = f.path();
        if (visit.file) visit.file(r);
        break;
      }
      case 'O': {
        OpenRecord r;
        r.pid = f.number<std::int64_t>("pid");
        r.image = f.number<std::int64_t>("image");
        r.serial = f.number<std::uint64_t>("serial");
        r.open_ns = f.time("open time");
        r.size = f.number<std::uint64_t>("size");
        r.path = f.path();
        if (visit.open) visit.open(r);
        break;
      }
      case 'R': {
        ReadRecord r;
        r.pid = f.number<std::int64_t>("pid");
        r.image = f.number<std::int64_t>("image");
        r.tid = f.number<std::int64_t>("tid");
        r.serial = f.number<std::uint64_t>("serial");
        r.t0_ns = f.time("start");
        r.t1_ns = f.time("end");
        r.offset = f.number<std::int64_t>("offset");
        r.bytes = f.number<std::int64_t>("bytes");
        f.end();
        if (r.t1_ns < r.t0_ns) throw InputError(where + ": the read ends before it began");
        if (visit.read) visit.read(r);
        break;
      }
      default: throw InputError(where + ": unknown record '" + line.substr(0, 1) + "' (expected F, O or R)");
    }
  }
}

std::vector<std::string> read_log_files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.starts_with("reads-") && n.ends_with(".txt")) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

ReadSummary read_summary(const std::string& dir, const std::vector<TimeWindow>& windows) {
  ReadSummary s;
  s.window_bytes.assign(windows.size(), 0);
  std::map<std::string, ReadSummary::Folder> folders;
  ReadLogVisitor visit;
  visit.file = [&](const FileRecord& r) {
    if (r.reads == 0 || is_kernel_path(r.path)) return;  // opened, never read; or the kernel's
    if (is_code_path(r.path)) {
      add(s.code, r);
      return;
    }
    ++s.files;
    s.bytes += r.bytes;
    s.reads += r.reads;
    for (std::size_t w = 0; w < windows.size(); ++w)
      if (r.first_ns >= windows[w].from_ns && r.first_ns < windows[w].to_ns) s.window_bytes[w] += r.bytes;
    const std::string folder = fs::path(r.path).parent_path().string();
    auto it = folders.find(folder);
    if (it == folders.end()) {
      if (folders.size() >= ReadSummary::kMaxFolders) {
        add(s.other, r);
        return;
      }
      it = folders.emplace(folder, ReadSummary::Folder{folder, r.dev_major, r.dev_minor}).first;
    }
    add(it->second, r);
  };
  for (const std::string& file : read_log_files(dir)) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw RunError("cannot read " + file);
    parse_read_log(file, in, visit, &s.torn_lines);
    ++s.processes;
  }
  for (auto& [_, f] : folders) s.folders.push_back(std::move(f));
  std::sort(s.folders.begin(), s.folders.end(), [](const auto& a, const auto& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.path < b.path;
  });
  return s;
}

LostRecords lost_records(const std::string& bytes) {
  namespace gc = guest_counters;
  LostRecords l;
  if (bytes.size() < gc::kBytes) return l;
  const auto word = [&](std::size_t i) {
    std::uint64_t v = 0;
    for (int b = 7; b >= 0; --b) v = v << 8 | std::uint8_t(bytes[i * 8 + std::size_t(b)]);
    return v;
  };
  std::uint64_t* reasons[3] = {&l.no_space, &l.refused, &l.other};
  for (std::size_t r = 0; r < 3; ++r) {
    *reasons[r] += word(gc::kRecorderLost + r);
    for (std::size_t s = 0; s < gc::kProbeSlotCount; ++s)
      *reasons[r] += word(gc::kProbeSlots + s * gc::kProbeSlotWords + 1 + r);
  }
  l.unrecorded_calls = word(gc::kUnrecorded);
  if (const std::uint64_t uid = word(gc::kRefusedUid); uid > 0) l.refused_uid = std::uint32_t(uid - 1);
  return l;
}

std::string lost_records_text(const LostRecords& lost) {
  std::vector<std::string> why;
  if (lost.no_space)
    why.push_back(std::to_string(lost.no_space) +
                  " for want of space where the records go (TMPDIR's file system full)");
  if (lost.refused)
    why.push_back(std::to_string(lost.refused) + " refused" +
                  (lost.refused_uid ? " to a process of user " + std::to_string(*lost.refused_uid) +
                                          " (the job changed user: watch's folder is its own user's)"
                                    : " (permission denied)"));
  if (lost.other) why.push_back(std::to_string(lost.other) + " for other reasons");
  std::string say;
  if (!why.empty()) {
    say = "records lost: " + std::to_string(lost.total()) + " of the job's records could not be written: ";
    for (std::size_t i = 0; i < why.size(); ++i) say += (i ? "; " : "") + why[i];
    say += "; watch's figures miss them";
  }
  if (lost.unrecorded_calls)
    say += std::string(say.empty() ? "" : "\n  ") + std::to_string(lost.unrecorded_calls) +
           " calls made inside the read recorder (a signal handler's) were passed on unrecorded";
  return say;
}

DataRoots data_roots(const ReadSummary& s) {
  // The folders holding most of the data, gathered: a folder joins the first root it shares a
  // folder below '/' with. A folder of stray reads (a config beside the data) stays out of them,
  // else it would take the root up to a folder the data set is not.
  std::vector<std::string> paths;
  std::uint64_t gathered = 0;
  for (const ReadSummary::Folder& f : s.folders) {
    if (gathered >= s.bytes - s.bytes / 100 && !paths.empty()) break;
    gathered += f.bytes;
    const auto root = std::find_if(paths.begin(), paths.end(),
                                   [&](const std::string& r) { return common_folder(r, f.path) != "/"; });
    if (root == paths.end()) {
      paths.push_back(f.path);
    } else {
      *root = common_folder(*root, f.path);
    }
  }
  // Roots that now share a folder are one (a folder joined each from its side).
  for (std::size_t i = 0; i < paths.size(); ++i)
    for (std::size_t j = paths.size(); j-- > i + 1;)
      if (common_folder(paths[i], paths[j]) != "/") {
        paths[i] = common_folder(paths[i], paths[j]);
        paths.erase(paths.begin() + std::ptrdiff_t(j));
      }
  DataRoots out;
  for (const std::string& p : paths) out.roots.push_back({.path = p});
  const auto add = [](DataRoot& r, const ReadSummary::Folder& f) {
    if (r.folders++ == 0) r.dev_major = f.dev_major, r.dev_minor = f.dev_minor;
    r.files += f.files;
    r.bytes += f.bytes;
    r.reads += f.reads;
  };
  for (const ReadSummary::Folder& f : s.folders) {
    const auto root = std::find_if(out.roots.begin(), out.roots.end(), [&](const DataRoot& r) {
      return f.path == r.path ||
             (f.path.starts_with(r.path) && (r.path == "/" || f.path[r.path.size()] == '/'));
    });
    add(root == out.roots.end() ? out.elsewhere : *root, f);
  }
  if (s.other.files > 0) {
    out.elsewhere.files += s.other.files;
    out.elsewhere.bytes += s.other.bytes;
    out.elsewhere.reads += s.other.reads;
  }
  std::stable_sort(out.roots.begin(), out.roots.end(),
                   [](const DataRoot& a, const DataRoot& b) { return a.bytes > b.bytes; });
  return out;
}

}  // namespace feedbench
