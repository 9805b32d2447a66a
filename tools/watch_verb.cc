// `feedbench watch [--out FILE] [--trace FILE] [--name NAME] [--interval DUR] -- COMMAND...`: runs the
// user's own training command unchanged and says whether it waited for data. A probe put first
// on the child's PYTHONPATH (harness/watch/python/sitecustomize.py) records every DataLoader
// batch's ask and got and every worker fetch; this verb reads the records back
// (harness/watch/), states the job's AU the method's way and a verdict, and writes them as a
// result entry `job/NAME` that diff and report read as they read a run's.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/program_options.hpp>

#include "command_line.h"
#include "feedbench/base/clock.h"
#include "feedbench/base/cores.h"
#include "feedbench/base/error.h"
#include "feedbench/base/file_system.h"
#include "feedbench/base/text.h"
#include "feedbench/base/units.h"
#include "feedbench/cache/cache_verification.h"
#include "feedbench/cache/manifest.h"
#include "feedbench/cache/stager.h"
#include "feedbench/cluster/cluster.h"
#include "feedbench/dataset/dataset.h"
#include "feedbench/gpu/gpu.h"
#include "feedbench/plan/preflight.h"
#include "feedbench/results/environment.h"
#include "feedbench/results/recorded_variables.h"
#include "feedbench/results/result.h"
#include "feedbench/watch/job_figures.h"
#include "feedbench/watch/job_result.h"
#include "feedbench/watch/job_trace.h"
#include "feedbench/watch/process_sampler.h"
#include "feedbench/watch_sitecustomize.h"
#include "verbs.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace feedbench {
namespace {

constexpr const char* kUsage =
    "usage: feedbench watch [--out FILE] [--trace FILE] [--name NAME] [--target-au AU]\n"
    "                       [--interval DUR] -- COMMAND [ARGS...]\n"
    "\n"
    "Runs COMMAND as it is and says whether it waited for data. For a Python job that uses\n"
    "PyTorch's DataLoader (any number of loaders, workers forked or spawned), a probe on the\n"
    "child's PYTHONPATH records when the trainer asked for each batch and when it got it, and\n"
    "what each worker's fetch cost in CPU; nothing in the job changes. It prints the job's AU\n"
    "(step / (step + wait)), the wait's p50/p99/max, each pass's first batch apart (worker\n"
    "start-up), how much faster the loop would run with data instant, and a verdict: fed,\n"
    "CPU-bound or storage-bound. In any language, a read recorder on the job's LD_PRELOAD\n"
    "records every file each process read (the data folders, their file systems and devices),\n"
    "and watch samples the process tree (CPU of the trainer and the workers, bytes read), the\n"
    "data device and GPUs (NVML). --trace writes every batch, fetch and read for replay.\n"
    "--out writes it as a result entry job/NAME, which diff and\n"
    "report read. COMMAND's exit code is passed through; Ctrl-C reaches COMMAND, and the result\n"
    "is written even when it fails (marked so).\n"
    "\n"
    "examples:\n"
    "  feedbench watch -- /usr/bin/python3 train.py --epochs 1\n"
    "  feedbench watch --out before.json --name resnet -- python3 train.py\n"
    "  feedbench watch --trace job.trace.json -- /usr/bin/python3 train.py\n"
    "\n";

// The child's pid while it runs, for the forwarding handler.
volatile sig_atomic_t g_child = 0;

void forward_signal(int sig) {
  if (g_child > 0) ::kill(pid_t(g_child), sig);
}

// RETURNS: the job's name: the stem of the first argument that names a .py file, else the
// command's own base name.
std::string default_name(const std::vector<std::string>& command) {
  for (const std::string& a : command)
    if (a.size() > 3 && a.ends_with(".py")) return fs::path(a).stem().string();
  return fs::path(command.front()).filename().string();
}

// A private folder for the probe and its records, removed when the verb ends.
struct WatchFolder {
  std::string root;
  WatchFolder() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/feedbench-watch-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
      throw RunError("cannot make a folder for the job's records under " + pattern + ": " +
                     std::strerror(errno));
    root = fs::absolute(pattern).string();  // a relative TMPDIR would break when the job changes folder
    fs::create_directory(probe());
    fs::create_directory(records());
    std::ofstream out(probe() + "/sitecustomize.py", std::ios::binary);
    out << embedded::kWatchSitecustomize;
    if (!out.flush()) throw RunError("cannot write the probe into " + probe());
  }
  ~WatchFolder() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  WatchFolder(const WatchFolder&) = delete;
  WatchFolder& operator=(const WatchFolder&) = delete;
  std::string probe() const { return root + "/python"; }
  std::string records() const { return root + "/records"; }
};

// What watched the job from outside it, any language: its process tree, the block devices,
// GPUs, and the read recorder put on its LD_PRELOAD.
struct Outside {
  std::int64_t interval_ns = 0;
  std::string recorder;    // the read recorder library, "" when not found
  bool trace = false;      // the recorder records every open and read too
  nlohmann::json gpu;      // GpuSampler::stop()'s figures, or why there are none
  ProcessSamples samples;  // filled when the job ends
};

constexpr const char* kRecorderName = "libfeedbench-read-recorder.so";

// RETURNS: the read recorder library: $FEEDBENCH_READ_RECORDER, else beside this binary (a
// build folder), else ../lib/feedbench/ from it (installed); "" with *why when none is there.
std::string find_recorder(std::string* why) {
  if (const char* env = std::getenv("FEEDBENCH_READ_RECORDER"); env != nullptr && *env != '\0') {
    if (::access(env, R_OK) == 0) return env;
    *why = "FEEDBENCH_READ_RECORDER=" + std::string(env) + " cannot be read";
    return "";
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  for (const fs::path& p :
       {exe.parent_path() / kRecorderName, exe.parent_path() / "../lib/feedbench" / kRecorderName})
    if (!ec && ::access(p.c_str(), R_OK) == 0) return fs::weakly_canonical(p, ec).string();
  *why = std::string("the read recorder ") + kRecorderName + " is not beside " + exe.string() +
         " nor in ../lib/feedbench/ (set FEEDBENCH_READ_RECORDER to its path)";
  return "";
}

// Runs `command` with the probe on its PYTHONPATH, sampling its processes meanwhile. Throws
// InputError when it cannot be started.
JobRun run_child(const std::vector<std::string>& command, const WatchFolder& folder, Outside& outside) {
  int report[2];  // the child's exec error, if any: the pipe closes on a successful exec
  if (::pipe2(report, O_CLOEXEC) != 0) throw RunError(std::string("pipe: ") + std::strerror(errno));
  const char* old = std::getenv("PYTHONPATH");
  const std::string pythonpath = folder.probe() + (old && *old ? ":" + std::string(old) : "");
  const char* old_preload = std::getenv("LD_PRELOAD");
  const std::string preload =
      outside.recorder.empty()
          ? ""
          : outside.recorder + (old_preload && *old_preload ? ":" + std::string(old_preload) : "");
  std::vector<char*> args;
  for (const std::string& a : command) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  const auto host_before = host_cpu_times();
  const std::int64_t t0 = now_ns();
  // Ctrl-C reaches the whole foreground group, the job included: the watcher waits it out and
  // writes the result; a TERM or HUP sent to the watcher alone is passed on.
  struct sigaction ignore {
  }, forward{}, old_int{}, old_quit{}, old_term{}, old_hup{};
  ignore.sa_handler = SIG_IGN;
  forward.sa_handler = forward_signal;
  ::sigaction(SIGINT, &ignore, &old_int);
  ::sigaction(SIGQUIT, &ignore, &old_quit);
  const pid_t pid = ::fork();
  if (pid < 0) throw RunError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGQUIT, &old_quit, nullptr);
    ::signal(SIGXFSZ, SIG_DFL);  // feedbench ignores it (a file size limit is an error it reports)
    ::setenv("PYTHONPATH", pythonpath.c_str(), 1);
    ::setenv("FEEDBENCH_WATCH_DIR", folder.records().c_str(), 1);
    if (!preload.empty()) ::setenv("LD_PRELOAD", preload.c_str(), 1);
    if (outside.trace) ::setenv("FEEDBENCH_WATCH_TRACE", "1", 1);
    ::execvp(args[0], args.data());
    const int e = errno;
    [[maybe_unused]] ssize_t n = ::write(report[1], &e, sizeof e);
    ::_exit(127);
  }
  g_child = pid;
  ProcessSampler sampler(pid, outside.interval_ns);
  const std::string sampler_refused = sampler.start();
  const GpuInventory gpus = list_gpus();
  GpuSampler gpu_sampler;
  if (gpus.driver) gpu_sampler.start();
  ::sigaction(SIGTERM, &forward, &old_term);
  ::sigaction(SIGHUP, &forward, &old_hup);
  ::close(report[1]);
  int exec_errno = 0;
  const bool exec_failed = ::read(report[0], &exec_errno, sizeof exec_errno) == ssize_t(sizeof exec_errno);
  ::close(report[0]);
  // Waited for without reaping it first: its counts are read once more before it is gone.
  siginfo_t info{};
  while (::waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  outside.samples = sampler.stop();
  if (!sampler_refused.empty())
    outside.samples.io_why = "sampled only at the start and end: " + sampler_refused;
  outside.gpu = gpus.driver ? gpu_sampler.stop() : nlohmann::json{{"measured", false}, {"why", gpus.why}};
  if (outside.gpu.is_null()) outside.gpu = {{"measured", false}, {"why", "NVML gave no sample"}};
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_child = 0;
  for (auto [sig, act] :
       {std::pair{SIGINT, &old_int}, {SIGQUIT, &old_quit}, {SIGTERM, &old_term}, {SIGHUP, &old_hup}})
    ::sigaction(sig, act, nullptr);
  if (exec_failed) throw InputError(command.front() + ": cannot run it: " + std::strerror(exec_errno));

  JobRun c;
  c.command = command;
  c.start_ns = t0;
  c.wall_s = double(now_ns() - t0) / 1e9;
  c.host_cpu_busy = host_cpu_busy(host_before, host_cpu_times());
  if (WIFEXITED(status)) c.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    c.signal = WTERMSIG(status);
    c.exit_code = 128 + c.signal;
  }
  rusage ru{};
  ::getrusage(RUSAGE_CHILDREN, &ru);
  c.tree_cpu_s = double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                 double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  return c;
}

std::string fmt(const char* format, double a, double b = 0, double c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, a, b, c);
  return buf;
}

// The verb's options, checked.
struct WatchOptions {
  std::vector<std::string> command;
  std::string out_path, trace_path, name;
  double target = 0.9;
  std::int64_t interval_ns = 0;
  std::vector<NamedPath> inputs, roots;  // the files and folders the command names
  std::vector<std::string> redact;       // --redact: names whose values the outputs withhold
  bool trace_relative = false;           // --trace-paths relative
  std::vector<std::string> folders() const {
    std::vector<std::string> out;
    for (const NamedPath& r : roots) out.push_back(r.path);
    return out;
  }
};

// RETURNS: the options, or nullopt when --help was asked (and printed). Throws InputError.
std::optional<WatchOptions> parse_watch(int argc, char** argv) {
  WatchOptions o;
  // Everything after "--" is the job's; before it, ours.
  int split = 1;
  while (split < argc && std::strcmp(argv[split], "--") != 0) ++split;
  o.command.assign(argv + std::min(split + 1, argc), argv + argc);
  std::string interval = "250ms", trace_paths = "absolute";
  po::options_description opts("options");
  opts.add_options()("help,h", "this help")("out,o", po::value(&o.out_path)->value_name("FILE"),
                                            "write the job as a result entry job/NAME to FILE")(
      "trace", po::value(&o.trace_path)->value_name("FILE"),
      "write every batch, fetch, open and read the job made to FILE (Chrome trace-event JSON: "
      "Perfetto opens it; feedbench replay reads it)")(
      "name", po::value(&o.name)->value_name("NAME"),
      "the job's name (default: the .py file's stem, else the command)")(
      "target-au", po::value(&o.target)->value_name("AU"),
      "the AU (0..1) at which the job is fed (default 0.9)")(
      "interval", po::value(&interval)->value_name("DUR"),
      "how often the job's processes, the data device and GPUs are sampled (default 250ms)")(
      "redact", po::value(&o.redact)->composing()->value_name("NAME"),
      "withhold NAME's value (a variable or option) on the job's command line in the outputs")(
      "trace-paths", po::value(&trace_paths)->value_name("FORM"),
      "absolute, or relative: paths under the job's data folder, no machine's (default absolute)");
  po::variables_map vm;
  if (parse_command_line(split, argv, opts, vm)) {
    std::cout << kUsage << "options:\n" << options_help(opts);
    return std::nullopt;
  }
  if (o.command.empty())
    throw InputError("expected a command after --, e.g. feedbench watch -- python3 train.py");
  check_redact_command_names(o.redact);
  if (trace_paths != "absolute" && trace_paths != "relative")
    throw InputError("--trace-paths: expected absolute or relative, got '" + trace_paths + "'");
  if (vm.count("trace-paths") && o.trace_path.empty())
    throw InputError("--trace-paths: only with --trace FILE");
  o.trace_relative = trace_paths == "relative";
  if (!(o.target >= 0 && o.target <= 1))
    throw InputError("--target-au: expected a number from 0 to 1, got " + std::to_string(o.target));
  // The two output files: named when given, never a folder (option + 2: its name without "--").
  for (const auto& [option, path] : {std::pair{"--out", &o.out_path}, {"--trace", &o.trace_path}}) {
    if (vm.count(option + 2) && path->empty())
      throw InputError(std::string(option) + ": expected a file name, got ''");
    if (!path->empty() && fs::is_directory(*path))
      throw InputError(std::string(option) + " " + *path + ": is a folder, expected a file");
  }
  if (vm.count("name") && (o.name.empty() || o.name.find('/') != std::string::npos))
    throw InputError("--name: expected a name without '/', got '" + o.name + "'");
  if (o.name.empty()) o.name = default_name(o.command);
  o.interval_ns = parse_duration_ns(interval, "--interval");
  if (o.interval_ns < 10'000'000)
    throw InputError("--interval: expected at least 10ms (each sample reads every process's /proc), got " +
                     interval);
  std::error_code ec;
  for (const std::string& a : o.command) {
    if (fs::is_regular_file(a, ec)) o.inputs.push_back({"the command's argument", a});
    if (fs::is_directory(a, ec)) o.roots.push_back({"the command's argument", a});
  }
  // The result and the trace never land on what the job reads: a file its command names (its
  // script), or inside a folder it names (its data).
  std::vector<NamedPath> outputs;
  if (!o.out_path.empty()) outputs.push_back({"--out", o.out_path});
  if (!o.trace_path.empty()) outputs.push_back({"--trace", o.trace_path});
  if (!outputs.empty()) check_outputs_apart(outputs, o.inputs, o.roots);
  // Where they cannot be written, said now, not after the job has run: a temporary made there
  // and removed (the file itself is written at the end, through a temporary as always).
  for (const NamedPath& out : outputs) {
    try {
      AtomicFile probe(out.path);
    } catch (const RunError& e) {
      throw InputError(out.option + " " + out.path + ": cannot be written: " + e.what());
    }
  }
  return o;
}

// RETURNS: the lines on the job's loop: the verdict, the waits, each pass.
std::string loop_text(const JobLog& log, const JobFigures& f, const JobVerdict& v) {
  if (f.steps == 0)
    return log.epochs.empty()
               ? "  no DataLoader batches recorded (not a PyTorch DataLoader job, or not under "
                 "a Python that reads PYTHONPATH): nothing to judge\n"
               : "  no batch had a step after it: nothing to judge\n";
  std::string say = "  " + v.text + "\n";
  say += fmt("  %.0f batches in %.0f pass", double(f.batches), double(f.passes.size())) +
         (f.passes.size() == 1 ? "" : "es") +
         fmt("; wait p50 %.2f ms, p99 %.2f ms, max %.2f ms", f.wait_p50_ms, f.wait_p99_ms, f.wait_max_ms) +
         fmt("; first batch of a pass up to %.0f ms (worker start-up)\n", f.first_wait_ms_max);
  for (const JobPassFigures& p : f.passes)
    say += fmt("  pass %.0f: AU %.1f%%, ", double(p.id), 100 * p.au) +
           fmt("%.0f batches, first batch %.1f ms", double(p.batches), p.first_wait_ms) +
           (p.data_bytes && p.device_bytes && *p.data_bytes > 0
                ? fmt(", the device read %.0f%% of its data's bytes (every reader of the device counts)",
                      std::min(1.0, *p.device_bytes / *p.data_bytes) * 100)
                : "") +
           (p.ended ? "" : ", abandoned") + "\n";
  return say;
}

// RETURNS: the cache staged by feedbench stage that holds `folder` (the nearest folder at or
// above it with a manifest), or "".
std::string cache_root_of(const fs::path& folder) {
  std::error_code ec;
  for (fs::path p = folder; !p.empty(); p = p.parent_path()) {
    if (fs::exists(p / kManifestJsonName, ec)) return p.string();
    if (p == p.root_path()) break;
  }
  return "";
}

// RETURNS: what the reads say of a staged cache: each of the most read data folders inside one,
// with the cheap check `run` makes (the cache's listing, sizes and mtimes against its manifest
// and its source) made now; and a cache the command names whose source the job read instead.
std::vector<std::string> cache_notes(const ReadSummary& s, const std::vector<std::string>& folders) {
  std::vector<std::string> notes;
  std::set<std::string> seen;
  const auto staged = [](const std::string& root, std::string* why) -> std::optional<Manifest> {
    try {
      return read_manifest(root, why);
    } catch (const std::runtime_error& e) {  // InputError or RunError: say why, judge on
      *why = e.what();
      return std::nullopt;
    }
  };
  for (std::size_t i = 0; i < s.folders.size() && i < 5; ++i) {
    const std::string root = cache_root_of(s.folders[i].path);
    if (root.empty() || !seen.insert(root).second) continue;
    std::string why;
    const std::optional<Manifest> m = staged(root, &why);
    if (!m) {
      notes.push_back("cache: read from " + root +
                      ", a cache staged by feedbench stage whose manifest cannot be read (" + why +
                      "): not verified");
      continue;
    }
    std::string check;
    try {
      const FileSet source = scan_dataset(m->source_root, m->include);
      const std::string stale = check_cache(root, source, m, "");
      const CacheVerification v = check_cache_listing(*m, scan_dataset(root, m->include), source);
      check =
          !stale.empty() ? "not verified: " + stale
          : v.ok
              ? "verified now: it holds the " + std::to_string(v.files_checked) +
                    " files its manifest lists, sizes and mtimes as staged (feedbench verify re-hashes them)"
              : "not verified: " + v.summary(root, 3);
    } catch (const std::runtime_error& e) {  // the source gone, a folder unreadable
      check = std::string("not verified: ") + e.what();
    }
    notes.push_back("cache: read from " + root + ", a cache staged by feedbench stage from " +
                    m->source_root + " (label " + m->label + "); " + check);
  }
  // A cache the command names while the job read its source.
  for (const std::string& f : folders) {
    const std::string root = cache_root_of(fs::absolute(f));
    if (root.empty() || seen.count(root)) continue;
    std::string why;
    const std::optional<Manifest> m = staged(root, &why);
    if (!m) continue;
    const std::string source = fs::weakly_canonical(m->source_root).string();
    for (std::size_t i = 0; i < s.folders.size() && i < 5; ++i)
      if (s.folders[i].path == source || s.folders[i].path.starts_with(source + "/")) {
        notes.push_back("cache: read from the source " + source + " though a cache of it is staged at " +
                        root + " (label " + m->label +
                        "): point the job at the cache to read the staged copy");
        break;
      }
  }
  return notes;
}

// What the job read (recorder_why: why it was not recorded, else ""), each data folder's file
// system and device named, what it says of staged caches; and the data device: the one under the
// folder the job read most from, else under the first folder its command names.
struct ReadsAndDevice {
  JobReads reads;
  std::optional<std::uint64_t> dev;
  std::string device = "no data read and no data folder named on the command line";
  std::string unreadable;  // why the recorder's records could not be read ("")
};

ReadsAndDevice reads_and_device(const std::string& records, const std::string& recorder_why,
                                const std::vector<std::string>& folders,
                                const std::vector<TimeWindow>& passes) {
  ReadsAndDevice r;
  r.reads.why_not = recorder_why;
  if (recorder_why.empty()) {
    try {
      r.reads.summary = read_summary(records, passes);
    } catch (const InputError& e) {
      r.reads.why_not = "its records cannot be read";
      r.unreadable = std::string("the read recorder's records: ") + e.what();
    }
  }
  struct stat st {};
  if (!r.reads.summary.folders.empty()) {
    const auto& top = r.reads.summary.folders.front();
    r.dev = std::uint64_t(makedev(top.dev_major, top.dev_minor));
  } else if (!folders.empty() && ::stat(folders.front().c_str(), &st) == 0) {
    r.dev = std::uint64_t(st.st_dev);
  }
  if (r.dev) r.device = block_device_label(*r.dev);
  for (const auto& f : r.reads.summary.folders)
    r.reads.where.push_back(file_system_at(f.path) + " on " +
                            block_device_label(std::uint64_t(makedev(f.dev_major, f.dev_minor))));
  r.reads.notes = cache_notes(r.reads.summary, folders);
  return r;
}

}  // namespace

int watch_main(int argc, char** argv) {
  const std::optional<WatchOptions> parsed = parse_watch(argc, argv);
  if (!parsed) return 0;
  const WatchOptions& o = *parsed;
  Outside outside;
  outside.interval_ns = o.interval_ns;
  std::string recorder_why;
  outside.recorder = find_recorder(&recorder_why);
  outside.trace = !o.trace_path.empty();

  WatchFolder folder;
  const JobRun child = run_child(o.command, folder, outside);
  // A record the job's processes wrote that cannot be read costs the figures, never the job's
  // exit code nor what else was seen.
  std::string unreadable;
  JobLog log;
  try {
    log = read_job_log(folder.records());
  } catch (const InputError& e) {
    unreadable = std::string("the probe's records: ") + e.what();
  }
  JobFigures f = job_figures(log);
  JobVerdict v = job_verdict(f, o.target, child.host_cpu_busy, usable_cores());
  const ReadsAndDevice rd =
      reads_and_device(folder.records(), recorder_why, o.folders(), pass_windows(log, f));
  const JobProcesses processes = job_processes(outside.samples, log, child.start_ns, rd.dev, rd.device);
  // Which passes storage fed and which the page cache did: a data set read again from memory
  // is not storage keeping up.
  attribute_passes(f, log, rd.reads.summary, processes, child.start_ns);
  if (!v.by.empty()) v.text += pass_sources_text(f);
  // Storage-bound: at what rate the data device served the loop, to hold against what `run`
  // measures for it.
  if (v.by == "storage")
    if (const auto rate = device_rate_during(processes, log, child.start_ns))
      v.text += "; the data device " + rd.device + " read " + format_rate(*rate) + " during the loop";

  std::string say = "\nfeedbench watch: job/" + o.name + " exited " + std::to_string(child.exit_code) +
                    fmt(" after %.1f s\n", child.wall_s) + loop_text(log, f, v);
  if (!unreadable.empty()) say += "  cannot read " + unreadable + "\n";
  if (!rd.unreadable.empty()) say += "  cannot read " + rd.unreadable + "\n";
  for (const std::string& line : job_reads_text(rd.reads)) say += "  " + line + "\n";
  say += "  " + job_processes_text(processes) + "\n";
  if (!outside.gpu.value("measured", true))
    say += "  GPU: not measured: " + outside.gpu.value("why", "") + "\n";
  for (const std::string& e : log.probe_errors) say += "  probe: " + e + "\n";
  std::fputs(say.c_str(), stderr);

  if (!o.trace_path.empty()) {
    try {
      const JobTraceCounts t = write_job_trace(o.trace_path, log, folder.records(), child.start_ns, o.command,
                                               o.name, {o.trace_relative, o.redact});
      const std::string line = "  trace: " + o.trace_path + " (" + format_count(double(t.events)) +
                               " events; " + format_count(double(t.reads)) + " reads of data, " +
                               format_count(double(t.reads_in_batches)) + " of them in a batch's fetch" +
                               (recorder_why.empty() ? "" : "; reads not recorded: " + recorder_why) + ")\n";
      std::fputs(line.c_str(), stderr);
    } catch (const InputError& e) {  // nothing written (its temporary removed): said, and on
      std::fprintf(stderr, "  trace: not written: %s\n", e.what());
    }
  }
  if (!o.out_path.empty()) {
    ResultDocument doc;
    doc.context = {{"date", local_date_time()},
                   {"host_name", cluster_host_name()},
                   {"executable", "feedbench watch"},
                   {"num_cpus", usable_cores()}};
    doc.tool = describe_tool();
    doc.command_line = withhold_in_command({argv, argv + argc}, o.redact, environ);
    doc.environment = describe_environment({});
    doc.benchmarks.push_back(
        job_entry(o.name, child, log, f, v, o.target, processes, rd.reads, outside.gpu, o.redact));
    doc.summary = {{"watch", {{"job", "job/" + o.name}, {"verdict", v.by}, {"text", v.text}}}};
    doc.save(o.out_path);
    std::fprintf(stderr, "  result: %s\n", o.out_path.c_str());
  }
  return child.exit_code;
}

}  // namespace feedbench
