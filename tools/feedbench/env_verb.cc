// `feedbench env [--path DIR | --path ROLE=DIR]... [--json]`: the host and each path as a run
// records them, so an engineer can check a new instance before running anything.
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "command_line.h"
#include "feedbench/base/error.h"
#include "feedbench/base/units.h"
#include "feedbench/gpu/gpu.h"
#include "feedbench/results/environment.h"
#include "verbs.h"

namespace po = boost::program_options;

namespace feedbench {
namespace {

constexpr const char* kUsage =
    "usage: feedbench env [--path DIR | --path ROLE=DIR]... [--json]\n"
    "\n"
    "Describes this host (CPU, memory, NUMA, kernel, instance type, GPUs) and, for each path,\n"
    "the file system, mount and block device behind it; warns when two paths share a device.\n"
    "--json prints {\"host\": ..., \"paths\": ...} exactly as result files record it, and \"gpu\": the\n"
    "CUDA devices and, through NVML (libnvidia-ml.so.1), each GPU's PCIe link and NUMA node, with a\n"
    "warning when reading threads may run on another NUMA node than a GPU.\n"
    "\n"
    "examples:\n"
    "  feedbench env --path source=/mnt/nfs/imagenet --path cache=/local/nvme/cache\n"
    "  feedbench env --path /var/tmp --json\n"
    "\n";

std::string host_text(const nlohmann::json& h) {
  auto s = [&](const char* key) {
    const auto& v = h[key];
    return v.is_string() ? v.get<std::string>() : v.dump();
  };
  std::string out = "host      " + s("hostname") + "\n";
  out += "cpu       " + s("cpu_model") + ", " + s("cores") + " cores (" + s("physical_cores") +
         " physical), " + s("sockets") + " socket(s), " + s("numa_nodes") + " NUMA node(s)\n";
  out += "memory    " + format_size(h.value("memory_total_bytes", 0.0)) + " total, " +
         format_size(h.value("memory_available_bytes", 0.0)) + " available";
  // Large read buffers ask for huge pages; "never" can split large O_DIRECT reads at the device.
  if (!h.value("transparent_hugepages", "").empty())
    out += ", transparent huge pages " + h.value("transparent_hugepages", "");
  out += "\n";
  out += "system    " + s("distribution") + ", kernel " + s("kernel");
  if (!h.value("latency_clock", "").empty()) out += ", latency clock " + h.value("latency_clock", "");
  out += "\n";
  std::string instance = s("instance_type");
  std::string vendor = s("system_vendor");
  out += "instance  " +
         (instance.empty() ? std::string("(not stated by DMI)")
                           : instance + (vendor.empty() ? "" : " (" + vendor + ")")) +
         "\n";
  if (h["gpus"].empty()) out += "gpus      none seen (no nvidia-smi on PATH, or no GPU)\n";
  for (const auto& g : h["gpus"])
    out += "gpu       " + g.value("name", "") + ", " + g.value("memory", "") + ", driver " +
           g.value("driver", "") + "\n";
  return out;
}

// RETURNS: {"built_with_cuda", "cuda_devices", "cuda" (why none, when none), "nvml": {"driver",
// "why"?, "gpus": [GpuInfo...]}, "warnings": [...]}: what the GPU component sees.
nlohmann::json gpu_json() {
  std::string why;
  const int devices = cuda_device_count(&why);
  const GpuInventory inv = list_gpus();
  nlohmann::json j = {{"built_with_cuda", built_with_cuda()}, {"cuda_devices", devices}};
  if (devices == 0) j["cuda"] = why;
  j["nvml"] = {{"driver", inv.driver}, {"gpus", nlohmann::json::array()}};
  if (!inv.driver) j["nvml"]["why"] = inv.why;
  nlohmann::json warnings = nlohmann::json::array();
  for (const GpuInfo& g : inv.gpus) {
    j["nvml"]["gpus"].push_back(g.to_json());
    if (std::string w = numa_warning(g); !w.empty()) warnings.push_back(w);
  }
  j["warnings"] = warnings;
  return j;
}

std::string gpu_text(const nlohmann::json& g) {
  std::string out = std::string("cuda      ") +
                    (g["built_with_cuda"].get<bool>() ? "built with CUDA" : "built without CUDA");
  const int devices = g["cuda_devices"].get<int>();
  out +=
      devices > 0
          ? ", " + std::to_string(devices) + " device(s)\n"
          : (g["built_with_cuda"].get<bool>() ? ", " + g["cuda"].get<std::string>() : std::string()) + "\n";
  const nlohmann::json& nvml = g["nvml"];
  if (!nvml["driver"].get<bool>()) out += "nvml      " + nvml["why"].get<std::string>() + "\n";
  for (const auto& gpu : nvml["gpus"]) {
    const auto& pcie = gpu["pcie"];
    const int node = gpu["numa_node"].get<int>();
    out += "gpu " + std::to_string(gpu["index"].get<int>()) + "     " + gpu["name"].get<std::string>() +
           ", " + format_size(gpu["memory_total_bytes"].get<double>()) + ", PCIe gen " +
           std::to_string(pcie["generation"].get<int>()) + " x" + std::to_string(pcie["width"].get<int>()) +
           " (max gen " + std::to_string(pcie["max_generation"].get<int>()) + " x" +
           std::to_string(pcie["max_width"].get<int>()) + "), NUMA node " +
           (node < 0 ? std::string("unknown") : std::to_string(node)) + ", bus " +
           gpu["bus_id"].get<std::string>() + "\n";
  }
  for (const auto& w : g["warnings"]) out += "warning: " + w.get<std::string>() + "\n";
  return out;
}

}  // namespace

int env_main(int argc, char** argv) {
  std::vector<std::string> path_args;
  bool as_json = false;
  po::options_description opts("options");
  opts.add_options()("help,h", "print this help")(
      "path", po::value(&path_args)->value_name("[ROLE=]DIR")->composing(),
      "a path to describe; ROLE names it (source, cache), else path1, path2, ...")(
      "json", po::bool_switch(&as_json), "print JSON as recorded in result files");
  po::variables_map vm;
  if (parse_command_line(argc, argv, opts, vm)) {
    std::cout << kUsage << "\noptions:\n" << options_help(opts);
    return 0;
  }

  std::map<std::string, PathInfo> paths;
  int unnamed = 0;
  for (const std::string& arg : path_args) {
    std::string role, dir = arg;
    // ROLE=DIR, where ROLE is a plain word (a folder may itself contain '=').
    if (auto eq = arg.find('='); eq != std::string::npos && eq > 0 && arg.find('/') > eq) {
      role = arg.substr(0, eq);
      dir = arg.substr(eq + 1);
    } else {
      role = "path" + std::to_string(++unnamed);
    }
    if (dir.empty()) throw InputError("--path " + arg + ": expected a folder");
    if (paths.count(role)) throw InputError("--path " + arg + ": role '" + role + "' given twice");
    paths.emplace(role, describe_path(role, dir));
  }

  const nlohmann::json gpu = gpu_json();
  if (as_json) {
    nlohmann::json env = describe_environment(paths);
    env["gpu"] = gpu;
    std::cout << env.dump(2) << "\n";
    return 0;
  }
  std::cout << host_text(describe_host()) << gpu_text(gpu);
  if (!paths.empty()) std::cout << "\n" << format_paths(paths);
  return 0;
}

}  // namespace feedbench
