// NVML through dlopen: the few functions feedbench needs, declared here with the types NVML's
// header gives them, so neither the build nor the binary depends on the driver.
#include <dlfcn.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "feedbench/base/clock.h"
#include "feedbench/base/file_system.h"
#include "feedbench/gpu/gpu.h"

namespace feedbench {
namespace {

using nvmlReturn = int;  // nvmlReturn_t: 0 is NVML_SUCCESS
using nvmlDevice = struct nvmlDevice_st*;
struct nvmlUtilization {
  unsigned int gpu;
  unsigned int memory;
};
struct nvmlMemory {
  unsigned long long total, free, used;
};
struct nvmlPciInfo {  // nvmlPciInfo_t (v3)
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
constexpr int kPcieTx = 0, kPcieRx = 1;  // nvmlPcieUtilCounter_t, KB/s over the last 20 ms

struct Nvml {
  void* handle = nullptr;
  nvmlReturn (*init)() = nullptr;
  nvmlReturn (*shutdown)() = nullptr;
  nvmlReturn (*count)(unsigned int*) = nullptr;
  nvmlReturn (*by_index)(unsigned int, nvmlDevice*) = nullptr;
  nvmlReturn (*name)(nvmlDevice, char*, unsigned int) = nullptr;
  nvmlReturn (*memory)(nvmlDevice, nvmlMemory*) = nullptr;
  nvmlReturn (*utilization)(nvmlDevice, nvmlUtilization*) = nullptr;
  nvmlReturn (*pci)(nvmlDevice, nvmlPciInfo*) = nullptr;
  nvmlReturn (*link_gen)(nvmlDevice, unsigned int*) = nullptr;
  nvmlReturn (*link_width)(nvmlDevice, unsigned int*) = nullptr;
  nvmlReturn (*max_link_gen)(nvmlDevice, unsigned int*) = nullptr;
  nvmlReturn (*max_link_width)(nvmlDevice, unsigned int*) = nullptr;
  nvmlReturn (*pcie_throughput)(nvmlDevice, int, unsigned int*) = nullptr;
  std::string why;

  explicit Nvml(const std::string& library) {
    handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      why = "no NVIDIA driver (" + library + " not found)";
      return;
    }
    bool ok = true;
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(handle, name));
      if (!fn) ok = false;
    };
    sym(init, "nvmlInit_v2");
    sym(shutdown, "nvmlShutdown");
    sym(count, "nvmlDeviceGetCount_v2");
    sym(by_index, "nvmlDeviceGetHandleByIndex_v2");
    sym(name, "nvmlDeviceGetName");
    sym(memory, "nvmlDeviceGetMemoryInfo");
    sym(utilization, "nvmlDeviceGetUtilizationRates");
    sym(pci, "nvmlDeviceGetPciInfo_v3");
    sym(link_gen, "nvmlDeviceGetCurrPcieLinkGeneration");
    sym(link_width, "nvmlDeviceGetCurrPcieLinkWidth");
    sym(max_link_gen, "nvmlDeviceGetMaxPcieLinkGeneration");
    sym(max_link_width, "nvmlDeviceGetMaxPcieLinkWidth");
    sym(pcie_throughput, "nvmlDeviceGetPcieThroughput");
    if (!ok) {
      why = "NVIDIA driver too old (" + library + " lacks a function feedbench uses)";
    } else if (init() != 0) {
      why = "NVIDIA driver present but NVML would not initialise";
    } else {
      return;
    }
    ::dlclose(handle);
    handle = nullptr;
  }
  ~Nvml() {
    if (handle) {
      shutdown();
      ::dlclose(handle);
    }
  }
  bool ok() const { return handle != nullptr; }
  std::vector<nvmlDevice> devices() const {
    unsigned int n = 0;
    std::vector<nvmlDevice> out;
    if (count(&n) != 0) return out;
    for (unsigned int i = 0; i < n; ++i) {
      nvmlDevice d = nullptr;
      if (by_index(i, &d) == 0) out.push_back(d);
    }
    return out;
  }
};

// RETURNS: the CPUs of a sysfs list ("0-3,8,10-11").
std::vector<int> parse_cpu_list(const std::string& text) {
  std::vector<int> cpus;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    if (part.empty() || !std::isdigit(static_cast<unsigned char>(part[0]))) continue;
    const auto dash = part.find('-');
    const int a = std::stoi(part.substr(0, dash));
    const int b = dash == std::string::npos ? a : std::stoi(part.substr(dash + 1));
    for (int c = a; c <= b; ++c) cpus.push_back(c);
  }
  return cpus;
}

int numa_node_of(const std::string& bus_id) {
  // NVML writes "00000000:17:00.0"; sysfs names the device "0000:17:00.0", in lower case.
  std::string id = bus_id;
  if (id.size() > 12 && id.find(':') == 8) id = id.substr(4);
  for (char& c : id) c = char(std::tolower(static_cast<unsigned char>(c)));
  const std::string text = read_first_line("/sys/bus/pci/devices/" + id + "/numa_node");
  if (text.empty()) return -1;
  try {
    return std::stoi(text);
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace

nlohmann::json GpuInfo::to_json() const {
  return {{"index", index},
          {"name", name},
          {"bus_id", bus_id},
          {"memory_total_bytes", memory_total},
          {"pcie",
           {{"generation", pcie_generation},
            {"width", pcie_width},
            {"max_generation", pcie_max_generation},
            {"max_width", pcie_max_width}}},
          {"numa_node", numa_node}};
}

GpuInventory list_gpus(const std::string& library) {
  GpuInventory inv;
  Nvml nvml(library);
  if (!nvml.ok()) {
    inv.why = nvml.why;
    return inv;
  }
  inv.driver = true;
  int index = 0;
  for (nvmlDevice d : nvml.devices()) {
    GpuInfo g;
    g.index = index++;
    char name[96] = {};
    if (nvml.name(d, name, sizeof(name)) == 0) g.name = name;
    nvmlMemory mem{};
    if (nvml.memory(d, &mem) == 0) g.memory_total = mem.total;
    nvmlPciInfo pci{};
    if (nvml.pci(d, &pci) == 0) {
      g.bus_id = std::string(pci.busId, strnlen(pci.busId, sizeof(pci.busId)));
      g.numa_node = numa_node_of(g.bus_id);
    }
    unsigned int v = 0;
    if (nvml.link_gen(d, &v) == 0) g.pcie_generation = int(v);
    if (nvml.link_width(d, &v) == 0) g.pcie_width = int(v);
    if (nvml.max_link_gen(d, &v) == 0) g.pcie_max_generation = int(v);
    if (nvml.max_link_width(d, &v) == 0) g.pcie_max_width = int(v);
    inv.gpus.push_back(std::move(g));
  }
  return inv;
}

std::string numa_warning(const GpuInfo& gpu, const std::vector<std::vector<int>>& node_cpus_in,
                         const std::vector<int>& allowed_in) {
  if (gpu.numa_node < 0) return "";
  std::vector<std::vector<int>> node_cpus = node_cpus_in;
  if (node_cpus.empty()) {
    for (int n = 0;; ++n) {
      std::ifstream probe("/sys/devices/system/node/node" + std::to_string(n) + "/cpulist");
      if (!probe) break;
      node_cpus.push_back(
          parse_cpu_list(read_first_line("/sys/devices/system/node/node" + std::to_string(n) + "/cpulist")));
    }
  }
  std::vector<int> allowed = allowed_in;
  if (allowed.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof(set), &set) == 0)
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) allowed.push_back(c);
  }
  if (std::size_t(gpu.numa_node) >= node_cpus.size() || allowed.empty()) return "";
  // The nodes the reading threads may run on, beside the GPU's own.
  std::string others;
  bool outside = false;
  for (std::size_t n = 0; n < node_cpus.size(); ++n) {
    const bool used = std::any_of(allowed.begin(), allowed.end(), [&](int c) {
      return std::find(node_cpus[n].begin(), node_cpus[n].end(), c) != node_cpus[n].end();
    });
    if (!used) continue;
    others += (others.empty() ? "" : ",") + std::to_string(n);
    if (int(n) != gpu.numa_node) outside = true;
  }
  if (!outside) return "";
  return "reading threads may run on NUMA node(s) " + others + "; GPU " + std::to_string(gpu.index) +
         " is on node " + std::to_string(gpu.numa_node) +
         ": host-to-device copies from another node cross the socket link (bind with numactl --cpunodebind=" +
         std::to_string(gpu.numa_node) + " --membind=" + std::to_string(gpu.numa_node) + ")";
}

struct GpuSampler::Impl {
  std::int64_t interval_ns;
  std::unique_ptr<Nvml> nvml;
  std::vector<nvmlDevice> devices;
  struct Acc {
    std::uint64_t samples = 0;
    double util_sum = 0, util_max = 0, rx_sum = 0, rx_max = 0, tx_sum = 0, tx_max = 0;
    double mem_max = 0;
  };
  std::vector<Acc> acc;
  std::mutex m;
  std::condition_variable cv;
  bool quit = false;
  std::thread thread;

  void sample() {
    for (std::size_t i = 0; i < devices.size(); ++i) {
      Acc& a = acc[i];
      nvmlUtilization u{};
      nvmlMemory mem{};
      unsigned int rx = 0, tx = 0;
      if (nvml->utilization(devices[i], &u) != 0) continue;
      ++a.samples;
      a.util_sum += u.gpu;
      a.util_max = std::max(a.util_max, double(u.gpu));
      if (nvml->memory(devices[i], &mem) == 0) a.mem_max = std::max(a.mem_max, double(mem.used));
      if (nvml->pcie_throughput(devices[i], kPcieRx, &rx) == 0) {
        a.rx_sum += rx * 1024.0;
        a.rx_max = std::max(a.rx_max, rx * 1024.0);
      }
      if (nvml->pcie_throughput(devices[i], kPcieTx, &tx) == 0) {
        a.tx_sum += tx * 1024.0;
        a.tx_max = std::max(a.tx_max, tx * 1024.0);
      }
    }
  }
};

GpuSampler::GpuSampler(std::int64_t interval_ns) : impl_(std::make_unique<Impl>()) {
  impl_->interval_ns = interval_ns;
}

GpuSampler::~GpuSampler() {
  if (impl_->thread.joinable()) stop();
}

void GpuSampler::start() {
  Impl& s = *impl_;
  s.nvml = std::make_unique<Nvml>("libnvidia-ml.so.1");
  if (!s.nvml->ok()) return;
  s.devices = s.nvml->devices();
  s.acc.assign(s.devices.size(), {});
  s.quit = false;
  s.thread = std::thread([&s] {
    std::unique_lock lock(s.m);
    while (!s.quit) {
      s.sample();
      s.cv.wait_for(lock, std::chrono::nanoseconds(s.interval_ns), [&] { return s.quit; });
    }
  });
}

nlohmann::json GpuSampler::stop() {
  Impl& s = *impl_;
  if (!s.thread.joinable()) return nullptr;
  {
    std::lock_guard lock(s.m);
    s.quit = true;
  }
  s.cv.notify_all();
  s.thread.join();
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < s.acc.size(); ++i) {
    const Impl::Acc& a = s.acc[i];
    if (a.samples == 0) continue;
    const double n = double(a.samples);
    out.push_back({{"index", i},
                   {"samples", a.samples},
                   {"util_percent", {{"mean", a.util_sum / n}, {"max", a.util_max}}},
                   {"memory_used_bytes", {{"max", a.mem_max}}},
                   {"pcie_rx_bytes_per_second", {{"mean", a.rx_sum / n}, {"max", a.rx_max}}},
                   {"pcie_tx_bytes_per_second", {{"mean", a.tx_sum / n}, {"max", a.tx_max}}}});
  }
  s.nvml.reset();
  return out.empty() ? nlohmann::json(nullptr) : out;
}

}  // namespace feedbench
