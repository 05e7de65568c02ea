#include "memplan/estimators/representation.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "memplan/core/error.hpp"
#include "memplan/core/rows.hpp"
#include "memplan/estimators/block_eig.hpp"

namespace memplan {

namespace {

void check(const RepresentationOptions& o) {
  if (o.samples == 0) throw Error(ErrorKind::invalid_input, "the analysis needs at least one sample", "samples");
  if (o.neighbours == 0) throw Error(ErrorKind::invalid_input, "neighbours must be at least 1", "neighbours");
  if (o.chunk == 0) throw Error(ErrorKind::invalid_input, "the distance chunk must be at least 1", "chunk");
  if (is_quantized(o.dtype))
    throw Error(ErrorKind::invalid_input, "the analysis dtype must be a float precision", "dtype");
}

// The eigendecomposition of one b x b symmetric matrix (its copy and vectors) plus its b eigenvalues.
std::vector<Item> eigen_rows(std::uint64_t b, const Precision& dtype) {
  BlockEigShape shape;
  shape.blocks = 1;
  shape.block_size = b;
  shape.dtype = dtype;
  shape.include_inputs = false;
  return estimate_block_eig(shape).components.front().detail;
}

}  // namespace

Breakdown estimate_embedding_singularities(const ModelSpec& s, const RepresentationOptions& o) {
  check(o);
  const std::uint64_t V = s.vocab_size, d = s.d_model, k = std::min(o.neighbours, V), c = std::min(o.chunk, V);
  const std::uint64_t local = std::min(k, d);
  std::vector<Item> rows{tensor_row("embedding", {{"V", V}, {"d", d}}, o.dtype),
                         tensor_row("distance_chunk", {{"chunk", c}, {"V", V}}, o.dtype),
                         tensor_row("neighbour_distances", {{"chunk", c}, {"k", k}}, o.dtype),
                         tensor_row("neighbour_indices", {{"chunk", c}, {"k", k}}, 64, "int64"),
                         tensor_row("neighbourhood", {{"k", k}, {"d", d}}, o.dtype),
                         tensor_row("local_gram", {{"min(k,d)", local}, {"min(k,d)", local}}, o.dtype)};
  for (Item& r : eigen_rows(local, o.dtype)) rows.push_back(std::move(r));
  return Breakdown{{group_row("embedding_singularities", std::move(rows),
                              "every token's k nearest neighbours, then local PCA of each neighbourhood; V = " +
                                  group_digits(V) + ", d = " + group_digits(d) + ", k = " + group_digits(k))}};
}

Breakdown estimate_fiber_bundle(const ModelSpec& s, const RepresentationOptions& o) {
  check(o);
  const std::uint64_t N = o.samples, d = s.d_model, k = std::min(o.neighbours, N);
  std::vector<Item> rows{tensor_row("points", {{"N", N}, {"d", d}}, o.dtype),
                         tensor_row("distances", {{"N", N}, {"N", N}}, o.dtype),
                         tensor_row("neighbourhood", {{"k", k}, {"d", d}}, o.dtype),
                         tensor_row("local_covariance", {{"d", d}, {"d", d}}, o.dtype)};
  for (Item& r : eigen_rows(d, o.dtype)) rows.push_back(std::move(r));
  return Breakdown{
      {group_row("fiber_bundle", std::move(rows),
                 "per point: its neighbourhood's d x d covariance and spectrum, one point at a time; N = " +
                     group_digits(N) + ", d = " + group_digits(d))}};
}

Breakdown estimate_superposition(const ModelSpec& s, const RepresentationOptions& o) {
  check(o);
  const std::uint64_t N = o.samples, d = s.d_model;
  const std::uint64_t F = o.features > 0 ? o.features : checked_mul(8, d, "features");
  std::vector<Item> rows{tensor_row("activations", {{"N", N}, {"d", d}}, o.dtype),
                         tensor_row("feature_directions", {{"F", F}, {"d", d}}, o.dtype),
                         tensor_row("feature_activations", {{"N", N}, {"F", F}}, o.dtype)};
  Breakdown out;
  const Item overlap = tensor_row("feature_overlap", {{"F", F}, {"F", F}}, o.dtype);
  if (o.overlap) rows.push_back(overlap);
  out.components.push_back(
      group_row("superposition", std::move(rows),
                "N = " + group_digits(N) + " samples, F = " + group_digits(F) + " features, d = " + group_digits(d)));
  if (!o.overlap) {
    Item with = out.components.front();
    with.name = "superposition_with_overlap";
    with.bytes = with.bytes.plus(overlap.bytes, "superposition");
    with.formula += ", plus the F x F interference matrix";
    with.note = "with the F x F feature-overlap matrix (`overlap`)";
    with.detail.clear();
    out.alternatives.push_back({"superposition", with});
  }
  return out;
}

Breakdown estimate_cka(const ModelSpec& s, const RepresentationOptions& o) {
  check(o);
  const std::uint64_t N = o.samples, d = s.d_model, reps = checked_add(s.n_layers, 1, "layers + 1");
  const Item stream = tensor_row("representations", {{"layers+1", reps}, {"N", N}, {"d", d}}, o.dtype);
  const Item grams = tensor_row("centred_grams", {{"layers+1", reps}, {"N", N}, {"N", N}}, o.dtype);
  const Item cross = tensor_row("cross_covariances", {{"3", 3}, {"d", d}, {"d", d}}, o.dtype);
  const Item similarity = tensor_row("similarity", {{"layers+1", reps}, {"layers+1", reps}}, o.dtype);
  const bool gram_form = grams.bytes <= cross.bytes;
  Breakdown out;
  out.components.push_back(
      group_row("cka", {stream, gram_form ? grams : cross, similarity},
                gram_form ? "linear CKA from centred N x N Gram matrices (N = " + group_digits(N) +
                                " < d = " + group_digits(d) + ")"
                          : "linear CKA from d x d cross-covariances X^T Y, X^T X, Y^T Y, one pair at a time"));
  Item other = group_row("cka_" + std::string(gram_form ? "feature_form" : "gram_form"),
                         {stream, gram_form ? cross : grams, similarity},
                         gram_form ? "the d x d form instead" : "the N x N Gram form instead");
  other.note = gram_form ? "the O(N d^2) feature-space form TensorScope describes" : "the O(N^2 d) Gram form";
  other.detail.clear();
  out.alternatives.push_back({"cka", other});
  return out;
}

}  // namespace memplan
