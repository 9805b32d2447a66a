// feedbench replay: a watched job's data loading run again from its trace — the short form of a
// config with one `replay` family (see docs/replay.md).
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "command_line.h"
#include "feedbench/base/error.h"
#include "feedbench/replay/recorded_job.h"
#include "verbs.h"

namespace feedbench {
namespace {

namespace po = boost::program_options;

constexpr const char* kUsage =
    "usage: feedbench replay TRACE [--source DIR] [--cache DIR] [--set KEY=VALUE]...\n"
    "                        [--allow-resized] [--repetitions N] [--out FILE] [--throttle ROLE=RATE]\n"
    "                        [--budget DUR] [--dry-run] [--quiet]\n"
    "\n"
    "Runs a watched job's data loading again from the trace `feedbench watch --trace TRACE` wrote:\n"
    "the files it read, found by their paths under the folder it read them from (DIR, by default\n"
    "that folder itself), read call by call, the batches in the recorded order, built by the\n"
    "recorded number of workers with the recorded prefetch depth, start-up and CPU time, consumed\n"
    "with the recorded step times and hand-over cost. It prints and records what the loader\n"
    "family does (AU, stall, wait percentiles, per epoch, the limit: storage, page cache or CPU),\n"
    "as case replay/job:NAME/state:cold/path:source, which `feedbench diff` matches to the watched\n"
    "job/NAME and to another machine's replay. What-ifs, as --set (a list is a sweep):\n"
    "  step_scale=0.5   every step half as long (an accelerator twice as fast)\n"
    "  workers=8        DataLoader workers;  batch_size=64  the samples regrouped in order\n"
    "  epochs=3         passes (the recorded ones, over again);  cache_state=warm\n"
    "  path=cache       read the staged copy under --cache;  target_au=0.95\n"
    "It prints its estimated duration (the recorded loop's waits and steps) before it starts;\n"
    "--budget DUR refuses, exit 2, a replay estimated longer. Without --source it reads only the\n"
    "folder the trace names, never a system folder (/etc, /usr, /proc, ...), and every file\n"
    "beneath its root through no symbolic link.\n"
    "It is `feedbench run` on a config of one replay family: a config can hold that family too.\n\n";

}  // namespace

int replay_main(int argc, char** argv) {
  std::string trace, source, cache, out, budget, repetitions = "1";
  std::vector<std::string> sets, throttles;
  bool allow_resized = false, dry_run = false, quiet = false;
  po::options_description opts("options");
  opts.add_options()("help,h", "this help")("trace", po::value(&trace)->value_name("TRACE"), "the trace")(
      "source", po::value(&source)->value_name("DIR"),
      "where the job's files are (default: the folder the job read them from)")(
      "cache", po::value(&cache)->value_name("DIR"), "the staged cache, for path=cache")(
      "set", po::value(&sets)->composing()->value_name("KEY=VALUE"),
      "a what-if (step_scale, workers, batch_size, epochs, cache_state, path, target_au, job)")(
      "allow-resized", po::bool_switch(&allow_resized),
      "replay on files whose sizes differ from the recording (another copy of the data)")(
      "repetitions", po::value(&repetitions)->value_name("N"), "replays of each case (default 1)")(
      "out,o", po::value(&out)->value_name("FILE"),
      "result file (default results/replay-NAME/<host>-<UTC>.json)")(
      "throttle", po::value(&throttles)->composing()->value_name("ROLE=RATE"),
      "pace every read of a path, e.g. source=40MiB/s")(
      "budget", po::value(&budget)->value_name("DUR"),
      "refuse (exit 2) a replay estimated longer than DUR (20m, 90s, 1.5h), as run --budget")(
      "dry-run", po::bool_switch(&dry_run), "check the trace and its files, price the replay, run nothing")(
      "quiet,q", po::bool_switch(&quiet), "no progress");
  po::positional_options_description positional;
  positional.add("trace", 1);
  po::variables_map vm;
  if (parse_command_line(argc, argv, opts, vm, &positional)) {
    std::cout << kUsage << "options:\n" << options_help(opts);
    return 0;
  }
  if (trace.empty())
    throw InputError("expected a trace: feedbench replay TRACE (written by feedbench watch --trace)");
  for (const char* option : {"source", "cache", "out"})
    if (vm.count(option) && vm[option].as<std::string>().empty())
      throw InputError(std::string("--") + option + ": expected a path, got ''");
  // The trace read once, now: its folder is the default source, and a bad one is refused before
  // anything else; the run takes it as read.
  const auto job = std::make_shared<const RecordedJob>(load_recorded_job(trace));
  const std::string& job_name = job->name;
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
  std::string name = "replay-";
  for (char ch : job_name)
    name += std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-' ? ch : '_';
  nlohmann::json family = {{"family", "replay"}, {"trace", trace}};
  if (allow_resized) family["allow_resized"] = true;
  nlohmann::json config = {
      {"name", name},
      {"description", "feedbench replay " + trace},
      {"dataset", {{"source", source.empty() ? data_root : source}}},
      {"defaults", {{"repetitions", parse_whole_number(repetitions, "--repetitions", 1, 1000)}}},
      {"families", {family}}};
  if (!cache.empty()) config["dataset"]["cache"] = cache;
  std::vector<std::string> args{"feedbench replay"};
  for (const std::string& s : sets) args.insert(args.end(), {"--set", s});
  for (const std::string& t : throttles) args.insert(args.end(), {"--throttle", t});
  if (!out.empty()) args.insert(args.end(), {"--out", out});
  if (vm.count("budget")) args.insert(args.end(), {"--budget", budget});
  if (dry_run) args.push_back("--dry-run");
  if (quiet) args.push_back("--quiet");
  std::vector<char*> argv2;
  for (std::string& a : args) argv2.push_back(a.data());
  argv2.push_back(nullptr);
  const RunConfigText text{
      config.dump(2), "feedbench replay " + trace, {{trace, job}}, /*estimate_first=*/true};
  return run_config_main(int(argv2.size() - 1), argv2.data(), &text);
}

}  // namespace feedbench
