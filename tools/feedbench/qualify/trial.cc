#include "trial.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "feedbench/base/error.h"
#include "feedbench/base/units.h"
#include "feedbench/loader/limit.h"
#include "reporters/case_view.h"
#include "reporters/loader_demand.h"

extern char** environ;

namespace feedbench {

std::string unit_folder(int index) {
  char name[32];
  std::snprintf(name, sizeof name, "unit_%03d", index);
  return name;
}

nlohmann::json trial_config(const TrialPlan& plan) {
  const WorkloadProfile& p = *plan.profile;
  nlohmann::json include = nlohmann::json::array();
  for (int i = 0; i < plan.accelerators; ++i) include.push_back(unit_folder(i) + "/" + data_files_glob(p));
  // The cache path reads the staged copy as a data set of its own: `stage` verified every file
  // when it copied it, and a run's cache check would refuse a trial reading a part of the copy.
  const nlohmann::json dataset = {{"source", plan.path == "cache" ? plan.cache_data : plan.store_data},
                                  {"include", include}};
  nlohmann::json loader = {{"family", "loader"},
                           {"batch_size", p.batch_size},
                           {"workers", p.workers},
                           {"prefetch", p.prefetch},
                           {"step_time", format_duration_exact(plan.step.count())},
                           {"transform", p.transform},
                           {"samples", p.samples},
                           {"epochs", 2},
                           {"accelerators", plan.accelerators},
                           {"target_au", plan.target_au},
                           {"engine", "psync"},
                           {"cache_state", "cold"},
                           {"path", "source"}};
  return {{"name", std::string("qualify-") + p.name},
          {"description", std::string("feedbench qualify: ") + p.like + ", " +
                              std::to_string(plan.accelerators) + " accelerator(s) through the " + plan.path},
          {"dataset", dataset},
          {"defaults", {{"repetitions", 1}, {"seed", plan.seed}}},
          {"families", nlohmann::json::array({loader})}};
}

namespace {

double number_or(const nlohmann::json& j, const char* key, double otherwise) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : otherwise;
}

std::string string_or(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::vector<std::string> replay_args(const TrialPlan& plan, int unit, const std::string& out) {
  const std::string data = plan.path == "cache" ? plan.cache_data : plan.store_data;
  return {"replay",   plan.profile->trace,
          "--source", data + "/" + unit_folder(unit),
          "--set",    "epochs=2",
          "--set",    "cache_state=cold",
          "--set",    "step_scale=" + format_printf("%.9g", plan.step_scale),
          "--set",    "target_au=" + format_printf("%.9g", plan.target_au),
          "--out",    out,
          "--quiet"};
}

TrialResult combine_replays(std::vector<TrialResult> each) {
  const int k = int(each.size());
  std::size_t lowest = 0;  // the replay of the lowest cold AU (or the first not judged)
  for (std::size_t i = 0; i < each.size(); ++i) {
    const StateFigures& c = each[i].states[0];
    const StateFigures& l = each[lowest].states[0];
    if ((!c.judged && l.judged) || (c.judged == l.judged && c.au < l.au)) lowest = i;
  }
  TrialResult t = std::move(each[lowest]);
  t.accelerators = k;
  for (FedState s : kFedStates) {
    StateFigures& f = t.states[std::size_t(s)];
    for (const TrialResult& r : each) {
      if (&r == &each[lowest]) continue;
      const StateFigures& o = r.states[std::size_t(s)];
      if (!o.judged && f.judged) {
        f.judged = false;
        f.why_not = o.why_not;
      }
      if (o.judged && o.au < f.au) {
        f.au = o.au;
        f.limit_by = o.limit_by;
        f.limit_line = o.limit_line;
      }
      f.host_cpu_busy = std::max(f.host_cpu_busy, o.host_cpu_busy);
      f.cores_used += o.cores_used;              // the replays' processes together
      f.bytes_per_second += o.bytes_per_second;  // what the K took together
      // The device's count is every reader's: each replay saw the same device.
      if (o.device_bytes_per_second)
        f.device_bytes_per_second =
            std::max(f.device_bytes_per_second.value_or(0), *o.device_bytes_per_second);
    }
  }
  return t;
}

TrialResult read_trial(ResultDocument document, int accelerators) {
  TrialResult t;
  t.accelerators = accelerators;
  const BenchmarkEntry* entry = nullptr;
  for (const BenchmarkEntry& e : document.benchmarks)
    if (e.extra.is_object() && e.extra.contains("epochs") && e.extra["epochs"].is_array()) {
      entry = &e;
      break;
    }
  if (!entry) throw InputError("the trial's result holds no loader case with epochs");
  const nlohmann::json& x = entry->extra;
  t.cores = unsigned(std::max(1.0, number_or(x, "cores", 1)));
  const double samples = number_or(x, "samples", 0);
  t.mean_sample_bytes = samples > 0 ? number_or(x, "bytes", 0) / samples : 0;
  const bool judged = x.value("judged", false);
  const std::string why = string_or(x, "verdict");
  const nlohmann::json& epochs = x["epochs"];
  for (FedState s : kFedStates) {
    StateFigures& f = t.states[std::size_t(s)];
    const std::size_t e = std::size_t(s);
    if (!judged || e >= epochs.size() || !epochs[e].is_object()) {
      f.why_not = judged ? "the trial ran fewer than two epochs" : why;
      continue;
    }
    const nlohmann::json& ep = epochs[e];
    f.judged = true;
    f.au = number_or(ep, "au", 0);
    f.host_cpu_busy = number_or(ep, "host_cpu_busy", number_or(ep, "cpu_util", 0));
    f.bytes_per_second = number_or(ep, "bytes_per_second", 0);
    f.served_from_memory = ep.value("served_from_memory", false);
    f.cores_used = number_or(ep, "cpu_util", 0) * t.cores;
    if (ep.contains("limit") && ep["limit"].is_object()) {
      const nlohmann::json& l = ep["limit"];
      f.limit_by = string_or(l, "by");
      f.limit_line = string_or(l, "line");
      f.transform_share = number_or(l, "transform_share", 0);
      if (l.contains("device_bytes_per_second") && l["device_bytes_per_second"].is_number())
        f.device_bytes_per_second = l["device_bytes_per_second"].get<double>();
    }
  }
  // One accelerator's need at its step, as every loader summary says it (loader_demand.h).
  const std::vector<CaseView> cases = fold_cases(document);
  for (const CaseView& c : cases)
    if (const std::optional<LoaderDemand> d = demand_of(c)) {
      t.need.bytes_per_second = d->bytes_per_second;
      t.need.samples_per_second = d->samples_per_second;
      break;
    }
  const StateFigures& cold = t.states[std::size_t(FedState::kCold)];
  if (cold.judged && cold.au > 0) t.need.cpu_cores = cold.cores_used / (accelerators * cold.au);
  t.document = std::move(document);
  return t;
}

TrialOutcome TrialResult::outcome() const {
  TrialOutcome o;
  o.accelerators = accelerators;
  for (FedState s : kFedStates) {
    const StateFigures& f = states[std::size_t(s)];
    StateOutcome& out = o.states[std::size_t(s)];
    out.judged = f.judged;
    out.au = f.au;
    // From feedbench's own cores, not the host's: another program's load says nothing of how far
    // more accelerators would go once it stops (the trial's AU already felt it).
    out.headroom = f.cores_used > 0 ? kCpuSaturated * cores / f.cores_used : 0;
  }
  return o;
}

std::string cell_limit(const WorkloadProfile& profile, const std::string& path, const FedAnswer& answer,
                       const TrialResult& deciding, FedState state, int cap) {
  if (answer.capped)
    return "none found up to " + std::to_string(cap) +
           " accelerators (the search's cap; --max-accelerators raises it)";
  const StateFigures& f = deciding.states[std::size_t(state)];
  const std::string busy = format_printf("%.0f%%", 100 * f.host_cpu_busy);
  const std::string cores =
      std::to_string(deciding.cores) + (deciding.cores == 1 ? " core " : " cores ") + busy + " busy";
  const bool transforms = profile.transform != "none";
  // Cores busy mostly with other programs' work: the host's load, not this workload's need.
  const double ours = f.cores_used / std::max(1u, deciding.cores);
  if (f.host_cpu_busy >= kCpuSaturated && ours < f.host_cpu_busy / 2)
    return "the host's CPU, busy with other programs: " + cores + ", feedbench's " +
           format_printf("%.0f%%", 100 * ours) + " (qualify again on a quiet host)";
  if (f.limit_by == "cpu" || f.host_cpu_busy >= kCpuSaturated) {
    if (!profile.trace.empty() && f.transform_share > 0.5)
      return "the host's CPU: the job's fetches, " + cores;
    return transforms && f.transform_share > 0.5
               ? "the host's CPU: decode and transforms, " + cores
               : "the host's CPU: reading and handing batches over, " + cores;
  }
  if (f.limit_by == "handover") return "the hand-over of batches to the trainer (the framework's own cost)";
  if (f.limit_by == "storage") {
    const double rate = f.device_bytes_per_second.value_or(f.bytes_per_second);
    if (f.served_from_memory)
      return "reading from the page cache: " + format_rate(f.bytes_per_second) + " with " + cores;
    const std::string where = path == "store" ? "the store's " : "the cache disk's ";
    // Large samples: what the store moved is its bandwidth at that depth. Small ones: one trial
    // cannot tell the store's bandwidth from its IOPS or latency, so it says the sizes.
    const bool large = deciding.mean_sample_bytes >= 1 << 20;
    return where + (large ? "bandwidth: " + format_rate(rate) + " read"
                          : "reads: " + format_rate(rate) + " in samples of " +
                                format_size(deciding.mean_sample_bytes));
  }
  return f.limit_line.empty() ? "not named by the trial" : f.limit_line;
}

std::vector<ChildRun> run_this_program(const std::vector<std::vector<std::string>>& args,
                                       const std::vector<std::string>& logs,
                                       std::chrono::steady_clock::time_point deadline,
                                       const std::atomic<int>* stop) {
  std::vector<pid_t> pids;
  std::vector<ChildRun> out(args.size());
  auto stop_all = [&](int signal) {
    for (std::size_t i = 0; i < pids.size(); ++i)
      if (pids[i] > 0) kill(pids[i], signal);
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::vector<std::string> argv_text = {"feedbench"};
    argv_text.insert(argv_text.end(), args[i].begin(), args[i].end());
    std::vector<char*> argv;
    for (std::string& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, logs[i].c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
      stop_all(SIGKILL);
      for (pid_t p : pids) waitpid(p, nullptr, 0);
      throw RunError("cannot start feedbench " + args[i].front() + ": " + std::strerror(rc));
    }
    pids.push_back(pid);
  }

  std::size_t running = pids.size();
  std::optional<std::chrono::steady_clock::time_point> signalled_at;
  bool killed = false;
  while (running > 0) {
    for (std::size_t i = 0; i < pids.size(); ++i) {
      if (pids[i] <= 0) continue;
      int status = 0;
      const pid_t done = waitpid(pids[i], &status, WNOHANG);
      if (done == pids[i]) {
        out[i].exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        pids[i] = -1;
        --running;
      } else if (done < 0 && errno != EINTR) {
        throw RunError("waiting for feedbench: " + std::string(std::strerror(errno)));
      }
    }
    if (running == 0) break;
    const auto now = std::chrono::steady_clock::now();
    if (!signalled_at && (now >= deadline || (stop && stop->load() != 0))) {
      for (std::size_t i = 0; i < pids.size(); ++i)
        if (pids[i] > 0) {
          out[i].timed_out = now >= deadline;
          out[i].stopped = !out[i].timed_out;
        }
      stop_all(SIGTERM);  // each stops cleanly: its temporaries removed
      signalled_at = now;
    } else if (signalled_at && !killed && now - *signalled_at > std::chrono::seconds(10)) {
      stop_all(SIGKILL);
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return out;
}

}  // namespace feedbench
