#include "loader_demand.h"

#include <cstdio>
#include <string>

namespace feedbench {

std::optional<LoaderDemand> demand_of(const CaseView& c) {
  if (c.family != "loader" || !c.extra.is_object()) return std::nullopt;
  auto number = [&c](const char* key) {
    const auto it = c.extra.find(key);
    return it != c.extra.end() && it->is_number() ? it->get<double>() : 0.0;
  };
  const double samples = number("samples"), bytes = number("bytes"), compute_s = number("compute_s");
  if (samples <= 0 || compute_s <= 0) return std::nullopt;
  LoaderDemand d;
  d.samples_per_second = samples / compute_s;
  d.bytes_per_second = bytes / compute_s;
  // The transform's cost per unit of what it worked on (warm-up included, as transform_s is):
  // per MiB for a cost that grows with the bytes (a decode, "8ms/MiB"), else per sample; in
  // files without those counts, per sample consumed (the warm-up's transforms then count
  // against fewer samples: a little high).
  // CPU time where the file has it: the wall time also holds the waits for a core.
  const double transform_s =
      c.extra.contains("transform_cpu_s") ? number("transform_cpu_s") : number("transform_s");
  const double transform_bytes = number("transform_bytes"), transform_samples = number("transform_samples");
  const std::string transform = c.param("transform");
  const bool per_byte = transform.find("MiB") != std::string::npos || transform.rfind("decode", 0) == 0;
  if (transform_s > 0 && transform != "none") {
    if (per_byte && transform_bytes > 0)
      d.transform_cores = transform_s / transform_bytes * d.bytes_per_second;
    else if (transform_samples > 0)
      d.transform_cores = transform_s / transform_samples * d.samples_per_second;
    else d.transform_cores = transform_s / samples * d.samples_per_second;
  }
  return d;
}

double accelerators_fed(const CaseView& c, double au) {
  const auto it = c.params.is_object() ? c.params.find("accelerators") : c.params.end();
  const double accelerators = it != c.params.end() && it->is_number() ? it->get<double>() : 1.0;
  const double target = c.target_au();
  return target > 0 ? accelerators * au / target : 0;
}

nlohmann::json demand_json(const LoaderDemand& d) {
  return {{"samples_per_second", d.samples_per_second},
          {"bytes_per_second", d.bytes_per_second},
          {"transform_cores", d.transform_cores}};
}

std::string accelerators_fed_text(double fed, bool at_least) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%.2f", at_least ? "≥ " : "", fed);
  return buf;
}

}  // namespace feedbench
