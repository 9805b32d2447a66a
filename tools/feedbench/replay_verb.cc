// feedbench replay: a watched job's data loading run again from its trace — the short form of a
// config with one `replay` family (see docs/replay.md).
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "benchmarks/replay_setup.h"
#include "command_line.h"
#include "feedbench/base/error.h"
#include "run/run_request.h"
#include "run/run_steps.h"
#include "verbs.h"

namespace feedbench {
namespace {

namespace po = boost::program_options;

constexpr const char* kUsage =
    "usage: feedbench replay TRACE [--source DIR] [--cache DIR] [--set KEY=VALUE]...\n"
    "                        [--allow-resized] [--repetitions N] [--out FILE] [--throttle ROLE=RATE]\n"
    "                        [--budget DUR] [--node-accelerators K] [--dry-run] [--quiet]\n"
    "\n"
    "Runs a watched job's data loading again from the trace `feedbench watch --trace TRACE` wrote:\n"
    "the files it read, found by their paths under the folder it read them from (DIR, by default\n"
    "that folder itself), read call by call, the batches in the recorded order, built by the\n"
    "recorded number of workers with the recorded prefetch depth, start-up and CPU time, consumed\n"
    "with the recorded step times and hand-over cost. It prints and records what the loader\n"
    "family does (AU, stall, wait percentiles, per epoch, the limit: storage, page cache or CPU;\n"
    "the accelerators its supply feeds, and what one and a node of K need at its step),\n"
    "as case replay/job:NAME/state:cold/path:source, which `feedbench diff` matches to the watched\n"
    "job/NAME and to another machine's replay. What-ifs, as --set (a list is a sweep):\n"
    "  step_scale=0.5   every step half as long (an accelerator twice as fast)\n"
    "  cpu_scale=2      cores twice as fast: every recorded CPU time of the job halved\n"
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
  std::string trace, source, cache, out, budget, node, repetitions = "1";
  std::vector<std::string> sets, throttles;
  bool allow_resized = false, dry_run = false, quiet = false;
  po::options_description opts("options");
  opts.add_options()("help,h", "this help")("trace", po::value(&trace)->value_name("TRACE"), "the trace")(
      "source", po::value(&source)->value_name("DIR"),
      "where the job's files are (default: the folder the job read them from)")(
      "cache", po::value(&cache)->value_name("DIR"), "the staged cache, for path=cache")(
      "set", po::value(&sets)->composing()->value_name("KEY=VALUE"),
      "what-ifs: step_scale, cpu_scale, workers, batch_size, epochs, cache_state, path, target_au, job")(
      "allow-resized", po::bool_switch(&allow_resized),
      "replay on files whose sizes differ from the recording (another copy of the data)")(
      "repetitions", po::value(&repetitions)->value_name("N"), "replays of each case (default 1)")(
      "out,o", po::value(&out)->value_name("FILE"),
      "result file (default results/replay-NAME/<host>-<UTC>.json)")(
      "throttle", po::value(&throttles)->composing()->value_name("ROLE=RATE"),
      "pace every read of a path, e.g. source=40MiB/s")(
      "budget", po::value(&budget)->value_name("DUR"),
      "refuse (exit 2) a replay estimated longer than DUR (20m, 90s, 1.5h), as run --budget")(
      "node-accelerators", po::value(&node)->value_name("K"),
      "what a node of K accelerators needs at the replay's step, in the summary (default 1)")(
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
  const ReplayedTrace replayed = read_replayed_trace(trace, source);
  ReplayChoices choices;
  choices.cache = cache;
  choices.allow_resized = allow_resized;
  choices.repetitions = parse_whole_number(repetitions, "--repetitions", 1, 1000);
  ReplaySetup setup = replay_setup(replayed, choices);

  RunRequest request;
  run_steps::RunOptions& o = request.options;
  // What the result records: this command as it was given, which runs the replay again
  // (not the run it stands for, which no one typed).
  o.command_line.assign(argv, argv + argc);
  o.command_line[0] = "feedbench";
  o.command_line.insert(o.command_line.begin() + 1, "replay");
  o.config_path = setup.config_name;
  o.sets = sets;
  o.throttles = throttles;
  o.out_path = out;
  if (vm.count("budget")) o.budget_text = budget, o.budget_ns = run_steps::parse_budget(budget);
  if (vm.count("node-accelerators"))
    o.node_accelerators = std::int64_t(parse_whole_number(node, "--node-accelerators", 1, 1 << 20));
  o.dry_run = dry_run;
  o.quiet = quiet;
  request.config = std::move(setup.config);
  request.recorded_jobs = std::move(setup.recorded_jobs);
  request.estimate_first = true;
  return run_request(std::move(request));
}

}  // namespace feedbench
