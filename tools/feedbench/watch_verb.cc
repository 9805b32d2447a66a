// `feedbench watch [--out FILE] [--trace FILE] [--name NAME] [--interval DUR] -- COMMAND...`: runs the
// user's own training command unchanged and says whether it waited for data. A probe put first
// on the child's PYTHONPATH (harness/watch/python/sitecustomize.py) records every DataLoader
// batch's ask and got and every worker fetch; this verb reads the records back
// (harness/watch/), states the job's AU the method's way and a verdict, and writes them as a
// result entry `job/NAME` that diff and report read as they read a run's.
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/random.h>
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
#include "feedbench/cache/staged_cache_notes.h"
#include "feedbench/cache/stager.h"
#include "feedbench/cluster/cluster.h"
#include "feedbench/dataset/dataset.h"
#include "feedbench/gpu/gpu.h"
#include "feedbench/plan/preflight.h"
#include "feedbench/results/environment.h"
#include "feedbench/results/recorded_variables.h"
#include "feedbench/results/result.h"
#include "feedbench/watch/guest_counters.h"
#include "feedbench/watch/job_figures.h"
#include "feedbench/watch/job_result.h"
#include "feedbench/watch/job_trace.h"
#include "feedbench/watch/process_sampler.h"
#include "feedbench/watch/read_log.h"
#include "feedbench/watch_sitecustomize.h"
#include "reporters/console_table.h"
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

// The folder watch's folders are made in: TMPDIR, else /tmp.
std::string watch_folders_home() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

constexpr std::string_view kWatchFolderPrefix = "feedbench-watch-";

// Removes the folders of watchers that are gone (killed outright: nothing ran their clean-up):
// only "feedbench-watch-<pid>-XXXXXX" folders, not links, owned by this user, whose watcher pid
// no longer runs. A folder of a live watcher, or one this cannot prove stale, stays.
void remove_stale_watch_folders() {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(watch_folders_home(), ec)) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with(kWatchFolderPrefix)) continue;
    const std::string rest = name.substr(kWatchFolderPrefix.size());
    const std::size_t dash = rest.find('-');
    if (dash == 0 || dash == std::string::npos || rest.size() != dash + 7 ||
        rest.find_first_not_of("0123456789") != dash)
      continue;
    struct stat st {};
    if (::lstat(e.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) continue;
    const long pid = std::strtol(rest.c_str(), nullptr, 10);
    if (pid <= 0 || pid > INT32_MAX || ::kill(pid_t(pid), 0) == 0 || errno != ESRCH) continue;
    std::error_code ignored;
    fs::remove_all(e.path(), ignored);
  }
}

// A private folder for the probe and its records, removed when the verb ends; in it the counters
// file the job's guests count lost records in (guest_counters.h), its blocks allocated before the
// job (a full file system must not cost the counts too), and a descriptor of it left to the job
// ($FEEDBENCH_WATCH_COUNTERS) for a process that changed user and cannot open it by its path.
// Its name holds the watcher's pid, so that a later watch can tell it stale
// (remove_stale_watch_folders).
struct WatchFolder {
  std::string root;
  int counters = -1, inherited = -1;
  WatchFolder() {
    std::string pattern =
        watch_folders_home() + "/" + std::string(kWatchFolderPrefix) + std::to_string(::getpid()) + "-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
      throw RunError("cannot make a folder for the job's records under " + pattern + ": " +
                     std::strerror(errno));
    root = fs::absolute(pattern).string();  // a relative TMPDIR would break when the job changes folder
    fs::create_directory(probe());
    fs::create_directory(records());
    std::ofstream out(probe() + "/sitecustomize.py", std::ios::binary);
    out << embedded::kWatchSitecustomize;
    if (!out.flush()) throw RunError("cannot write the probe into " + probe());
    namespace gc = guest_counters;
    const std::string path = records() + "/" + gc::kFileName;
    std::uint64_t token = 0;
    while (token == 0)
      if (::getrandom(&token, sizeof token, 0) != ssize_t(sizeof token)) token = std::uint64_t(now_ns()) | 1;
    unsigned char first[8];
    for (int b = 0; b < 8; ++b) first[b] = static_cast<unsigned char>(token >> (8 * b));
    counters = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    const int e = counters < 0 ? errno : ::posix_fallocate(counters, 0, off_t(gc::kBytes));
    if (e != 0 || ::pwrite(counters, first, sizeof first, 0) != ssize_t(sizeof first))
      throw RunError("cannot make " + path +
                     " (where the job's lost records are counted): " + std::strerror(e != 0 ? e : errno));
    inherited = ::fcntl(counters, F_DUPFD, 100);  // high, out of the job's way; no close-on-exec
    char spec[64];
    std::snprintf(spec, sizeof spec, "%d:%llx", inherited, static_cast<unsigned long long>(token));
    if (inherited >= 0) ::setenv("FEEDBENCH_WATCH_COUNTERS", spec, 1);
  }
  ~WatchFolder() {
    ::unsetenv("FEEDBENCH_WATCH_COUNTERS");
    for (const int fd : {counters, inherited})
      if (fd >= 0) ::close(fd);
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  WatchFolder(const WatchFolder&) = delete;
  WatchFolder& operator=(const WatchFolder&) = delete;
  std::string probe() const { return root + "/python"; }
  std::string records() const { return root + "/records"; }
  // RETURNS: what the job's guests could not record (after the job).
  LostRecords lost() const {
    std::string bytes(guest_counters::kBytes, '\0');
    if (::pread(counters, bytes.data(), bytes.size(), 0) != ssize_t(bytes.size())) return {};
    return lost_records(bytes);
  }
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

  const LoadSample load_before = sample_host_load();
  const std::int64_t t0 = now_ns();
  // Ctrl-C reaches the whole foreground group, the job included: the watcher waits it out and
  // writes the result; a TERM or HUP sent to the watcher alone is passed on.
  struct sigaction ignore {
  }, forward{}, old_int{}, old_quit{}, old_term{}, old_hup{};
  ignore.sa_handler = SIG_IGN;
  forward.sa_handler = forward_signal;
  ::sigaction(SIGINT, &ignore, &old_int);
  ::sigaction(SIGQUIT, &ignore, &old_quit);
  const pid_t watcher = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw RunError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGQUIT, &old_quit, nullptr);
    ::sigaction(SIGXFSZ, &g_inherited_sigxfsz, nullptr);  // feedbench ignores it for itself
    // The job ends with its watcher: a watcher killed outright (SIGKILL) must not leave it
    // running and recording into a folder nobody removes. SIGTERM, which a job may catch to
    // save its state, as a terminal's hang-up would be; a watcher gone before the call counts.
    if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || ::getppid() != watcher) ::raise(SIGTERM);
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
  // From here on the watcher only writes and prints: a reader that went away (watch ... | head)
  // costs the lines, never the result, the trace or the job's exit status.
  ::signal(SIGPIPE, SIG_IGN);
  for (auto [sig, act] :
       {std::pair{SIGINT, &old_int}, {SIGQUIT, &old_quit}, {SIGTERM, &old_term}, {SIGHUP, &old_hup}})
    ::sigaction(sig, act, nullptr);
  if (exec_failed) throw InputError(command.front() + ": cannot run it: " + std::strerror(exec_errno));

  JobRun c;
  c.command = command;
  c.start_ns = t0;
  c.wall_s = double(now_ns() - t0) / 1e9;
  c.load_before = load_before;
  c.load_after = sample_host_load();
  c.host_cpu_busy = host_cpu_busy(c.load_before.cpu, c.load_after.cpu);
  if (WIFEXITED(status)) c.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    c.signal = WTERMSIG(status);
    c.exit_code = 128 + c.signal;
  }
  c.tree_cpu_s = rusage_cpu_seconds(RUSAGE_CHILDREN);
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
  // The verdict's short line, then its details a clause a line.
  std::string say = verdict_block(v.line, v.text, 2);
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
  r.reads.roots = data_roots(r.reads.summary);
  for (const DataRoot& d : r.reads.roots.roots)
    r.reads.root_where.push_back(file_system_at(d.path) + " on " +
                                 block_device_label(std::uint64_t(makedev(d.dev_major, d.dev_minor))));
  std::vector<std::string> read_folders;
  for (const auto& f : r.reads.summary.folders) read_folders.push_back(f.path);
  r.reads.notes = staged_cache_notes(read_folders, folders);
  return r;
}

// RETURNS: the data roots the job read as a result's paths (run's source and cache are described
// alike), by role "data", "data2", ...: what diff compares between two watched jobs. A root gone
// since the job read it (a job that removes its data) is left out.
std::map<std::string, PathInfo> data_paths(const DataRoots& roots) {
  std::map<std::string, PathInfo> paths;
  for (std::size_t i = 0; i < roots.roots.size(); ++i) {
    const std::string role = i == 0 ? "data" : "data" + std::to_string(i + 1);
    try {
      paths.emplace(role, describe_path(role, roots.roots[i].path));
    } catch (const InputError&) {
    }
  }
  return paths;
}

// Where a result or trace goes when the path asked for cannot take it: a file of its own,
// created exclusively under TMPDIR (or /tmp). RETURNS: its path; "" when none can be made.
std::string fallback_path(const std::string& name, const std::string& suffix) {
  std::string pattern =
      watch_folders_home() + "/" + std::string(kWatchFolderPrefix) + name + "-XXXXXX" + suffix;
  const int fd = ::mkstemps(pattern.data(), int(suffix.size()));
  if (fd < 0) return "";
  ::close(fd);
  return fs::absolute(pattern).string();
}

// RETURNS: for each of `outputs` that is a file the job opened to read (its script, a data
// file, a config: by device and inode, from the recorder's records), why writing it would destroy
// what the job read, by its index; one pass over the records for all of them. Checked after the
// job, when what it read is known; the command line's own files and folders were checked before
// it ran. (A folder the job read is not refused: a job that reads a config beside its results
// would have every result refused.)
std::map<std::size_t, std::string> outputs_on_job_input(const std::vector<std::string>& outputs,
                                                        const std::string& records) {
  std::map<std::pair<dev_t, ino_t>, std::size_t> wanted;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    struct stat st {};
    if (!outputs[i].empty() && ::stat(outputs[i].c_str(), &st) == 0 && S_ISREG(st.st_mode))
      wanted.emplace(std::pair{st.st_dev, st.st_ino}, i);
  }
  std::map<std::size_t, std::string> hits;
  if (wanted.empty()) return hits;
  const ReadLogVisitor visit{
      [&](const FileRecord& r) {
        const auto it = wanted.find({makedev(r.dev_major, r.dev_minor), ino_t(r.inode)});
        if (it != wanted.end()) hits.try_emplace(it->second, "the job read it (" + r.path + ")");
      },
      nullptr, nullptr};
  for (const std::string& file : read_log_files(records)) {
    std::ifstream in(file, std::ios::binary);
    std::uint64_t torn = 0;
    try {
      parse_read_log(file, in, visit, &torn);
    } catch (const InputError&) {  // an unreadable record file: the rest are still checked
    }
    if (hits.size() == wanted.size()) break;
  }
  return hits;
}

// Writes `doc` to `path`; where that fails (the disk filled during the job), to a file of its
// own under TMPDIR. RETURNS: the console line that says where it went.
std::string save_result(const ResultDocument& doc, const std::string& path, const std::string& name) {
  try {
    doc.save(path);
    return "  result: " + path + "\n";
  } catch (const std::runtime_error& e) {
    const std::string kept = fallback_path(name, ".json");
    std::string again;
    try {
      if (!kept.empty()) doc.save(kept);
    } catch (const std::runtime_error& e2) {
      again = e2.what();
    }
    return std::string("  result: not written to ") + path + ": " + e.what() +
           (kept.empty() || !again.empty() ? "; nowhere else either" : "; written to " + kept + " instead") +
           "\n";
  }
}

// RETURNS: a watched job's result without its entry: the context, the tool, watch's command line
// (`redact` and credentials withheld), the environment with the host's load during the job
// (`others`: other programs' cores) and the data roots the job read as its paths.
ResultDocument watch_document(const std::vector<std::string>& command_line,
                              const std::vector<std::string>& redact, const JobRun& child,
                              std::optional<double> others, const DataRoots& roots) {
  ResultDocument doc;
  doc.context = {{"date", local_date_time()},
                 {"host_name", cluster_host_name()},
                 {"executable", "feedbench watch"},
                 {"num_cpus", usable_cores()}};
  doc.tool = describe_tool();
  doc.command_line = withhold_in_command(command_line, redact, environ);
  doc.environment = describe_environment(data_paths(roots));
  doc.environment["host"]["load"] = load_to_json(child.load_before, child.load_after, others);
  return doc;
}

// What watching a job came to: the job's own end, and the exit status watch gives.
struct WatchOutcome {
  JobRun child;
  int exit_code = 0;
};

// Runs and judges the job; writes the result and the trace, then prints (a reader gone away
// costs the lines, never the files). RETURNS: the outcome; exit_code is the job's unless an
// output was refused after it ran (2, when the job itself succeeded).
WatchOutcome watch_job(const WatchOptions& o, int argc, char** argv) {
  Outside outside;
  outside.interval_ns = o.interval_ns;
  std::string recorder_why;
  outside.recorder = find_recorder(&recorder_why);
  outside.trace = !o.trace_path.empty();

  WatchFolder folder;
  WatchOutcome outcome;
  outcome.child = run_child(o.command, folder, outside);
  const JobRun& child = outcome.child;
  outcome.exit_code = child.exit_code;
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
  const ReadsAndDevice rd =
      reads_and_device(folder.records(), recorder_why, o.folders(), pass_windows(log, f));
  // Storage is named only where reads of data were seen (nullopt: none were recorded).
  const std::optional<std::uint64_t> data_bytes =
      rd.reads.why_not.empty() ? std::optional<std::uint64_t>(rd.reads.summary.bytes) : std::nullopt;
  JobVerdict v = job_verdict(f, o.target, child.host_cpu_busy, usable_cores(), data_bytes);
  const JobProcesses processes = job_processes(outside.samples, log, child.start_ns, rd.dev, rd.device);
  // Which passes storage fed and which the page cache did: a data set read again from memory
  // is not storage keeping up.
  attribute_passes(f, log, rd.reads.summary, processes, child.start_ns);
  if (!v.by.empty()) v.text += pass_sources_text(f);
  // Storage-bound: at what rate the data device served the loop, to hold against what `run`
  // measures for it.
  if (v.by == "storage")
    if (const auto rate = device_rate_during(processes, log, child.start_ns)) {
      v.text += "; the data device " + rd.device + " read " + format_rate(*rate) + " during the loop";
      v.line += "; the device read " + format_rate(*rate);
    }

  // Records the job's guests could not write: said, and the loop not judged "not a DataLoader job".
  const LostRecords lost = folder.lost();
  const std::string lost_text = lost_records_text(lost);
  std::string say = "\nfeedbench watch: job/" + o.name + " exited " + std::to_string(child.exit_code) +
                    (child.signal > 0 ? std::string(" (killed by ") + sigabbrev_np(child.signal) + ")" : "") +
                    fmt(" after %.1f s\n", child.wall_s) +
                    (lost.total() > 0 && log.epochs.empty()
                         ? "  no DataLoader batches recorded: the job's records were lost (below)\n"
                         : loop_text(log, f, v));
  if (!lost_text.empty()) say += "  " + lost_text + "\n";
  if (!unreadable.empty()) say += "  cannot read " + unreadable + "\n";
  if (!rd.unreadable.empty()) say += "  cannot read " + rd.unreadable + "\n";
  for (const std::string& line : job_reads_text(rd.reads)) say += "  " + line + "\n";
  say += "  " + job_processes_text(processes) + "\n";
  const std::optional<double> others = other_programs_cores(child, processes);
  if (others) say += "  " + other_programs_text(*others, usable_cores(), "the job") + "\n";
  if (!outside.gpu.value("measured", true))
    say += "  GPU: not measured: " + outside.gpu.value("why", "") + "\n";
  for (const std::string& e : log.probe_errors) say += "  probe: " + e + "\n";

  // The outputs, written before anything is printed. One that would land on what the job read
  // (found only now: the recorder knows what it opened) goes to a file of its own, said so.
  bool refused = false;
  const std::map<std::size_t, std::string> on_input =
      outputs_on_job_input({o.trace_path, o.out_path}, folder.records());
  const auto place = [&](std::size_t which, const char* option, const std::string& path,
                         const std::string& suffix) {
    const auto hit = on_input.find(which);
    if (hit == on_input.end()) return path;
    const std::string& why = hit->second;
    refused = true;
    std::string kept = fallback_path(o.name, suffix);
    say += std::string("  ") + option + " " + path +
           ": refused, it would overwrite what the job read: " + why +
           (kept.empty() ? "; not written\n" : "; written to " + kept + " instead\n");
    return kept;
  };
  if (!o.trace_path.empty()) {
    const std::string path = place(0, "--trace", o.trace_path, ".trace.json");
    try {
      if (!path.empty()) {
        const JobTraceCounts t = write_job_trace(path, log, folder.records(), child.start_ns, o.command,
                                                 o.name, {o.trace_relative, o.redact});
        say += "  trace: " + path + " (" + format_count(double(t.events)) + " events; " +
               format_count(double(t.reads)) + " reads of data, " + format_count(double(t.reads_in_batches)) +
               " of them in a batch's fetch" +
               (recorder_why.empty() ? "" : "; reads not recorded: " + recorder_why) + ")\n";
      }
    } catch (const std::runtime_error& e) {  // a full disk, a bad record: nothing written (its
      // temporary removed), said; the result and the job's exit status stand
      say += std::string("  trace: not written: ") + e.what() + "\n";
    }
  }
  if (!o.out_path.empty()) {
    ResultDocument doc = watch_document({argv, argv + argc}, o.redact, child, others, rd.reads.roots);
    doc.benchmarks.push_back(
        job_entry(o.name, child, log, f, v, o.target, processes, rd.reads, outside.gpu, o.redact));
    doc.benchmarks.back().extra["lost_records"] = {
        {"no_space", lost.no_space},
        {"refused", lost.refused},
        {"other", lost.other},
        {"unrecorded_calls", lost.unrecorded_calls},
        {"refused_uid", lost.refused_uid ? nlohmann::json(*lost.refused_uid) : nlohmann::json()}};
    doc.summary = {
        {"watch", {{"job", "job/" + o.name}, {"verdict", v.by}, {"text", v.text}, {"line", v.line}}}};
    const std::string path = place(1, "--out", o.out_path, ".json");
    if (!path.empty()) say += save_result(doc, path, o.name);
  }
  // An output refused after the job ran is bad input (exit 2), unless the job's own failure
  // is the status to keep.
  if (refused && outcome.exit_code == 0) outcome.exit_code = 2;
  // The job's names and paths escaped; every line within the console's width.
  std::fputs(wrap_text(printable_lines(say)).c_str(), stderr);
  std::fflush(stderr);
  return outcome;
}

// Ends watch as the job ended: a job killed by a signal kills watch by the same signal (as
// timeout(1) and env(1) do), so that a shell or a parent sees the death, not a plain exit code.
// RETURNS: the exit code otherwise.
int end_as_job(const WatchOutcome& w) {
  if (w.child.signal <= 0 || w.exit_code != w.child.exit_code) return w.exit_code;
  std::fflush(nullptr);
  // No core of the watcher: the job dumped its own where it was asked to.
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  ::signal(w.child.signal, SIG_DFL);
  sigset_t only{};
  sigemptyset(&only);
  sigaddset(&only, w.child.signal);
  ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
  ::raise(w.child.signal);
  return w.exit_code;  // a signal whose default is not to end a process (SIGCHLD, SIGWINCH)
}

}  // namespace

int watch_main(int argc, char** argv) {
  const std::optional<WatchOptions> parsed = parse_watch(argc, argv);
  if (!parsed) return 0;
  remove_stale_watch_folders();
  return end_as_job(watch_job(*parsed, argc, argv));
}

}  // namespace feedbench
