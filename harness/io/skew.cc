// Skewed access: the ranking, the samplers and the pattern texts.
#include "feedbench/io/skew.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "feedbench/base/error.h"
#include "feedbench/base/splitmix.h"

namespace feedbench {
namespace {

// FNV-1a over the path, then mixed with the seed: stable across runs, hosts and libraries.
std::uint64_t path_key(std::string_view path, std::uint64_t seed) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (char c : path) h = (h ^ std::uint8_t(c)) * 0x100000001B3ull;
  return mix64(h ^ mix64(seed + 0x484F54ull /* "HOT" */));
}

[[noreturn]] void bad(const std::string& what, std::string_view text, const std::string& why) {
  throw InputError(
      what +
      ": expected zipf:THETA (0 < THETA <= 10, e.g. zipf:1.1) or hot_set:F%:R% (F% of files take "
      "R% of reads, e.g. hot_set:10%:90%), got \"" +
      std::string(text) + "\" (" + why + ")");
}

// RETURNS: the number in `s` (all of it). Throws via bad().
double number(std::string_view s, const std::string& what, std::string_view text) {
  const std::string str(s);
  char* end = nullptr;
  const double v = str.empty() ? NAN : std::strtod(str.c_str(), &end);
  if (str.empty() || end != str.c_str() + str.size() || !std::isfinite(v) ||
      str.find_first_of("xXeEnN") != std::string::npos)
    bad(what, text, "'" + str + "' is not a plain number");
  return v;
}

double percent(std::string_view s, const std::string& what, std::string_view text) {
  if (!s.ends_with('%')) bad(what, text, "'" + std::string(s) + "' is not a percentage");
  return number(s.substr(0, s.size() - 1), what, text) / 100;
}

std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

bool is_skew_pattern(std::string_view text) {
  return text.starts_with("zipf:") || text.starts_with("hot_set:");
}

Skew parse_skew(std::string_view text, const std::string& what) {
  Skew s;
  if (text.starts_with("zipf:")) {
    s.kind = Skew::Kind::zipf;
    s.theta = number(text.substr(5), what, text);
    if (!(s.theta > 0 && s.theta <= 10)) bad(what, text, "THETA must be above 0 and at most 10");
    return s;
  }
  if (text.starts_with("hot_set:")) {
    const std::string_view rest = text.substr(8);
    const auto colon = rest.find(':');
    if (colon == std::string_view::npos) bad(what, text, "two percentages are needed");
    s.kind = Skew::Kind::hot_set;
    s.hot_files = percent(rest.substr(0, colon), what, text);
    s.hot_reads = percent(rest.substr(colon + 1), what, text);
    if (!(s.hot_files > 0 && s.hot_files < 1)) bad(what, text, "F% must be above 0% and below 100%");
    if (!(s.hot_reads > 0 && s.hot_reads <= 1)) bad(what, text, "R% must be above 0% and at most 100%");
    return s;
  }
  bad(what, text, "not a skewed pattern");
}

std::string format_skew(const Skew& s) {
  switch (s.kind) {
    case Skew::Kind::zipf: return "zipf:" + format_number(s.theta);
    case Skew::Kind::hot_set:
      return "hot_set:" + format_number(s.hot_files * 100) + "%:" + format_number(s.hot_reads * 100) + "%";
    case Skew::Kind::none: break;
  }
  return "none";
}

std::vector<std::uint32_t> hot_ranking(const FileSet& files, std::uint64_t seed) {
  std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed(files.size());
  for (std::size_t i = 0; i < files.size(); ++i)
    keyed[i] = {path_key(files.relative_path(i), seed), std::uint32_t(i)};
  // Ties (a 64-bit collision) fall back to the path order: still deterministic.
  std::sort(keyed.begin(), keyed.end());
  std::vector<std::uint32_t> ranking(files.size());
  for (std::size_t k = 0; k < keyed.size(); ++k) ranking[k] = keyed[k].second;
  return ranking;
}

std::size_t hot_count(std::size_t n, double fraction) {
  if (n == 0) return 0;
  const auto k = std::size_t(std::ceil(double(n) * fraction - 1e-9));
  return std::clamp<std::size_t>(k, 1, n);
}

std::vector<std::string> hot_set_paths(const FileSet& files, double fraction, std::uint64_t seed) {
  const std::vector<std::uint32_t> ranking = hot_ranking(files, seed);
  std::vector<std::string> paths;
  for (std::size_t k = 0; k < hot_count(files.size(), fraction); ++k)
    paths.emplace_back(files.relative_path(ranking[k]));
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::vector<bool> held_by(const FileSet& source, const FileSet& cache) {
  // Both are sorted by relative path: one merge.
  std::vector<bool> held(source.size(), false);
  std::size_t j = 0;
  for (std::size_t i = 0; i < source.size(); ++i) {
    while (j < cache.size() && cache.relative_path(j) < source.relative_path(i)) ++j;
    held[i] = j < cache.size() && cache.relative_path(j) == source.relative_path(i);
  }
  return held;
}

FileSet tiered_files(const FileSet& source, const FileSet& cache) {
  FileSet out("/");  // relative paths are absolute ones without their leading '/'
  std::size_t j = 0;
  for (std::size_t i = 0; i < source.size(); ++i) {
    while (j < cache.size() && cache.relative_path(j) < source.relative_path(i)) ++j;
    const bool held = j < cache.size() && cache.relative_path(j) == source.relative_path(i);
    const FileSet& from = held ? cache : source;
    const std::size_t k = held ? j : i;
    out.add(from.absolute_path(k).substr(1), from.file_size(k), from.mtime_ns(k));
  }
  return out;  // not sorted: in the source's order, index for index
}

SkewSampler::SkewSampler(const Skew& skew, std::vector<std::uint32_t> ranking)
    : skew_(skew), ranking_(std::move(ranking)) {
  FB_CHECK(skew.kind != Skew::Kind::none && !ranking_.empty(), "a skew sampler needs a skew and files");
  if (skew.kind == Skew::Kind::zipf) {
    cdf_.resize(ranking_.size());
    double sum = 0;
    for (std::size_t k = 0; k < cdf_.size(); ++k) cdf_[k] = (sum += std::pow(double(k + 1), -skew.theta));
    for (double& c : cdf_) c /= sum;
    cdf_.back() = 1.0;
  } else {
    hot_ = hot_count(ranking_.size(), skew.hot_files);
  }
}

std::uint32_t SkewSampler::draw(std::uint64_t random) const {
  const double u = double(random >> 11) * 0x1.0p-53;  // uniform in [0, 1)
  const std::size_t n = ranking_.size();
  std::size_t k = 0;
  if (skew_.kind == Skew::Kind::zipf) {
    k = std::size_t(std::upper_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin());
  } else if (hot_ == n || u < skew_.hot_reads) {
    // Within a part, uniform: u rescaled to [0, 1) over the part.
    const double v = hot_ == n ? u : u / skew_.hot_reads;
    k = std::size_t(v * double(hot_));
  } else {
    const double v = (u - skew_.hot_reads) / (1 - skew_.hot_reads);
    k = hot_ + std::size_t(v * double(n - hot_));
  }
  return ranking_[std::min(k, n - 1)];
}

double SkewSampler::probability(std::size_t rank) const {
  if (skew_.kind == Skew::Kind::zipf) return rank == 0 ? cdf_[0] : cdf_[rank] - cdf_[rank - 1];
  const std::size_t n = ranking_.size();
  if (hot_ == n) return 1.0 / double(n);
  return rank < hot_ ? skew_.hot_reads / double(hot_) : (1 - skew_.hot_reads) / double(n - hot_);
}

std::vector<std::uint32_t> skewed_order(const SkewSampler& sampler, std::size_t n, std::uint64_t seed,
                                        std::uint64_t round) {
  std::vector<std::uint32_t> order(n);
  std::uint64_t state = mix64(seed ^ 0x534B4557ull /* "SKEW" */) ^ mix64(round + 1);
  for (std::size_t i = 0; i < n; ++i) {
    state += 0x9E3779B97F4A7C15ull;
    order[i] = sampler.draw(mix64(state));
  }
  return order;
}

}  // namespace feedbench
