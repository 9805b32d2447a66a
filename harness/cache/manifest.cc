#include "feedbench/cache/manifest.h"

#include <cctype>
#include <cerrno>

#include <fcntl.h>
#include <unistd.h>

#include "feedbench/base/error.h"
#include "feedbench/base/file_system.h"
#include "feedbench/base/json_limits.h"
#include "feedbench/base/open_beneath.h"
#include "feedbench/base/sha256.h"
#include "feedbench/base/text.h"
#include "feedbench/base/unique_fd.h"
#include "feedbench/dataset/data_file.h"

namespace feedbench {
namespace {

bool is_hex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  return true;
}

// Writes `text` to "<path>.fbtmp", fsyncs it, renames it over `path` and fsyncs the folder:
// a manifest must survive a power loss once stage says it is done.
void write_durably(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".fbtmp";
  // Created exclusively: a file, link or FIFO planted at the temporary name is never opened.
  int fd = create_temporary(AT_FDCWD, tmp, 0644);
  if (fd < 0) throw RunError(temporary_refusal(tmp, errno));
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw RunError(errno_message("cannot write " + tmp, e));
    }
    done += std::size_t(n);
  }
  if (::fsync(fd) != 0) {
    int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw RunError(errno_message("cannot flush " + tmp, e));
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    throw RunError(errno_message("cannot rename " + tmp + " to " + path, e));
  }
  const std::string dir =
      path.substr(0, path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/'));
  int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);  // best effort: some file systems refuse fsync on folders
    ::close(dfd);
  }
}

// Reads `name` of the folder `root_fd` whole, refusing what is not a regular file of the folder
// itself (a symbolic link out of it, a FIFO that would block the read). RETURNS: "" with *out
// set, else why not, naming `path`.
std::string read_manifest_file(int root_fd, const std::string& name, const std::string& path,
                               std::string* out) {
  const DataFile f = open_data_file(root_fd, name, {.beneath = true});
  if (!f.ok() && f.error == ENOENT) return path + " is missing";
  if (!f.ok() && f.error == ELOOP)
    return path + " is a symbolic link: a manifest is read from inside its cache, never through a link";
  if (!f.ok()) return f.reason(path);
  UniqueFd fd(f.fd);
  if (const int err = read_to_end(fd.get(), out)) return errno_message("cannot read " + path, err);
  return "";
}

// RETURNS: `name` as the manifest line wrote it, for a message: a NUL byte shown as "\0".
std::string shown_name(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '\0') out += "\\0";
    else out += c;
  }
  return out;
}

void remove_if_present(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    throw RunError(errno_message("cannot remove " + path, errno));
}

}  // namespace

std::string Manifest::sums_text() const {
  std::string out;
  out.reserve(files.size() * 100);
  for (const ManifestEntry& e : files) {
    // GNU sha256sum (coreutils 9): a name holding '\\', '\n' or '\r' is written escaped, the
    // line starting with '\\', so `sha256sum -c` reads every name back exactly.
    if (e.path.find_first_of("\\\n\r") != std::string::npos) {
      out += '\\';
      out += e.sha256;
      out += "  ";
      for (char c : e.path) {
        if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else out += c;
      }
    } else {
      out += e.sha256;
      out += "  ";
      out += e.path;
    }
    out += '\n';
  }
  return out;
}

std::string Manifest::selection_text() const {
  if (!hot_set) return feedbench::selection_text(include);
  return "hot set " + hot_set->share + " (seed " + std::to_string(hot_set->seed) + ") of " +
         (hot_set->of.empty() ? std::string("every file") : globs_text(hot_set->of)) + ", " +
         plural(include.size(), "file", "files");
}

std::string manifest_selection_text(const nlohmann::json& j) {
  Manifest m;
  const auto strings = [](const nlohmann::json& v) {
    std::vector<std::string> out;
    if (v.is_array())
      for (const auto& s : v)
        if (s.is_string()) out.push_back(s.get<std::string>());
    return out;
  };
  if (!j.is_object()) return selection_text(m.include);
  m.include = strings(j.value("include", nlohmann::json::array()));
  const nlohmann::json h = j.value("hot_set", nlohmann::json());
  if (h.is_object() && h.value("share", nlohmann::json()).is_string() &&
      h.value("seed", nlohmann::json()).is_number_unsigned())
    m.hot_set = HotSetSpec{h["share"].get<std::string>(), h["seed"].get<std::uint64_t>(),
                           strings(h.value("of", nlohmann::json::array()))};
  return m.selection_text();
}

nlohmann::ordered_json Manifest::to_json() const {
  nlohmann::ordered_json j;
  j["schema"] = kManifestSchema;
  j["label"] = label;
  j["source_root"] = source_root;
  j["source_fingerprint"] = source_fingerprint;
  j["include"] = include;
  if (hot_set) j["hot_set"] = {{"share", hot_set->share}, {"seed", hot_set->seed}, {"of", hot_set->of}};
  j["files"] = files.size();
  j["total_bytes"] = total_bytes;
  j["created_utc"] = created_utc;
  j["feedbench_version"] = feedbench_version;
  j["sums_sha256"] = sha256_hex(sums_text());
  return j;
}

std::vector<ManifestEntry> parse_sums(std::string_view text, const std::string& where) {
  std::vector<ManifestEntry> out;
  std::size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.empty()) continue;
    auto bad = [&](const char* what) {
      return InputError(where + ": line " + std::to_string(line_no) + ": " + what +
                        " (expected \"<sha256 hex>  <path>\")");
    };
    bool escaped = line.front() == '\\';
    if (escaped) line.remove_prefix(1);
    if (line.size() < 66 || !is_hex64(line.substr(0, 64)) || line[64] != ' ' ||
        (line[65] != ' ' && line[65] != '*'))
      throw bad("malformed line");
    ManifestEntry e;
    e.sha256 = std::string(line.substr(0, 64));
    for (char& c : e.sha256) c = char(std::tolower(static_cast<unsigned char>(c)));
    std::string_view name = line.substr(66);
    if (name.empty()) throw bad("empty path");
    if (escaped) {
      for (std::size_t i = 0; i < name.size(); ++i) {
        if (name[i] != '\\') {
          e.path += name[i];
          continue;
        }
        if (i + 1 == name.size()) throw bad("dangling escape");
        char next = name[++i];
        if (next == '\\') e.path += '\\';
        else if (next == 'n') e.path += '\n';
        else if (next == 'r') e.path += '\r';
        else throw bad("unknown escape");
      }
    } else {
      e.path = std::string(name);
    }
    // A manifest names files of its cache only: a path out of it is refused here, so no caller
    // opens, hashes, lists or removes what lies outside.
    if (const std::string problem = beneath_path_problem(e.path); !problem.empty())
      throw InputError(where + ": line " + std::to_string(line_no) + ": the path '" + shown_name(name) +
                       "' " + problem + " (a manifest names files beneath its cache only)");
    out.push_back(std::move(e));
  }
  return out;
}

void write_manifest(const std::string& cache_root, const Manifest& manifest) {
  write_durably(cache_root + "/" + kManifestSumsName, manifest.sums_text());
  write_durably(cache_root + "/" + kManifestJsonName, manifest.to_json().dump(2) + "\n");
}

void remove_manifest(const std::string& cache_root) {
  remove_if_present(cache_root + "/" + kManifestJsonName);
  remove_if_present(cache_root + "/" + kManifestSumsName);
}

std::optional<Manifest> read_manifest(const std::string& cache_root, std::string* why) {
  auto fail = [&](const std::string& reason) -> std::optional<Manifest> {
    if (why) *why = reason;
    return std::nullopt;
  };
  const std::string json_path = cache_root + "/" + kManifestJsonName;
  const std::string sums_path = cache_root + "/" + kManifestSumsName;
  UniqueFd root(::open(cache_root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root) return fail(json_path + " is missing");
  std::string json_text, sums_text;
  if (std::string problem = read_manifest_file(root.get(), kManifestJsonName, json_path, &json_text);
      !problem.empty())
    return fail(problem);
  if (std::string problem = read_manifest_file(root.get(), kManifestSumsName, sums_path, &sums_text);
      !problem.empty())
    return fail(problem);
  return parse_manifest(json_text, sums_text, json_path, sums_path, why);
}

std::optional<Manifest> parse_manifest(const std::string& json_text, const std::string& sums_text,
                                       const std::string& json_path, const std::string& sums_path,
                                       std::string* why) {
  auto fail = [&](const std::string& reason) -> std::optional<Manifest> {
    if (why) *why = reason;
    return std::nullopt;
  };
  nlohmann::json j;
  try {
    j = parse_json_within(json_text, json_path, kManifestLimits);
  } catch (const nlohmann::json::parse_error&) {
    return fail(json_path + " is not valid JSON");
  } catch (const InputError& e) {
    return fail(e.what());  // past a limit: too large, too deep, a string too long
  }
  if (!j.is_object()) return fail(json_path + " is not valid JSON");
  try {
    if (j.value("schema", "") != kManifestSchema)
      return fail(json_path + ": /schema: expected \"" + kManifestSchema + "\"");
    // A count or size as JSON's number: a float or a negative number is refused here, never cast.
    const auto count_at = [&](const nlohmann::json& object, const char* key, const std::string& pointer) {
      const nlohmann::json& v = object.at(key);
      if (!is_non_negative_integer(v))
        throw InputError(json_path + ": " + pointer + ": expected a non-negative integer, got " +
                         (v.is_number() ? v.dump() : std::string(v.type_name())));
      return v.get<std::uint64_t>();
    };
    Manifest m;
    m.label = j.at("label").get<std::string>();
    m.source_root = j.at("source_root").get<std::string>();
    m.source_fingerprint = j.at("source_fingerprint").get<std::string>();
    m.include = j.at("include").get<std::vector<std::string>>();
    if (j.contains("hot_set")) {
      const nlohmann::json& h = j.at("hot_set");
      m.hot_set = HotSetSpec{h.at("share").get<std::string>(), count_at(h, "seed", "/hot_set/seed"),
                             h.at("of").get<std::vector<std::string>>()};
    }
    m.total_bytes = count_at(j, "total_bytes", "/total_bytes");
    m.created_utc = j.at("created_utc").get<std::string>();
    m.feedbench_version = j.at("feedbench_version").get<std::string>();
    const std::string sums_sha = j.at("sums_sha256").get<std::string>();
    const std::uint64_t count = count_at(j, "files", "/files");
    if (sha256_hex(sums_text) != sums_sha)
      return fail(sums_path + " does not match " + json_path + " (an interrupted stage?)");
    m.files = parse_sums(sums_text, sums_path);
    if (m.files.size() != count)
      return fail(sums_path + " lists " + std::to_string(m.files.size()) + " files, " + json_path + " says " +
                  std::to_string(count));
    return m;
  } catch (const nlohmann::json::exception& e) {
    return fail(json_path + ": " + e.what());
  } catch (const InputError& e) {
    return fail(e.what());
  }
}

}  // namespace feedbench
