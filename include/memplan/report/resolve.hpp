// memplan resolve: the precision a job runs in on a device, the chain walked, and why.
#pragma once

#include <ostream>
#include <string>

#include "memplan/report/print.hpp"
#include "memplan/resolve/resolver.hpp"

namespace memplan {

struct ResolveReport {
  Resolution resolution;
  DeviceCapability device;    // what it was resolved for
  std::string device_source;  // how the device was given: "--gpu", "--cc", "--cpu", "probe"
};

// Writes the resolution: the precision chosen, the chain of formats tried and why. Table or
// JSON; no CSV. Throws as require_format.
void print(const ResolveReport& report, const PrintOptions& options, std::ostream& out);

}  // namespace memplan
