#include "memplan/estimators/layout_estimate.hpp"

namespace memplan {

bool DeviceMemory::fits() const { return !capacity || breakdown.total() <= *capacity; }

std::size_t LayoutEstimate::worst() const {
  std::size_t out = 0;
  bool all_capacities = !devices.empty();
  for (const DeviceMemory& d : devices) all_capacities = all_capacities && d.capacity && d.capacity->count() > 0;
  long double best = -1;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const long double total = static_cast<long double>(devices[i].breakdown.total().count());
    const long double value = all_capacities ? total / static_cast<long double>(devices[i].capacity->count()) : total;
    if (value > best) {
      best = value;
      out = i;
    }
  }
  return out;
}

std::optional<bool> LayoutEstimate::fits() const {
  bool ok = offloaded.empty() && (!serving || serving->holds_a_sequence());
  for (const DeviceMemory& d : devices) {
    if (!d.capacity) return std::nullopt;
    ok = ok && d.fits();
  }
  return ok;
}

}  // namespace memplan
