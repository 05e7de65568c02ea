#include "memplan/probe/probe.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>

#include "dynamic_library.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"

namespace memplan {

namespace {

// --- the CUDA driver API, as declared in cuda.h (not included: build machines have no CUDA) ---
using CUresult = int;
using CUdevice = int;
struct CUuuid {
  unsigned char bytes[16];
};
constexpr CUresult kCudaSuccess = 0;
constexpr CUresult kCudaErrorNoDevice = 100;
constexpr int kAttrMultiprocessors = 16;  // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
constexpr int kAttrMemoryClockKhz = 36;   // CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE
constexpr int kAttrMemoryBusWidth = 37;   // CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH
constexpr int kAttrComputeMajor = 75;     // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrComputeMinor = 76;     // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR

struct CudaApi {
  CUresult (*init)(unsigned int) = nullptr;
  CUresult (*driver_get_version)(int*) = nullptr;
  CUresult (*device_get_count)(int*) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_get_name)(char*, int, CUdevice) = nullptr;
  CUresult (*device_get_attribute)(int*, int, CUdevice) = nullptr;
  CUresult (*device_total_mem)(std::size_t*, CUdevice) = nullptr;
  CUresult (*device_get_uuid)(CUuuid*, CUdevice) = nullptr;
  CUresult (*get_error_name)(CUresult, const char**) = nullptr;    // optional
  CUresult (*get_error_string)(CUresult, const char**) = nullptr;  // optional
};

// --- NVML, as declared in nvml.h ---
using NvmlReturn = int;
using NvmlDevice = struct NvmlDeviceOpaque*;
struct NvmlMemory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
struct NvmlProcessInfoV1 {  // nvmlProcessInfo_v1_t
  unsigned int pid;
  unsigned long long used_gpu_memory;
};
struct NvmlProcessInfoV2 {  // nvmlProcessInfo_t (v2 layout, used by the _v2 and _v3 queries)
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr NvmlReturn kNvmlInsufficientSize = 7;
constexpr unsigned long long kNvmlValueNotAvailable = ~0ULL;
constexpr unsigned int kNvmlBufferSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE, NVML_DEVICE_UUID_V2_BUFFER_SIZE

template <class Info>
using NvmlProcessQuery = NvmlReturn (*)(NvmlDevice, unsigned int*, Info*);

struct NvmlApi {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  const char* (*error_string)(NvmlReturn) = nullptr;
  NvmlReturn (*driver_version)(char*, unsigned int) = nullptr;
  NvmlReturn (*cuda_driver_version)(int*) = nullptr;
  NvmlReturn (*device_count)(unsigned int*) = nullptr;
  NvmlReturn (*device_by_index)(unsigned int, NvmlDevice*) = nullptr;
  NvmlReturn (*device_name)(NvmlDevice, char*, unsigned int) = nullptr;
  NvmlReturn (*device_uuid)(NvmlDevice, char*, unsigned int) = nullptr;
  NvmlReturn (*device_memory)(NvmlDevice, NvmlMemory*) = nullptr;
  NvmlReturn (*device_compute_capability)(NvmlDevice, int*, int*) = nullptr;
};

// What NVML said about one GPU, keyed later by UUID.
struct NvmlDeviceFacts {
  std::uint32_t index = 0;
  std::string name;
  std::string uuid;
  std::optional<NvmlMemory> memory;
  std::optional<ComputeCapability> compute_capability;
  std::vector<GpuProcess> processes;
  bool processes_known = false;
};

struct NvmlView {
  bool loaded = false;  // the library loaded and nvmlInit succeeded
  std::string problem;  // why not, one line
  std::string driver_version;
  std::string cuda_version;
  std::vector<NvmlDeviceFacts> devices;
};

std::string library_file(const std::string& given, const char* variable, const char* fallback) {
  if (!given.empty()) return given;
  const char* from_env = std::getenv(variable);
  return (from_env && *from_env) ? from_env : fallback;
}

std::string cuda_version_string(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string process_name(const std::string& proc_root, unsigned int pid) {
  std::ifstream in(proc_root + "/" + std::to_string(pid) + "/comm");
  std::string name;
  if (in) std::getline(in, name);
  return trimmed(name);
}

std::string cuda_error(const CudaApi& api, CUresult code) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.get_error_name) api.get_error_name(code, &name);
  if (api.get_error_string) api.get_error_string(code, &text);
  std::string out = name ? name : "CUDA error " + std::to_string(code);
  if (text) out += std::string(" (") + text + ")";
  return out;
}

std::string nvml_error(const NvmlApi& api, NvmlReturn code) {
  const char* text = api.error_string ? api.error_string(code) : nullptr;
  return text ? std::string(text) : "NVML error " + std::to_string(code);
}

template <class Info>
bool list_processes(NvmlProcessQuery<Info> query, NvmlDevice device, const char* type, const std::string& proc_root,
                    std::vector<GpuProcess>& out) {
  if (!query) return false;
  unsigned int count = 0;
  NvmlReturn rc = query(device, &count, nullptr);
  std::vector<Info> infos;
  if (rc == kNvmlInsufficientSize) {
    // Processes can start between the two calls: leave room for a few more.
    infos.resize(count + 8);
    count = static_cast<unsigned int>(infos.size());
    rc = query(device, &count, infos.data());
  }
  if (rc != kNvmlSuccess) return false;
  for (unsigned int i = 0; i < count && i < infos.size(); ++i) {
    GpuProcess p;
    p.pid = infos[i].pid;
    p.name = process_name(proc_root, p.pid);
    p.type = type;
    if (infos[i].used_gpu_memory != kNvmlValueNotAvailable) p.used_memory = Bytes(infos[i].used_gpu_memory);
    out.push_back(std::move(p));
  }
  return true;
}

// Lists processes of one type, trying the newest query first (_v3, _v2, then the original).
bool list_processes_of(const detail::DynamicLibrary& lib, const std::string& base, NvmlDevice device, const char* type,
                       const std::string& proc_root, std::vector<GpuProcess>& out) {
  for (const char* suffix : {"_v3", "_v2"}) {
    auto query = lib.function<NvmlProcessQuery<NvmlProcessInfoV2>>((base + suffix).c_str());
    if (query) return list_processes(query, device, type, proc_root, out);
  }
  return list_processes(lib.function<NvmlProcessQuery<NvmlProcessInfoV1>>(base.c_str()), device, type, proc_root, out);
}

NvmlView query_nvml(const std::string& file, const std::string& proc_root) {
  NvmlView view;
  std::string error;
  detail::DynamicLibrary lib = detail::DynamicLibrary::open(file, false, error);
  if (!lib.loaded()) {
    view.problem = file + " could not be loaded (" + error + ")";
    return view;
  }
  NvmlApi api;
  api.init = lib.function<decltype(api.init)>("nvmlInit_v2");
  api.shutdown = lib.function<decltype(api.shutdown)>("nvmlShutdown");
  api.error_string = lib.function<decltype(api.error_string)>("nvmlErrorString");
  api.driver_version = lib.function<decltype(api.driver_version)>("nvmlSystemGetDriverVersion");
  api.cuda_driver_version = lib.function<decltype(api.cuda_driver_version)>("nvmlSystemGetCudaDriverVersion");
  api.device_count = lib.function<decltype(api.device_count)>("nvmlDeviceGetCount_v2");
  api.device_by_index = lib.function<decltype(api.device_by_index)>("nvmlDeviceGetHandleByIndex_v2");
  api.device_name = lib.function<decltype(api.device_name)>("nvmlDeviceGetName");
  api.device_uuid = lib.function<decltype(api.device_uuid)>("nvmlDeviceGetUUID");
  api.device_memory = lib.function<decltype(api.device_memory)>("nvmlDeviceGetMemoryInfo");
  api.device_compute_capability = lib.function<decltype(api.device_compute_capability)>(
      "nvmlDeviceGetCudaComputeCapability");
  if (!api.init || !api.shutdown || !api.device_count || !api.device_by_index) {
    view.problem = file + " lacks nvmlInit_v2 or nvmlDeviceGetCount_v2 (a driver older than R325)";
    return view;
  }
  if (const NvmlReturn rc = api.init(); rc != kNvmlSuccess) {
    view.problem = "nvmlInit failed: " + nvml_error(api, rc);
    return view;
  }
  view.loaded = true;
  std::array<char, kNvmlBufferSize> buffer{};
  if (api.driver_version && api.driver_version(buffer.data(), kNvmlBufferSize) == kNvmlSuccess) {
    view.driver_version = buffer.data();
  }
  int cuda = 0;
  if (api.cuda_driver_version && api.cuda_driver_version(&cuda) == kNvmlSuccess && cuda > 0) {
    view.cuda_version = cuda_version_string(cuda);
  }
  unsigned int count = 0;
  if (api.device_count(&count) != kNvmlSuccess) count = 0;
  for (unsigned int i = 0; i < count; ++i) {
    NvmlDevice device = nullptr;
    if (api.device_by_index(i, &device) != kNvmlSuccess) continue;
    NvmlDeviceFacts facts;
    facts.index = i;
    buffer.fill('\0');
    if (api.device_name && api.device_name(device, buffer.data(), kNvmlBufferSize) == kNvmlSuccess) {
      facts.name = buffer.data();
    }
    buffer.fill('\0');
    if (api.device_uuid && api.device_uuid(device, buffer.data(), kNvmlBufferSize) == kNvmlSuccess) {
      facts.uuid = buffer.data();
    }
    NvmlMemory memory{};
    if (api.device_memory && api.device_memory(device, &memory) == kNvmlSuccess) facts.memory = memory;
    int major = 0;
    int minor = 0;
    if (api.device_compute_capability && api.device_compute_capability(device, &major, &minor) == kNvmlSuccess &&
        major > 0) {
      facts.compute_capability = ComputeCapability{static_cast<std::uint32_t>(major),
                                                   static_cast<std::uint32_t>(minor)};
    }
    const bool compute = list_processes_of(lib, "nvmlDeviceGetComputeRunningProcesses", device, "compute", proc_root,
                                           facts.processes);
    const bool graphics = list_processes_of(lib, "nvmlDeviceGetGraphicsRunningProcesses", device, "graphics", proc_root,
                                            facts.processes);
    facts.processes_known = compute || graphics;
    view.devices.push_back(std::move(facts));
  }
  api.shutdown();
  return view;
}

std::string uuid_string(const CUuuid& id) {
  // NVML's spelling: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += hex[id.bytes[i] >> 4];
    out += hex[id.bytes[i] & 0xf];
  }
  return out;
}

void apply_nvml(const NvmlDeviceFacts& facts, ProbedDevice& d) {
  if (facts.memory) {
    d.total_memory = Bytes(facts.memory->total);
    d.free_memory = Bytes(facts.memory->free);
    d.used_memory = Bytes(facts.memory->used);
  } else {
    d.notes.push_back("NVML did not report memory: free and used unknown");
  }
  d.processes = facts.processes;
  d.processes_known = facts.processes_known;
  if (!facts.processes_known) d.notes.push_back("NVML did not list the processes using this GPU");
}

// Fills `result.devices` from NVML alone, when the driver API cannot be used.
void add_nvml_only_devices(const NvmlView& nvml, ProbeResult& result) {
  for (const NvmlDeviceFacts& facts : nvml.devices) {
    ProbedDevice d;
    d.index = facts.index;
    d.name = facts.name;
    d.uuid = facts.uuid;
    if (facts.compute_capability) d.compute_capability = *facts.compute_capability;
    apply_nvml(facts, d);
    d.notes.push_back("seen by NVML only (index is NVML's): the CUDA driver API could not use it");
    result.devices.push_back(std::move(d));
  }
}

std::uint32_t attribute(const CudaApi& api, int which, CUdevice device) {
  int value = 0;
  if (api.device_get_attribute(&value, which, device) != kCudaSuccess || value < 0) return 0;
  return static_cast<std::uint32_t>(value);
}

void probe_devices(const CudaApi& api, int count, const NvmlView& nvml, ProbeResult& result) {
  std::map<std::string, const NvmlDeviceFacts*> by_uuid;
  for (const NvmlDeviceFacts& facts : nvml.devices) by_uuid[facts.uuid] = &facts;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice device = 0;
    ProbedDevice d;
    d.index = static_cast<std::uint32_t>(ordinal);
    if (api.device_get(&device, ordinal) != kCudaSuccess) {
      d.notes.push_back("cuDeviceGet failed for this ordinal");
      result.devices.push_back(std::move(d));
      continue;
    }
    std::array<char, 256> name{};
    if (api.device_get_name(name.data(), static_cast<int>(name.size() - 1), device) == kCudaSuccess) {
      d.name = name.data();
    }
    CUuuid id{};
    if (api.device_get_uuid(&id, device) == kCudaSuccess) d.uuid = uuid_string(id);
    d.compute_capability = {attribute(api, kAttrComputeMajor, device), attribute(api, kAttrComputeMinor, device)};
    d.multiprocessors = attribute(api, kAttrMultiprocessors, device);
    d.memory_bus_width_bits = attribute(api, kAttrMemoryBusWidth, device);
    d.memory_clock_khz = attribute(api, kAttrMemoryClockKhz, device);
    // Double data rate: two transfers per clock, bus width in bits.
    d.bandwidth_gbs = 2.0 * static_cast<double>(d.memory_clock_khz) * 1e3 *
                      static_cast<double>(d.memory_bus_width_bits) / 8.0 / 1e9;
    std::size_t total = 0;
    if (api.device_total_mem(&total, device) == kCudaSuccess) d.total_memory = Bytes(total);
    const auto match = by_uuid.find(d.uuid);
    if (match != by_uuid.end()) {
      apply_nvml(*match->second, d);
    } else if (nvml.loaded) {
      d.notes.push_back("NVML lists no GPU with this UUID (a MIG instance?): free memory and processes unknown");
    }
    result.devices.push_back(std::move(d));
  }
}

}  // namespace

std::string to_string(ProbeStatus status) {
  switch (status) {
    case ProbeStatus::ok: return "ok";
    case ProbeStatus::no_driver: return "no_driver";
    case ProbeStatus::no_device: return "no_device";
    case ProbeStatus::driver_error: return "driver_error";
    case ProbeStatus::driver_too_old: return "driver_too_old";
  }
  return "driver_error";
}

ProbeResult probe(const ProbeOptions& options) {
  ProbeResult result;
  if (options.read_host) result.host = read_host(options.proc_root);
  if (options.detect_environment) result.environment = detect_environment(read_environment_signals());

  const std::string cuda_file = library_file(options.cuda_library, "MEMPLAN_CUDA_LIBRARY", "libcuda.so.1");
  const std::string nvml_file = library_file(options.nvml_library, "MEMPLAN_NVML_LIBRARY", "libnvidia-ml.so.1");
  const NvmlView nvml = query_nvml(nvml_file, options.proc_root);
  result.driver_version = nvml.driver_version;
  result.cuda_version = nvml.cuda_version;

  const auto fail = [&](ProbeStatus status, std::string reason) {
    result.status = status;
    result.reason = std::move(reason);
    add_nvml_only_devices(nvml, result);
    return result;
  };

  std::string error;
  // libcuda stays loaded: unloading an initialised CUDA driver is not supported.
  const detail::DynamicLibrary lib = detail::DynamicLibrary::open(cuda_file, true, error);
  if (!lib.loaded()) {
    return fail(ProbeStatus::no_driver, "no NVIDIA driver: " + cuda_file + " could not be loaded (" + error +
                                            "); plan with `gpu` NAME or for the CPU");
  }
  if (!nvml.loaded) {
    result.notes.push_back("NVML not available, " + nvml.problem + ": free and used memory and processes unknown");
  }
  CudaApi api;
  api.init = lib.function<decltype(api.init)>("cuInit");
  api.driver_get_version = lib.function<decltype(api.driver_get_version)>("cuDriverGetVersion");
  api.device_get_count = lib.function<decltype(api.device_get_count)>("cuDeviceGetCount");
  api.device_get = lib.function<decltype(api.device_get)>("cuDeviceGet");
  api.device_get_name = lib.function<decltype(api.device_get_name)>("cuDeviceGetName");
  api.device_get_attribute = lib.function<decltype(api.device_get_attribute)>("cuDeviceGetAttribute");
  api.device_total_mem = lib.function<decltype(api.device_total_mem)>("cuDeviceTotalMem_v2");
  api.device_get_uuid = lib.function<decltype(api.device_get_uuid)>("cuDeviceGetUuid_v2");
  if (!api.device_get_uuid) api.device_get_uuid = lib.function<decltype(api.device_get_uuid)>("cuDeviceGetUuid");
  api.get_error_name = lib.function<decltype(api.get_error_name)>("cuGetErrorName");
  api.get_error_string = lib.function<decltype(api.get_error_string)>("cuGetErrorString");
  const std::vector<std::pair<const char*, bool>> required = {{"cuInit", api.init != nullptr},
                                                              {"cuDriverGetVersion", api.driver_get_version != nullptr},
                                                              {"cuDeviceGetCount", api.device_get_count != nullptr},
                                                              {"cuDeviceGet", api.device_get != nullptr},
                                                              {"cuDeviceGetName", api.device_get_name != nullptr},
                                                              {"cuDeviceGetAttribute",
                                                               api.device_get_attribute != nullptr},
                                                              {"cuDeviceTotalMem_v2", api.device_total_mem != nullptr},
                                                              {"cuDeviceGetUuid", api.device_get_uuid != nullptr}};
  for (const auto& [symbol, present] : required) {
    if (!present) {
      return fail(ProbeStatus::driver_too_old,
                  cuda_file + " does not export " + symbol + ": the NVIDIA driver is too old; update it");
    }
  }

  int version = 0;
  if (api.driver_get_version(&version) == kCudaSuccess && version > 0) {
    result.cuda_version = cuda_version_string(version);
  }
  if (const CUresult rc = api.init(0); rc != kCudaSuccess) {
    if (rc == kCudaErrorNoDevice) {
      const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
      return fail(ProbeStatus::no_device,
                  "the NVIDIA driver" + (result.cuda_version.empty() ? "" : " (CUDA " + result.cuda_version + ")") +
                      " sees no GPU" +
                      (visible ? std::string(" (CUDA_VISIBLE_DEVICES='") + printable(visible) + "')" : "") +
                      "; plan with `gpu` NAME or for the CPU");
    }
    return fail(ProbeStatus::driver_error, "cuInit failed: " + cuda_error(api, rc) +
                                               "; the driver is installed but unusable (plan with `gpu` NAME)");
  }
  int count = 0;
  if (const CUresult rc = api.device_get_count(&count); rc != kCudaSuccess) {
    return fail(ProbeStatus::driver_error, "cuDeviceGetCount failed: " + cuda_error(api, rc));
  }
  if (count <= 0) {
    return fail(ProbeStatus::no_device,
                "the NVIDIA driver initialised but reports no GPU; plan with `gpu` NAME or for the CPU");
  }
  probe_devices(api, count, nvml, result);
  if (version > 0 && version < minimum_cuda_driver_version) {
    result.status = ProbeStatus::driver_too_old;
    result.reason = "the driver supports CUDA " + cuda_version_string(version) + "; memplan needs " +
                    cuda_version_string(minimum_cuda_driver_version) + " or newer: update the NVIDIA driver";
    return result;
  }
  result.status = ProbeStatus::ok;
  return result;
}

const ProbedDevice* first_device(const ProbeResult& result) {
  if (result.status != ProbeStatus::ok || result.devices.empty()) return nullptr;
  return &result.devices.front();
}

GpuSpec to_gpu_spec(const ProbedDevice& device) {
  GpuSpec g;
  g.name = "gpu" + std::to_string(device.index);
  g.display = device.name;
  g.memory = device.total_memory;
  g.compute_capability = device.compute_capability;
  g.bandwidth_gbs = device.bandwidth_gbs;
  g.source = "memplan probe";
  g.memory_source = device.free_memory ? "NVML (nvmlDeviceGetMemoryInfo)" : "cuDeviceTotalMem";
  return g;
}

AllocationCheck can_allocate(const ProbeResult& result, Bytes bytes, std::uint32_t device) {
  AllocationCheck check;
  check.requested = bytes;
  const std::string gpu = "GPU " + std::to_string(device);
  const ProbedDevice* found = nullptr;
  for (const ProbedDevice& d : result.devices) {
    if (d.index == device) found = &d;
  }
  if (result.status != ProbeStatus::ok) {
    check.reason = "no usable GPU: " + result.reason;
  } else if (!found) {
    check.reason = "no " + gpu + ": the probe found " + std::to_string(result.devices.size()) + " GPU(s)";
  } else if (!found->free_memory) {
    check.reason = "free memory of " + gpu + " unknown (NVML unavailable)";
  } else {
    check.free_memory = found->free_memory;
    check.fits = bytes <= *found->free_memory;
    check.reason = "needs " + group_digits(bytes.count()) + " bytes; " + group_digits(found->free_memory->count()) +
                   " free on " + gpu;
  }
  return check;
}

std::vector<MemoryWarning> check_memory_threshold(const ProbeResult& result, double fraction) {
  if (!(fraction > 0 && fraction <= 1)) {
    throw Error(ErrorKind::invalid_input,
                "memory warning threshold must be a fraction in (0, 1], e.g. 0.85; got " + std::to_string(fraction),
                "memory_warning_threshold");
  }
  std::vector<MemoryWarning> out;
  for (const ProbedDevice& d : result.devices) {
    if (!d.used_memory || d.total_memory.count() == 0) continue;
    const double usage = static_cast<double>(d.used_memory->count()) / static_cast<double>(d.total_memory.count());
    if (usage <= fraction) continue;
    std::array<char, 64> percent{};
    std::snprintf(percent.data(), percent.size(), "%.1f%% > %.1f%%", 100 * usage, 100 * fraction);
    out.push_back({d.index, d.name, *d.used_memory, d.total_memory, usage,
                   "GPU " + std::to_string(d.index) + " (" + d.name + ") at " + percent.data() + " of its memory"});
  }
  return out;
}

}  // namespace memplan
