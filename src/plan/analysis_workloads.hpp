// The training and analysis workloads, composed for estimate_workload (private to the plan layer).
#pragma once

#include <vector>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/tensor_run.hpp"
#include "memplan/plan/workload.hpp"

namespace memplan::detail {

// Returns the shapes and dtypes one forward pass of `workload` runs on, at `batch`
// sequences per micro-batch (fused attention for sdpa, fp32 softmax for eager). Throws
// Error(invalid_input, key "attention") for a variant training does not model.
TrainingShape shape_for(const Workload& workload, std::uint64_t batch);

// Composes a training or analysis workload into `out`, which holds the weights on entry:
// sets its components (at the peak phase), alternatives and host rows; replaces
// `persistent` with the allocations kept throughout and adds the peak's transient bytes to
// `transient`. Returns false when `out` is complete and takes no overhead (004's SAE
// formula). Throws Error(invalid_input) naming the key, Error(overflow).
bool compose_analysis(const ModelSpec& spec, const Workload& workload, Breakdown& out, std::vector<TensorRun>& persistent,
                      Bytes& transient);

}  // namespace memplan::detail
