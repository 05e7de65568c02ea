// Eigen picks its matrix-product blocking (kc, mc, nc, and so the size of its packing
// buffers and the order of its sums) from the CPU's cache sizes, read with cpuid. A test
// that must not depend on the machine pins them with this guard, which puts the
// machine's own figures back when it goes out of scope.
#pragma once

#include <Eigen/Core>
#include <cstddef>

namespace memplan::testing {

// Cache sizes, in bytes, as Eigen::setCpuCacheSizes takes them.
struct EigenCaches {
  const char* cpu;
  std::ptrdiff_t l1, l2, l3;
};

// A few real CPUs' figures (per core for L1 and L2; L3 as cpuid reports it).
inline constexpr std::ptrdiff_t kKiB = 1024;
inline constexpr std::ptrdiff_t kMiB = 1024 * kKiB;
inline constexpr EigenCaches kSkylakeClient{"Skylake client", 32 * kKiB, 256 * kKiB, 8 * kMiB};
inline constexpr EigenCaches kZen2{"Zen 2", 32 * kKiB, 512 * kKiB, 16 * kMiB};
inline constexpr EigenCaches kEpycAsEigenReadsIt{"2-core AMD EPYC VM (CI), as Eigen reads it", 32 * kKiB, 1 * kMiB,
                                                 320 * kMiB};
inline constexpr EigenCaches kIceLakeServer{"Ice Lake server", 48 * kKiB, 1280 * kKiB, 54 * kMiB};
inline constexpr EigenCaches kSapphireRapids{"Sapphire Rapids", 48 * kKiB, 2 * kMiB, 105 * kMiB};
inline constexpr EigenCaches kSomeCpus[] = {kSkylakeClient, kZen2, kEpycAsEigenReadsIt, kIceLakeServer,
                                            kSapphireRapids};

class PinnedEigenCaches {
 public:
  explicit PinnedEigenCaches(const EigenCaches& caches)
      : l1_(Eigen::l1CacheSize()), l2_(Eigen::l2CacheSize()), l3_(Eigen::l3CacheSize()) {
    Eigen::setCpuCacheSizes(caches.l1, caches.l2, caches.l3);
  }
  ~PinnedEigenCaches() { Eigen::setCpuCacheSizes(l1_, l2_, l3_); }
  PinnedEigenCaches(const PinnedEigenCaches&) = delete;
  PinnedEigenCaches& operator=(const PinnedEigenCaches&) = delete;

 private:
  std::ptrdiff_t l1_, l2_, l3_;
};

}  // namespace memplan::testing
