// feedbench run --config FILE: expand the config into cases, say which paths are measured,
// run every case through Google Benchmark, write the result file and print the summary.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>
#include <boost/program_options.hpp>

#include <fcntl.h>

#include <exception>
#include <memory>

#include "cluster_launch.h"
#include "collecting_reporter.h"
#include "command_line.h"
#include "console_table.h"
#include "csv_writer.h"
#include "feedbench/base/cores.h"
#include "feedbench/base/error.h"
#include "feedbench/base/file_system.h"
#include "feedbench/base/sha256.h"
#include "feedbench/base/text.h"
#include "feedbench/base/units.h"
#include "feedbench/cache/cache_verification.h"
#include "feedbench/cache/manifest.h"
#include "feedbench/cache/stager.h"
#include "feedbench/cluster/cluster.h"
#include "feedbench/dataset/dataset.h"
#include "feedbench/dataset/shape.h"
#include "feedbench/io/page_cache.h"
#include "feedbench/plan/config.h"
#include "feedbench/plan/estimator.h"
#include "feedbench/plan/fio_jobs.h"
#include "feedbench/plan/plan.h"
#include "feedbench/plan/preflight.h"
#include "feedbench/results/environment.h"
#include "feedbench/results/result.h"
#include "markdown_writer.h"
#include "progress.h"
#include "registration.h"
#include "result_builder.h"
#include "run_context.h"
#include "summary.h"
#include "verbs.h"

namespace po = boost::program_options;

namespace feedbench {
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

// RETURNS: the value of a Google Benchmark flag given as --benchmark_NAME=VALUE, or "".
// Read before benchmark::Initialize removes them (only the `=` form is a flag there).
std::string peek_benchmark_flag(int argc, char** argv, const std::string& name) {
  std::string prefix = "--benchmark_" + name + "=";
  std::string value;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) value = argv[i] + prefix.size();
  return value;
}

// Prints feedbench's own lines within the console's width (console_table.h).
void say(std::FILE* out, const std::string& text) { std::fputs(wrap_text(text).c_str(), out); }

std::string host_name() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf[0] ? buf : "host";
}

long max_rss_kib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

bool uses_path(const Plan& plan, const std::string& role) {
  for (const Case& c : plan.cases)
    if (c.has("path") && c.str("path") == role) return true;
  return false;
}

bool uses_state(const Plan& plan, const std::string& state) {
  for (const Case& c : plan.cases)
    if (c.has("cache_state") && c.str("cache_state") == state) return true;
  return false;
}

// Nothing measured is never a success: an empty selection is bad input, found before any case
// runs. An empty folder is also what an unmounted mount point looks like.
void require_files(const FileSet& files, const char* role, const std::vector<std::string>& include) {
  if (!files.empty()) return;
  std::string globs;
  for (const std::string& g : include) globs += (globs.empty() ? "'" : ", '") + g + "'";
  std::error_code ec;
  const bool empty_folder = std::filesystem::is_empty(files.root(), ec) && !ec;
  throw InputError(std::string("dataset.") + role + ": the " + role + " selection under " + files.root() +
                   " holds no files" + (include.empty() ? std::string() : " (include: " + globs + ")") +
                   (empty_folder ? ": the folder is empty (is its file system mounted?)" : "") +
                   "; nothing to measure");
}

// RETURNS: the files of `selection` that `include` selects (exact paths by lookup, others by
// glob): the part of a selection a partial cache was staged with.
FileSet selection_part(const FileSet& selection, const std::vector<std::string>& include) {
  std::set<std::string_view> exact;
  std::vector<std::string> globs;
  for (const std::string& g : include)
    (g.find_first_of("*?[") == std::string::npos ? exact.insert(g), void() : globs.push_back(g));
  FileSet part(selection.root());
  for (std::size_t i = 0; i < selection.size(); ++i) {
    const std::string_view rel = selection.relative_path(i);
    bool in = include.empty() || exact.count(rel) > 0;
    for (std::size_t k = 0; !in && k < globs.size(); ++k) in = glob_match(globs[k], rel);
    if (in) part.add(rel, selection.file_size(i), selection.mtime_ns(i));
  }
  part.sort();
  return part;
}

// dataset.include "from-cache": the globs the cache was staged with, from its manifest.
std::vector<std::string> include_from_cache(const Config& config) {
  std::string why;
  const std::optional<Manifest> m = read_manifest(config.cache_root, &why);
  if (!m)
    throw InputError(config.file + ": /dataset/include: \"from-cache\": the cache " + config.cache_root +
                     " has no complete manifest (" + why +
                     ") to read the selection from: stage a selection "
                     "into it first (feedbench stage --from SRC --to CACHE --include GLOB)");
  return m->include;
}

// RETURNS: what to do about a cache whose folder no longer holds what its manifest lists: the
// command that copies the listed files again (changed copies removed first: they keep their
// size and mtime, so stage would take them as in place), and what stage leaves alone.
std::string cache_fix(const CacheVerification& v, const Config& config, const Manifest& m) {
  const std::string content = "content differs from the manifest's SHA-256: ";
  std::string rm, extra;
  for (const std::string& p : v.problems) {
    if (p.rfind(content, 0) == 0) rm += " " + shell_quote(config.cache_root + "/" + p.substr(content.size()));
    if (p.rfind("not in the manifest: ", 0) == 0) extra = p;
  }
  std::string out = "to copy the listed files again, run `" + (rm.empty() ? "" : "rm -f --" + rm + " && ") +
                    stage_command(config.source_root, config.cache_root, m.include, m.label) + "`";
  if (!extra.empty())
    out += "; files not in the manifest are not feedbench's and stage leaves them: move them out of " +
           config.cache_root;
  return out;
}

// NOTE: test hook: FEEDBENCH_RUN_TEST_DELAY_MS sleeps that long once the paths are printed and
// before the first case, so a test can change the data set between the scan and the rounds.
void sleep_for_test_hook() {
  const char* ms = std::getenv("FEEDBENCH_RUN_TEST_DELAY_MS");
  if (ms && *ms) std::this_thread::sleep_for(std::chrono::milliseconds(std::atol(ms)));
}

// The environment variables that change a run and were set: Google Benchmark's, feedbench's,
// and those the config expanded (a ${VAR:-default} whose VAR was unset is not among them).
std::map<std::string, std::string> run_environment(const Config& config) {
  std::map<std::string, std::string> vars = config.expanded_env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    if (kv.rfind("BENCHMARK_", 0) == 0 || kv.rfind("FEEDBENCH_", 0) == 0) {
      auto eq = kv.find('=');
      vars[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
    }
  }
  return vars;
}

// RETURNS: how many cases, and how many repetitions in all, Google Benchmark will run:
// those whose name matches --benchmark_filter as the library matches it (an extended regex
// searched in "<case>/iterations:1[/repeats:N]/manual_time"; a leading '-' negates it).
// `matched`, when given, receives those cases.
// RETURNS: the threads that read in one process for case `c`: the loader's workers for each
// accelerator, the other families' workers.
int reading_threads(const Case& c) {
  const int workers = c.has("workers") ? int(std::max<std::int64_t>(1, c.integer("workers"))) : 1;
  return c.has("accelerators") ? workers * int(c.integer("accelerators")) : workers;
}

std::pair<std::size_t, std::size_t> cases_to_run(const Plan& plan, const std::string& filter,
                                                 bool repetitions_from_flag, int flag_repetitions,
                                                 std::vector<Case>* matched = nullptr) {
  std::string spec = filter.empty() || filter == "all" ? "." : filter;
  const bool negative = spec[0] == '-';
  if (negative) spec.erase(0, 1);
  std::optional<std::regex> re;
  try {
    re.emplace(spec, std::regex::extended);
  } catch (const std::regex_error&) {
    // The library reports a bad filter itself; count every case meanwhile.
  }
  std::size_t cases = 0, repetitions = 0;
  for (const Case& c : plan.cases) {
    const int reps = repetitions_from_flag ? flag_repetitions : c.repetitions;
    const std::string name = c.name() + "/iterations:1" +
                             (repetitions_from_flag ? "" : "/repeats:" + std::to_string(reps)) +
                             "/manual_time";
    if (re && std::regex_search(name, *re) == negative) continue;
    if (matched) matched->push_back(c);
    ++cases;
    repetitions += std::size_t(reps);
  }
  return {cases, repetitions};
}

// RETURNS: the --budget in nanoseconds: a duration such as 20m, 90s or 1.5h ("m" is minutes
// here, as people write a budget). Throws InputError naming --budget.
std::int64_t parse_budget(const std::string& text) {
  std::string t = text;
  if (t.size() >= 2 && t.back() == 'm' &&
      (std::isdigit((unsigned char)t[t.size() - 2]) || t[t.size() - 2] == ' '))
    t += "in";
  std::int64_t ns = 0;
  try {
    ns = parse_duration_ns(t, "--budget");
  } catch (const InputError&) {
    throw InputError("--budget: expected a duration such as 20m, 90s or 1.5h, got '" + text + "'");
  }
  if (ns <= 0) throw InputError("--budget: expected a duration above zero, got '" + text + "'");
  return ns;
}

// The estimate of a run: each path's probed rate and each case's cost (estimator.h).
struct RunEstimate {
  std::map<std::string, PathRate> rates;  // by path role
  std::vector<CaseCost> costs;            // per case, in plan order
  std::string how;
  std::string unavailable;  // why a probe could not read (then there is no estimate)
};

const char* role_of(const Case& c) {
  if (c.has("path")) return c.str("path") == "cache" ? "cache" : "source";
  return "source";  // stage reads the source
}

// Probes each path the plan reads (a few MiB, evicted first) and prices every case.
// A probe that cannot read leaves `unavailable` set (a run error for --budget).
RunEstimate estimate_run(const Plan& plan, const RunContext& context) {
  RunEstimate e;
  for (const Case& c : plan.cases) {
    const std::string role = role_of(c);
    if (e.rates.count(role)) continue;
    const FileSet* files = context.files_for(role);
    if (!files || files->empty()) continue;
    PathRate r = probe_read_rate(*files);
    if (!r.error.empty()) {
      e.unavailable = "probing the " + role + " path: " + r.error;
      return e;
    }
    // A throttled path reads no faster than its throttle, from the page cache too.
    if (context.config)
      if (auto t = context.config->throttle.find(role); t != context.config->throttle.end()) {
        const double rate = double(t->second);
        r.cold_bytes_per_second = std::min(r.cold_bytes_per_second, rate);
        r.cached_bytes_per_second = std::min(r.cached_bytes_per_second, rate);
        r.random_read_s = std::max(r.random_read_s, 4096.0 / rate);
        r.how += ", capped by its throttle at " + format_rate(rate);
      }
    e.rates.emplace(role, std::move(r));
  }
  for (const Case& c : plan.cases) {
    const std::string role = role_of(c);
    const FileSet* files = context.files_for(role);
    auto it = e.rates.find(role);
    e.costs.push_back(it == e.rates.end() || !files ? CaseCost{c.name(), c.family, c.repetitions}
                                                    : estimate_case(c, *files, it->second));
  }
  for (const auto& [role, r] : e.rates) e.how += (e.how.empty() ? "" : "; ") + role + ": " + r.how;
  return e;
}

// How far the ranks of a run went together: past the start (every rank ready to run its cases)
// and past the end (every rank ran every case).
struct RankProgress {
  bool started = false;
  bool finished = false;  // or failed together, every rank with the same reason
};

// Every rank says whether it is ready to run the cases (`error` null when it is). A failure on
// any rank fails all of them with that rank's reason, exit code and all, before any case: no
// rank waits for one that left. One process: its own error, unchanged.
// `plan`: a digest of what this rank will run (cases, repetitions, filter): ranks that would run
// different cases would wait for each other in different places, so they are refused.
void agree_to_start(Cluster& cluster, RankProgress& progress, const std::exception_ptr& error,
                    const std::string& plan = "") {
  progress.started = true;
  if (cluster.size() == 1) {
    if (error) std::rethrow_exception(error);
    return;
  }
  struct Status {
    std::uint8_t failed;
    std::uint8_t input;  // exit 2 (bad input) rather than 1
    FixedText<900> why;
    FixedText<72> plan;
  } mine{};
  mine.plan.set(plan);
  if (error) {
    mine.failed = 1;
    const VerbFailure f = verb_failure(error, "run");
    mine.input = f.exit_code == 2;
    mine.why.set(f.reason);
  }
  const std::vector<Status> all = all_gather(cluster, mine);
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (!all[r].failed) continue;
    progress.finished = true;
    const std::string why = "rank " + std::to_string(r) + " (host " +
                            cluster.host_names()[std::size_t(cluster.host_of_rank()[r])] +
                            "): " + all[r].why.str();
    if (all[r].input) throw InputError(why);
    throw RunError(why);
  }
  for (std::size_t r = 1; r < all.size(); ++r)
    if (all[r].plan.str() != all[0].plan.str()) {
      progress.finished = true;
      throw InputError("rank " + std::to_string(r) + " (host " +
                       cluster.host_names()[std::size_t(cluster.host_of_rank()[r])] +
                       ") would run other cases than rank 0 (another config, --set or --benchmark_* flag): "
                       "every rank must run the same plan");
    }
}

int run_ranks(int argc, char** argv, Cluster& cluster, RankProgress& together);

}  // namespace

int run_main(int argc, char** argv) {
  std::unique_ptr<Cluster> cluster = start_cluster(&argc, &argv);
  // Rank 0 alone prints; the others' reasons reach it through the agreements below.
  if (!cluster->is_root() && !std::getenv("FEEDBENCH_RANK_OUTPUT")) {
    silence_output();
  }
  RankProgress together;
  try {
    const int rc = run_ranks(argc, argv, *cluster, together);
    if (!together.started) agree_to_start(*cluster, together, nullptr);  // --help, --dry-run
    return rc;
  } catch (...) {
    if (!together.started) agree_to_start(*cluster, together, std::current_exception());
    if (together.started && !together.finished && cluster->size() > 1) {
      // Failed alone while the others run cases: end them all rather than leave them waiting.
      try {
        throw;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "feedbench run: rank %d: error: %s\n", cluster->rank(), e.what());
      }
      cluster->abort(1);
    }
    throw;
  }
}

namespace {

int run_ranks(int argc, char** argv, Cluster& cluster, RankProgress& together) {
  std::vector<std::string> command_line(argv, argv + argc);
  command_line[0] = "feedbench";
  command_line.insert(command_line.begin() + 1, "run");

  std::string config_path, out_path, csv_path, markdown_path, emit_fio_dir,
      max_cases_text = std::to_string(kDefaultMaxCases);
  std::string fingerprint_kind = "metadata";
  std::string budget_text;
  std::string display_kind = "compact";
  std::vector<std::string> sets, throttles;
  po::options_description opts("options");
  opts.add_options()("help,h", "this help")("config,c", po::value(&config_path)->value_name("FILE"),
                                            "experiment config (JSON), e.g. configs/demo.json")(
      "source", po::value<std::string>()->value_name("DIR"),
      "read the source from DIR (overrides dataset.source)")(
      "cache", po::value<std::string>()->value_name("DIR"),
      "read the cache from DIR (overrides dataset.cache)")(
      "set", po::value(&sets)->composing()->value_name("KEY=VALUE"),
      "force or sweep a parameter in every family, e.g. workers=[1,2] or path=[source,cache]")(
      "throttle", po::value(&throttles)->composing()->value_name("ROLE=RATE"),
      "pace every read through a path, simulating slower storage, e.g. source=40MiB/s")(
      "out,o", po::value(&out_path)->value_name("FILE"),
      "result file (default results/<config-name>/<host>-<UTC>.json)")(
      "csv", po::value(&csv_path)->value_name("FILE"), "also write one CSV row per benchmark run")(
      "markdown", po::value(&markdown_path)->value_name("FILE"),
      "also write a Markdown summary (CI job summary, PR)")(
      "emit-fio", po::value(&emit_fio_dir)->value_name("DIR"),
      "also write each file_read case as an fio job file into DIR")(
      "include-from-cache",
      "read only the selection the cache was staged with (its manifest's --include globs)")(
      "allow-unverified-cache", "measure path:cache cases even when the cache fails its checks (recorded)")(
      "verify-cache",
      "re-hash every cache file against its manifest first (default: listing, sizes, mtimes)")(
      "fingerprint", po::value(&fingerprint_kind)->value_name("KIND"),
      "metadata (default: names, sizes, mtimes) or content (also hashes samples of each file)")(
      "no-latency", "do not time each read (measures the harness's own overhead)")(
      "max-cases", po::value(&max_cases_text)->value_name("N"),
      "refuse a config whose sweeps make more than N cases [10000]")(
      "budget", po::value(&budget_text)->value_name("TIME"),
      "fit the run into TIME (e.g. 20m): fewer repetitions, shorter rounds, or refused")(
      "dry-run", "make every check a run makes, estimate its duration, list the cases; write nothing")(
      "display", po::value(&display_kind)->value_name("KIND"),
      "compact (default: a line per case, 120 columns) or gbench (Google Benchmark's table)")(
      "quiet,q", "no table, no progress: the summary and the result path only");
  // --help before benchmark::Initialize, which would print its own usage and stop.
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::cout << kUsage << "\noptions:\n" << options_help(opts) << kBenchmarkFlagsHelp;
      return 0;
    }

  const std::string format = peek_benchmark_flag(argc, argv, "format");
  const std::string color = peek_benchmark_flag(argc, argv, "color");
  const std::string repetitions_flag = peek_benchmark_flag(argc, argv, "repetitions");
  const bool repetitions_from_flag = !repetitions_flag.empty();
  // check_benchmark_flags below refuses anything but 1 to 1000.
  const int flag_repetitions = repetitions_from_flag ? std::max(1, std::atoi(repetitions_flag.c_str())) : 1;
  const std::string filter = peek_benchmark_flag(argc, argv, "filter");
  const std::string benchmark_out = peek_benchmark_flag(argc, argv, "out");
  check_benchmark_flags(argc, argv);
  // Removes --benchmark_*=VALUE flags; what is left is ours, parsed strictly below.
  benchmark::Initialize(&argc, argv, [] { std::fputs(kUsage, stdout); });
  const bool many = cluster.size() > 1;

  po::variables_map vm;
  if (parse_command_line(argc, argv, opts, vm)) {
    std::cout << kUsage << "\noptions:\n" << options_help(opts) << kBenchmarkFlagsHelp;
    return 0;
  }
  if (config_path.empty())
    throw InputError("--config: required (an experiment config, e.g. configs/demo.json)");
  if (fingerprint_kind != "metadata" && fingerprint_kind != "content")
    throw InputError("--fingerprint: expected metadata or content, got '" + fingerprint_kind + "'");
  const std::int64_t budget_ns = budget_text.empty() ? 0 : parse_budget(budget_text);
  if (budget_ns > 0 && many)
    throw InputError(
        "--budget: not across ranks (each rank would probe and choose alone); run without mpirun, or "
        "set repetitions and runtime in the config");
  if (budget_ns > 0 && repetitions_from_flag)
    throw InputError(
        "--budget: cannot be combined with --benchmark_repetitions= (the budget chooses repetitions)");

  // The default display is a line per case (console_table.h); --display gbench or any
  // --benchmark_format= shows Google Benchmark's own output instead.
  if (display_kind != "compact" && display_kind != "gbench")
    throw InputError("--display: expected compact or gbench, got '" + display_kind + "'");
  if (vm.count("display") && display_kind == "compact" && !format.empty())
    throw InputError("--display compact: cannot be combined with --benchmark_format=" + format +
                     " (which shows Google Benchmark's output); leave one out");
  const bool compact = display_kind == "compact" && format.empty();
  // Colour on a terminal only: never in a file or a pipe, nor with NO_COLOR or TERM=dumb,
  // unless --benchmark_color=true asks for it.
  const bool colour =
      color.empty() || color == "auto"
          ? colour_wanted(isatty(STDOUT_FILENO) != 0, std::getenv("NO_COLOR"), std::getenv("TERM"))
          : (color == "true" || color == "yes" || color == "1");

  // With --benchmark_format=json or csv, stdout carries that format alone: feedbench's own
  // lines (paths, summary, result path) go to stderr so `> out.json` stays parseable.
  std::FILE* human = (format == "json" || format == "csv") ? stderr : stdout;
  auto t0 = std::chrono::steady_clock::now();
  ConfigOverrides overrides;
  if (vm.count("source")) overrides.source = vm["source"].as<std::string>();
  if (vm.count("cache")) overrides.cache = vm["cache"].as<std::string>();
  overrides.set = parse_sets(sets);
  overrides.throttle = parse_throttles(throttles);
  Config config = load_config(config_path, overrides);
  if (vm.count("include-from-cache")) {
    if (config.cache_root.empty())
      throw InputError("--include-from-cache: reads the cache's manifest: set dataset.cache (or --cache)");
    config.include_from_cache = true;
  }
  if (config.include_from_cache) config.include = include_from_cache(config);
  Plan plan = expand_plan(config, parse_whole_number(max_cases_text, "--max-cases", 1, UINT64_MAX));
  // A partial cache's hit share and ranking count files by their place in the source, which a
  // rank's share of the selection does not keep: refused before anything runs, not per case.
  if (many && config.partial_cache && uses_path(plan, "cache"))
    throw InputError(config.file +
                     ": /dataset/partial_cache: a partial cache is read by one process only, not "
                     "across ranks (its hit share counts files by their place in the source, which a rank's "
                     "share does not keep): run it without mpirun, or measure path cache of a full cache");

  // Every file the run will write is checked now, not after the cases ran (the default result
  // path is fixed here, so the one checked is the one written).
  std::string out_option = "--out";
  if (out_path.empty()) {
    out_path = "results/" + config.name + "/" + host_name() + "-" + utc_timestamp(true) + ".json";
    out_option = "--out (default " + out_path + ")";
  }
  // Rank 0 alone writes files (Google Benchmark's --benchmark_out too: every rank's library
  // writes it, so across ranks it is refused).
  if (many && !benchmark_out.empty())
    throw InputError("--benchmark_out: not across ranks (each rank would write it); use --out");
  if (cluster.is_root()) {
    require_writable_file(out_option, out_path);
    if (!csv_path.empty()) require_writable_file("--csv", csv_path);
    if (!markdown_path.empty()) require_writable_file("--markdown", markdown_path);
    if (!benchmark_out.empty()) require_writable_file("--benchmark_out", benchmark_out);
    if (!emit_fio_dir.empty()) require_writable_folder("--emit-fio", emit_fio_dir);
  }

  RunContext context;
  context.config = &config;
  context.cluster = &cluster;
  context.record_latency = !vm.count("no-latency");
  context.allow_unverified_cache = vm.count("allow-unverified-cache") > 0;
  const bool quiet = vm.count("quiet") > 0 || !cluster.is_root();
  const bool dry_run = vm.count("dry-run") > 0;
  context.show_progress = !quiet && isatty(STDERR_FILENO);

  // Each root is scanned once; every case reads from these FileSets.
  context.source = scan_dataset(config.source_root, config.include);
  require_files(*context.source, "source", config.include);
  if (uses_path(plan, "cache") || !config.cache_root.empty()) {
    if (!config.cache_root.empty() && std::filesystem::is_directory(config.cache_root))
      context.cache = scan_dataset(config.cache_root, config.include);
    if (context.cache && uses_path(plan, "cache")) require_files(*context.cache, "cache", config.include);
  }
  // An O_DIRECT read whose length the device does not align fails in every round of its case:
  // refused here, naming the case, instead of skipped after the cases before it ran.
  check_direct_block_sizes(plan, config.file, [&](const std::string& role) {
    const FileSet* files = context.files_for(role);
    const std::string at = files && !files->empty()
                               ? files->absolute_path(0)
                               : (role == "cache" ? config.cache_root : config.source_root);
    DirectAlignment a = direct_io_alignment(at);
    if (a.assumed) std::fprintf(stderr, "feedbench run: note: %s: %s\n", role.c_str(), a.how.c_str());
    return a;
  });
  const double plan_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // What the scans left out is named, never dropped silently; a cache's own manifest,
  // journal and other runs' scratch folders are expected there, gen's record anywhere.
  if (std::string note = left_out_note(*context.source, {"feedbench metadata"}); !note.empty())
    say(stderr, "feedbench run: note: source: " + note + "\n");
  if (context.cache)
    if (std::string note = left_out_note(*context.cache,
                                         {"feedbench manifest", "feedbench temporary", "feedbench metadata"});
        !note.empty())
      say(stderr, "feedbench run: note: cache: " + note + "\n");

  std::fprintf(human, "feedbench run: %s — %zu %s", config.name.c_str(), plan.cases.size(),
               plan.cases.size() == 1 ? "case" : "cases");
  if (!plan.dropped.empty()) std::fprintf(human, ", %zu combinations dropped", plan.dropped.size());
  std::fprintf(human, "\n");
  for (const std::string& why : plan.dropped) say(human, "  dropped: " + why + "\n");

  // A cache that does not match its source, or whose folder no longer holds what its manifest
  // lists, is refused, not measured: one checked before any case, so nothing half-runs.
  nlohmann::json manifest = nullptr;
  nlohmann::json verification = nullptr;
  bool cache_verified = false;
  context.partial_cache = config.partial_cache;
  if (uses_path(plan, "cache")) {
    // MANIFEST.sha256 is read once (a large cache's is tens of MB) and serves every check.
    std::string why_no_manifest;
    const std::optional<Manifest> staged = read_manifest(config.cache_root, &why_no_manifest);
    // A partial cache (a hot set) is checked against the files of the source it holds.
    std::optional<FileSet> held_part;
    if (config.partial_cache && staged) held_part = selection_part(*context.source, staged->include);
    const FileSet& cached_selection = held_part ? *held_part : *context.source;
    std::string why = check_cache(config.cache_root, cached_selection, staged, why_no_manifest,
                                  held_part ? &staged->include : &config.include);
    if (held_part && held_part->size() != staged->files.size())
      why = "the partial cache " + config.cache_root + " lists " + std::to_string(staged->files.size()) +
            " files of which the run's selection holds " + std::to_string(held_part->size()) +
            ": it is not part of this selection";
    // Another selection than the cache's: measuring the cached one is a config change.
    if (staged && staged->include != config.include && !config.include_from_cache && !config.partial_cache) {
      std::string again;
      for (const std::string& word : command_line) again += (again.empty() ? "" : " ") + shell_quote(word);
      why += "; or, to measure the cached selection, run `" + again +
             " --include-from-cache` (or set \"include\": \"from-cache\" under \"dataset\" in " +
             config.file + ")";
    }
    if (why.empty() && context.cache) {
      CacheVerification v = vm.count("verify-cache") && !dry_run
                                ? rehash_cache(config.cache_root, *staged, *context.cache, cached_selection,
                                               context.show_progress)
                                : check_cache_listing(*staged, *context.cache, cached_selection);
      verification = v.to_json();
      cache_verified = v.ok;
      why = v.summary(config.cache_root);
      if (!v.ok) why += "; " + cache_fix(v, config, *staged);
    } else if (!why.empty()) {
      verification = {{"method", vm.count("verify-cache") ? "sha256" : "listing+sizes+mtimes"},
                      {"ok", false},
                      {"problems", {why}},
                      {"files_checked", 0},
                      {"bytes_checked", 0}};
    }
    if (!why.empty()) {
      if (!context.allow_unverified_cache)
        throw InputError(why + " (or pass --allow-unverified-cache to measure it anyway)");
      say(stderr, "warning: measuring an unverified cache: " + why + "\n");
    }
    if (staged) manifest = nlohmann::json(staged->to_json());
  }

  // --budget and --dry-run price the plan from each path's probed rate; a budget the plan
  // cannot fit is refused like bad input, before anything is measured.
  nlohmann::json budget_record = nullptr;
  std::optional<RunEstimate> estimate;
  if (budget_ns > 0 || dry_run) estimate = estimate_run(plan, context);
  if (budget_ns > 0 && !estimate->unavailable.empty())
    throw RunError("--budget " + budget_text + ": cannot estimate the run: " + estimate->unavailable);
  if (budget_ns > 0) {
    const double budget_s = double(budget_ns) / 1e9;
    // The cases get 90% of what is left of the budget after the scan and the probe: the rest
    // is headroom for an estimate from a short probe, and for writing the results.
    const double spent_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double usable_s = std::max(0.0, 0.9 * budget_s - spent_s);
    const BudgetFit fit = fit_budget(estimate->costs, usable_s);
    if (!fit.fits)
      throw InputError(
          "--budget " + budget_text + ": the plan cannot fit: it needs at least " +
          format_estimate(fit.minimum_s / 0.9 + spent_s) + " (" + std::to_string(plan.cases.size()) +
          " cases at " + std::to_string(kBudgetMinRepetitions) +
          " repetitions or fewer and file_read rounds of 1s or their steady-state window, at the probed "
          "read rates, with 10% headroom); raise --budget or sweep fewer cases");
    bool changed = false;
    for (std::size_t i = 0; i < plan.cases.size(); ++i) {
      Case& c = plan.cases[i];
      const BudgetChoice& choice = fit.choices[i];
      changed = changed || choice.repetitions != c.repetitions || choice.runtime_ns > 0;
      c.repetitions = choice.repetitions;
      c.budget_runtime_ns = choice.runtime_ns;
      estimate->costs[i].repetitions = choice.repetitions;
      if (choice.runtime_ns > 0)
        estimate->costs[i].round_s = estimate->costs[i].ramp_s + double(choice.runtime_ns) * 1e-9;
    }
    std::fprintf(human, "budget %s: %s; estimated %s\n", budget_text.c_str(),
                 changed ? "chose the repetitions and runtimes below" : "fits as planned",
                 format_estimate(fit.estimated_s).c_str());
    if (changed)
      for (std::size_t i = 0; i < plan.cases.size(); ++i) {
        const Case& c = plan.cases[i];
        std::string runtime =
            c.budget_runtime_ns > 0
                ? "runtime " + format_duration_exact(c.budget_runtime_ns)
                : std::string(c.has("runtime") ? "runtime " + c.str("runtime") : "whole selection");
        std::fprintf(human, "  %s: %d repetitions, %s\n", c.name().c_str(), c.repetitions, runtime.c_str());
      }
    budget_record = {{"budget_s", budget_s},
                     {"estimated_s", fit.estimated_s},
                     {"minimum_s", fit.minimum_s},
                     {"probe", estimate->how}};
  }

  // --dry-run stops here: every refusal above is the run's own, so a dry run that passes is
  // a run that starts (the cache was checked by listing, not re-hashed).
  if (dry_run) {
    if (!estimate->unavailable.empty())
      say(human, "estimated duration: unknown (" + estimate->unavailable + ")\n");
    else
      say(human, "estimated duration: " + format_estimate(total_seconds(estimate->costs)) +
                     " (probe: " + estimate->how +
                     "; rounds priced at those rates with one worker, preparation included; "
                     "more workers or a deeper queue finish sooner)\n");
    for (std::size_t i = 0; i < plan.cases.size(); ++i) {
      if (!estimate->unavailable.empty()) {
        std::fprintf(human, "  %s\n", plan.cases[i].name().c_str());
        continue;
      }
      const CaseCost& cost = estimate->costs[i];
      std::fprintf(human, "  %s  (%d x %s)\n", plan.cases[i].name().c_str(), cost.repetitions,
                   format_estimate(cost.prepare_s + cost.round_s + kRepetitionOverheadS).c_str());
    }
    std::fprintf(human, "source: %zu files, %s\n", context.source->size(),
                 format_size(double(context.source->total_bytes())).c_str());
    if (context.cache)
      std::fprintf(human, "cache: %zu files, %s\n", context.cache->size(),
                   format_size(double(context.cache->total_bytes())).c_str());
    std::fprintf(human, "scan and plan: %.3f s, max resident memory %ld KiB\n", plan_seconds, max_rss_kib());
    return 0;
  }

  // The content fingerprint reads samples of every file; cold and warm cases set their page
  // cache state afterwards, each before its own round.
  std::string source_content, cache_content;
  if (fingerprint_kind == "content" && cluster.is_root()) {
    source_content = content_fingerprint(*context.source);
    if (context.cache) cache_content = content_fingerprint(*context.cache);
  }

  // Say which paths are measured, before anything runs.
  std::map<std::string, PathInfo> paths;
  paths.emplace("source", describe_path("source", config.source_root));
  if (!config.cache_root.empty() && std::filesystem::exists(config.cache_root))
    paths.emplace("cache", describe_path("cache", config.cache_root));
  say(human, format_paths(paths));
  for (const auto& [role, rate] : config.throttle)
    say(human, role + ": throttled to " + format_rate(double(rate)) +
                   " (simulated slower storage: every read through it, all workers of a case together)\n");
  if (!manifest.is_null())
    std::fprintf(human, "cache: label %s, %s, staged %s\n", manifest.value("label", "").c_str(),
                 include_text(manifest.value("include", std::vector<std::string>{})).c_str(),
                 manifest.value("created_utc", "").c_str());
  std::uint64_t selection_bytes = context.source->total_bytes();
  if (context.cache) selection_bytes = std::max(selection_bytes, context.cache->total_bytes());
  const nlohmann::json size_check = sizing(selection_bytes, total_memory_bytes());
  if (!size_check["note"].get<std::string>().empty())
    say(human, "sizing: " + size_check["note"].get<std::string>() + "\n");
  if (uses_state(plan, "warm")) {
    std::uint64_t need = context.source->total_bytes();
    if (context.cache) need = std::max(need, context.cache->total_bytes());
    std::uint64_t avail = available_memory_bytes();
    if (need > avail)
      say(human, "note: the selection (" + format_size(double(need)) + ") is larger than available memory (" +
                     format_size(double(avail)) +
                     "): warm rounds cannot be fully cached and will be flagged "
                     "as not achieved\n");
  }
  if (!emit_fio_dir.empty() && cluster.is_root()) {
    const FioJobsWritten fio =
        write_fio_jobs(plan, context.files_for("source"), context.files_for("cache"), emit_fio_dir);
    std::fprintf(human, "wrote %zu fio job files to %s\n", fio.jobs, emit_fio_dir.c_str());
    if (fio.files_left_out) std::fprintf(stderr, "warning: %s\n", fio_left_out_warning(fio).c_str());
  }
  std::fflush(human);
  sleep_for_test_hook();

  // Every rank is ready, or all stop here with the reason of the first that is not.
  std::string plan_text = filter + "\n" + repetitions_flag + "\n";
  for (const Case& c : plan.cases) plan_text += c.name() + " " + std::to_string(c.repetitions) + "\n";
  agree_to_start(cluster, together, nullptr, sha256_hex(plan_text));
  if (many)
    std::fprintf(human, "ranks: %d on %d %s (%s), share %s\n", cluster.size(), cluster.hosts(),
                 cluster.hosts() == 1 ? "host" : "hosts", cluster.implementation().c_str(),
                 config.share.c_str());
  // A launcher's binding that holds a rank to fewer cores than its reading threads: said once,
  // before any case, and recorded (environment.cpu_affinity).
  nlohmann::json affinity_record = nullptr;
  if (launched_by_mpi()) {
    std::vector<Case> matched;
    cases_to_run(plan, filter, repetitions_from_flag, flag_repetitions, &matched);
    int threads = 0;
    for (const Case& c : matched) threads = std::max(threads, reading_threads(c));
    const std::vector<RankCores> cores =
        all_gather(cluster, RankCores{std::int32_t(usable_cores()), std::int32_t(online_cpus())});
    const std::string warning =
        affinity_warning(cores, cluster.host_of_rank(), cluster.host_names(), threads);
    nlohmann::json by_rank = nlohmann::json::array();
    for (const RankCores& c : cores) by_rank.push_back({{"affinity", c.affinity}, {"online", c.online}});
    affinity_record = {{"cores_by_rank", by_rank},
                       {"reading_threads", threads},
                       {"warning", warning.empty() ? nlohmann::json(nullptr) : nlohmann::json(warning)}};
    if (!warning.empty()) say(stderr, "warning: " + warning + "\n");
  }
  register_plan(plan, context, repetitions_from_flag, flag_repetitions);
  // Progress: a live line on a terminal, a line per case elsewhere; nothing with --quiet.
  // The compact display labels cases by what varies among those that run.
  std::optional<RunProgress> progress;
  std::vector<Case> running;
  if (!quiet) {
    const auto [cases, repetitions] =
        cases_to_run(plan, filter, repetitions_from_flag, flag_repetitions, &running);
    progress.emplace(stderr, isatty(STDERR_FILENO) != 0, cases, repetitions);
    context.progress = &*progress;
  }
  const CaseLabels labels = label_cases(running);
  std::unique_ptr<benchmark::BenchmarkReporter> display;
  std::optional<CaseTable> table;
  if (!quiet && compact) {
    table.emplace(std::cout, labels, colour);
    std::map<std::string, std::string> names;
    for (const auto& [name, label] : labels.by_name) names[name] = label.brief;
    progress->set_names(std::move(names));
  } else if (!quiet) {
    display = make_display_reporter(format.empty() ? "console" : format, colour);
  }
  CollectingReporter reporter(std::move(display), context.log);
  reporter.set_progress(context.progress);
  if (table)
    reporter.set_entries_view([&table](const std::vector<BenchmarkEntry>& entries) { table->add(entries); });
  const LoadSample load_before = sample_host_load();
  const std::size_t cases_run = benchmark::RunSpecifiedBenchmarks(&reporter);
  const LoadSample load_after = sample_host_load();
  benchmark::Shutdown();
  // Every rank ran every case (a rank killed on the way ends mpirun instead): only then does
  // rank 0 write the result, and the others are done.
  if (many) cluster.barrier();
  together.finished = true;
  if (!cluster.is_root()) return 0;
  context.progress = nullptr;
  progress.reset();  // clears the live line before the summary
  if (cases_run == 0) {
    // Nothing measured: no result file, and not a success.
    std::fprintf(stderr,
                 "feedbench run: nothing measured: no case matches --benchmark_filter=%s "
                 "(%zu cases in the plan; --dry-run lists them)\n",
                 filter.c_str(), plan.cases.size());
    return 1;
  }

  RunFacts facts;
  facts.context = reporter.context();
  facts.benchmarks = reporter.take_entries();
  facts.tool = describe_tool();
  facts.command_line = command_line;
  facts.environment_variables = run_environment(config);
  facts.config = &config;
  facts.plan = &plan;
  facts.budget = budget_record;
  facts.source = &*context.source;
  facts.source_content = source_content;
  facts.cache = context.cache ? &*context.cache : nullptr;
  facts.cache_content = cache_content;
  facts.manifest = manifest;
  facts.verification = verification;
  facts.cache_verified = cache_verified;
  facts.allow_unverified_cache = context.allow_unverified_cache;
  facts.environment = describe_environment(paths);
  facts.load = load_to_json(load_before, load_after);
  facts.cluster = &cluster;
  facts.cpu_affinity = affinity_record;
  facts.sizing = size_check;
  const ResultDocument doc = build_result(std::move(facts));

  doc.save(out_path);
  if (!csv_path.empty()) write_csv(doc, csv_path);
  if (!markdown_path.empty()) write_markdown(doc, markdown_path);

  say(human, "\n" + format_summary(doc.summary));
  std::fprintf(human, "result: %s\n", out_path.c_str());

  // Every case skipped: the result file records why, but nothing was measured.
  std::fflush(human);
  const std::string why = nothing_measured(doc);
  if (why.empty()) return 0;
  std::fprintf(stderr, "feedbench run: nothing measured: %s\n", why.c_str());
  return 1;
}

}  // namespace

}  // namespace feedbench
