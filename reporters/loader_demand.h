// A loader case in accelerators: what one simulated accelerator asks of the data path at the
// case's batch size and step (its demand), and how many accelerators like it the supply the case
// measured would keep at the target AU. Read from the case's record only, so an older result
// file gets the same figures as a new one.
//
// demand: the samples (bytes) the trainers consumed over the measured steps, per second of
//   their compute: one accelerator's need when it never waits (batch ÷ step for a fixed step).
// accelerators fed: accelerators × AU ÷ target. What the trainers consumed is AU × demand each,
//   so this is the supply divided by what one accelerator at the target AU needs. A case whose
//   AU reached its target did not push the data path to its limit: the figure is a lower bound.
// transform cores: the CPU time of the transform per byte (per sample in older files) times the
//   demand: the cores one accelerator's need takes to transform.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "case_view.h"

namespace feedbench {

struct LoaderDemand {
  double samples_per_second = 0;  // per accelerator, at AU 100%
  double bytes_per_second = 0;
  double transform_cores = 0;  // 0: no transform
};

// RETURNS: the case's demand per accelerator; nullopt when it is not a loader case or did not
// record what its trainers consumed (extra.samples, extra.bytes, extra.compute_s).
std::optional<LoaderDemand> demand_of(const CaseView& c);

// RETURNS: how many of the case's accelerators its supply keeps at the target AU, from `au`
// (the case's, or one epoch's): accelerators × au ÷ target.
double accelerators_fed(const CaseView& c, double au);

// RETURNS: {samples_per_second, bytes_per_second, transform_cores} of `d`.
nlohmann::json demand_json(const LoaderDemand& d);

// RETURNS: "0.50", "≥ 1.09" (a lower bound: AU met its target), for a count of accelerators fed.
std::string accelerators_fed_text(double fed, bool at_least);

}  // namespace feedbench
