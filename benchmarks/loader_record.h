// What a loader-shaped run records (the loader family's, and replay's, which runs a recorded job
// through the same LoaderSim): its counters, its limit over the run and per epoch, its verdict
// and the `extra` behind it. One home, so that a replay's result reads as a loader's does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "case_run.h"
#include "cluster_round.h"
#include "feedbench/io/device_reads.h"
#include "feedbench/io/throttle.h"
#include "feedbench/loader/limit.h"
#include "feedbench/loader/loader.h"

namespace feedbench {

// A judged round's limit, over the run and per epoch.
struct LoaderLimits {
  LoaderLimit run;
  std::vector<LoaderLimit> epochs;
};

// Sets the loader's counters (AU, stall, wait percentiles, rates, epoch time) of `result` on `run`.
void loader_counters(CaseRun& run, const LoaderResult& result);

// RETURNS: the limits of `result` at `target` (limit.h), the workers' transform written as
// `transform` ("none", "decode:224", "recorded"), what the data's `devices` read (null: no files)
// and each epoch's re-reads.
LoaderLimits loader_limits(const std::string& transform, const LoaderResult& result, double target,
                           const DeviceReads* devices, const std::vector<EpochRereads>& rereads);

// RETURNS: the verdict on `result` with its limit, or why it carries none (too few measured
// steps, or measured steps that read less than they took).
std::string loader_run_verdict(const std::string& transform, const LoaderResult& result,
                               const std::optional<LoaderAcrossRanks>& across, double target,
                               bool calibration, const DeviceReads* devices, const LoaderLimit* limit);

// RETURNS: the record's `extra` of a loader run: its verdict, the verdict's first line (verdict_line,
// loader_verdict_line; "" where there is no limit) and the figures behind it.
nlohmann::json loader_run_json(const LoaderResult& result, const std::string& verdict, double target,
                               const std::optional<LoaderLimits>& limits, bool calibration,
                               std::uint64_t dataset_bytes, std::uint64_t available);

// RETURNS: what the later epochs' page-cache state means, with the data set against memory
// ("" for one epoch or no files read).
std::string loader_memory_note(const LoaderResult& r, std::uint64_t dataset_bytes, std::uint64_t available,
                               const Throttle* throttle);

}  // namespace feedbench
