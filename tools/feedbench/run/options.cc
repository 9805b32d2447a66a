// feedbench run's command line: its own options and the Google Benchmark flags it reads, each
// checked on its own before the config is read, so a bad option is refused before anything
// runs or is written (exit 2).
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include <benchmark/benchmark.h>
#include <boost/program_options.hpp>

#include "command_line.h"
#include "feedbench/base/error.h"
#include "feedbench/results/recorded_variables.h"
#include "reporters/console_table.h"
#include "run/run_steps.h"

namespace po = boost::program_options;

namespace feedbench::run_steps {
namespace {

constexpr const char* kUsage =
    "usage: feedbench run --config FILE [options] [--benchmark_*=VALUE ...]\n\n"
    "Runs every case of an experiment config and writes a result file.\n"
    "Example: feedbench run --config configs/demo.json --source /data/imagenet --cache /nvme/cache\n"
    "Across nodes (a build with MPI): mpirun -np N feedbench run --config FILE; each rank reads its share\n"
    "of the selection (dataset.share), rank 0 prints and writes the one result.\n";

constexpr const char* kBenchmarkFlagsHelp =
    "\nGoogle Benchmark's flags work as usual (the = form only):\n"
    "  --benchmark_filter=REGEX            run the cases whose name matches (see --dry-run for the names)\n"
    "  --benchmark_repetitions=N           repetitions of every case\n"
    "  --benchmark_format=console|json|csv Google Benchmark's own output on stdout (console: its table)\n"
    "  --benchmark_out=FILE                also write Google Benchmark's JSON to FILE\n"
    "  --benchmark_color=true|false|auto   colour (auto: on a terminal, unless NO_COLOR or TERM=dumb)\n";

// RETURNS: the value of a Google Benchmark flag given as --benchmark_NAME=VALUE, else as the
// environment variable BENCHMARK_NAME (Google Benchmark reads both, the command line winning),
// or "". Read before benchmark::Initialize removes them (only the `=` form is a flag there), so
// every check of a flag (an output kept apart from the inputs, the filter) sees what will run.
std::string peek_benchmark_flag(int argc, char** argv, const std::string& name) {
  std::string prefix = "--benchmark_" + name + "=";
  std::string variable = "BENCHMARK_" + name;
  std::transform(variable.begin(), variable.end(), variable.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  const char* from_environment = std::getenv(variable.c_str());
  std::string value = from_environment ? from_environment : "";
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) value = argv[i] + prefix.size();
  return value;
}

// RETURNS: feedbench run's options, each parsed into its field of `o`.
po::options_description describe_options(RunOptions& o) {
  po::options_description opts("options");
  opts.add_options()("help,h", "this help")("config,c", po::value(&o.config_path)->value_name("FILE"),
                                            "experiment config (JSON), e.g. configs/demo.json")(
      "source", po::value<std::string>()->value_name("DIR"),
      "read the source from DIR (overrides dataset.source)")(
      "cache", po::value<std::string>()->value_name("DIR"),
      "read the cache from DIR (overrides dataset.cache)")(
      "scratch", po::value<std::string>()->value_name("DIR"),
      "write checkpoints beneath DIR (overrides dataset.scratch)")(
      "set", po::value(&o.sets)->composing()->value_name("KEY=VALUE"),
      "force or sweep a parameter in every family, e.g. workers=[1,2] or path=[source,cache]")(
      "throttle", po::value(&o.throttles)->composing()->value_name("ROLE=RATE"),
      "pace every read through a path, simulating slower storage, e.g. source=40MiB/s")(
      "out,o", po::value(&o.out_path)->value_name("FILE"),
      "result file (default results/<config-name>/<host>-<UTC>.json)")(
      "csv", po::value(&o.csv_path)->value_name("FILE"), "also write one CSV row per benchmark run")(
      "markdown", po::value(&o.markdown_path)->value_name("FILE"),
      "also write a Markdown summary (CI job summary, PR)")(
      "emit-fio", po::value(&o.emit_fio_dir)->value_name("DIR"),
      "also write each file_read case as an fio job file into DIR")(
      "include-from-cache",
      "read only the selection the cache was staged with (its manifest's --include globs)")(
      "node-accelerators", po::value(&o.node_accelerators_text)->value_name("K"),
      "what a node of K accelerators needs, in the summary (default: the most a case runs)")(
      "redact", po::value(&o.redact)->composing()->value_name("NAME"),
      "record variable NAME as set, never its value (credential-like names always are)")(
      "allow-unverified-cache", "measure path:cache cases even when the cache fails its checks (recorded)")(
      "verify-cache",
      "re-hash every cache file against its manifest first (default: listing, sizes, mtimes)")(
      "fingerprint", po::value(&o.fingerprint_kind)->value_name("KIND"),
      "metadata (default: names, sizes, mtimes) or content (also hashes samples of each file)")(
      "no-latency", "do not time each read (measures the harness's own overhead)")(
      "max-cases", po::value(&o.max_cases_text)->value_name("N"),
      "refuse a config whose sweeps make more than N cases [10000]")(
      "budget", po::value(&o.budget_text)->value_name("TIME"),
      "fit the run into TIME (e.g. 20m): fewer repetitions, shorter rounds, or refused")(
      "dry-run", "make every check a run makes, estimate its duration, list the cases; write nothing")(
      "display", po::value(&o.display_kind)->value_name("KIND"),
      "compact (default: a line per case, 120 columns) or gbench (Google Benchmark's table)")(
      "quiet,q", "no table, no progress: the summary and the result path only");
  return opts;
}

}  // namespace

void take_benchmark_flags(int& argc, char** argv, RunOptions& o) {
  o.format = peek_benchmark_flag(argc, argv, "format");
  o.colour_flag = peek_benchmark_flag(argc, argv, "color");
  o.repetitions_flag = peek_benchmark_flag(argc, argv, "repetitions");
  o.repetitions_from_flag = !o.repetitions_flag.empty();
  // check_benchmark_flags below refuses anything but 1 to 1000.
  o.flag_repetitions = o.repetitions_from_flag ? std::max(1, std::atoi(o.repetitions_flag.c_str())) : 1;
  o.filter = peek_benchmark_flag(argc, argv, "filter");
  o.benchmark_out = peek_benchmark_flag(argc, argv, "out");
  check_benchmark_flags(argc, argv);
  // Removes --benchmark_*=VALUE flags; what is left is ours, parsed strictly below.
  benchmark::Initialize(&argc, argv, [] { std::fputs(kUsage, stdout); });
}

void settle_run_options(RunOptions& o, const Cluster& cluster, bool display_given) {
  o.many = cluster.size() > 1;
  if (o.budget_ns > 0 && o.many)
    throw InputError(
        "--budget: not across ranks (each rank would probe and choose alone); run without mpirun, or "
        "set repetitions and runtime in the config");
  if (o.budget_ns > 0 && o.repetitions_from_flag)
    throw InputError(
        "--budget: cannot be combined with --benchmark_repetitions= (the budget chooses repetitions)");

  // The default display is a line per case (console_table.h); --display gbench or any
  // --benchmark_format= shows Google Benchmark's own output instead.
  if (o.display_kind != "compact" && o.display_kind != "gbench")
    throw InputError("--display: expected compact or gbench, got '" + o.display_kind + "'");
  if (display_given && o.display_kind == "compact" && !o.format.empty())
    throw InputError("--display compact: cannot be combined with --benchmark_format=" + o.format +
                     " (which shows Google Benchmark's output); leave one out");
  o.compact = o.display_kind == "compact" && o.format.empty();
  // Colour on a terminal only: never in a file or a pipe, nor with NO_COLOR or TERM=dumb,
  // unless --benchmark_color=true asks for it. Under a launcher (mpirun) a rank's stdout is the
  // launcher's pseudo-terminal whatever mpirun's own stdout is (colour codes reached a file
  // through `mpirun ... > out`), so a terminal there says nothing: no colour unless asked.
  const bool terminal = cluster.size() == 1 && interactive_terminal(STDOUT_FILENO);
  o.colour = o.colour_flag.empty() || o.colour_flag == "auto"
                 ? colour_wanted(terminal, std::getenv("NO_COLOR"), std::getenv("TERM"))
                 : (o.colour_flag == "true" || o.colour_flag == "yes" || o.colour_flag == "1");
  o.human = (o.format == "json" || o.format == "csv") ? stderr : stdout;
  if (!cluster.is_root()) o.quiet = true;
}

bool parse_run_options(int argc, char** argv, const Cluster& cluster, RunOptions& o) {
  o.command_line.assign(argv, argv + argc);
  o.command_line[0] = "feedbench";
  o.command_line.insert(o.command_line.begin() + 1, "run");

  const po::options_description opts = describe_options(o);
  // --help before benchmark::Initialize, which would print its own usage and stop.
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::cout << kUsage << "\noptions:\n" << options_help(opts) << kBenchmarkFlagsHelp;
      return false;
    }

  take_benchmark_flags(argc, argv, o);

  po::variables_map vm;
  if (parse_command_line(argc, argv, opts, vm)) {
    std::cout << kUsage << "\noptions:\n" << options_help(opts) << kBenchmarkFlagsHelp;
    return false;
  }
  if (o.config_path.empty())
    throw InputError("--config: required (an experiment config, e.g. configs/demo.json)");
  if (o.fingerprint_kind != "metadata" && o.fingerprint_kind != "content")
    throw InputError("--fingerprint: expected metadata or content, got '" + o.fingerprint_kind + "'");
  // An option given an empty value would be left unused without a word: refused instead.
  o.budget_ns = vm.count("budget") ? parse_budget(o.budget_text) : 0;
  for (const char* option : {"out", "csv", "markdown"})
    if (vm.count(option) && vm[option].as<std::string>().empty())
      throw InputError(std::string("--") + option + ": expected a file name, got ''");
  if (vm.count("emit-fio") && o.emit_fio_dir.empty())
    throw InputError("--emit-fio: expected a folder, got ''");
  settle_run_options(o, cluster, vm.count("display") > 0);

  if (vm.count("source")) o.source = vm["source"].as<std::string>();
  if (vm.count("cache")) o.cache = vm["cache"].as<std::string>();
  if (vm.count("scratch")) o.scratch = vm["scratch"].as<std::string>();
  o.include_from_cache = vm.count("include-from-cache") > 0;
  o.allow_unverified_cache = vm.count("allow-unverified-cache") > 0;
  check_redact_names(o.redact);
  if (vm.count("node-accelerators"))
    o.node_accelerators =
        std::int64_t(parse_whole_number(o.node_accelerators_text, "--node-accelerators", 1, 1 << 20));
  o.verify_cache = vm.count("verify-cache") > 0;
  o.record_latency = !vm.count("no-latency");
  o.dry_run = vm.count("dry-run") > 0;
  o.quiet = vm.count("quiet") > 0 || !cluster.is_root();
  return true;
}

}  // namespace feedbench::run_steps
