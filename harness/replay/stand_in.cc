#include "feedbench/replay/stand_in.h"

#include <filesystem>
#include <set>

namespace feedbench {

GenListing gen_listing_of(const RecordedJob& job, const std::string& trace) {
  GenListing l;
  std::set<std::string> dirs, holding;
  std::uint64_t bytes = 0, jpegs = 0;
  for (const RecordedFile& f : job.files) {
    l.files.push_back({f.path, f.size, f.width, f.height});
    bytes += f.size;
    jpegs += listed_as_jpeg(f.path) ? 1 : 0;
    const auto slash = f.path.find_last_of('/');
    if (slash != std::string::npos) holding.insert(f.path.substr(0, slash));
    else holding.insert("");
    for (auto at = f.path.find('/'); at != std::string::npos; at = f.path.find('/', at + 1))
      dirs.insert(f.path.substr(0, at));
  }
  // "a" sorts before "a/b": parents come first.
  l.dirs.assign(dirs.begin(), dirs.end());
  l.folders = holding.size();
  l.origin = {{"path", std::filesystem::absolute(trace).lexically_normal().string()},
              {"kind", "trace"},
              {"job", job.name},
              {"data_root", job.data_root.empty() ? nlohmann::json(nullptr) : nlohmann::json(job.data_root)},
              {"files", l.files.size()},
              {"bytes", bytes},
              {"folders", l.folders},
              {"jpeg_files", jpegs},
              {"scale", 1}};
  return l;
}

}  // namespace feedbench
