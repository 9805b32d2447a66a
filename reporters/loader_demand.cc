#include "loader_demand.h"

#include <cmath>
#include <string>
#include <utility>

#include "feedbench/base/error.h"
#include "feedbench/base/units.h"

namespace feedbench {

namespace {

// The step a case asked for, in seconds, and whether it is a mean of steps that differ.
struct AskedStep {
  double s = 0;
  bool mean = false;
};

// RETURNS: the step the case asked for: a loader's step_time (a distribution's mean), a replay's
// asked steps' mean (the recorded ones × step_scale); nullopt in an older file without it.
std::optional<AskedStep> asked_step(const CaseView& c) {
  if (c.family == "replay") {
    const auto it = c.extra_numbers.find("asked_step_s");
    if (it == c.extra_numbers.end() || !(it->second > 0)) return std::nullopt;
    return AskedStep{it->second, true};
  }
  const std::string text = c.param("step_time");
  if (text.empty()) return std::nullopt;
  try {
    const Distribution d = parse_distribution(text);
    const double mean_ns =
        d.kind == Distribution::Kind::uniform ? (double(d.a_ns) + double(d.b_ns)) / 2 : double(d.a_ns);
    if (mean_ns > 0) return AskedStep{mean_ns / 1e9, d.kind != Distribution::Kind::fixed};
  } catch (const InputError&) {  // not this version's text: the measured steps stand in
  }
  return std::nullopt;
}

}  // namespace

std::optional<LoaderDemand> demand_of(const CaseView& c) {
  if (c.family != "loader" && c.family != "replay") return std::nullopt;
  // The fold's medians of the record's numbers (case_view.h), as every other figure of a case.
  auto number = [&c](const char* key) {
    const auto it = c.extra_numbers.find(key);
    return it != c.extra_numbers.end() ? it->second : 0.0;
  };
  const double samples = number("samples"), bytes = number("bytes"), compute_s = number("compute_s");
  if (samples <= 0 || compute_s <= 0) return std::nullopt;
  LoaderDemand d;
  // Batch ÷ step at the step asked (a trainer's step overshoots it, by far on a loaded host: the
  // measured compute would price a slower accelerator than the one asked), else at the measured mean.
  const double steps = c.counter("steps").value_or(0);
  const std::int64_t batch = c.int_param("batch_size", 0);
  d.batch = c.family == "loader" && batch > 0 ? double(batch) : steps > 0 ? samples / steps : 0;
  const std::optional<AskedStep> asked = asked_step(c);
  d.step_s = asked ? asked->s : steps > 0 ? compute_s / steps : 0;
  d.step_mean = asked ? asked->mean : d.step_s > 0;
  d.samples_per_second = d.step_s > 0 && d.batch > 0 ? d.batch / d.step_s : samples / compute_s;
  d.bytes_per_second = bytes / samples * d.samples_per_second;
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

std::string step_text(const LoaderDemand& d) {
  if (d.step_s <= 0) return "an unrecorded step";
  const double whole = std::round(d.batch);
  const std::string batch =
      std::fabs(d.batch - whole) < 0.05 ? format_printf("%.0f", whole) : format_printf("%.1f", d.batch);
  const std::string step = format_duration_ns(d.step_s * 1e9);
  return (d.step_mean ? "a mean step of " + step : "a " + step + " step") + " of " + batch + " samples";
}

std::string demand_text(const LoaderDemand& d) {
  std::string out = format_count(d.samples_per_second) + " samples/s, " + format_rate(d.bytes_per_second);
  if (d.transform_cores > 0) out += ", " + format_printf("%.2f", d.transform_cores) + " cores";
  return out;
}

nlohmann::json demand_json(const LoaderDemand& d) {
  return {{"samples_per_second", d.samples_per_second},
          {"bytes_per_second", d.bytes_per_second},
          {"transform_cores", d.transform_cores},
          {"step_s", d.step_s},
          {"batch", d.batch},
          {"step_mean", d.step_mean}};
}

std::optional<LoaderDemand> demand_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  LoaderDemand d;
  using Field = std::pair<const char*, double*>;
  for (const auto& [key, field] :
       {Field{"samples_per_second", &d.samples_per_second}, Field{"bytes_per_second", &d.bytes_per_second},
        Field{"transform_cores", &d.transform_cores}}) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number()) return std::nullopt;
    *field = it->get<double>();
  }
  // Files before the step was recorded: no step said.
  if (const auto it = j.find("step_s"); it != j.end() && it->is_number()) d.step_s = it->get<double>();
  if (const auto it = j.find("batch"); it != j.end() && it->is_number()) d.batch = it->get<double>();
  if (const auto it = j.find("step_mean"); it != j.end() && it->is_boolean()) d.step_mean = it->get<bool>();
  return d;
}

std::string accelerators_fed_text(double fed, bool at_least) {
  return (at_least ? "≥ " : "") + format_printf("%.2f", fed);
}

}  // namespace feedbench
