// llama.cpp as a layout: the GPU's buffers and the host's (plan/layout.cpp dispatches here).
#pragma once

#include "memplan/core/model_spec.hpp"
#include "memplan/estimators/layout_estimate.hpp"
#include "memplan/plan/layout.hpp"
#include "memplan/plan/workload.hpp"

namespace memplan::detail {

// Returns the devices llama.cpp uses for `workload` (inference or generation of one
// sequence) under options.llama_cpp: the GPU (when not options.cpu) and the host. Throws
// Error(invalid_input) as estimate_llama_cpp, and for a batch above 1.
LayoutEstimate llama_cpp_layout(const ModelSpec& spec, const Workload& workload, const LayoutOptions& options);

}  // namespace memplan::detail
