// What `feedbench replay TRACE` runs, set up from the trace before anything under its data is
// listed: the job read once, the folder its files are read from (never a system folder unless
// the user names a copy), the result's name and a config of one `replay` family. The verb hands
// it to `run` as it is (no config text, no rebuilt command line); a config file with a replay
// family is the long form of the same run (docs/replay.md).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "feedbench/replay/recorded_job.h"

namespace feedbench {

// A trace read and its data folder checked: what a replay reads, and from where.
struct ReplayedTrace {
  std::string trace;                       // the trace's path, as given
  std::shared_ptr<const RecordedJob> job;  // read once: the run takes it as read
  std::string source;                      // --source, else the folder the job read its files from
};

// What the user chose beside the trace (replay's options that shape the config).
struct ReplayChoices {
  std::string cache;           // --cache DIR, "" without: the staged copy path=cache reads
  bool allow_resized = false;  // --allow-resized
  std::uint64_t repetitions = 1;
};

// The run of one replay, for run_request (tools/feedbench/run/run_request.h).
struct ReplaySetup {
  std::string result_name;  // "replay-<job>", the job's name made safe for a folder name
  std::string config_name;  // "feedbench replay TRACE": stands for a config file in messages and the result
  nlohmann::json config;    // the experiment config: one replay family, its dataset and repetitions
  // The trace by the path the config names, read already: the run does not read it again.
  std::map<std::string, std::shared_ptr<const RecordedJob>> recorded_jobs;
};

// RETURNS: "replay-" and `job_name`, each character but a letter, digit, '.', '_' or '-'
// replaced by '_' (the config's name: results/<name>/ by default).
std::string replay_result_name(const std::string& job_name);

// REQUIRES: `job` read from `trace`; `source` "" when --source was not given.
// RETURNS: the trace with the folder its files are read from: `source`, else the job's data
// folder. Throws InputError, naming the trace, for a trace of relative paths without --source
// (it names no folder) and, without --source, for a data folder that is or lies in a system
// folder (/etc, /usr, /proc, ..., judged where its path leads, a link in it resolved), before
// anything under it is listed or opened.
ReplayedTrace check_replayed_trace(const std::string& trace, std::shared_ptr<const RecordedJob> job,
                                   const std::string& source);
// As check_replayed_trace, the job read from `trace` first (load_recorded_job's refusals).
ReplayedTrace read_replayed_trace(const std::string& trace, const std::string& source);

// RETURNS: the run that replays `replayed` with `choices`: the config of one family
// {"family": "replay", "trace": TRACE} over dataset {source, cache}, with the repetitions as
// its default, named replay_result_name(job).
ReplaySetup replay_setup(const ReplayedTrace& replayed, const ReplayChoices& choices);

}  // namespace feedbench
