// Measuring a kernel without trusting its own bookkeeping: the heap bytes the allocator
// actually handed out while it ran (peak minus the baseline) and its wall time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace memplan {

// The process's heap as an allocator sees it. memplan::heap_counter (counting_heap.hpp)
// provides one that counts every malloc-family call; a program may supply its own.
class HeapMeter {
 public:
  virtual ~HeapMeter() = default;
  // True when the figures below are real; false when nothing is being counted.
  virtual bool active() const = 0;
  // Why the meter is inactive ("" when active).
  virtual std::string reason() const = 0;
  // Bytes currently allocated, as the allocator's usable sizes. Signed: memory freed
  // here but allocated before counting began makes it dip below its starting value.
  virtual std::int64_t in_use() const = 0;
  // The largest in_use() since the last reset_peak().
  virtual std::int64_t peak() const = 0;
  // Sets the peak to the current in_use().
  virtual void reset_peak() = 0;
};

struct CpuMeasurement {
  std::uint64_t peak_bytes = 0;  // max over the runs of (peak - in_use before the run); 0 when the meter is inactive
  bool heap_counted = false;     // the meter was active
  double seconds_best = 0;       // fastest run, wall-clock seconds
  double seconds_median = 0;     // median run
  std::uint32_t repeats = 0;     // runs timed
};

// Runs `run` `repeats` times (at least once). Everything `run` allocates and frees in
// between counts; what it allocated before the call (its inputs) is the baseline.
// Returns the peak heap growth and the timings. Throws what `run` throws.
CpuMeasurement measure_cpu(const std::function<void()>& run, HeapMeter& meter, std::uint32_t repeats);

}  // namespace memplan
