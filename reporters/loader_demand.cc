#include "loader_demand.h"

#include <string>

#include "feedbench/base/units.h"

namespace feedbench {

std::optional<LoaderDemand> demand_of(const CaseView& c) {
  if (c.family != "loader") return std::nullopt;
  // The fold's medians of the record's numbers (case_view.h), as every other figure of a case.
  auto number = [&c](const char* key) {
    const auto it = c.extra_numbers.find(key);
    return it != c.extra_numbers.end() ? it->second : 0.0;
  };
  const double samples = number("samples"), bytes = number("bytes"), compute_s = number("compute_s");
  if (samples <= 0 || compute_s <= 0) return std::nullopt;
  LoaderDemand d;
  d.samples_per_second = samples / compute_s;
  d.bytes_per_second = bytes / compute_s;
  // The transform's cost per unit of what it worked on (warm-up included, as transform_s is):
  // per MiB for a cost that grows with the bytes (a decode or crop, "8ms/MiB"), else per sample; in
  // files without those counts, per sample consumed (the warm-up's transforms then count
  // against fewer samples: a little high).
  // CPU time where the file has it: the wall time also holds the waits for a core.
  const double transform_s =
      c.extra_numbers.count("transform_cpu_s") ? number("transform_cpu_s") : number("transform_s");
  const double transform_bytes = number("transform_bytes"), transform_samples = number("transform_samples");
  const std::string transform = c.param("transform");
  const bool per_byte = transform.find("MiB") != std::string::npos || transform.rfind("decode", 0) == 0 ||
                        transform.rfind("random_resized_crop", 0) == 0;  // a decode too
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
  const double target = c.target_au();
  return target > 0 ? double(c.int_param("accelerators", 1)) * au / target : 0;
}

nlohmann::json demand_json(const LoaderDemand& d) {
  return {{"samples_per_second", d.samples_per_second},
          {"bytes_per_second", d.bytes_per_second},
          {"transform_cores", d.transform_cores}};
}

std::string accelerators_fed_text(double fed, bool at_least) {
  return (at_least ? "≥ " : "") + format_printf("%.2f", fed);
}

}  // namespace feedbench
