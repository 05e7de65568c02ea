// What a workload holds at its peak, gathered by the workload's compose function
// (workload_registry.hpp) and turned into its Breakdown (private to the plan layer).
#pragma once

#include <string>
#include <vector>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/tensor_run.hpp"
#include "memplan/estimators/overhead.hpp"
#include "memplan/plan/workload.hpp"

namespace memplan::detail {

// One moment a workload might peak at (a training phase, the store refill of an SAE): the
// rows on the device then, beyond what the composition already keeps.
struct Peak {
  std::string phase;             // forward, optimizer_step, sae_step, ...: Breakdown::peak_phase when it binds
  std::vector<Item> components;  // added to the composition when it binds
  Bytes transient;               // of their bytes, those freed after the moment (fragmentation's base)
  std::string note;              // put before the binding row's note: "peak in phase forward: at the loss"
  std::string summary;           // the formula of its alternative when another binds; empty: its rows' names joined
  std::string alternative_note;  // the note of that alternative: "the whole plan at the loss"
  std::vector<AllocatorStep> steps = {};  // the order the job allocates and frees `transient` in; empty: not modelled
};

// Gathers the persistent tensors (kept throughout, with their allocations for the
// allocator model), the transient tensors of the peak (with the phase it falls in), the
// alternatives and the host rows of one workload, and produces its Breakdown: the
// components in the order they were added, then the overhead row.
class WorkloadComposer {
 public:
  // Starts from the weights of `workload` on `spec`: the component "weights" and its
  // allocations. Keeps a reference to `workload`. Throws as estimate_weights.
  WorkloadComposer(const ModelSpec& spec, const Workload& workload);

  // Adds a component kept throughout the job: one allocation of its bytes, or `runs`.
  void keep(Item item);
  void keep(Item item, const std::vector<TensorRun>& runs);
  // Adds a component of the peak's working set, freed after it, at `phase` (the moment the
  // peak falls in: Breakdown::peak_phase), with the order the job allocates and frees its
  // tensors in (empty: not modelled, the fragmentation margin applies).
  void transient(Item item, std::string phase, const std::vector<AllocatorStep>& steps = {});
  // Adds `item` as a what-if in place of the component (or "total") named `replaces`.
  void alternative(std::string replaces, Item item);
  // Adds a row of host (CPU) memory.
  void host(Item item);

  // Compares the whole plan at each of `peaks` (what is kept, the peak's rows and the
  // overhead they would carry) and adds the largest, the first on a tie: its rows, its
  // transient bytes and phase, its note on its "activations" row (else its last). Each
  // other peak becomes an alternative "phase_<phase>" in place of "total". Throws
  // Error(overflow).
  void choose_peak(std::vector<Peak> peaks);

  // Drops the components and allocations kept so far (the weights), for a composition
  // whose peaks list every row themselves (a training step's phases); `persistent` are the
  // allocations kept instead.
  void restart(std::vector<TensorRun> persistent);
  // Marks the composition complete as it stands: no overhead row (the interpretability compute guide's SAE formula, the
  // weights alone).
  void omit_overhead();

  // Returns the Breakdown: the components, the overhead row (unless omitted or
  // workload.include_overhead is false), alternatives, host rows and the peak phase.
  // Throws Error(overflow).
  Breakdown finish() &&;

 private:
  // Returns the overhead row's bytes with `transient` on top of the kept allocations; 0
  // without overhead.
  Bytes overhead_with(const TransientTensors& transient) const;
  // The peak's transient tensors: their bytes, and their order where every part has one.
  TransientTensors transient_tensors() const;

  const Workload& workload_;
  Breakdown out_;
  std::vector<TensorRun> persistent_;  // every allocation kept throughout
  Bytes transient_;                    // the peak's transient bytes
  std::vector<AllocatorStep> steps_;   // their allocation order
  bool ordered_ = true;                // every transient part came with its order
  bool overhead_ = true;
};

}  // namespace memplan::detail
