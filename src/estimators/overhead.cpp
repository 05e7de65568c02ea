#include "memplan/estimators/overhead.hpp"

#include <cmath>

#include "memplan/core/error.hpp"

namespace memplan {

namespace {

std::uint64_t round_up(std::uint64_t value, std::uint64_t multiple) {
  return checked_mul(ceil_div(value, multiple), multiple, "allocator rounding");
}

// In whole parts per million, so 10% of 1000 is exactly 100 (a binary 0.1 is a shade more).
Bytes fraction_of(Bytes base, double fraction) {
  __extension__ using Product = unsigned __int128;
  const auto ppm = static_cast<std::uint64_t>(std::llround(fraction * 1e6));
  return Bytes(static_cast<std::uint64_t>(static_cast<Product>(base.count()) * ppm / 1000000));
}

}  // namespace

Bytes allocator_reserved(const std::vector<TensorRun>& tensors) {
  std::uint64_t small = 0, medium = 0, large = 0;
  for (const TensorRun& t : tensors) {
    if (t.bytes == 0 || t.count == 0) continue;
    const std::uint64_t rounded = round_up(t.bytes, kAllocatorMinBlock);
    if (rounded <= kAllocatorSmallSize) {
      small = checked_add(small, checked_mul(rounded, t.count, "small allocations"), "small allocations");
    } else if (rounded < kAllocatorMinLargeAlloc) {
      medium = checked_add(medium, checked_mul(rounded, t.count, "medium allocations"), "medium allocations");
    } else {
      const std::uint64_t segment = round_up(rounded, kAllocatorRoundLarge);
      large = checked_add(large, checked_mul(segment, t.count, "large allocations"), "large allocations");
    }
  }
  std::uint64_t reserved = large;
  reserved = checked_add(reserved, round_up(small, kAllocatorSmallSegment), "reserved bytes");
  reserved = checked_add(reserved, round_up(medium, kAllocatorLargeSegment), "reserved bytes");
  return Bytes(reserved);
}

Bytes OverheadBytes::total() const {
  return context.plus(cublas_workspace, "overhead bytes")
      .plus(allocator_rounding, "overhead bytes")
      .plus(fragmentation, "overhead bytes");
}

OverheadBytes overhead_bytes(const OverheadOptions& o, const std::vector<TensorRun>& persistent, Bytes transient) {
  for (const double f : {o.fragmentation, o.fragmentation_low, o.fragmentation_high}) {
    if (!(f >= 0.0 && f <= 1.0)) {
      throw Error(ErrorKind::invalid_input, "the fragmentation margin must be a fraction from 0 to 1", "fragmentation");
    }
  }
  // PyTorch's default CUBLAS_WORKSPACE_CONFIG: ":4096:8" on Hopper, ":4096:2:16:8" before.
  const Bytes default_workspace(o.hopper_or_newer ? 8 * (4ULL << 20) : 2 * (4ULL << 20) + 8 * (16ULL << 10));
  Bytes allocated;
  for (const TensorRun& t : persistent)
    allocated = allocated.plus(Bytes(t.bytes).times(t.count, "allocated bytes"), "allocated bytes");
  if (o.host) return {Bytes(0), Bytes(0), Bytes(0), fraction_of(transient, o.fragmentation)};
  const Bytes reserved = allocator_reserved(persistent);
  const Bytes context = o.eager_module_loading ? o.cuda_context.plus(Bytes(kEagerModuleLoadingBytes), "CUDA context")
                                               : o.cuda_context;
  return {context, o.cublas_workspace.value_or(default_workspace), Bytes(reserved.count() - allocated.count()),
          fraction_of(transient, o.fragmentation)};
}

Breakdown estimate_overhead(const OverheadOptions& o, const std::vector<TensorRun>& persistent, Bytes transient) {
  const OverheadBytes bytes = overhead_bytes(o, persistent, transient);
  Item overhead{"overhead", Bytes(0), "", std::nullopt, "", {}};

  Item context{"cuda_context",
               bytes.context,
               o.cuda_context_source.empty()
                   ? "CUDA context and loaded kernel images: assumed, not computed (memplan calibrate measures it)"
                   : "CUDA context and loaded kernel images: " + o.cuda_context_source,
               std::nullopt,
               "",
               {}};
  if (!o.cuda_context_source.empty()) context.note = o.cuda_context_source;
  context.low = o.cuda_context_low;
  context.high = o.cuda_context_high;
  if (o.eager_module_loading) {
    context.formula +=
        "; + 1,054 MiB for CUDA_MODULE_LOADING=EAGER (every kernel image loaded at start: measured with PyTorch 2.11 "
        "and CUDA 13.0; 362 MiB with PyTorch 1.13)";
    context.low = context.low->plus(Bytes(kEagerModuleLoadingLowBytes), "CUDA context");
    context.high = context.high->plus(Bytes(kEagerModuleLoadingBytes), "CUDA context");
  }

  Item workspace{"cublas_workspace",
                 bytes.cublas_workspace,
                 o.cublas_workspace  ? (o.cublas_workspace_source.empty() ? "given" : o.cublas_workspace_source)
                 : o.hopper_or_newer ? "8 x 4 MiB (PyTorch default, compute capability 9.0+)"
                                     : "2 x 4 MiB + 8 x 16 KiB (PyTorch default before 9.0)",
                 std::nullopt,
                 "",
                 {}};

  Item rounding{
      "allocator_rounding",
      bytes.allocator_rounding,
      "reserved - allocated for weights and caches: 512 B rounding, 2 MiB / 20 MiB segments, 2 MiB large blocks",
      std::nullopt,
      "",
      {}};

  Item fragmentation{"fragmentation",
                     bytes.fragmentation,
                     std::to_string(static_cast<int>(std::lround(o.fragmentation * 100))) +
                         "% of the transient tensors (blocks freed out of order leave gaps the allocator cannot reuse)",
                     std::nullopt,
                     "",
                     {}};
  fragmentation.low = fraction_of(transient, o.fragmentation_low);
  fragmentation.high = fraction_of(transient, o.fragmentation_high);

  overhead.detail = {context, workspace, rounding, fragmentation};
  if (o.host) overhead.detail = {fragmentation};
  Bytes low, high;
  for (const Item& row : overhead.detail) {
    low = low.plus(row.low.value_or(row.bytes), "overhead low end");
    high = high.plus(row.high.value_or(row.bytes), "overhead high end");
  }
  overhead.bytes = bytes.total();
  overhead.low = low;
  overhead.high = high;
  overhead.formula = o.host ? "fragmentation (on the CPU: no CUDA context, cuBLAS workspace or caching allocator)"
                            : "cuda_context + cublas_workspace + allocator_rounding + fragmentation";
  return Breakdown{{overhead}};
}

}  // namespace memplan
