// `feedbench watch [--out FILE] [--name NAME] [--target-au AU] [--interval DUR] -- COMMAND...`: runs the
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
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/program_options.hpp>

#include "command_line.h"
#include "feedbench/base/clock.h"
#include "feedbench/base/cores.h"
#include "feedbench/base/error.h"
#include "feedbench/base/text.h"
#include "feedbench/base/units.h"
#include "feedbench/cluster/cluster.h"
#include "feedbench/gpu/gpu.h"
#include "feedbench/io/device_reads.h"
#include "feedbench/plan/preflight.h"
#include "feedbench/results/environment.h"
#include "feedbench/results/result.h"
#include "feedbench/watch/job_figures.h"
#include "feedbench/watch/job_result.h"
#include "feedbench/watch/process_sampler.h"
#include "feedbench/watch_sitecustomize.h"
#include "verbs.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace feedbench {
namespace {

constexpr const char* kUsage =
    "usage: feedbench watch [--out FILE] [--name NAME] [--target-au AU] [--interval DUR]\n"
    "                       -- COMMAND [ARGS...]\n"
    "\n"
    "Runs COMMAND as it is and says whether it waited for data. For a Python job that uses\n"
    "PyTorch's DataLoader (any number of loaders, workers forked or spawned), a probe on the\n"
    "child's PYTHONPATH records when the trainer asked for each batch and when it got it, and\n"
    "what each worker's fetch cost in CPU; nothing in the job changes. It prints the job's AU\n"
    "(step / (step + wait)), the wait's p50/p99/max, each pass's first batch apart (worker\n"
    "start-up), how much faster the loop would run with data instant, and a verdict: fed,\n"
    "CPU-bound or storage-bound. From outside, in any language, it samples the job's process\n"
    "tree (CPU of the trainer and the workers, bytes read), the data device and GPUs (NVML).\n"
    "--out writes it as a result entry job/NAME, which diff and\n"
    "report read. COMMAND's exit code is passed through; Ctrl-C reaches COMMAND, and the result\n"
    "is written even when it fails (marked so).\n"
    "\n"
    "examples:\n"
    "  feedbench watch -- /usr/bin/python3 train.py --epochs 1\n"
    "  feedbench watch --out before.json --name resnet -- python3 train.py\n"
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
    root = pattern;
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

// What watched the job from outside it, any language: its process tree, the data device, GPUs.
struct Outside {
  std::int64_t interval_ns = 0;
  DeviceReads device{{}, {}};  // none until the command names a data folder
  nlohmann::json gpu;          // GpuSampler::stop()'s figures, or why there are none
  ProcessSamples samples;      // filled when the job ends
};

// Runs `command` with the probe on its PYTHONPATH, sampling its processes meanwhile. Throws
// InputError when it cannot be started.
JobRun run_child(const std::vector<std::string>& command, const WatchFolder& folder, Outside& outside) {
  int report[2];  // the child's exec error, if any: the pipe closes on a successful exec
  if (::pipe2(report, O_CLOEXEC) != 0) throw RunError(std::string("pipe: ") + std::strerror(errno));
  const char* old = std::getenv("PYTHONPATH");
  const std::string pythonpath = folder.probe() + (old && *old ? ":" + std::string(old) : "");
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
    ::setenv("PYTHONPATH", pythonpath.c_str(), 1);
    ::setenv("FEEDBENCH_WATCH_DIR", folder.records().c_str(), 1);
    ::execvp(args[0], args.data());
    const int e = errno;
    [[maybe_unused]] ssize_t n = ::write(report[1], &e, sizeof e);
    ::_exit(127);
  }
  g_child = pid;
  ProcessSampler sampler(pid, outside.interval_ns, [&outside] { return outside.device.bytes_read(); });
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

}  // namespace

int watch_main(int argc, char** argv) {
  // Everything after "--" is the job's; before it, ours.
  int split = 1;
  while (split < argc && std::strcmp(argv[split], "--") != 0) ++split;
  std::vector<std::string> command(argv + std::min(split + 1, argc), argv + argc);
  std::string out_path, name, interval = "250ms";
  double target = 0.9;
  po::options_description opts("options");
  opts.add_options()("help,h", "this help")("out,o", po::value(&out_path)->value_name("FILE"),
                                            "write the job as a result entry job/NAME to FILE")(
      "name", po::value(&name)->value_name("NAME"),
      "the job's name (default: the .py file's stem, else the command)")(
      "target-au", po::value(&target)->value_name("AU"),
      "the AU (0..1) at which the job is fed (default 0.9)")(
      "interval", po::value(&interval)->value_name("DUR"),
      "how often the job's processes, the data device and GPUs are sampled (default 250ms)");
  po::variables_map vm;
  if (parse_command_line(split, argv, opts, vm)) {
    std::cout << kUsage << "options:\n" << options_help(opts);
    return 0;
  }
  if (command.empty())
    throw InputError("expected a command after --, e.g. feedbench watch -- python3 train.py");
  if (!(target >= 0 && target <= 1))
    throw InputError("--target-au: expected a number from 0 to 1, got " + std::to_string(target));
  if (vm.count("out") && out_path.empty()) throw InputError("--out: expected a file name, got ''");
  if (!out_path.empty() && fs::is_directory(out_path))
    throw InputError("--out " + out_path + ": is a folder, expected a file");
  if (vm.count("name") && (name.empty() || name.find('/') != std::string::npos))
    throw InputError("--name: expected a name without '/', got '" + name + "'");
  if (name.empty()) name = default_name(command);
  Outside outside;
  outside.interval_ns = parse_duration_ns(interval, "--interval");
  if (outside.interval_ns < 10'000'000)
    throw InputError("--interval: expected at least 10ms (each sample reads every process's /proc), got " +
                     interval);
  // The folders and files the command names: its data and its script.
  std::vector<NamedPath> inputs, roots;
  std::vector<std::string> folders;
  std::error_code ec;
  for (const std::string& a : command) {
    if (fs::is_regular_file(a, ec)) inputs.push_back({"the command's argument", a});
    if (fs::is_directory(a, ec)) {
      roots.push_back({"the command's argument", a});
      folders.push_back(a);
    }
  }
  // The result never lands on what the job reads: a file its command names (its script), or
  // inside a folder it names (its data).
  if (!out_path.empty()) check_outputs_apart({{"--out", out_path}}, inputs, roots);
  // The data device: the one under the folders the command names.
  std::string device = "no data folder named on the command line";
  if (!folders.empty()) {
    outside.device = DeviceReads::under(folders);
    device = outside.device.why();
    if (outside.device.available()) {
      device.clear();
      for (const std::string& d : outside.device.names()) device += (device.empty() ? "" : ", ") + d;
    }
  }

  WatchFolder folder;
  const JobRun child = run_child(command, folder, outside);
  const JobLog log = read_job_log(folder.records());
  const JobFigures f = job_figures(log);
  const JobVerdict v = job_verdict(f, target, child.host_cpu_busy, usable_cores());

  std::string say = "\nfeedbench watch: job/" + name + " exited " + std::to_string(child.exit_code) +
                    fmt(" after %.1f s\n", child.wall_s);
  if (f.steps == 0) {
    say += log.epochs.empty()
               ? "  no DataLoader batches recorded (not a PyTorch DataLoader job, or not under "
                 "a Python that reads PYTHONPATH): nothing to judge\n"
               : "  no batch had a step after it: nothing to judge\n";
  } else {
    say += "  " + v.text + "\n";
    say += fmt("  %.0f batches in %.0f pass", double(f.batches), double(f.passes.size())) +
           (f.passes.size() == 1 ? "" : "es") +
           fmt("; wait p50 %.2f ms, p99 %.2f ms, max %.2f ms", f.wait_p50_ms, f.wait_p99_ms, f.wait_max_ms) +
           fmt("; first batch of a pass up to %.0f ms (worker start-up)\n", f.first_wait_ms_max);
    for (const JobPassFigures& p : f.passes)
      say += fmt("  pass %.0f: AU %.1f%%, ", double(p.id), 100 * p.au) +
             fmt("%.0f batches, first batch %.1f ms", double(p.batches), p.first_wait_ms) +
             (p.ended ? "" : ", abandoned") + "\n";
  }
  const JobProcesses processes = job_processes(outside.samples, log, child.start_ns, device);
  say += "  " + job_processes_text(processes) + "\n";
  if (!outside.gpu.value("measured", true))
    say += "  GPU: not measured: " + outside.gpu.value("why", "") + "\n";
  for (const std::string& e : log.probe_errors) say += "  probe: " + e + "\n";
  std::fputs(say.c_str(), stderr);

  if (!out_path.empty()) {
    ResultDocument doc;
    doc.context = {{"date", local_date_time()},
                   {"host_name", cluster_host_name()},
                   {"executable", "feedbench watch"},
                   {"num_cpus", usable_cores()}};
    doc.tool = describe_tool();
    doc.command_line.assign(argv, argv + argc);
    doc.environment = describe_environment({});
    doc.benchmarks.push_back(job_entry(name, child, log, f, v, target, processes, outside.gpu));
    doc.summary = {{"watch", {{"job", "job/" + name}, {"verdict", v.by}, {"text", v.text}}}};
    doc.save(out_path);
    std::fprintf(stderr, "  result: %s\n", out_path.c_str());
  }
  return child.exit_code;
}

}  // namespace feedbench
