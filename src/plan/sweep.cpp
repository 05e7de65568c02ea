#include "memplan/plan/sweep.hpp"

#include "memplan/plan/plan.hpp"

#include <algorithm>

#include "memplan/core/error.hpp"

namespace memplan {

namespace {

void require(bool ok, const std::string& message, const std::string& key) {
  if (!ok) throw Error(ErrorKind::invalid_input, message, key);
}

template <typename T>
bool has_zero(const std::vector<T>& values) {
  return std::find(values.begin(), values.end(), T{0}) != values.end();
}

}  // namespace

std::vector<SweepPoint> expand_grid(std::size_t models, const SweepAxes& a) {
  require(models > 0, "a sweep needs at least one model", "model");
  require(!a.workloads.empty(), "a sweep needs at least one workload", "workload");
  require(!a.precisions.empty(), "a sweep needs at least one precision", "precision");
  require(!a.batches.empty(), "a sweep needs at least one batch size", "batch");
  require(!a.seqs.empty(), "a sweep needs at least one sequence length", "seq");
  require(!has_zero(a.batches), "batch sizes must be at least 1", "batch");
  require(!has_zero(a.seqs), "sequence lengths must be at least 1", "seq");
  // The product, checked against the cap one factor at a time (it cannot overflow).
  std::uint64_t points = 1;
  for (const std::uint64_t n :
       {static_cast<std::uint64_t>(models), static_cast<std::uint64_t>(a.workloads.size()),
        static_cast<std::uint64_t>(a.precisions.size()), static_cast<std::uint64_t>(a.batches.size()),
        static_cast<std::uint64_t>(a.seqs.size())}) {
    points *= n;
    require(points <= max_sweep_points,
            "the grid has more than " + std::to_string(max_sweep_points) + " points; sweep fewer values at a time",
            "grid");
  }
  std::vector<SweepPoint> out;
  out.reserve(points);
  for (std::size_t m = 0; m < models; ++m) {
    for (const WorkloadKind kind : a.workloads) {
      for (std::size_t i = 0; i < a.precisions.size(); ++i) {
        const bool named = i < a.named.size() && a.named[i];
        for (const std::uint64_t b : a.batches) {
          for (const std::uint64_t s : a.seqs) out.push_back(SweepPoint{m, kind, a.precisions[i], b, s, named});
        }
      }
    }
  }
  return out;
}

Workload workload_at(const Workload& base, const SweepPoint& point, const SweepAxes& axes) {
  Workload w = base;
  w.kind = point.workload;
  w.weights.precision = point.precision;
  w.batch = point.batch;
  w.seq_len = point.seq;
  w.new_tokens = point.workload == WorkloadKind::generation ? (base.new_tokens > 0 ? base.new_tokens : axes.new_tokens)
                                                            : 0;
  return w;
}

std::vector<SweepRow> run_sweep(const std::vector<ModelSpec>& models, const Workload& base, const SweepAxes& axes,
                                std::optional<Bytes> budget, double threshold, const std::function<void()>& on_point) {
  const std::vector<SweepPoint> points = expand_grid(models.size(), axes);
  std::vector<SweepRow> rows;
  rows.reserve(points.size());
  for (const SweepPoint& point : points) {
    SweepRow row;
    row.point = point;
    const ModelSpec* spec_ptr = &models[point.model];
    ModelSpec repriced;
    if (point.named && !spec_ptr->stored_weights_source.empty()) {
      repriced = *spec_ptr;
      repriced.stored_weights.clear();
      repriced.stored_layers.reset();
      repriced.stored_weights_source.clear();
      row.notes.push_back("`precision` " + to_string(point.precision) + " overrides the checkpoint's quantisation");
      spec_ptr = &repriced;
    }
    const ModelSpec& spec = *spec_ptr;
    Workload w = workload_at(base, point, axes);
    // An encoder-decoder's forward pass: the target as bind() sets it unless given.
    const bool forward_pass = w.kind == WorkloadKind::inference || w.kind == WorkloadKind::training;
    if (is_encoder_decoder(spec) && forward_pass && w.target_len == 0)
      w.target_len = std::min(w.seq_len, spec.max_seq_len);
    if (!is_encoder_decoder(spec) || !forward_pass) w.target_len = 0;
    try {
      const Breakdown b = estimate_workload(spec, w);
      row.total = b.total();
      row.allocated = b.allocated();
      for (const Item& c : b.components) {
        if (row.largest.empty() || c.bytes > row.largest_bytes) {
          row.largest = c.name;
          row.largest_bytes = c.bytes;
        }
      }
      if (budget) {
        row.verdict = verdict_of(*row.total, *budget, threshold);
        row.fits = *row.verdict == Verdict::fits;
      }
      const std::uint64_t images = image_positions(spec, w);
      if (images != 0) {
        row.notes.push_back(std::to_string(w.seq_len) + " text + " + std::to_string(images) + " image tokens (" +
                            std::to_string(w.images) + " images)");
      }
      const std::uint64_t decoder_tokens = is_encoder_decoder(spec) ? w.new_tokens + w.target_len
                                                                    : w.seq_len + images + w.new_tokens;
      if (w.kind != WorkloadKind::weights && decoder_tokens > spec.max_seq_len) {
        row.notes.push_back(std::to_string(decoder_tokens) + " tokens exceed " + spec.name + "'s context of " +
                            std::to_string(spec.max_seq_len));
      }
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::internal) throw;
      row.error = e.what();
    }
    rows.push_back(std::move(row));
    if (on_point) on_point();
  }
  return rows;
}

}  // namespace memplan
