// The CUDA entry points of a build with the CUDA kernels: device discovery through the
// static CUDA runtime (which loads libcuda itself, at run time), measurement of the .cu
// attention kernels, and calibration. Nothing here has been run on a GPU by its author
// unless docs/accuracy.md says so.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <string>

#include "cuda/attention_cuda.hpp"
#include "memplan/core/error.hpp"
#include "memplan/kernels/calibration.hpp"
#include "memplan/kernels/cuda.hpp"

namespace memplan {

namespace {

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw Error(ErrorKind::internal, std::string("CUDA: ") + what + ": " + cudaGetErrorString(status));
  }
}

detail::CudaAttentionKind kind_of(AttentionVariant variant) {
  switch (variant) {
    case AttentionVariant::eager: return detail::CudaAttentionKind::eager;
    case AttentionVariant::sdpa: return detail::CudaAttentionKind::sdpa;
    case AttentionVariant::chunked: return detail::CudaAttentionKind::chunked;
    case AttentionVariant::linear: return detail::CudaAttentionKind::linear;
    case AttentionVariant::causal_linear_naive: return detail::CudaAttentionKind::causal_linear_naive;
    case AttentionVariant::causal_linear_chunked: return detail::CudaAttentionKind::causal_linear_chunked;
    case AttentionVariant::recurrent: return detail::CudaAttentionKind::recurrent;
  }
  throw Error(ErrorKind::invalid_input, "no CUDA kernel for attention variant '" + to_string(variant) + "'", "variant");
}

detail::CudaAttentionDims dims_of(const AttentionDims& d, std::size_t given) {
  for (const auto& [value, key] : {std::pair{d.batch, "batch"},
                                   {d.heads, "heads"},
                                   {d.seq, "seq"},
                                   {d.head_dim, "head_dim"},
                                   {d.chunk, "chunk"}}) {
    if (value == 0) throw Error(ErrorKind::invalid_input, std::string(key) + " must be at least 1", key);
  }
  constexpr std::uint64_t limit = 1ULL << 31;
  if (d.seq >= limit || d.head_dim >= limit || d.batch * d.heads >= 65536) {
    throw Error(ErrorKind::invalid_input, "the CUDA kernels take B*H below 65,536 and N, D below 2^31");
  }
  detail::CudaAttentionDims out;
  out.batch_heads = static_cast<std::int64_t>(d.batch * d.heads);
  out.seq = static_cast<std::int64_t>(d.seq);
  out.head_dim = static_cast<std::int64_t>(d.head_dim);
  out.chunk = static_cast<std::int64_t>(d.chunk);
  const std::uint64_t elements = d.batch * d.heads * d.seq * d.head_dim;
  if (given != 0 && given != elements) {
    throw Error(ErrorKind::invalid_input, "q, k and v must have B*H*N*D = " + std::to_string(elements) + " elements");
  }
  return out;
}

bool half_of(Format dtype) {
  if (dtype == Format::fp32) return false;
  if (dtype == Format::fp16) return true;
  throw Error(ErrorKind::invalid_input, "the CUDA kernels run in fp32 or fp16, not " + to_string(dtype), "dtype");
}

void require_device() {
  const CudaDeviceInfo info = cuda_device_info();
  if (info.status != CudaStatus::ok) throw Error(ErrorKind::internal, info.reason);
}

// Free device memory now, in bytes.
std::uint64_t free_memory() {
  std::size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return free;
}

// cuBLAS, loaded at run time (never linked): create a handle and run one small SGEMM, and
// return the drop in free device memory, or a reason it could not be measured.
struct CublasProbe {
  bool ok = false;
  std::uint64_t bytes = 0;
  std::string note;
};

CublasProbe probe_cublas(int runtime_version) {
  using Create = int (*)(void**);
  using Destroy = int (*)(void*);
  using Sgemm = int (*)(void*, int, int, int, int, int, const float*, const float*, int, const float*, int,
                        const float*, float*, int);
  const std::string names[] = {"libcublas.so." + std::to_string(runtime_version / 1000), "libcublas.so"};
  void* lib = nullptr;
  std::string tried;
  for (const std::string& name : names) {
    lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) break;
    tried += (tried.empty() ? "" : ", ") + name;
  }
  if (!lib) return {false, 0, "cuBLAS could not be loaded (" + tried + ")"};
  const auto create = reinterpret_cast<Create>(dlsym(lib, "cublasCreate_v2"));
  const auto destroy = reinterpret_cast<Destroy>(dlsym(lib, "cublasDestroy_v2"));
  const auto sgemm = reinterpret_cast<Sgemm>(dlsym(lib, "cublasSgemm_v2"));
  if (!create || !destroy || !sgemm) {
    dlclose(lib);
    return {false, 0, "cuBLAS lacks cublasCreate_v2/cublasSgemm_v2"};
  }
  constexpr int n = 256;
  float* buffers = nullptr;
  check(cudaMalloc(reinterpret_cast<void**>(&buffers), 3 * n * n * sizeof(float)), "cudaMalloc");
  check(cudaMemset(buffers, 0, 3 * n * n * sizeof(float)), "cudaMemset");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const std::uint64_t before = free_memory();
  void* handle = nullptr;
  CublasProbe result;
  if (create(&handle) == 0) {
    const float one = 1.f, zero = 0.f;
    const int status = sgemm(handle, 0, 0, n, n, n, &one, buffers, n, buffers + n * n, n, &zero, buffers + 2 * n * n,
                             n);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after cublasSgemm");
    const std::uint64_t after = free_memory();
    result = {status == 0, before > after ? before - after : 0,
              status == 0 ? "" : "cublasSgemm_v2 failed with status " + std::to_string(status)};
    destroy(handle);
  } else {
    result = {false, 0, "cublasCreate_v2 failed"};
  }
  cudaFree(buffers);
  dlclose(lib);
  return result;
}

}  // namespace

CudaDeviceInfo cuda_device_info() {
  CudaDeviceInfo info;
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  info.runtime = version_text(runtime);
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status == cudaErrorInsufficientDriver || status == cudaErrorNoDevice || status == cudaErrorInitializationError ||
      status == cudaErrorCompatNotSupportedOnDevice || count == 0) {
    int driver = 0;
    cudaDriverGetVersion(&driver);
    const bool no_driver = status == cudaErrorInsufficientDriver && driver == 0;
    info.status = no_driver ? CudaStatus::no_driver : CudaStatus::no_device;
    info.reason = no_driver ? "no CUDA device: no NVIDIA driver could be loaded (libcuda.so.1)"
                  : status == cudaErrorInsufficientDriver
                      ? "no CUDA device: the NVIDIA driver supports CUDA " + version_text(driver) +
                            ", older than memplan's runtime " + info.runtime
                      : std::string("no CUDA device: ") +
                            (status == cudaSuccess ? "the driver reports none" : cudaGetErrorString(status));
    if (driver) info.driver = version_text(driver);
    return info;
  }
  if (status != cudaSuccess) {
    info.status = CudaStatus::error;
    info.reason = std::string("no CUDA device: ") + cudaGetErrorString(status);
    return info;
  }
  cudaDeviceProp prop{};
  if (const cudaError_t e = cudaGetDeviceProperties(&prop, 0); e != cudaSuccess) {
    info.status = CudaStatus::error;
    info.reason = std::string("no CUDA device: cudaGetDeviceProperties: ") + cudaGetErrorString(e);
    return info;
  }
  int driver = 0;
  cudaDriverGetVersion(&driver);
  info.status = CudaStatus::ok;
  info.name = prop.name;
  info.total_memory = prop.totalGlobalMem;
  info.cc_major = static_cast<std::uint32_t>(prop.major);
  info.cc_minor = static_cast<std::uint32_t>(prop.minor);
  info.driver = version_text(driver);
  return info;
}

CudaMeasurement measure_attention_cuda(AttentionVariant variant, const AttentionDims& dims, Format dtype,
                                       std::uint32_t repeats) {
  const auto kind = kind_of(variant);
  const auto d = dims_of(dims, 0);
  const bool half = half_of(dtype);
  require_device();
  const detail::CudaRunStats stats = detail::run_attention_cuda(kind, d, half, repeats, nullptr, nullptr, nullptr,
                                                                nullptr);
  CudaMeasurement m;
  m.peak_bytes = stats.peak_bytes;
  m.repeats = static_cast<std::uint32_t>(stats.milliseconds.size());
  std::vector<float> ms = stats.milliseconds;
  std::sort(ms.begin(), ms.end());
  m.seconds_best = ms.front() / 1000.0;
  m.seconds_median = (ms.size() % 2 ? ms[ms.size() / 2] : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2) / 1000.0;
  return m;
}

std::vector<float> attention_cuda(AttentionVariant variant, const AttentionDims& dims, std::span<const float> q,
                                  std::span<const float> k, std::span<const float> v, Format dtype) {
  const auto kind = kind_of(variant);
  const auto d = dims_of(dims, q.size());
  if (k.size() != q.size() || v.size() != q.size()) dims_of(dims, 1);  // throws the size message
  const bool half = half_of(dtype);
  require_device();
  std::vector<float> out(q.size());
  detail::run_attention_cuda(kind, d, half, 1, q.data(), k.data(), v.data(), out.data());
  return out;
}

CalibrationOutcome calibrate_cuda() {
  CalibrationOutcome outcome;
  outcome.device = cuda_device_info();
  if (outcome.device.status != CudaStatus::ok) return outcome;
  Calibration c = default_calibration();
  c.gpu = outcome.device.name;
  c.driver = outcome.device.driver;
  auto figure = [&c](const std::string& name) -> CalibrationFigure& {
    return *std::find_if(c.figures.begin(), c.figures.end(), [&](const auto& f) { return f.name == name; });
  };

  // The context: what is in use right after memplan's context exists.
  check(cudaSetDevice(0), "cudaSetDevice");
  check(cudaFree(nullptr), "creating the CUDA context");
  std::size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  figure("cuda_context") = {"cuda_context", total - free, true,
                            "total - free right after the context was created (includes any other process's "
                            "memory: calibrate on an idle GPU)"};

  // cudaMalloc's step: the drop in free memory for a 1-byte allocation.
  const std::uint64_t before = free_memory();
  void* p = nullptr;
  check(cudaMalloc(&p, 1), "cudaMalloc");
  const std::uint64_t after = free_memory();
  cudaFree(p);
  if (before > after) {
    figure("allocator_granularity") = {"allocator_granularity", before - after, true,
                                       "drop in free memory for one 1-byte cudaMalloc"};
  }

  // The stream-ordered pool's step: what a fresh pool reserves for a 1-byte allocation.
  cudaMemPool_t pool = nullptr;
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  check(cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate");
  check(cudaMallocFromPoolAsync(&p, 1, pool, nullptr), "cudaMallocFromPoolAsync");
  check(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");
  unsigned long long reserved = 0;
  check(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved), "cudaMemPoolGetAttribute");
  check(cudaFreeAsync(p, nullptr), "cudaFreeAsync");
  check(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");
  cudaMemPoolDestroy(pool);
  if (reserved) {
    figure("pool_granularity") = {"pool_granularity", reserved, true,
                                  "cudaMemPoolAttrReservedMemCurrent of a fresh pool after a 1-byte allocation"};
  }

  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  const CublasProbe cublas = probe_cublas(runtime);
  if (cublas.ok) {
    figure("cublas_workspace") = {"cublas_workspace", cublas.bytes, true,
                                  "drop in free memory across cublasCreate and one 256 x 256 SGEMM (cuBLAS loaded at "
                                  "run time)"};
  } else {
    figure("cublas_workspace").source = "not measured: " + cublas.note + "; " + figure("cublas_workspace").source;
  }
  outcome.calibration = c;
  return outcome;
}

}  // namespace memplan
