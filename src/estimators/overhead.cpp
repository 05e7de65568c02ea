#include "memplan/estimators/overhead.hpp"

#include <algorithm>
#include <cmath>

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"

namespace memplan {

namespace {

// In whole parts per million, so 10% of 1000 is exactly 100 (a binary 0.1 is a shade more).
Bytes fraction_of(Bytes base, double fraction) {
  __extension__ using Product = unsigned __int128;
  const auto ppm = static_cast<std::uint64_t>(std::llround(fraction * 1e6));
  return Bytes(static_cast<std::uint64_t>(static_cast<Product>(base.count()) * ppm / 1000000));
}

// The fragmentation row's bytes and range: replayed where the order is known.
struct Fragmentation {
  Bytes bytes, low, high;
  std::optional<AllocatorReplay> replay;
};

Fragmentation fragmentation_of(const OverheadOptions& o, const TransientTensors& t) {
  if (o.host || o.fragmentation_given || t.steps.empty()) {
    return {fraction_of(t.bytes, o.fragmentation), fraction_of(t.bytes, o.fragmentation_low),
            fraction_of(t.bytes, o.fragmentation_high), std::nullopt};
  }
  const AllocatorReplay r = replay_caching_allocator(t.steps);
  const Bytes point = r.reserved > t.bytes ? Bytes(r.reserved.count() - t.bytes.count()) : Bytes(0);
  const Bytes rounding(r.peak_blocks.count() - r.peak_allocated.count());
  return {point, std::min(point, rounding), point.plus(r.largest_segment, "fragmentation high end"), r};
}

}  // namespace

Bytes OverheadBytes::total() const {
  return context.plus(cublas_workspace, "overhead bytes")
      .plus(allocator_rounding, "overhead bytes")
      .plus(fragmentation, "overhead bytes");
}

namespace {

// The fragmentation row, the transient tensors replayed once (the margins checked first).
Fragmentation checked_fragmentation(const OverheadOptions& o, const TransientTensors& transient) {
  for (const double f : {o.fragmentation, o.fragmentation_low, o.fragmentation_high}) {
    if (!(f >= 0.0 && f <= 1.0)) {
      throw Error(ErrorKind::invalid_input, "the fragmentation margin must be a fraction from 0 to 1", "fragmentation");
    }
  }
  return fragmentation_of(o, transient);
}

OverheadBytes overhead_rows(const OverheadOptions& o, const std::vector<TensorRun>& persistent,
                            const Bytes fragmentation) {
  // PyTorch's default CUBLAS_WORKSPACE_CONFIG: ":4096:8" on Hopper, ":4096:2:16:8" before.
  const Bytes default_workspace(o.hopper_or_newer ? 8 * (4ULL << 20) : 2 * (4ULL << 20) + 8 * (16ULL << 10));
  Bytes allocated;
  for (const TensorRun& t : persistent)
    allocated = allocated.plus(Bytes(t.bytes).times(t.count, "allocated bytes"), "allocated bytes");
  if (o.host) return {Bytes(0), Bytes(0), Bytes(0), fragmentation};
  const Bytes reserved = allocator_reserved(persistent);
  const Bytes context = o.eager_module_loading ? o.cuda_context.plus(Bytes(kEagerModuleLoadingBytes), "CUDA context")
                                               : o.cuda_context;
  return {context, o.cublas_workspace.value_or(default_workspace), Bytes(reserved.count() - allocated.count()),
          fragmentation};
}

}  // namespace

OverheadBytes overhead_bytes(const OverheadOptions& o, const std::vector<TensorRun>& persistent,
                             const TransientTensors& transient) {
  return overhead_rows(o, persistent, checked_fragmentation(o, transient).bytes);
}

Breakdown estimate_overhead(const OverheadOptions& o, const std::vector<TensorRun>& persistent,
                            const TransientTensors& transient) {
  const Fragmentation derived = checked_fragmentation(o, transient);
  const OverheadBytes bytes = overhead_rows(o, persistent, derived.bytes);
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

  Item fragmentation{"fragmentation", bytes.fragmentation, "", std::nullopt, "", {}};
  if (derived.replay) {
    const AllocatorReplay& r = *derived.replay;
    fragmentation.formula =
        "the caching allocator replayed over the transient tensors in the order the job makes "
        "them: " +
        group_digits(r.reserved.count()) + " B of segments for " + group_digits(transient.bytes.count()) +
        " B alive at the peak (freed blocks too small for a later tensor stay reserved); "
        "range: the peak's own rounding, to one more segment of the largest size (" +
        group_digits(r.largest_segment.count()) + " B) for an order other than the one replayed";
  } else {
    fragmentation.formula =
        std::to_string(static_cast<int>(std::lround(o.fragmentation * 100))) + "% of the transient tensors" +
        (o.fragmentation_given ? " (given)" : " (a margin: the order the job allocates them in is not modelled)");
  }
  fragmentation.low = derived.low;
  fragmentation.high = derived.high;

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
