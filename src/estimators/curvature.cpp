#include "memplan/estimators/curvature.hpp"

#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/rows.hpp"
#include "memplan/core/text.hpp"
#include "memplan/estimators/block_eig.hpp"

namespace memplan {

namespace {

__extension__ using Wide = unsigned __int128;

std::string fixed(long double value, int digits) { return fixed_text(static_cast<double>(value), digits); }

}  // namespace

std::string wide_size_text(long double bytes) {
  static constexpr std::array<const char*, 7> units{"B", "KB", "MB", "GB", "TB", "PB", "EB"};
  std::size_t u = 0;
  while (bytes >= 1000.0L && u + 1 < units.size()) {
    bytes /= 1000.0L;
    ++u;
  }
  if (u + 1 == units.size() && bytes >= 1000.0L) {
    return fixed(bytes / 1000.0L, 1) + " ZB";
  }
  return fixed(bytes, u == 0 ? 0 : 1) + " " + units[u];
}

Breakdown estimate_fisher_blocks(const FisherBlockOptions& o) {
  if (o.blocks == 0) throw Error(ErrorKind::invalid_input, "the Fisher needs at least one block", "fisher_blocks");
  if (o.block_size == 0)
    throw Error(ErrorKind::invalid_input, "the Fisher block size must be at least 1", "fisher_block_size");
  const std::uint64_t b = o.block_size;
  const std::uint64_t bb = checked_mul(b, b, "block elements");
  Item item = bytes_row("fisher_blocks", Bytes(0), "");
  if (o.keep_blocks) {
    item.detail.push_back(
        elements_row("blocks", checked_mul(o.blocks, bb, "Fisher blocks"), o.dtype,
                     "blocks x b x b = " + group_digits(o.blocks) + " x " + group_digits(b) + " x " + group_digits(b)));
  } else {
    item.detail.push_back(
        elements_row("block", bb, o.dtype, "one b x b block at a time = " + group_digits(b) + " x " + group_digits(b)));
  }
  item.detail.push_back(elements_row(
      "gradient_slices", checked_mul(o.keep_blocks ? o.blocks : 1, b, "gradient slices"), o.dtype,
      "one sample's gradient on the blocked parameters: " + std::string(o.keep_blocks ? "blocks x b" : "b")));
  BlockEigShape shape;
  shape.blocks = o.blocks;
  shape.block_size = b;
  shape.dtype = o.dtype;
  shape.include_inputs = false;
  Breakdown eig = estimate_block_eig(shape);
  for (Item& d : eig.components.front().detail) item.detail.push_back(std::move(d));
  item.bytes = sum_bytes(item.detail, "Fisher block bytes");
  item.formula = "F_block = (1/N) sum g_i g_i^T over " + group_digits(o.blocks) + " blocks of " + group_digits(b) +
                 " parameters, then each block's spectrum with one reused eigensolver";
  return Breakdown{{item}};
}

std::string to_string(FisherGrouping grouping) { return grouping == FisherGrouping::tensor ? "tensor" : "channel"; }

FisherGrouping parse_fisher_grouping(std::string_view text) {
  if (text == "tensor") return FisherGrouping::tensor;
  if (text == "channel") return FisherGrouping::channel;
  throw Error(ErrorKind::invalid_input,
              "unknown Fisher grouping '" + printable(text) + "'" + did_you_mean(text, {"tensor", "channel"}) +
                  "; accepted: 'tensor' or 'channel'",
              "fisher_grouping");
}

std::uint64_t fisher_groups(const ModelSpec& spec, FisherGrouping grouping) {
  std::uint64_t groups = 0;
  for (const TensorGroup& g : model_tensors(spec)) {
    const std::uint64_t per_tensor = grouping == FisherGrouping::tensor || g.cols == 1 ? 1 : g.rows;
    groups = checked_add(groups, checked_mul(per_tensor, g.copies, "Fisher groups"), "Fisher groups");
  }
  return groups;
}

Breakdown estimate_grouped_fisher(const ModelSpec& spec, const GroupedFisherOptions& o) {
  if (o.samples == 0) throw Error(ErrorKind::invalid_input, "the grouped Fisher needs at least one sample", "batch");
  const std::uint64_t groups = fisher_groups(spec, o.grouping);
  const std::uint64_t values = o.per_sample ? checked_mul(groups, o.samples, "grouped Fisher values") : groups;
  Item item = elements_row("grouped_fisher", values, o.dtype,
                           o.per_sample ? "groups x samples = " + group_digits(groups) + " x " + group_digits(o.samples)
                                        : "groups (running sums over " + group_digits(o.samples) +
                                              " samples) = " + group_digits(groups));
  item.note = "one group per " + std::string(o.grouping == FisherGrouping::tensor ? "tensor" : "output channel") +
              "; the gradient pass that feeds it is counted apart";
  return Breakdown{{item}};
}

FullCurvatureSize full_curvature_size(std::uint64_t params, const Precision& dtype, const std::string& what,
                                      const std::string& model, const std::optional<DeviceLimit>& largest) {
  if (params == 0)
    throw Error(ErrorKind::invalid_input, "the " + what + " needs at least one parameter", "hessian_params");
  FullCurvatureSize out;
  out.params = params;
  const long double element = static_cast<long double>(element_bits(dtype.format)) / 8.0L;
  out.bytes = static_cast<long double>(params) * static_cast<long double>(params) * element;
  // n^2 is exact in 128 bits; times the element bits it may not be. Past 2^120 cells the
  // bytes are far beyond 64 bits anyway.
  const Wide squared = static_cast<Wide>(params) * params;
  if (squared <= (static_cast<Wide>(1) << 120)) {
    const Wide exact = squared * element_bits(dtype.format) / 8;
    if (exact <= UINT64_MAX) out.exact = Bytes(static_cast<std::uint64_t>(exact));
  }
  out.message = "the " + what + " of " + model + " (" + group_digits(params) + " parameters) would need " +
                wide_size_text(out.bytes) + " (n^2 x " + fixed(element, 0) + " B)";
  if (largest) {
    // The largest n with n^2 x element <= memory.
    const std::uint64_t cells = largest->memory.count() / std::max<std::uint64_t>(1, element_bits(dtype.format) / 8);
    auto root = static_cast<std::uint64_t>(std::sqrt(static_cast<long double>(cells)));
    while (root > 0 && static_cast<Wide>(root) * root > cells) root -= 1;
    while (static_cast<Wide>(root + 1) * (root + 1) <= cells) ++root;
    out.max_params = root;
    out.message += "; the largest GPU in the table (" + largest->name + ") has " +
                   wide_size_text(static_cast<long double>(largest->memory.count())) + "; at most " +
                   group_digits(root) + " parameters fit";
  }
  return out;
}

Breakdown estimate_full_curvature(std::uint64_t params, const Precision& dtype, const std::string& name,
                                  const std::string& model, const std::optional<DeviceLimit>& largest) {
  const std::string what = name == "fisher" ? "full Fisher" : "Hessian";
  const FullCurvatureSize size = full_curvature_size(params, dtype, what, model, largest);
  const auto fail = [&] {
    throw Error(ErrorKind::overflow,
                size.message + "; use `workload` lanczos for its top eigenvalues, or restrict it with `hessian_params`",
                "hessian_params");
  };
  if (!size.exact) fail();
  Item item = bytes_row(name, Bytes(0), "", size.message + " (intractable beyond that)");
  try {
    const std::uint64_t nn = checked_mul(params, params, "n^2");
    item.detail.push_back(elements_row("matrix", nn, dtype, "n x n = " + group_digits(params) + "^2"));
    item.detail.push_back(elements_row("solver_copy", nn, dtype, "the eigensolver's copy, tridiagonalised in place"));
    item.detail.push_back(elements_row("solver_vectors", checked_mul(3, params, "vectors") - 2, dtype,
                                       "eigenvalues n, off-diagonal and Householder coefficients n-1 each"));
    item.bytes = sum_bytes(item.detail, what + " bytes");
  } catch (const Error&) {
    fail();
  }
  item.formula = "a dense n x n " + what + " and its eigendecomposition (O(n^3) time); n = " + group_digits(params);
  return Breakdown{{item}};
}

}  // namespace memplan
