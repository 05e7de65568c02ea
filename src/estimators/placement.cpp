#include "memplan/estimators/placement.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "parallel_internal.hpp"

namespace memplan {

namespace {

constexpr detail::NameTable<PlacementPolicy, 3> kPolicies{{
    {PlacementPolicy::balanced, "balanced"},
    {PlacementPolicy::balanced_low_0, "balanced_low_0"},
    {PlacementPolicy::sequential, "sequential"},
}};

// The model's size as get_balanced_memory sees it.
struct ModelTotals {
  Bytes total;                // every unit's bytes
  std::uint64_t modules = 0;  // parameter-holding modules
  Bytes largest_block;        // the largest transformer block
};

ModelTotals model_totals(const std::vector<PlacementUnit>& units) {
  ModelTotals out;
  for (const PlacementUnit& u : units) {
    out.total = out.total.plus(u.bytes, "model bytes");
    out.modules = checked_add(out.modules, u.modules, "modules");
    if (u.layer) out.largest_block = std::max(out.largest_block, u.bytes);
  }
  return out;
}

// transformers get_balanced_memory (device_map "auto", "balanced", "balanced_low_0"):
// lowers `max_memory` to each GPU's share of the model plus a block's room.
void balance_max_memory(std::vector<Bytes>& mm, const ModelTotals& m, const PlacementOptions& o) {
  const std::size_t gpus = mm.size();
  if (gpus == 1) {
    if (!o.user_max_memory) mm[0] = Bytes(mm[0].count() / 10 * 9 + mm[0].count() % 10 * 9 / 10);  // floor(0.9 x free)
    return;
  }
  const bool low_zero = o.policy == PlacementPolicy::balanced_low_0;
  std::uint64_t per_gpu = m.total.count() / (low_zero ? gpus - 1 : gpus);
  const std::uint64_t mean = m.modules > 0 ? m.total.count() / m.modules : 0;
  const std::uint64_t biggest = std::max(m.largest_block.count(), mean);
  const std::uint64_t buffer = biggest / 4 * 5 + biggest % 4 * 5 / 4;  // int(1.25 x max(block, mean module))
  per_gpu = checked_add(per_gpu, buffer, "per-GPU budget");
  for (std::size_t i = 0; i + 1 < gpus; ++i) {
    const Bytes cap = (low_zero && i == 0) ? mm[0] : Bytes(per_gpu);
    mm[i] = std::min(cap, mm[i]);
  }
  if (low_zero) {
    Bytes others;
    for (std::size_t i = 1; i < gpus; ++i) others = others.plus(mm[i], "GPU budgets");
    const Bytes min_zero = m.total > others ? Bytes(m.total.count() - others.count()) : Bytes(0);
    mm[0] = std::min(min_zero, mm[0]);
  }
}

// The largest unit from some point on, and how many units that size remain: GPU 0 and the
// CPU keep room for it (an offloaded unit is brought there to run).
class LargestRemaining {
 public:
  explicit LargestRemaining(const std::vector<PlacementUnit>& units) : units_(units) { recompute(0); }

  std::uint64_t size() const { return size_; }

  // Called as unit `i` is placed.
  void placed(std::size_t i) {
    if (units_[i].bytes.count() == size_ && count_ > 0) count_ -= 1;
    if (count_ == 0) recompute(i + 1);
  }

 private:
  void recompute(std::size_t from) {
    size_ = 0;
    count_ = 0;
    for (std::size_t j = from; j < units_.size(); ++j) {
      if (units_[j].bytes.count() > size_) {
        size_ = units_[j].bytes.count();
        count_ = 0;
      }
      if (units_[j].bytes.count() == size_) ++count_;
    }
  }

  const std::vector<PlacementUnit>& units_;
  std::uint64_t size_ = 0;
  std::size_t count_ = 0;
};

// accelerate infer_auto_device_map: units in order onto GPU 0, 1, ..., then the CPU, then
// disk, GPU 0 and the CPU keeping room for the largest unit still to place.
void assign_units(const std::vector<PlacementUnit>& units, const PlacementOptions& o, Placement& out) {
  const std::size_t gpus = out.max_memory.size();
  out.device.assign(units.size(), -2);
  out.used.assign(gpus, Bytes(0));
  Bytes cpu_used;
  LargestRemaining largest(units);
  out.largest_unit = Bytes(largest.size());
  std::size_t current = 0;  // 0..gpus-1: GPUs; gpus: cpu; gpus+1: disk
  for (std::size_t i = 0; i < units.size(); ++i) {
    const std::uint64_t size = units[i].bytes.count();
    largest.placed(i);
    while (true) {
      if (current > gpus) {  // disk: unlimited
        out.device[i] = -2;
        break;
      }
      const bool cpu = current == gpus;
      const bool main = current == 0 || cpu;
      if (cpu && !o.cpu_memory) {
        out.device[i] = -1;
        cpu_used = cpu_used.plus(units[i].bytes, "cpu bytes");
        break;
      }
      const std::uint64_t cap = cpu ? o.cpu_memory->count() : out.max_memory[current].count();
      const std::uint64_t reserve = main ? largest.size() : 0;
      const Bytes used = cpu ? cpu_used : out.used[current];
      if (cap >= reserve && used.count() + size <= cap - reserve) {
        if (cpu) {
          out.device[i] = -1;
          cpu_used = cpu_used.plus(units[i].bytes, "cpu bytes");
        } else {
          out.device[i] = static_cast<int>(current);
          out.used[current] = out.used[current].plus(units[i].bytes, "GPU bytes");
        }
        break;
      }
      ++current;
    }
  }
}

}  // namespace

std::string to_string(PlacementPolicy policy) { return detail::name_of(kPolicies, policy); }

PlacementPolicy parse_placement_policy(std::string_view text) {
  if (text == "auto") return PlacementPolicy::balanced;  // transformers: "auto" is "balanced"
  return detail::parse_named(kPolicies, text, "device_map", "device_map (also 'auto')");
}

std::vector<PlacementUnit> placement_units(const ModelSpec& spec, const WeightsOptions& options) {
  std::vector<PlacementUnit> out;
  // One block's tensors per kind of block, repeated over its layers. A kind is which sets of
  // per-layer tensors the block holds (bits: attention, a state-space mixer, experts, a dense MLP).
  static constexpr std::array<LayerSet, 4> kKindSets{LayerSet::attention, LayerSet::ssm, LayerSet::moe_mlp,
                                                     LayerSet::dense_mlp};
  std::array<PlacementUnit, 16> layer;
  PlacementUnit shared_block;  // one of Zamba2's shared blocks, stored in the attention layer first using it
  const auto kind_holds = [](std::size_t kind, LayerSet set) {
    if (set == LayerSet::all) return true;
    if (set == LayerSet::ssm_only) return (kind & 2U) != 0 && (kind & 1U) == 0;
    for (std::size_t bit = 0; bit < kKindSets.size(); ++bit) {
      if (kKindSets.at(bit) == set) return (kind & (1U << bit)) != 0;
    }
    return false;
  };
  const auto add = [&](PlacementUnit& u, const TensorGroup& g, std::uint64_t copies) {
    const std::uint64_t each = weight_tensor_bytes(g, options);
    u.bytes = u.bytes.plus(Bytes(each).times(copies, "bytes of", g.name), "bytes of", u.name);
    u.tensors.push_back({each, copies});
    u.params = checked_add(u.params, checked_mul(copies, checked_mul(g.rows, g.cols, "elements"), "parameters"),
                           "parameters");
    if (!g.name.ends_with(".bias")) u.modules = checked_add(u.modules, copies, "modules");
  };
  const auto unit_named = [&](const std::string& name) -> PlacementUnit& {
    for (PlacementUnit& u : out) {
      if (u.name == name) return u;
    }
    out.push_back({name, Bytes(0), 0, std::nullopt, 0, {}});
    return out.back();
  };
  const auto base = [](const std::string& name) {
    const std::size_t dot = name.find('.');
    return dot == std::string::npos ? name : name.substr(0, dot);
  };
  const auto add_blocks = [&] {
    for (std::uint64_t i = 0; i < spec.n_layers; ++i) {
      std::size_t kind = 0;
      for (std::size_t bit = 0; bit < kKindSets.size(); ++bit) {
        if (layer_holds(spec, kKindSets.at(bit), i)) kind |= 1U << bit;
      }
      PlacementUnit u = layer.at(kind);
      if (shared_blocks_in(spec, i, 1) != 0) {
        u.bytes = u.bytes.plus(shared_block.bytes, "bytes of", "a shared block");
        u.params = checked_add(u.params, shared_block.params, "parameters");
        u.modules = checked_add(u.modules, shared_block.modules, "modules");
        u.tensors.insert(u.tensors.end(), shared_block.tensors.begin(), shared_block.tensors.end());
      }
      u.name = "layers." + std::to_string(i);
      u.layer = i;
      out.push_back(std::move(u));
    }
  };
  bool layers_added = false;
  for (const TensorGroup& g : model_tensors(spec)) {
    if (g.component == "embeddings" || detail::is_head_group(g)) {
      if (!layers_added && detail::is_head_group(g)) {
        add_blocks();
        layers_added = true;
      }
      add(unit_named(g.component == "lm_head" ? std::string("lm_head") : base(std::string(g.name))), g, g.copies);
    } else if (spec.shared.blocks != 0 && g.layers == LayerSet::none) {
      add(shared_block, g, g.copies / spec.shared.blocks);
    } else {
      for (std::size_t kind = 0; kind < layer.size(); ++kind) {
        if (kind_holds(kind, g.layers) || g.layers == LayerSet::none) add(layer.at(kind), g, copies_per_layer(spec, g));
      }
    }
  }
  if (!layers_added) add_blocks();
  return out;
}

Placement place_units(const std::vector<PlacementUnit>& units, const PlacementOptions& o) {
  if (o.max_memory.empty()) throw_invalid_input("gpus", "device_map placement needs at least one GPU (`gpus`)");
  Placement out;
  out.max_memory = o.max_memory;
  const ModelTotals totals = model_totals(units);
  if (o.policy != PlacementPolicy::sequential) balance_max_memory(out.max_memory, totals, o);
  assign_units(units, o, out);
  return out;
}

}  // namespace memplan
