// Sweeps: one workload estimated over a grid of models x workloads x precisions x batch
// sizes x sequence lengths, each point with its total, its largest component and whether
// it fits under a limit. `memplan sweep` prints them as a table, CSV, JSON or an SVG chart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/bytes.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/core/precision.hpp"
#include "memplan/plan/verdict.hpp"
#include "memplan/plan/workload.hpp"

namespace memplan {

// The most points one sweep may have (a grid is expanded in memory before it is estimated).
inline constexpr std::uint64_t max_sweep_points = 100'000;

struct SweepAxes {
  std::vector<WorkloadKind> workloads = {WorkloadKind::inference};  // outermost after the models
  std::vector<Precision> precisions = {precisions::bf16};           // weight precisions
  std::vector<std::uint64_t> batches = {1};                         // sequences per pass
  std::vector<std::uint64_t> seqs = {2048};                         // input tokens per sequence (innermost)
  std::uint64_t new_tokens = 256;  // generation points: tokens generated after the prompt
  // Per precision: named by the user rather than auto. A named precision replaces a quantised
  // checkpoint's stored weights (ModelSpec::stored_weights_source), as bind() does. Empty: none.
  std::vector<bool> named = {};
};

// One point of the grid.
struct SweepPoint {
  std::size_t model = 0;  // index into the models swept
  WorkloadKind workload = WorkloadKind::inference;
  Precision precision = precisions::bf16;
  std::uint64_t batch = 1;
  std::uint64_t seq = 2048;
  bool named = false;  // the precision was named (SweepAxes::named)
};

// Returns every point of `models` x axes.workloads x precisions x batches x seqs, nested
// in that order (the last varies fastest). Throws Error(invalid_input) naming the axis
// ("model", "workload", "precision", "batch", "seq") when one is empty or holds a 0, and
// when the grid has more than max_sweep_points points.
std::vector<SweepPoint> expand_grid(std::size_t models, const SweepAxes& axes);

// Returns `base` with the point's workload, precision, batch and sequence length;
// generation points get axes.new_tokens (or base.new_tokens when set), others none.
Workload workload_at(const Workload& base, const SweepPoint& point, const SweepAxes& axes);

struct SweepRow {
  SweepPoint point;
  std::optional<Bytes> total;  // unset when the point cannot be estimated (`error`)
  Bytes allocated;             // the tensors themselves: total less the overhead (Breakdown::allocated)
  std::string largest;         // the largest component's name
  Bytes largest_bytes;
  std::optional<Verdict> verdict;  // against the budget, when there is one
  std::optional<bool> fits;        // verdict == fits
  std::vector<std::string> notes;  // e.g. a sequence longer than the model's context
  std::string error;               // why there is no estimate (a learned-position table too short, an overflow, ...)
};

// Returns one row per point of expand_grid(models.size(), axes), in its order, each from
// estimate_workload(models[point.model], workload_at(base, point, axes)). A point that
// cannot be estimated (Error invalid_input or overflow) gets a row with `error` set
// rather than stopping the sweep. Throws as expand_grid.
// `on_point`, when set, is called after each point (a caller's progress line; the sweep
// itself does no I/O).
std::vector<SweepRow> run_sweep(const std::vector<ModelSpec>& models, const Workload& base, const SweepAxes& axes,
                                std::optional<Bytes> budget, double threshold = 0.85,
                                const std::function<void()>& on_point = {});

}  // namespace memplan
