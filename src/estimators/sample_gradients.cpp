#include "memplan/estimators/sample_gradients.hpp"

#include <cmath>
#include <string>
#include <utility>

#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/rows.hpp"
#include "memplan/core/text.hpp"
#include "memplan/estimators/training.hpp"

namespace memplan {

namespace {

std::string decimal(double v) { return general_text(v, 4); }

void check_layers(const ModelSpec& spec, const std::vector<std::uint64_t>& layers) {
  for (const std::uint64_t l : layers) {
    if (l >= spec.n_layers) {
      throw Error(ErrorKind::invalid_input,
                  "layer " + std::to_string(l) + " does not exist: " + spec.name + " has blocks 0-" +
                      std::to_string(spec.n_layers - 1),
                  "layers");
    }
  }
}

}  // namespace

std::uint64_t selected_parameters(const ModelSpec& spec, const std::vector<std::uint64_t>& layers) {
  if (layers.empty()) return count_parameters(spec);
  check_layers(spec, layers);
  std::uint64_t total = 0;
  for (const std::uint64_t l : layers) total = checked_add(total, layer_parameters(spec, l), "selected parameters");
  return total;
}

std::uint64_t selected_tensors(const ModelSpec& spec, const std::vector<std::uint64_t>& layers) {
  if (!layers.empty()) check_layers(spec, layers);
  std::uint64_t tensors = 0;
  for (const TensorGroup& g : model_tensors(spec)) {
    if (layers.empty()) {
      tensors = checked_add(tensors, g.copies, "tensors");
    } else {
      for (const std::uint64_t l : layers) {
        if (layer_holds(spec, g.layers, l)) tensors = checked_add(tensors, copies_per_layer(spec, g), "tensors");
      }
    }
  }
  return tensors;
}

Item stored_gradient(std::uint64_t entries, std::uint64_t tensors, const SampleGradientOptions& o) {
  if (!(o.kept_fraction > 0 && o.kept_fraction <= 1)) {
    throw Error(ErrorKind::invalid_input, "the kept fraction must be in (0, 1], got " + decimal(o.kept_fraction),
                "kept_fraction");
  }
  if (o.zlib_ratio != 0 && !(o.zlib_ratio >= 1)) {
    throw Error(ErrorKind::invalid_input,
                "the zlib ratio must be at least 1 (or 0 for none), got " + decimal(o.zlib_ratio), "zlib_ratio");
  }
  if (o.index_bits != 32 && o.index_bits != 64) {
    throw Error(ErrorKind::invalid_input, "index bits must be 32 or 64", "index_bits");
  }
  if (is_quantized(o.dtype))
    throw Error(ErrorKind::invalid_input, "the gradient dtype must be a float precision", "gradient_dtype");
  const bool gated = o.kept_fraction < 1;
  const std::uint64_t kept =
      gated ? static_cast<std::uint64_t>(std::ceil(static_cast<long double>(entries) * o.kept_fraction)) : entries;
  const std::uint64_t value_bits = o.int8 ? 8 : element_bits(o.dtype.format);
  std::vector<Item> rows;
  rows.push_back(bytes_row("values", bits_to_bytes(kept, value_bits, "gradient values"),
                           (gated ? "ceil(" + decimal(o.kept_fraction) + " x " + group_digits(entries) +
                                        ") = " + group_digits(kept)
                                  : group_digits(entries)) +
                               " entries x " + (o.int8 ? std::string("1 B (int8)") : to_string(o.dtype))));
  if (gated) {
    rows.push_back(bytes_row("indices", bits_to_bytes(kept, o.index_bits, "indices"),
                             group_digits(kept) + " kept entries x " + std::to_string(o.index_bits / 8) + " B (int" +
                                 std::to_string(o.index_bits) + " index)"));
  }
  if (o.int8) {
    rows.push_back(bytes_row("scales", Bytes(checked_mul(tensors, 4, "scales")),
                             group_digits(tensors) + " tensors x 4 B (fp32 absmax scale)"));
  }
  Item out = group_row("stored_gradient", std::move(rows), "");
  const Bytes raw = out.bytes;
  std::string what = o.int8 ? "int8" : to_string(o.dtype);
  if (gated) what += ", top " + decimal(o.kept_fraction * 100) + "% as values + indices";
  if (o.zlib_ratio > 1) {
    const auto packed = static_cast<std::uint64_t>(std::ceil(static_cast<long double>(raw.count()) / o.zlib_ratio));
    std::string parts;
    for (const Item& r : out.detail) {
      parts += (parts.empty() ? "" : " + ") + r.name + " " + group_digits(r.bytes.count());
    }
    out.bytes = Bytes(packed);
    out.detail.clear();
    out.detail.push_back(bytes_row("compressed", Bytes(packed),
                                   "ceil(" + group_digits(raw.count()) + " B (" + parts + ", " + what +
                                       ") / zlib ratio " + decimal(o.zlib_ratio) + ")"));
    out.low = Bytes(packed);
    out.high = raw;
    out.note = "zlib ratio " + decimal(o.zlib_ratio) +
               " is an assumption (`zlib_ratio`): quantised gradients are far from text; up to " +
               group_digits(raw.count()) + " B if zlib gains nothing";
    what += ", zlib /" + decimal(o.zlib_ratio);
  }
  out.formula = "one gradient: " + what;
  return out;
}

Breakdown estimate_sample_gradients(const ModelSpec& spec, const SampleGradientOptions& o, std::uint64_t batch) {
  const std::uint64_t samples = o.samples > 0 ? o.samples : batch;
  if (samples == 0) throw Error(ErrorKind::invalid_input, "per-sample gradients need at least one sample", "samples");
  const std::uint64_t params = selected_parameters(spec, o.layers);
  const Item one = stored_gradient(params, selected_tensors(spec, o.layers), o);
  Item store = bytes_row(
      "sample_gradients", one.bytes.times(samples, "per-sample gradients"),
      group_digits(samples) + " samples x " + group_digits(one.bytes.count()) + " B (" + one.formula + ") over " +
          group_digits(params) +
          (o.layers.empty() ? " parameters" : " parameters of " + group_digits(o.layers.size()) + " selected blocks"),
      one.note);
  if (one.low && one.high) {
    store.low = one.low->times(samples, "per-sample gradients");
    store.high = one.high->times(samples, "per-sample gradients");
  }
  Breakdown out;
  if (o.on_host) {
    store.note = "kept in host RAM" + (store.note.empty() ? "" : "; " + store.note);
    store.low = store.high = std::nullopt;
    out.host.push_back(std::move(store));
  } else {
    out.components.push_back(std::move(store));
  }
  return out;
}

Breakdown estimate_tracin(const ModelSpec& spec, const TracinOptions& o, const SampleGradientOptions& g,
                          std::uint64_t batch) {
  const std::uint64_t train = o.train_samples > 0 ? o.train_samples : batch;
  if (o.checkpoints == 0) throw Error(ErrorKind::invalid_input, "TracIn needs at least one checkpoint", "checkpoints");
  if (train == 0 || o.test_samples == 0) {
    throw Error(ErrorKind::invalid_input, "TracIn needs training and test samples", "train_samples");
  }
  const std::uint64_t params = selected_parameters(spec, g.layers);
  const bool projected = o.projection > 0;
  const std::uint64_t dims = projected ? o.projection : params;
  const Item one = stored_gradient(dims, projected ? 1 : selected_tensors(spec, g.layers), g);
  const std::uint64_t kept_checkpoints = o.store_all ? o.checkpoints : 1;
  std::vector<Item> rows;
  Item store = bytes_row(
      "train_gradients", one.bytes.times(checked_mul(kept_checkpoints, train, "C x N"), "TracIn store"),
      (o.store_all ? group_digits(o.checkpoints) + " checkpoints x " : "one checkpoint at a time x ") +
          group_digits(train) + " training samples x " + group_digits(one.bytes.count()) + " B (" + one.formula + ")");
  if (one.low && one.high) {
    store.low = one.low->times(checked_mul(kept_checkpoints, train, "C x N"), "TracIn store");
    store.high = one.high->times(checked_mul(kept_checkpoints, train, "C x N"), "TracIn store");
  }
  rows.push_back(store);
  rows.push_back(bytes_row("test_gradients",
                           one.bytes.times(checked_mul(kept_checkpoints, o.test_samples, "C x M"), "test gradients"),
                           group_digits(kept_checkpoints) + " x " + group_digits(o.test_samples) + " test samples x " +
                               group_digits(one.bytes.count()) + " B"));
  rows.push_back(
      bytes_row("influence_scores", bits_to_bytes(checked_mul(train, o.test_samples, "N x M"), 32, "scores"),
                group_digits(train) + " x " + group_digits(o.test_samples) + " x 4 B (fp32, summed over checkpoints)"));
  if (projected) {
    // The projection matrix (n x k) is never stored whole: a block of 4096 parameters' rows
    // is regenerated from a seed and applied at a time (TRAK's block-wise projector).
    const std::uint64_t block = std::min<std::uint64_t>(params, 4096);
    rows.push_back(bytes_row("projection_block",
                             bits_to_bytes(checked_mul(o.projection, block, "projection"), 32, "projection"),
                             "k x block = " + group_digits(o.projection) + " x " + group_digits(block) +
                                 " x 4 B, regenerated from a seed per block"));
  }
  Bytes sum;
  Bytes low, high;
  for (const Item& r : rows) {
    sum = sum.plus(r.bytes, "TracIn");
    low = low.plus(r.low.value_or(r.bytes), "TracIn");
    high = high.plus(r.high.value_or(r.bytes), "TracIn");
  }
  Item tracin = bytes_row(
      "tracin", sum,
      "TracIn: checkpoints x training samples x stored gradient (" +
          (projected ? "projected to k = " + group_digits(o.projection) : group_digits(params) + " parameters") + ")",
      one.note);
  tracin.detail = std::move(rows);
  if (low != sum || high != sum) {
    tracin.low = low;
    tracin.high = high;
  }
  return Breakdown{{tracin}};
}

}  // namespace memplan
