// A loader case in accelerators: what one simulated accelerator asks of the data path at the
// case's batch size and step (its demand), and how many accelerators like it the supply the case
// measured would keep at the target AU. Read from the case's record only, so an older result
// file gets the same figures as a new one.
//
// demand: one accelerator's need when it never waits, batch ÷ step, at the step it is for: the
//   case's step_time (a distribution's mean), a replay's asked steps' mean (extra.asked_step_s:
//   the recorded steps × step_scale), else (an older file) the measured steps' mean compute. Bytes: the bytes
//   the trainers consumed per sample at that rate. Every line that says a demand says its step and batch, so
//   a reader recomputes it.
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
  double samples_per_second = 0;  // per accelerator, at AU 100%: batch ÷ step
  double bytes_per_second = 0;
  double transform_cores = 0;  // 0: no transform
  double step_s = 0;           // the step it is for; 0: not known (a file without steps)
  double batch = 0;            // samples a step takes (a replay's: their mean)
  bool step_mean = false;      // step_s is a mean over steps that differ (a replay's, a distribution's)
};

// RETURNS: the case's demand per accelerator; nullopt when it is not a loader or replay case or
// did not record what its trainers consumed (extra.samples, extra.bytes, extra.compute_s).
std::optional<LoaderDemand> demand_of(const CaseView& c);

// RETURNS: "a 60.0 ms step of 32 samples", "a mean step of 41.3 ms of 8 samples" (step_mean), or
// "an unrecorded step" where the file holds none.
std::string step_text(const LoaderDemand& d);

// RETURNS: "533 samples/s, 59.3 MiB/s, 3.30 cores" (the cores only with a transform).
std::string demand_text(const LoaderDemand& d);

// RETURNS: how many of the case's accelerators its supply keeps at the target AU, from `au`
// (the case's, or one epoch's): accelerators × au ÷ target.
double accelerators_fed(const CaseView& c, double au);

// RETURNS: {samples_per_second, bytes_per_second, transform_cores, step_s, batch, step_mean}
// of `d`; demand_from_json reads it back (nullopt when a number is missing).
nlohmann::json demand_json(const LoaderDemand& d);
std::optional<LoaderDemand> demand_from_json(const nlohmann::json& j);

// RETURNS: "0.50", "≥ 1.09" (a lower bound: AU met its target), for a count of accelerators fed.
std::string accelerators_fed_text(double fed, bool at_least);

}  // namespace feedbench
