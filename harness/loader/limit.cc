// loader_limit: a round's limit named in order, and what fed it (limit.h says the rules).
#include "feedbench/loader/limit.h"

#include <algorithm>

#include "feedbench/base/text.h"
#include "feedbench/base/units.h"

namespace feedbench {
namespace {

std::string percent(double f) { return format_percent(f, 0); }

// "the decode", "the decode and crop", "the transform"; with none, the workers' CPU beyond their
// reads is the framework's own work in them (framework pytorch's): "the framework".
std::string transform_name(const std::string& t) {
  if (t.rfind("decode", 0) == 0) return "the decode";
  if (t.rfind("random_resized_crop", 0) == 0) return "the decode and crop";
  if (t.empty() || t == "none") return "the framework";
  return "the transform";
}

// Where the reads' residency split the bytes: "; the device read 2.49 GiB in that time, other
// programs' reads included" (its count bounds, never splits, what this round read); else "".
std::string device_bound(const LoaderLimit& l, const SupplyFigures& f) {
  if (l.memory_share_from != "residency" || !f.device_bytes) return "";
  return "; the device read " + format_size(double(*f.device_bytes)) +
         " in that time, other programs' reads included";
}

// "the device delivered 38.0 MiB/s; the page cache served 2% of the bytes read (31% of the
// samples read were re-reads)", or why the device's share is not known.
std::string source_clause(const LoaderLimit& l, const SupplyFigures& f, const char* device_word) {
  if (!l.memory_share)
    return "where the bytes came from is not measured: " +
           (f.device_why.empty() ? std::string("no device count") : f.device_why);
  // Everything from memory (a warm round): what the device read then is noise, not a supply.
  if (*l.memory_share >= 0.995) return "the page cache served all the bytes read" + device_bound(l, f);
  std::string out =
      std::string(device_word) + " delivered " + format_rate(l.device_bytes_per_second.value_or(0));
  out += "; the page cache served " + percent(*l.memory_share) + " of the bytes read";
  if (l.reread_share >= 0.05) out += " (" + percent(l.reread_share) + " of the samples read were re-reads)";
  return out + device_bound(l, f);
}

// "2 cores saturated (98% busy; this run 58%, other programs 40%)".
std::string cores_clause(const LoaderLimit& l, const SupplyFigures& f, const char* state) {
  std::string out = plural(f.cores, "core", "cores") + " " + state + " (" + percent(l.cpu_busy) + " busy";
  const double others = l.cpu_busy - f.cpu_util;
  if (f.host_cpu_busy && others >= 0.10)
    out += "; this run " + percent(f.cpu_util) + ", other programs " + percent(others);
  return out + ")";
}

}  // namespace

LoaderLimit loader_limit(const SupplyFigures& f) {
  LoaderLimit l;
  l.fed = f.au >= f.target_au;
  const double worker_s = f.read_s + f.transform_s;
  l.transform_share = worker_s > 0 ? f.transform_s / worker_s : 0;
  l.cpu_busy = f.host_cpu_busy.value_or(f.cpu_util);
  l.idle_cores = std::max(0.0, (1 - l.cpu_busy) * double(f.cores));
  l.reread_share = f.samples_read > 0 ? double(f.rereads) / double(f.samples_read) : 0;
  if (f.resident_bytes && f.read_bytes > 0) {
    // Asked file by file as they were read: what memory served, whatever else read the device.
    const std::uint64_t memory = std::min(*f.resident_bytes, f.read_bytes);
    l.memory_share = double(memory) / double(f.read_bytes);
    l.device_bytes_per_second = f.wall_s > 0 ? double(f.read_bytes - memory) / f.wall_s : 0;
    l.memory_share_from = "residency";
  } else if (f.device_bytes && f.read_bytes > 0) {
    // Read-ahead past what was asked can make the device read more than the workers did.
    l.memory_share = std::clamp(1 - double(*f.device_bytes) / double(f.read_bytes), 0.0, 1.0);
    l.device_bytes_per_second = f.wall_s > 0 ? double(*f.device_bytes) / f.wall_s : 0;
    l.memory_share_from = "device";
  }
  const std::string what = transform_name(f.transform);
  if (l.fed) {
    if (l.memory_share && *l.memory_share >= kMemoryFedShare) {
      l.by = "page_cache";
      l.text =
          "fed by the page cache, not storage: " + percent(*l.memory_share) +
          " of the bytes read came from memory" +
          (l.reread_share >= 0.05 ? " (" + percent(l.reread_share) + " of the samples read were re-reads)"
                                  : "") +
          "; the store alone delivered " + format_rate(l.device_bytes_per_second.value_or(0)) +
          device_bound(l, f);
      l.line = "fed by the page cache; the store alone delivered " +
               format_rate(l.device_bytes_per_second.value_or(0));
    } else if (l.memory_share) {
      l.by = "storage";
      l.text = "storage keeps up: " + source_clause(l, f, "the device");
      l.line = "storage keeps up: the device delivered " + format_rate(l.device_bytes_per_second.value_or(0));
    } else if (l.reread_share >= kMemoryFedShare) {
      l.line = "fed, perhaps by the page cache (" + percent(l.reread_share) + " re-reads)";
      l.text = "fed, perhaps by the page cache: " + percent(l.reread_share) +
               " of the samples read were re-reads (" + source_clause(l, f, "the device") + ")";
    } else {
      l.text = "storage keeps up (" + source_clause(l, f, "the device") + ")";
      l.line = "storage keeps up";
    }
    return l;
  }
  const bool cpu_bound = l.cpu_busy >= kCpuSaturated && f.transform_s > f.read_s;
  if (cpu_bound) {
    l.by = "cpu";
    l.text = "limit: " + what + "'s CPU — " + cores_clause(l, f, "saturated") + ", " +
             percent(l.transform_share) + " of the workers' time in " + what +
             ": a cheaper transform or more cores; then storage: " + source_clause(l, f, "the device");
    l.line = "limit: " + what + "'s CPU, " + plural(f.cores, "core", "cores") + " saturated (" +
             percent(l.cpu_busy) + " busy)";
    return l;
  }
  if (f.transform_idle_s > 0.5 * std::max(worker_s, 1e-9)) {
    // Most of the workers' time is the job's own waiting, neither reading nor computing.
    l.by = "job_waits";
    l.text = "limit: the job's own waits — its workers spent " + percent(f.transform_idle_s / worker_s) +
             " of their time in its fetches neither reading nor on the CPU (asleep, on a lock, a remote "
             "call), as recorded" +
             (l.idle_cores >= 0.5 ? ": more workers may help" : "") +
             "; then storage: " + source_clause(l, f, "the device");
    l.line =
        "limit: the job's own waits, " + percent(f.transform_idle_s / worker_s) + " of the workers' time";
    return l;
  }
  if (f.charged_share >= 0.5) {
    // The batches were ready: most of the wait is the framework's own next() on them.
    l.by = "handover";
    l.text = "limit: the hand-over — " + percent(f.charged_share) +
             " of the wait is the framework's own cost of taking ready batches (per batch and per tensor "
             "handed over), not the supply: fewer tensors a batch (stacked, not a list) or fewer, larger "
             "batches; then storage: " +
             source_clause(l, f, "the device");
    l.line = "limit: the hand-over, " + percent(f.charged_share) +
             " of the wait the framework's own cost of taking ready batches";
    return l;
  }
  l.by = "storage";
  l.line = !l.memory_share ? "limit: storage"
           : *l.memory_share >= 0.995
               ? "limit: reading, not the device (all from the page cache)"
               : "limit: storage, the device delivered " + format_rate(l.device_bytes_per_second.value_or(0));
  if (l.memory_share && *l.memory_share >= 0.995)  // from memory, yet too slow: not the device
    l.text =
        "limit: reading, not the device — the page cache served all the bytes read, and the reads still "
        "took too long (a throttle on the path paces reads from memory too)";
  else l.text = "limit: storage — " + source_clause(l, f, "the device");
  if (l.transform_share > 0.5 && l.idle_cores >= 0.5)
    l.text += "; the workers spend " + percent(l.transform_share) + " of their time in " + what + " and " +
              format_printf("%.1f", l.idle_cores) + " of " + plural(f.cores, "core", "cores") +
              " stood idle: more workers may help";
  return l;
}

std::string loader_verdict(const SupplyFigures& f, const LoaderLimit& limit) {
  std::string text = "AU " + format_printf("%.1f%%", 100 * f.au) + " — ";
  if (!limit.fed)
    text += "training waits for data " + format_printf("%.1f%%", 100 * f.stall_fraction) + " of the time — ";
  return text + limit.text;
}

std::string loader_verdict_line(double au, const LoaderLimit& limit) {
  return "AU " + format_printf("%.1f%%", 100 * au) + " — " + (limit.line.empty() ? limit.by : limit.line);
}

}  // namespace feedbench
