// CUDA attention kernels, written for clarity of their memory, not for speed: each
// variant materialises in global memory exactly what estimate_attention lists, every
// such tensor comes from a private stream-ordered pool, and the pool's used-memory high
// watermark is the measurement. Storage is fp32 or fp16; arithmetic is fp32. What is not
// listed stays on chip: sdpa's scores (registers).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "cuda/attention_cuda.hpp"
#include "memplan/core/error.hpp"

namespace memplan::detail {

namespace {

constexpr int kTile = 16;         // GEMM tile
constexpr int kThreads = 256;     // 1-D kernels
constexpr int kMaxHeadDim = 256;  // sdpa keeps a row of D accumulators per thread
constexpr float kEps = 1e-6f;

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw Error(ErrorKind::internal, std::string("CUDA: ") + what + ": " + cudaGetErrorString(status));
  }
}

__device__ __forceinline__ float load(float x) { return x; }
__device__ __forceinline__ float load(__half x) { return __half2float(x); }
template <typename T>
__device__ __forceinline__ T store(float x);
template <>
__device__ __forceinline__ float store<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __half store<__half>(float x) {
  return __float2half(x);
}

__device__ __forceinline__ float phi(float x) { return x > 0.f ? x + 1.f : __expf(x); }

// C[z] = alpha * op(A[z]) * op(B[z]) for z < gridDim.z; all row-major.
// op(A) is M x K (A stored K x M when TransA); op(B) is K x N (B stored N x K when TransB).
template <typename T, bool TransA, bool TransB>
__global__ void gemm(const T* a, const T* b, T* c, int m, int n, int k, long long stride_a, long long stride_b,
                     long long stride_c, int lda, int ldb, int ldc, float alpha) {
  __shared__ float as[kTile][kTile];
  __shared__ float bs[kTile][kTile];
  const long long z = blockIdx.z;
  a += z * stride_a;
  b += z * stride_b;
  c += z * stride_c;
  const int ty = threadIdx.y, tx = threadIdx.x;
  const int row = blockIdx.y * kTile + ty;
  const int col = blockIdx.x * kTile + tx;
  float acc = 0.f;
  for (int t = 0; t < k; t += kTile) {
    const int ak = t + tx, bk = t + ty;
    as[ty][tx] = (row < m && ak < k) ? load(TransA ? a[(long long)ak * lda + row] : a[(long long)row * lda + ak]) : 0.f;
    bs[ty][tx] = (col < n && bk < k) ? load(TransB ? b[(long long)col * ldb + bk] : b[(long long)bk * ldb + col]) : 0.f;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kTile; ++i) acc += as[ty][i] * bs[i][tx];
    __syncthreads();
  }
  if (row < m && col < n) c[(long long)row * ldc + col] = store<T>(alpha * acc);
}

template <bool TransA, bool TransB, typename T>
void launch_gemm(cudaStream_t s, int batches, const T* a, const T* b, T* c, int m, int n, int k, long long sa,
                 long long sb, long long sc, int lda, int ldb, int ldc, float alpha) {
  const dim3 block(kTile, kTile);
  const dim3 grid((n + kTile - 1) / kTile, (m + kTile - 1) / kTile, batches);
  gemm<T, TransA, TransB><<<grid, block, 0, s>>>(a, b, c, m, n, k, sa, sb, sc, lda, ldb, ldc, alpha);
}

__device__ float block_reduce(float x, bool take_max) {
  __shared__ float partial[32];
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_down_sync(0xffffffffu, x, offset);
    x = take_max ? fmaxf(x, other) : x + other;
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0) partial[warp] = x;
  __syncthreads();
  if (warp == 0) {
    x = lane < (int)(blockDim.x / 32) ? partial[lane] : (take_max ? -INFINITY : 0.f);
    for (int offset = 16; offset > 0; offset /= 2) {
      const float other = __shfl_down_sync(0xffffffffu, x, offset);
      x = take_max ? fmaxf(x, other) : x + other;
    }
    if (lane == 0) partial[0] = x;
  }
  __syncthreads();
  return partial[0];
}

// One block per row: row r of batch y starts at (y * batch_stride + r * cols).
template <typename T>
__global__ void softmax_rows(const T* in, T* out, int cols, long long batch_stride) {
  const long long base = blockIdx.y * batch_stride + (long long)blockIdx.x * cols;
  const T* x = in + base;
  T* y = out + base;
  float top = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) top = fmaxf(top, load(x[c]));
  top = block_reduce(top, true);
  float sum = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += __expf(load(x[c]) - top);
  sum = block_reduce(sum, false);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) y[c] = store<T>(__expf(load(x[c]) - top) / sum);
}

// Online softmax, one thread per query row; scores never leave registers.
template <typename T>
__global__ void sdpa_rows(const T* q, const T* k, const T* v, T* out, float* lse, long long rows, int n, int d,
                          float scale) {
  const long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const long long bh = r / n;
  const T* qr = q + r * d;
  const T* kh = k + bh * n * d;
  const T* vh = v + bh * n * d;
  float acc[kMaxHeadDim];
  for (int i = 0; i < d; ++i) acc[i] = 0.f;
  float top = -INFINITY, sum = 0.f;
  for (int j = 0; j < n; ++j) {
    float s = 0.f;
    for (int i = 0; i < d; ++i) s += load(qr[i]) * load(kh[(long long)j * d + i]);
    s *= scale;
    const float next = fmaxf(top, s);
    const float rescale = __expf(top - next);
    const float p = __expf(s - next);
    sum = sum * rescale + p;
    for (int i = 0; i < d; ++i) acc[i] = acc[i] * rescale + p * load(vh[(long long)j * d + i]);
    top = next;
  }
  for (int i = 0; i < d; ++i) out[r * d + i] = store<T>(acc[i] / sum);
  lse[r] = top + logf(sum);
}

template <typename T>
__global__ void feature_map(const T* x, T* y, long long count) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x) {
    y[i] = store<T>(phi(load(x[i])));
  }
}

// sum over n of phi_k[bh][n][i]: one thread per (bh, i).
template <typename T>
__global__ void column_sums(const T* x, T* sums, long long bh_count, int n, int d) {
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= bh_count * d) return;
  const long long bh = t / d;
  const int i = (int)(t % d);
  float s = 0.f;
  for (int j = 0; j < n; ++j) s += load(x[(bh * n + j) * d + i]);
  sums[t] = store<T>(s);
}

// normaliser[bh][n] = phi_q[bh][n] . k_sum[bh] (or k_cumsum[bh][n] when per_row), then
// out[bh][n][:] /= normaliser + eps. One thread per (bh, n).
template <typename T>
__global__ void normalise(const T* phi_q, const T* k_sum, T* out, T* normaliser, long long rows, int n, int d,
                          bool per_row) {
  const long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const T* ks = per_row ? k_sum + r * d : k_sum + (r / n) * d;
  float z = 0.f;
  for (int i = 0; i < d; ++i) z += load(phi_q[r * d + i]) * load(ks[i]);
  normaliser[r] = store<T>(z);
  for (int i = 0; i < d; ++i) out[r * d + i] = store<T>(load(out[r * d + i]) / (z + kEps));
}

// kv_outer[bh][n][i][j] = phi_k[bh][n][i] * v[bh][n][j].
template <typename T>
__global__ void outer_products(const T* phi_k, const T* v, T* outer, long long count, int d) {
  const long long dd = (long long)d * d;
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < count;
       e += (long long)gridDim.x * blockDim.x) {
    const long long row = e / dd;  // (bh, n)
    const int i = (int)((e % dd) / d), j = (int)(e % d);
    outer[e] = store<T>(load(phi_k[row * d + i]) * load(v[row * d + j]));
  }
}

// Inclusive cumulative sum over n of width-wide rows: one thread per (bh, column).
template <typename T>
__global__ void cumsum_over_n(const T* in, T* out, long long bh_count, int n, long long width) {
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= bh_count * width) return;
  const long long bh = t / width, col = t % width;
  float s = 0.f;
  for (int j = 0; j < n; ++j) {
    const long long at = (bh * n + j) * width + col;
    s += load(in[at]);
    out[at] = store<T>(s);
  }
}

// out[bh][n][j] = sum_i phi_q[bh][n][i] * kv_cumsum[bh][n][i][j]: one thread per (bh, n, j).
template <typename T>
__global__ void read_states(const T* phi_q, const T* states, T* out, long long count, int d) {
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= count) return;
  const long long row = t / d;
  const int j = (int)(t % d);
  float s = 0.f;
  for (int i = 0; i < d; ++i) s += load(phi_q[row * d + i]) * load(states[(row * d + i) * d + j]);
  out[t] = store<T>(s);
}

// Chunked causal linear attention, one block per (b, h) walking its chunks of c tokens in
// order; [bh] offsets pick the head in every tensor. Per chunk of cn <= c rows:
//   1. scores[i][j] = phi(q_i).phi(k_j) for j <= i, else 0            (the C x C buffer)
//   2. out_i = (phi(q_i) carried + sum_j scores[i][j] v_j) / (phi(q_i).k_sum + sum_j scores[i][j] + eps)
//   3. chunk_state = sum over the chunk of phi(k_j) v_j^T                (D x D)
//   4. carried_state += chunk_state, k_sum += sum over the chunk of phi(k_j)
// so row i sees exactly the tokens up to i, as the CPU kernel. Every phase ends at a
// __syncthreads(): the next one reads what other threads of the block wrote. The running
// phi(k) sum k_sum (D per head, the normaliser's) is in the pool, as the estimate lists it.
template <typename T>
__global__ void causal_linear_chunks(const T* phi_q, const T* phi_k, const T* v, T* carried_state, T* chunk_state,
                                     T* scores, T* k_sums, T* out, int n, int d, int c) {
  const long long bh = blockIdx.x;
  const long long nd = (long long)n * d, dd = (long long)d * d;
  T* carried = carried_state + bh * dd;
  T* state = chunk_state + bh * dd;
  T* s = scores + bh * c * (long long)c;
  T* k_sum = k_sums + bh * d;
  const int t = threadIdx.x, stride = blockDim.x;
  for (int a = t; a < d; a += stride) k_sum[a] = store<T>(0.f);
  for (long long e = t; e < dd; e += stride) carried[e] = store<T>(0.f);
  __syncthreads();
  for (int c0 = 0; c0 < n; c0 += c) {
    const int cn = min(c, n - c0);
    const long long first = bh * nd + (long long)c0 * d;  // row c0 of this head
    const T* cq = phi_q + first;
    const T* ck = phi_k + first;
    const T* cv = v + first;
    T* co = out + first;
    for (long long e = t; e < (long long)cn * cn; e += stride) {  // 1. causal scores
      const int i = (int)(e / cn), j = (int)(e % cn);
      float x = 0.f;
      if (j <= i) {
        for (int a = 0; a < d; ++a) x += load(cq[(long long)i * d + a]) * load(ck[(long long)j * d + a]);
      }
      s[(long long)i * c + j] = store<T>(x);
    }
    __syncthreads();
    for (long long e = t; e < (long long)cn * d; e += stride) {  // 2. output rows
      const int i = (int)(e / d), b = (int)(e % d);
      float numerator = 0.f, normaliser = 0.f;
      for (int a = 0; a < d; ++a) {
        const float p = load(cq[(long long)i * d + a]);
        numerator += p * load(carried[(long long)a * d + b]);
        normaliser += p * load(k_sum[a]);
      }
      for (int j = 0; j <= i; ++j) {
        const float w = load(s[(long long)i * c + j]);
        numerator += w * load(cv[(long long)j * d + b]);
        normaliser += w;
      }
      co[e] = store<T>(numerator / (normaliser + kEps));
    }
    __syncthreads();
    for (long long e = t; e < dd; e += stride) {  // 3. this chunk's state
      const int a = (int)(e / d), b = (int)(e % d);
      float x = 0.f;
      for (int j = 0; j < cn; ++j) x += load(ck[(long long)j * d + a]) * load(cv[(long long)j * d + b]);
      state[e] = store<T>(x);
    }
    __syncthreads();
    for (long long e = t; e < dd; e += stride) carried[e] = store<T>(load(carried[e]) + load(state[e]));  // 4. carry
    for (int a = t; a < d; a += stride) {
      float x = 0.f;
      for (int j = 0; j < cn; ++j) x += load(ck[(long long)j * d + a]);
      k_sum[a] = store<T>(load(k_sum[a]) + x);
    }
    __syncthreads();
  }
}

// Recurrent linear attention, one block per (b, h) walking its tokens in order: for each
// n, state += phi(k_n) v_n^T and k_sum += phi(k_n) (both in the pool, as the estimate
// lists them), then out_n = phi(q_n) state / (phi(q_n).k_sum + eps). The feature map is
// applied on the fly; no phi(q) or phi(k) tensor exists.
template <typename T>
__global__ void recurrent_tokens(const T* q, const T* k, const T* v, T* states, T* k_sums, T* out, int n, int d) {
  const long long bh = blockIdx.x;
  const long long dd = (long long)d * d;
  T* state = states + bh * dd;
  T* k_sum = k_sums + bh * d;
  const int t = threadIdx.x, stride = blockDim.x;
  for (long long e = t; e < dd; e += stride) state[e] = store<T>(0.f);
  for (int a = t; a < d; a += stride) k_sum[a] = store<T>(0.f);
  __syncthreads();
  for (int token = 0; token < n; ++token) {
    const long long row = (bh * n + token) * d;
    const T* qn = q + row;
    const T* kn = k + row;
    const T* vn = v + row;
    for (long long e = t; e < dd; e += stride) {  // the update
      const int a = (int)(e / d), b = (int)(e % d);
      state[e] = store<T>(load(state[e]) + phi(load(kn[a])) * load(vn[b]));
    }
    for (int a = t; a < d; a += stride) k_sum[a] = store<T>(load(k_sum[a]) + phi(load(kn[a])));
    __syncthreads();
    for (int b = t; b < d; b += stride) {  // the read-out, one output column per thread
      float numerator = 0.f, normaliser = 0.f;
      for (int a = 0; a < d; ++a) {
        const float p = phi(load(qn[a]));
        numerator += p * load(state[(long long)a * d + b]);
        normaliser += p * load(k_sum[a]);
      }
      out[row + b] = store<T>(numerator / (normaliser + kEps));
    }
    __syncthreads();
  }
}

__global__ void fill_uniform(float* x, long long count, unsigned seed) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 16;
    h *= 2246822519u;
    h ^= h >> 13;
    h *= 3266489917u;
    h ^= h >> 16;
    x[i] = (float)h / 2147483648.f - 1.f;
  }
}

template <typename T>
__global__ void convert(const float* in, T* out, long long count) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x) {
    out[i] = store<T>(in[i]);
  }
}

template <typename T>
__global__ void widen(const T* in, float* out, long long count) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x) {
    out[i] = load(in[i]);
  }
}

unsigned blocks_for(long long count) {
  return (unsigned)std::min<long long>((count + kThreads - 1) / kThreads, 65535LL * 32);
}

// Device memory owned by the caller's scope: cudaMalloc'd inputs (outside the pool).
struct DeviceBuffer {
  void* ptr = nullptr;
  explicit DeviceBuffer(std::size_t bytes) { check(cudaMalloc(&ptr, bytes), "cudaMalloc of an input"); }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// The stream, the private pool and the timing events of one measurement.
struct Session {
  cudaStream_t stream = nullptr;
  cudaMemPool_t pool = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  Session() {
    check(cudaSetDevice(0), "cudaSetDevice");
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    check(cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate (stream-ordered allocator)");
    unsigned long long keep = ~0ULL;  // keep freed memory in the pool between runs
    check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), "cudaMemPoolSetAttribute");
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
  }
  ~Session() {
    if (stream) cudaStreamSynchronize(stream);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    if (pool) cudaMemPoolDestroy(pool);
    if (stream) cudaStreamDestroy(stream);
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  template <typename T>
  T* take(long long count) {
    void* p = nullptr;
    check(cudaMallocFromPoolAsync(&p, (std::size_t)count * sizeof(T), pool, stream), "cudaMallocFromPoolAsync");
    return static_cast<T*>(p);
  }
  void give(void* p) { check(cudaFreeAsync(p, stream), "cudaFreeAsync"); }
  void reset_high_watermark() {
    unsigned long long zero = 0;
    check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero), "resetting cudaMemPoolAttrUsedMemHigh");
  }
  unsigned long long high_watermark() {
    unsigned long long value = 0;
    check(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &value), "reading cudaMemPoolAttrUsedMemHigh");
    return value;
  }
};

// One run of `kind`; returns the output (from the pool; the caller frees it). Every
// intermediate is taken from and given back to the pool inside the run.
template <typename T>
T* run_once(Session& s, CudaAttentionKind kind, const CudaAttentionDims& d, const T* q, const T* k, const T* v) {
  const long long bh = d.batch_heads, n = d.seq, hd = d.head_dim;
  const long long bhnd = bh * n * hd, rows = bh * n;
  const int N = (int)n, D = (int)hd;
  const float scale = 1.f / std::sqrt((float)hd);
  T* out = s.take<T>(bhnd);
  switch (kind) {
    case CudaAttentionKind::eager: {
      T* scores = s.take<T>(rows * n);
      T* probabilities = s.take<T>(rows * n);
      launch_gemm<false, true>(s.stream, (int)bh, q, k, scores, N, N, D, n * hd, n * hd, n * n, D, D, N, scale);
      softmax_rows<T><<<dim3((unsigned)n, (unsigned)bh), kThreads, 0, s.stream>>>(scores, probabilities, N, n * n);
      launch_gemm<false, false>(s.stream, (int)bh, probabilities, v, out, N, D, N, n * n, n * hd, n * hd, N, D, D, 1.f);
      s.give(scores);
      s.give(probabilities);
      break;
    }
    case CudaAttentionKind::sdpa: {
      float* lse = s.take<float>(rows);
      sdpa_rows<T><<<blocks_for(rows), kThreads, 0, s.stream>>>(q, k, v, out, lse, rows, N, D, scale);
      s.give(lse);
      break;
    }
    case CudaAttentionKind::chunked: {
      const long long c = std::min<long long>(d.chunk, n);
      T* scores = s.take<T>(bh * c * n);
      T* probabilities = s.take<T>(bh * c * n);
      for (long long c0 = 0; c0 < n; c0 += c) {
        const int cn = (int)std::min(c, n - c0);
        launch_gemm<false, true>(s.stream, (int)bh, q + c0 * hd, k, scores, cn, N, D, n * hd, n * hd, c * n, D, D, N,
                                 scale);
        softmax_rows<T><<<dim3((unsigned)cn, (unsigned)bh), kThreads, 0, s.stream>>>(scores, probabilities, N, c * n);
        launch_gemm<false, false>(s.stream, (int)bh, probabilities, v, out + c0 * hd, cn, D, N, c * n, n * hd, n * hd,
                                  N, D, D, 1.f);
      }
      s.give(scores);
      s.give(probabilities);
      break;
    }
    case CudaAttentionKind::linear: {
      T* phi_q = s.take<T>(bhnd);
      T* phi_k = s.take<T>(bhnd);
      T* kv_state = s.take<T>(bh * hd * hd);
      T* k_sum = s.take<T>(bh * hd);
      T* normaliser = s.take<T>(rows);
      feature_map<T><<<blocks_for(bhnd), kThreads, 0, s.stream>>>(q, phi_q, bhnd);
      feature_map<T><<<blocks_for(bhnd), kThreads, 0, s.stream>>>(k, phi_k, bhnd);
      launch_gemm<true, false>(s.stream, (int)bh, phi_k, v, kv_state, D, D, N, n * hd, n * hd, hd * hd, D, D, D, 1.f);
      column_sums<T><<<blocks_for(bh * hd), kThreads, 0, s.stream>>>(phi_k, k_sum, bh, N, D);
      launch_gemm<false, false>(s.stream, (int)bh, phi_q, kv_state, out, N, D, D, n * hd, hd * hd, n * hd, D, D, D,
                                1.f);
      normalise<T><<<blocks_for(rows), kThreads, 0, s.stream>>>(phi_q, k_sum, out, normaliser, rows, N, D, false);
      for (void* p : {(void*)phi_q, (void*)phi_k, (void*)kv_state, (void*)k_sum, (void*)normaliser}) s.give(p);
      break;
    }
    case CudaAttentionKind::causal_linear_naive: {
      const long long states = bhnd * hd;
      T* phi_q = s.take<T>(bhnd);
      T* phi_k = s.take<T>(bhnd);
      T* kv_outer = s.take<T>(states);
      T* kv_cumsum = s.take<T>(states);
      T* k_cumsum = s.take<T>(bhnd);
      T* normaliser = s.take<T>(rows);
      feature_map<T><<<blocks_for(bhnd), kThreads, 0, s.stream>>>(q, phi_q, bhnd);
      feature_map<T><<<blocks_for(bhnd), kThreads, 0, s.stream>>>(k, phi_k, bhnd);
      outer_products<T><<<blocks_for(states), kThreads, 0, s.stream>>>(phi_k, v, kv_outer, states, D);
      cumsum_over_n<T><<<blocks_for(bh * hd * hd), kThreads, 0, s.stream>>>(kv_outer, kv_cumsum, bh, N, hd * hd);
      cumsum_over_n<T><<<blocks_for(bh * hd), kThreads, 0, s.stream>>>(phi_k, k_cumsum, bh, N, hd);
      read_states<T><<<blocks_for(bhnd), kThreads, 0, s.stream>>>(phi_q, kv_cumsum, out, bhnd, D);
      normalise<T><<<blocks_for(rows), kThreads, 0, s.stream>>>(phi_q, k_cumsum, out, normaliser, rows, N, D, true);
      for (void* p :
           {(void*)phi_q, (void*)phi_k, (void*)kv_outer, (void*)kv_cumsum, (void*)k_cumsum, (void*)normaliser}) {
        s.give(p);
      }
      break;
    }
    case CudaAttentionKind::causal_linear_chunked: {
      const long long c = std::min<long long>(d.chunk, n);
      T* phi_q = s.take<T>(bhnd);
      T* phi_k = s.take<T>(bhnd);
      T* carried_state = s.take<T>(bh * hd * hd);
      T* chunk_state = s.take<T>(bh * hd * hd);
      T* intra_chunk_scores = s.take<T>(bh * c * c);
      T* k_sum = s.take<T>(bh * hd);
      feature_map<T><<<blocks_for(bhnd), kThreads, 0, s.stream>>>(q, phi_q, bhnd);
      feature_map<T><<<blocks_for(bhnd), kThreads, 0, s.stream>>>(k, phi_k, bhnd);
      causal_linear_chunks<T><<<(unsigned)bh, kThreads, 0, s.stream>>>(phi_q, phi_k, v, carried_state, chunk_state,
                                                                       intra_chunk_scores, k_sum, out, N, D, (int)c);
      for (void* p : {(void*)phi_q, (void*)phi_k, (void*)carried_state, (void*)chunk_state, (void*)intra_chunk_scores,
                      (void*)k_sum}) {
        s.give(p);
      }
      break;
    }
    case CudaAttentionKind::recurrent: {
      T* state = s.take<T>(bh * hd * hd);
      T* k_sum = s.take<T>(bh * hd);
      recurrent_tokens<T><<<(unsigned)bh, kThreads, 0, s.stream>>>(q, k, v, state, k_sum, out, N, D);
      s.give(state);
      s.give(k_sum);
      break;
    }
  }
  check(cudaGetLastError(), "a kernel launch");
  return out;
}

template <typename T>
CudaRunStats run_typed(CudaAttentionKind kind, const CudaAttentionDims& d, std::uint32_t repeats, const float* q,
                       const float* k, const float* v, float* output) {
  if (kind == CudaAttentionKind::sdpa && d.head_dim > kMaxHeadDim) {
    throw Error(ErrorKind::invalid_input, "the CUDA sdpa kernel supports head_dim up to 256", "head_dim");
  }
  const long long count = d.batch_heads * d.seq * d.head_dim;
  Session s;
  DeviceBuffer staging(count * sizeof(float));
  DeviceBuffer inputs(3 * count * sizeof(T));
  T* dq = static_cast<T*>(inputs.ptr);
  T* dk = dq + count;
  T* dv = dk + count;
  float* f = static_cast<float*>(staging.ptr);
  const float* host[3] = {q, k, v};
  T* device[3] = {dq, dk, dv};
  for (int i = 0; i < 3; ++i) {
    if (host[i]) {
      check(cudaMemcpyAsync(f, host[i], count * sizeof(float), cudaMemcpyHostToDevice, s.stream), "cudaMemcpy");
    } else {
      fill_uniform<<<blocks_for(count), kThreads, 0, s.stream>>>(f, count, 0x9e3779b9u * (unsigned)(i + 1));
    }
    convert<T><<<blocks_for(count), kThreads, 0, s.stream>>>(f, device[i], count);
  }
  check(cudaStreamSynchronize(s.stream), "preparing the inputs");

  CudaRunStats stats;
  for (std::uint32_t r = 0; r < std::max<std::uint32_t>(repeats, 1); ++r) {
    s.reset_high_watermark();
    check(cudaEventRecord(s.start, s.stream), "cudaEventRecord");
    T* out = run_once<T>(s, kind, d, dq, dk, dv);
    check(cudaEventRecord(s.stop, s.stream), "cudaEventRecord");
    check(cudaStreamSynchronize(s.stream), "running the kernel");
    float ms = 0.f;
    check(cudaEventElapsedTime(&ms, s.start, s.stop), "cudaEventElapsedTime");
    stats.milliseconds.push_back(ms);
    if (output && r == 0) {
      widen<T><<<blocks_for(count), kThreads, 0, s.stream>>>(out, f, count);
      check(cudaMemcpyAsync(output, f, count * sizeof(float), cudaMemcpyDeviceToHost, s.stream), "cudaMemcpy");
    }
    s.give(out);
    check(cudaStreamSynchronize(s.stream), "finishing a run");
    stats.peak_bytes = std::max<std::uint64_t>(stats.peak_bytes, s.high_watermark());
  }
  return stats;
}

}  // namespace

CudaRunStats run_attention_cuda(CudaAttentionKind kind, const CudaAttentionDims& dims, bool half, std::uint32_t repeats,
                                const float* q, const float* k, const float* v, float* output) {
  return half ? run_typed<__half>(kind, dims, repeats, q, k, v, output)
              : run_typed<float>(kind, dims, repeats, q, k, v, output);
}

}  // namespace memplan::detail
