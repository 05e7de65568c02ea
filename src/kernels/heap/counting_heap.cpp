// The counting heap (memplan::heap_counter): replaces the malloc family for the whole
// process so memplan can see every heap byte a kernel really takes.
//
// Why the malloc family and not operator new/delete: Eigen allocates its dynamic
// matrices with Eigen::internal::aligned_malloc, which calls std::malloc directly (or,
// where malloc is not already 16-byte aligned, over-allocates with std::malloc and
// aligns by hand); it never calls operator new. Replacing operator new would miss every
// Eigen temporary, which is exactly what a measurement must catch. Replacing malloc,
// which glibc supports through ELF symbol interposition ("Replacing malloc" in the glibc
// manual), sees Eigen, std::vector (libstdc++'s operator new calls malloc; its aligned
// operator new calls aligned_alloc) and C code alike. Each wrapper forwards to glibc's
// own allocator through its exported __libc_* entry points, so the memory itself, its
// alignment and malloc_usable_size are glibc's.
//
// Sizes are malloc_usable_size() of each block: what the allocator really set aside (the
// request rounded up to its 16-byte granule; for large, mmap'd blocks, to the page).
// The counters are constant-initialised atomics, so they work before any static
// constructor runs, and are thread-safe.
//
// Only executables link this object library (the memplan CLI, the unit tests), never
// memplan::kernels itself: a consumer of the library keeps its allocator. It is replaced
// by counting_heap_unavailable.cpp where glibc's entry points are missing or a sanitizer
// owns malloc.
#include <malloc.h>
#include <cerrno>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "memplan/kernels/counting_heap.hpp"

extern "C" {
void* __libc_malloc(std::size_t size);
void __libc_free(void* ptr);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* ptr, std::size_t size);
void* __libc_memalign(std::size_t alignment, std::size_t size);
void* __libc_valloc(std::size_t size);
void* __libc_pvalloc(std::size_t size);
}

namespace {

constinit std::atomic<std::int64_t> g_in_use{0};
constinit std::atomic<std::int64_t> g_peak{0};

std::int64_t usable(void* ptr) { return ptr ? static_cast<std::int64_t>(malloc_usable_size(ptr)) : 0; }

void grew(std::int64_t bytes) {
  const std::int64_t now = g_in_use.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  std::int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

void shrank(std::int64_t bytes) { g_in_use.fetch_sub(bytes, std::memory_order_relaxed); }

void* counted(void* ptr) {
  if (ptr) grew(usable(ptr));
  return ptr;
}

class CountingHeap final : public memplan::HeapMeter {
 public:
  constexpr CountingHeap() = default;
  bool active() const override { return true; }
  std::string reason() const override { return {}; }
  std::int64_t in_use() const override { return g_in_use.load(std::memory_order_relaxed); }
  std::int64_t peak() const override { return g_peak.load(std::memory_order_relaxed); }
  void reset_peak() override { g_peak.store(g_in_use.load(std::memory_order_relaxed), std::memory_order_relaxed); }
};

constinit CountingHeap g_meter;

}  // namespace

namespace memplan {

HeapMeter& counting_heap() { return g_meter; }

}  // namespace memplan

extern "C" {

void* malloc(std::size_t size) { return counted(__libc_malloc(size)); }

void free(void* ptr) {
  if (!ptr) return;
  shrank(usable(ptr));
  __libc_free(ptr);
}

// Parameter names as glibc declares them (nmemb, memptr), less its underscores.
void* calloc(std::size_t nmemb, std::size_t size) { return counted(__libc_calloc(nmemb, size)); }

void* realloc(void* ptr, std::size_t size) {
  const std::int64_t before = usable(ptr);
  void* moved = __libc_realloc(ptr, size);
  if (moved) {
    shrank(before);
    grew(usable(moved));
  } else if (ptr && size == 0) {
    shrank(before);  // glibc's realloc(p, 0) frees p
  }
  return moved;
}

void* reallocarray(void* ptr, std::size_t nmemb, std::size_t size) {
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(nmemb, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(ptr, bytes);
}

void* memalign(std::size_t alignment, std::size_t size) { return counted(__libc_memalign(alignment, size)); }

void* aligned_alloc(std::size_t alignment, std::size_t size) { return counted(__libc_memalign(alignment, size)); }

int posix_memalign(void** memptr, std::size_t alignment, std::size_t size) {
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) return EINVAL;
  void* ptr = __libc_memalign(alignment, size);
  if (!ptr) return ENOMEM;
  *memptr = counted(ptr);
  return 0;
}

void* valloc(std::size_t size) { return counted(__libc_valloc(size)); }

void* pvalloc(std::size_t size) { return counted(__libc_pvalloc(size)); }

}  // extern "C"
