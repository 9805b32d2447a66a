// A real data set's shape for `gen --like`: folders, counts and sizes from a scan, scaled.
#include "feedbench/dataset/shape.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include <fcntl.h>

#include "feedbench/base/error.h"
#include "feedbench/base/file_system.h"
#include "feedbench/base/splitmix.h"
#include "feedbench/base/statistics.h"
#include "feedbench/base/unique_fd.h"
#include "feedbench/dataset/data_file.h"

namespace feedbench {
namespace {

std::size_t depth_of(const std::string& dir) {
  return dir.empty() ? 0 : std::size_t(std::count(dir.begin(), dir.end(), '/')) + 1;
}

int digits(std::uint64_t v) {
  int d = 1;
  while (v >= 10) v /= 10, ++d;
  return d;
}

// The synthetic folder tree: each real folder on a chosen chain is named by its place among
// its chosen siblings, so depth and fan-out stay and no real name is written.
struct Node {
  std::map<std::string, Node> children;  // by real name: siblings in the real order
  std::string synthetic;                 // relative path
};

void name_children(Node& node, std::vector<std::string>& dirs) {
  const int width = std::max(3, digits(node.children.empty() ? 0 : node.children.size() - 1));
  std::size_t k = 0;
  for (auto& [real, child] : node.children) {
    char name[40];
    std::snprintf(name, sizeof name, "dir_%0*zu", width, k++);
    child.synthetic = node.synthetic.empty() ? name : node.synthetic + "/" + name;
    dirs.push_back(child.synthetic);
    name_children(child, dirs);
  }
}

}  // namespace

std::uint64_t SizeDistribution::at(double u) const {
  FB_CHECK(!points.empty(), "a size distribution needs points");
  const std::size_t k_max = points.size() - 1;
  if (k_max == 0 || !(u > 0)) return points.front();
  const double x = u * double(k_max);
  const std::size_t k = std::size_t(x);
  if (k >= k_max) return points.back();
  const double f = x - double(k);
  return points[k] + std::uint64_t(f * double(points[k + 1] - points[k]));
}

SizeDistribution size_distribution(std::vector<std::uint64_t> sizes, std::size_t max_points) {
  FB_CHECK(!sizes.empty() && max_points >= 2, "size_distribution needs sizes and two points");
  std::sort(sizes.begin(), sizes.end());
  SizeDistribution d;
  if (sizes.size() <= max_points) {
    d.points = std::move(sizes);
    return d;
  }
  const std::uint64_t k_max = max_points - 1, n1 = sizes.size() - 1;
  d.points.resize(max_points);
  for (std::uint64_t k = 0; k <= k_max; ++k) {
    // The quantile at k / k_max, interpolated between order statistics in exact arithmetic.
    const unsigned __int128 num = static_cast<unsigned __int128>(k) * n1;
    const std::uint64_t lo = std::uint64_t(num / k_max), rem = std::uint64_t(num % k_max);
    const std::uint64_t step = lo < n1 ? sizes[lo + 1] - sizes[lo] : 0;
    d.points[k] = sizes[lo] + std::uint64_t(static_cast<unsigned __int128>(step) * rem / k_max);
  }
  return d;
}

nlohmann::ordered_json like_origin(const FileSet& real, double scale, const std::string& where,
                                   const std::string& kind) {
  FB_CHECK(!real.empty(), "like_origin needs files");
  std::vector<std::uint64_t> sizes(real.size());
  std::map<std::string_view, int> folders;
  std::size_t max_depth = 0;
  for (std::size_t i = 0; i < real.size(); ++i) {
    sizes[i] = real.file_size(i);
    const std::string_view rel = real.relative_path(i);
    const auto slash = rel.rfind('/');
    const std::string_view dir = slash == std::string_view::npos ? std::string_view() : rel.substr(0, slash);
    if (folders.emplace(dir, 0).second) max_depth = std::max(max_depth, depth_of(std::string(dir)));
  }
  std::sort(sizes.begin(), sizes.end());
  auto at = [&](double q) { return quantile_of_sorted(sizes, q); };
  nlohmann::ordered_json q;
  q["min"] = sizes.front();
  for (auto [name, p] : {std::pair{"p01", 0.01},
                         {"p10", 0.10},
                         {"p25", 0.25},
                         {"p50", 0.50},
                         {"p75", 0.75},
                         {"p90", 0.90},
                         {"p99", 0.99}})
    q[name] = at(p);
  q["max"] = sizes.back();
  nlohmann::ordered_json j;
  j["path"] = where;
  j["kind"] = kind;
  j["files"] = real.size();
  j["bytes"] = real.total_bytes();
  j["folders"] = folders.size();
  j["max_depth"] = max_depth;
  j["size_quantiles"] = q;
  j["fingerprint"] = real.fingerprint();
  j["scale"] = scale;
  return j;
}

DataShape data_shape(const FileSet& real, double scale, const std::string& where, const std::string& kind) {
  FB_CHECK(!real.empty() && scale > 0 && scale <= 1, "data_shape needs files and 0 < scale <= 1");
  // Files per real folder (the folder of each file: its path up to the last '/').
  std::map<std::string, std::uint64_t> per_folder;
  std::vector<std::uint64_t> sizes(real.size());
  for (std::size_t i = 0; i < real.size(); ++i) {
    const std::string_view rel = real.relative_path(i);
    const auto slash = rel.rfind('/');
    ++per_folder[std::string(slash == std::string_view::npos ? std::string_view() : rel.substr(0, slash))];
    sizes[i] = real.file_size(i);
  }
  struct Real {
    std::size_t depth;
    std::uint64_t files;
    std::string path;
  };
  std::vector<Real> folders;
  for (const auto& [path, n] : per_folder) folders.push_back({depth_of(path), n, path});
  std::sort(folders.begin(), folders.end(), [](const Real& a, const Real& b) {
    return std::tie(a.depth, a.files, a.path) < std::tie(b.depth, b.files, b.path);
  });

  DataShape shape;
  const std::uint64_t total = std::max<std::uint64_t>(1, std::llround(scale * double(real.size())));
  const std::uint64_t f = folders.size();
  const std::uint64_t m =
      std::min<std::uint64_t>(total, std::max<std::uint64_t>(1, std::llround(scale * double(f))));
  // Systematic sampling: the middle of each of m equal runs of the ordered folders.
  std::vector<const Real*> chosen;
  for (std::uint64_t k = 0; k < m; ++k) chosen.push_back(&folders[std::size_t((2 * k + 1) * f / (2 * m))]);

  // Counts scaled to the total by largest remainder, each folder keeping at least one file.
  std::uint64_t sum = 0;
  for (const Real* r : chosen) sum += r->files;
  std::vector<std::uint64_t> counts(m), rems(m);
  std::uint64_t assigned = 0;
  for (std::uint64_t k = 0; k < m; ++k) {
    const unsigned __int128 num = static_cast<unsigned __int128>(chosen[k]->files) * total;
    counts[k] = std::uint64_t(num / sum);
    rems[k] = std::uint64_t(num % sum);
    assigned += counts[k];
  }
  std::vector<std::uint64_t> order(m);
  for (std::uint64_t k = 0; k < m; ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint64_t a, std::uint64_t b) { return rems[a] > rems[b]; });
  for (std::uint64_t k = 0; assigned < total; ++k, ++assigned) ++counts[order[k % m]];
  for (std::uint64_t k = 0; k < m; ++k) {
    if (counts[k] > 0) continue;
    // m <= total: a folder with more than one file has one to spare.
    auto donor = std::max_element(counts.begin(), counts.end());
    --*donor;
    counts[k] = 1;
  }

  // Synthetic names: the chosen folders' chains of parents, named by place among siblings.
  Node root;
  std::vector<Node*> leaf(m);
  for (std::uint64_t k = 0; k < m; ++k) {
    Node* node = &root;
    const std::string& path = chosen[k]->path;
    for (std::size_t start = 0; !path.empty() && start <= path.size();) {
      const auto end = std::min(path.find('/', start), path.size());
      node = &node->children[path.substr(start, end - start)];
      start = end + 1;
    }
    leaf[k] = node;
  }
  name_children(root, shape.dirs);
  for (std::uint64_t k = 0; k < m; ++k) shape.folders.push_back({leaf[k]->synthetic, counts[k]});
  std::sort(shape.folders.begin(), shape.folders.end(),
            [](const ShapeFolder& a, const ShapeFolder& b) { return a.path < b.path; });
  for (ShapeFolder& folder : shape.folders) {
    folder.first = shape.files;
    shape.files += folder.files;
  }
  FB_CHECK(shape.files == total, "the scaled counts add up to the total");
  shape.sizes = size_distribution(std::move(sizes));
  shape.origin = like_origin(real, scale, where, kind);
  return shape;
}

std::uint64_t seeded_permutation(std::uint64_t n, std::uint64_t seed, std::uint64_t i) {
  FB_CHECK(i < n, "seeded_permutation: index outside [0, n)");
  if (n <= 1) return 0;
  int bits = 2;
  while (bits < 64 && (std::uint64_t(1) << bits) < n) ++bits;
  const int half = (bits + 1) / 2;  // a balanced network over 2^(2 half) >= n values
  const std::uint64_t mask = (std::uint64_t(1) << half) - 1;
  std::uint64_t x = i;
  do {  // cycle walking: values outside [0, n) are permuted again; fewer than 4 rounds expected
    std::uint64_t left = x >> half, right = x & mask;
    for (std::uint64_t round = 0; round < 4; ++round) {
      const std::uint64_t next = left ^ (mix64(right + mix64(seed + round * kSplitmixGolden)) & mask);
      left = right;
      right = next;
    }
    x = (left << half) | right;
  } while (x >= n);
  return x;
}

std::uint64_t shape_file_size(const SizeDistribution& sizes, std::uint64_t files, std::uint64_t seed,
                              std::uint64_t index) {
  const std::uint64_t stratum = seeded_permutation(files, mix64(seed ^ 0x5A17E5u), index);
  const double within =
      double(mix64(mix64(seed + 0x51ull) + (index + 1) * kSplitmixGolden) >> 11) * 0x1.0p-53;
  return sizes.at((double(stratum) + within) / double(files));
}

std::optional<nlohmann::json> read_gen_like(const std::string& root) {
  // The record of the folder itself: not one a symbolic link at its name leads to (out of the
  // data set), nor a FIFO whose open would wait for a writer.
  const UniqueFd root_fd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd) return std::nullopt;
  const DataFile f = open_data_file(root_fd.get(), kGenRecordName, {.beneath = true});
  if (!f.ok()) return std::nullopt;
  const UniqueFd fd(f.fd);
  std::string text;
  if (read_to_end(fd.get(), &text) != 0) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("schema", "") != kGenRecordSchema || !j.contains("like") ||
      !j["like"].is_object())
    return std::nullopt;
  return j["like"];
}

}  // namespace feedbench
