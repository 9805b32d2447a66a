// feedbench replay's set-up: a trace turned into the run of one replay family (replay_setup.h).
#include "replay_setup.h"

#include <cctype>
#include <filesystem>
#include <system_error>
#include <utility>

#include "feedbench/base/error.h"

namespace feedbench {

std::string replay_result_name(const std::string& job_name) {
  std::string name = "replay-";
  for (char ch : job_name)
    name += std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-' ? ch : '_';
  return name;
}

ReplayedTrace check_replayed_trace(const std::string& trace, std::shared_ptr<const RecordedJob> job,
                                   const std::string& source) {
  const std::string& data_root = job->data_root;
  if (data_root.empty() && source.empty())
    throw InputError(trace +
                     ": its paths are relative to the job's data folder, which it does not name (watch "
                     "--trace-paths relative): name a copy of that folder with --source DIR");
  // Without --source the folder is the trace's to name: never a system folder, checked where
  // its path leads (a link in it resolved), before anything under it is listed or opened.
  if (source.empty()) {
    std::error_code ec;
    const std::filesystem::path real = std::filesystem::canonical(data_root, ec);
    const std::string where = ec ? data_root : real.string();
    if (const std::string system = system_folder_holding(where); !system.empty())
      throw InputError(trace + ": the job's data folder " + data_root +
                       (where != data_root ? " (" + where + ")" : std::string()) + " is in the system's " +
                       system +
                       ", not a data set's: a replay without --source reads only a job's data folder "
                       "(give --source DIR to replay a copy)");
  }
  std::string from = source.empty() ? data_root : source;
  return ReplayedTrace{trace, std::move(job), std::move(from)};
}

ReplayedTrace read_replayed_trace(const std::string& trace, const std::string& source) {
  return check_replayed_trace(trace, std::make_shared<const RecordedJob>(load_recorded_job(trace)), source);
}

ReplaySetup replay_setup(const ReplayedTrace& replayed, const ReplayChoices& choices) {
  ReplaySetup setup;
  setup.result_name = replay_result_name(replayed.job->name);
  setup.config_name = "feedbench replay " + replayed.trace;
  nlohmann::json family = {{"family", "replay"}, {"trace", replayed.trace}};
  if (choices.allow_resized) family["allow_resized"] = true;
  setup.config = {{"name", setup.result_name},
                  {"description", setup.config_name},
                  {"dataset", {{"source", replayed.source}}},
                  {"defaults", {{"repetitions", choices.repetitions}}},
                  {"families", {family}}};
  if (!choices.cache.empty()) setup.config["dataset"]["cache"] = choices.cache;
  setup.recorded_jobs[replayed.trace] = replayed.job;
  return setup;
}

}  // namespace feedbench
