// A fake NVIDIA driver: the CUDA driver API and NVML entry points memplan's probe uses, with
// scripted answers, so the probe is tested through the same dlopen path as the real
// libcuda.so.1 / libnvidia-ml.so.1 (point MEMPLAN_CUDA_LIBRARY and MEMPLAN_NVML_LIBRARY here).
//
// MEMPLAN_FAKE_DRIVER_SCENARIO picks the answers (read on every call):
//   two_gpus (default)  CUDA 0: NVIDIA A100-SXM4-80GB, cc 8.0, pid 4242 holds 20 GiB
//                       CUDA 1: NVIDIA GeForce RTX 2080, cc 7.5 (too old for bf16)
//                       NVML lists them in the other order (PCI order), so matching is by UUID
//   init_fails          cuInit returns CUDA_ERROR_UNKNOWN, nvmlInit NVML_ERROR_DRIVER_NOT_LOADED
//   no_device           cuInit returns CUDA_ERROR_NO_DEVICE, NVML sees no GPU
//   old_driver          as two_gpus, but cuDriverGetVersion says CUDA 10.2
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct FakeGpu {
  const char* name;
  const char* uuid;              // NVML spelling
  unsigned char uuid_bytes[16];  // what cuDeviceGetUuid returns
  int cc_major;
  int cc_minor;
  int multiprocessors;
  int bus_width_bits;
  int memory_clock_khz;
  unsigned long long total;
  unsigned long long used;
  unsigned int process_pid;  // 0 = none
  unsigned long long process_bytes;
};

constexpr unsigned long long kMiB = 1024ULL * 1024ULL;
constexpr unsigned long long kGiB = 1024ULL * kMiB;

const FakeGpu kA100 = {"NVIDIA A100-SXM4-80GB",
                       "GPU-a1000000-0000-0000-0000-000000000001",
                       {0xa1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01},
                       8,
                       0,
                       108,
                       5120,
                       1593000,
                       81920 * kMiB,
                       20 * kGiB + 512 * kMiB,
                       4242,
                       20 * kGiB};
const FakeGpu kRtx2080 = {"NVIDIA GeForce RTX 2080",
                          "GPU-20800000-0000-0000-0000-000000000002",
                          {0x20, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02},
                          7,
                          5,
                          46,
                          256,
                          7000000,
                          8192 * kMiB,
                          256 * kMiB,
                          0,
                          0};

const FakeGpu* const kCudaOrder[] = {&kA100, &kRtx2080};  // fastest first, as CUDA orders them
const FakeGpu* const kNvmlOrder[] = {&kRtx2080, &kA100};  // PCI bus order, as NVML does

std::string scenario() {
  const char* s = std::getenv("MEMPLAN_FAKE_DRIVER_SCENARIO");
  return s && *s ? s : "two_gpus";
}

bool has_gpus() {
  const std::string s = scenario();
  return s == "two_gpus" || s == "old_driver";
}

void copy_string(char* out, std::size_t size, const char* text) {
  if (size == 0) return;
  std::strncpy(out, text, size - 1);
  out[size - 1] = '\0';
}

// CUresult values from cuda.h; nvmlReturn_t values from nvml.h.
constexpr int kCudaSuccess = 0;
constexpr int kCudaInvalidValue = 1;
constexpr int kCudaNotInitialized = 3;
constexpr int kCudaNoDevice = 100;
constexpr int kCudaInvalidDevice = 101;
constexpr int kCudaUnknown = 999;
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlUninitialized = 1;
constexpr int kNvmlInvalidArgument = 2;
constexpr int kNvmlInsufficientSize = 7;
constexpr int kNvmlDriverNotLoaded = 9;

bool cuda_initialised = false;

const FakeGpu* cuda_device(int ordinal) {
  if (!cuda_initialised || !has_gpus() || ordinal < 0 || ordinal > 1) return nullptr;
  return kCudaOrder[ordinal];
}

struct NvmlProcessInfo {  // nvmlProcessInfo_t (v2 layout)
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
struct NvmlMemory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

}  // namespace

// ------------------------------------------------------------------ CUDA driver API
FAKE_EXPORT int cuInit(unsigned int flags) {
  if (flags != 0) return kCudaInvalidValue;
  const std::string s = scenario();
  if (s == "init_fails") return kCudaUnknown;
  if (s == "no_device") return kCudaNoDevice;
  cuda_initialised = true;
  return kCudaSuccess;
}

FAKE_EXPORT int cuDriverGetVersion(int* version) {
  if (!version) return kCudaInvalidValue;
  *version = scenario() == "old_driver" ? 10020 : 12040;
  return kCudaSuccess;
}

FAKE_EXPORT int cuDeviceGetCount(int* count) {
  if (!cuda_initialised) return kCudaNotInitialized;
  *count = has_gpus() ? 2 : 0;
  return kCudaSuccess;
}

FAKE_EXPORT int cuDeviceGet(int* device, int ordinal) {
  if (!cuda_device(ordinal)) return kCudaInvalidDevice;
  *device = ordinal;
  return kCudaSuccess;
}

FAKE_EXPORT int cuDeviceGetName(char* name, int length, int device) {
  const FakeGpu* g = cuda_device(device);
  if (!g || length <= 0) return kCudaInvalidDevice;
  copy_string(name, static_cast<std::size_t>(length), g->name);
  return kCudaSuccess;
}

FAKE_EXPORT int cuDeviceGetAttribute(int* value, int attribute, int device) {
  const FakeGpu* g = cuda_device(device);
  if (!g) return kCudaInvalidDevice;
  switch (attribute) {
    case 16: *value = g->multiprocessors; return kCudaSuccess;
    case 36: *value = g->memory_clock_khz; return kCudaSuccess;
    case 37: *value = g->bus_width_bits; return kCudaSuccess;
    case 75: *value = g->cc_major; return kCudaSuccess;
    case 76: *value = g->cc_minor; return kCudaSuccess;
    default: return kCudaInvalidValue;
  }
}

FAKE_EXPORT int cuDeviceTotalMem_v2(std::size_t* bytes, int device) {
  const FakeGpu* g = cuda_device(device);
  if (!g) return kCudaInvalidDevice;
  *bytes = static_cast<std::size_t>(g->total);
  return kCudaSuccess;
}

FAKE_EXPORT int cuDeviceGetUuid(unsigned char* uuid, int device) {
  const FakeGpu* g = cuda_device(device);
  if (!g) return kCudaInvalidDevice;
  std::memcpy(uuid, g->uuid_bytes, 16);
  return kCudaSuccess;
}

FAKE_EXPORT int cuGetErrorName(int error, const char** name) {
  switch (error) {
    case kCudaUnknown: *name = "CUDA_ERROR_UNKNOWN"; return kCudaSuccess;
    case kCudaNoDevice: *name = "CUDA_ERROR_NO_DEVICE"; return kCudaSuccess;
    default: *name = nullptr; return kCudaInvalidValue;
  }
}

FAKE_EXPORT int cuGetErrorString(int error, const char** text) {
  switch (error) {
    case kCudaUnknown: *text = "unknown error"; return kCudaSuccess;
    case kCudaNoDevice: *text = "no CUDA-capable device is detected"; return kCudaSuccess;
    default: *text = nullptr; return kCudaInvalidValue;
  }
}

// ------------------------------------------------------------------ NVML
namespace {
bool nvml_initialised = false;

const FakeGpu* nvml_device(const void* handle) {
  if (!nvml_initialised || !has_gpus()) return nullptr;
  for (const FakeGpu* g : kNvmlOrder) {
    if (handle == g) return g;
  }
  return nullptr;
}

int processes(const void* handle, unsigned int* count, NvmlProcessInfo* infos, bool compute) {
  const FakeGpu* g = nvml_device(handle);
  if (!g || !count) return nvml_initialised ? kNvmlInvalidArgument : kNvmlUninitialized;
  const unsigned int n = (compute && g->process_pid != 0) ? 1 : 0;
  if (n == 0) {
    *count = 0;
    return kNvmlSuccess;
  }
  if (!infos || *count < n) {
    *count = n;
    return kNvmlInsufficientSize;
  }
  infos[0] = {g->process_pid, g->process_bytes, 0xFFFFFFFFu, 0xFFFFFFFFu};
  *count = n;
  return kNvmlSuccess;
}
}  // namespace

FAKE_EXPORT int nvmlInit_v2() {
  if (scenario() == "init_fails") return kNvmlDriverNotLoaded;
  nvml_initialised = true;
  return kNvmlSuccess;
}

FAKE_EXPORT int nvmlShutdown() {
  nvml_initialised = false;
  return kNvmlSuccess;
}

FAKE_EXPORT const char* nvmlErrorString(int result) {
  switch (result) {
    case kNvmlSuccess: return "Success";
    case kNvmlDriverNotLoaded: return "Driver Not Loaded";
    case kNvmlInsufficientSize: return "Insufficient Size";
    default: return "Unknown Error";
  }
}

FAKE_EXPORT int nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  if (!nvml_initialised) return kNvmlUninitialized;
  copy_string(version, length, "550.54.15");
  return kNvmlSuccess;
}

FAKE_EXPORT int nvmlSystemGetCudaDriverVersion(int* version) {
  if (!nvml_initialised) return kNvmlUninitialized;
  *version = scenario() == "old_driver" ? 10020 : 12040;
  return kNvmlSuccess;
}

FAKE_EXPORT int nvmlDeviceGetCount_v2(unsigned int* count) {
  if (!nvml_initialised) return kNvmlUninitialized;
  *count = has_gpus() ? 2 : 0;
  return kNvmlSuccess;
}

FAKE_EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned int index, const void** device) {
  if (!nvml_initialised) return kNvmlUninitialized;
  if (!has_gpus() || index > 1) return kNvmlInvalidArgument;
  *device = kNvmlOrder[index];
  return kNvmlSuccess;
}

FAKE_EXPORT int nvmlDeviceGetName(const void* device, char* name, unsigned int length) {
  const FakeGpu* g = nvml_device(device);
  if (!g) return kNvmlInvalidArgument;
  copy_string(name, length, g->name);
  return kNvmlSuccess;
}

FAKE_EXPORT int nvmlDeviceGetUUID(const void* device, char* uuid, unsigned int length) {
  const FakeGpu* g = nvml_device(device);
  if (!g) return kNvmlInvalidArgument;
  copy_string(uuid, length, g->uuid);
  return kNvmlSuccess;
}

FAKE_EXPORT int nvmlDeviceGetMemoryInfo(const void* device, NvmlMemory* memory) {
  const FakeGpu* g = nvml_device(device);
  if (!g) return kNvmlInvalidArgument;
  *memory = {g->total, g->total - g->used, g->used};
  return kNvmlSuccess;
}

FAKE_EXPORT int nvmlDeviceGetCudaComputeCapability(const void* device, int* major, int* minor) {
  const FakeGpu* g = nvml_device(device);
  if (!g) return kNvmlInvalidArgument;
  *major = g->cc_major;
  *minor = g->cc_minor;
  return kNvmlSuccess;
}

FAKE_EXPORT int nvmlDeviceGetComputeRunningProcesses_v3(const void* device, unsigned int* count,
                                                        NvmlProcessInfo* infos) {
  return processes(device, count, infos, true);
}

FAKE_EXPORT int nvmlDeviceGetGraphicsRunningProcesses_v3(const void* device, unsigned int* count,
                                                         NvmlProcessInfo* infos) {
  return processes(device, count, infos, false);
}
