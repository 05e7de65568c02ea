#include "workload_composer.hpp"

#include <utility>

#include "memplan/estimators/weights.hpp"

namespace memplan::detail {

namespace {

Bytes sum_of(const std::vector<Item>& items, const char* what) {
  Bytes sum;
  for (const Item& i : items) sum = sum.plus(i.bytes, what);
  return sum;
}

// The row a peak's note goes on: its activations, else its last row.
Item& noted_row(std::vector<Item>& rows) {
  for (Item& r : rows) {
    if (r.name == "activations") return r;
  }
  return rows.back();
}

}  // namespace

WorkloadComposer::WorkloadComposer(const ModelSpec& spec, const Workload& workload)
    : workload_(workload),
      out_(estimate_weights(spec, workload.weights)),
      persistent_(weight_allocations(spec, workload.weights)) {}

void WorkloadComposer::keep(Item item) {
  persistent_.push_back({item.bytes.count(), 1});
  out_.components.push_back(std::move(item));
}

void WorkloadComposer::keep(Item item, const std::vector<TensorRun>& runs) {
  persistent_.insert(persistent_.end(), runs.begin(), runs.end());
  out_.components.push_back(std::move(item));
}

void WorkloadComposer::transient(Item item, std::string phase, const std::vector<AllocatorStep>& steps) {
  if (steps.empty() && item.bytes.count() != 0) ordered_ = false;
  append_steps(steps_, steps);
  transient_ = transient_.plus(item.bytes, "transient bytes");
  out_.peak_phase = std::move(phase);
  out_.components.push_back(std::move(item));
}

void WorkloadComposer::alternative(std::string replaces, Item item) {
  out_.alternatives.push_back({std::move(replaces), std::move(item)});
}

void WorkloadComposer::host(Item item) { out_.host.push_back(std::move(item)); }

void WorkloadComposer::choose_peak(std::vector<Peak> peaks) {
  if (peaks.empty()) return;
  const Bytes kept = out_.total();
  std::vector<Bytes> totals;  // the whole plan at each peak, less what is kept
  std::size_t binds = 0;
  for (std::size_t i = 0; i < peaks.size(); ++i) {
    totals.push_back(sum_of(peaks[i].components, "phase total")
                         .plus(overhead_with({peaks[i].transient, peaks[i].steps}), "phase total"));
    if (totals[i] > totals[binds]) binds = i;
  }
  for (std::size_t i = 0; i < peaks.size(); ++i) {
    if (i == binds) continue;
    const Peak& p = peaks[i];
    std::string summary = p.summary;
    if (summary.empty()) {
      for (const Item& c : p.components) summary += (summary.empty() ? "" : " + ") + c.name;
      if (workload_.include_overhead && overhead_) summary += " + overhead";
    }
    alternative("total", {"phase_" + p.phase,
                          kept.plus(totals[i], "phase total"),
                          std::move(summary),
                          std::nullopt,
                          p.alternative_note,
                          {}});
  }
  Peak& p = peaks[binds];
  if (!p.components.empty()) {
    Item& noted = noted_row(p.components);
    noted.note = p.note + (noted.note.empty() ? "" : "; " + noted.note);
  }
  for (Item& c : p.components) out_.components.push_back(std::move(c));
  if (p.steps.empty() && p.transient.count() != 0) ordered_ = false;
  append_steps(steps_, p.steps);
  transient_ = transient_.plus(p.transient, "transient bytes");
  out_.peak_phase = std::move(p.phase);
}

void WorkloadComposer::restart(std::vector<TensorRun> persistent) {
  out_.components.clear();
  persistent_ = std::move(persistent);
}

void WorkloadComposer::omit_overhead() { overhead_ = false; }

Bytes WorkloadComposer::overhead_with(const TransientTensors& transient) const {
  if (!overhead_ || !workload_.include_overhead) return Bytes(0);
  return estimate_overhead(workload_.overhead, persistent_, transient).total();
}

TransientTensors WorkloadComposer::transient_tensors() const {
  return {transient_, ordered_ ? steps_ : std::vector<AllocatorStep>{}};
}

Breakdown WorkloadComposer::finish() && {
  if (overhead_ && workload_.include_overhead) {
    out_.components.push_back(
        std::move(estimate_overhead(workload_.overhead, persistent_, transient_tensors()).components.front()));
  }
  return std::move(out_);
}

}  // namespace memplan::detail
