// Every workload in one explicit table: its name, how its memory is composed, how much
// work it does (private to the plan layer). Static self-registration would be dropped by
// the linker from a static library, so the table lists each workload by hand; docs/api.md,
// "Adding a workload", says what an entry needs.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "memplan/core/model_spec.hpp"
#include "memplan/estimators/compute_time.hpp"
#include "memplan/plan/workload.hpp"

#include "workload_composer.hpp"

namespace memplan::detail {

// Fills `composer` with what `workload` holds at its peak. Throws Error(invalid_input)
// naming the key, Error(overflow).
using ComposeFn = void (*)(const ModelSpec& spec, const Workload& workload, WorkloadComposer& composer);
// Returns the floating-point work of `workload` (empty for none). Throws as ComposeFn.
using WorkFn = std::vector<Work> (*)(const ModelSpec& spec, const Workload& workload);
// Returns estimate_workload_bytes's figures without building the breakdown. Throws as ComposeFn.
using BytesFn = WorkloadBytes (*)(const ModelSpec& spec, const Workload& workload);

struct WorkloadEntry {
  WorkloadKind kind;
  std::string_view name;    // as YAML, -w and to_string spell it
  ComposeFn compose;        // the memory at the peak (estimate_workload)
  WorkFn work;              // the FLOPs, for time estimates (workload_work)
  BytesFn bytes = nullptr;  // a totals-only twin of compose, for workloads estimated in loops;
                            //   nullptr: estimate_workload_bytes goes through the breakdown
};

// Returns every entry, entry i for the WorkloadKind of value i.
std::span<const WorkloadEntry> workload_registry();

// Returns the entry of `kind`. Throws Error(internal) for a value with no entry.
const WorkloadEntry& workload_entry(WorkloadKind kind);

}  // namespace memplan::detail
