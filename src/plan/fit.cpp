#include "memplan/plan/fit.hpp"

#include <algorithm>
#include <cmath>

#include "memplan/core/error.hpp"
#include "memplan/plan/layout.hpp"

namespace memplan {

namespace {

constexpr std::uint64_t kPpm = 1'000'000;
constexpr std::uint64_t kBatchCap = 1ULL << 24;

bool chunked_attention(const Workload& w) {
  return w.attention == AttentionVariant::chunked || w.attention == AttentionVariant::causal_linear_chunked;
}

// The total at one value, or nothing when it overflows 64 bits.
std::optional<Breakdown> estimate_at(const ModelSpec& spec, Workload w, FitKnob knob, std::uint64_t value) {
  set_fit_knob(w, knob, value);
  try {
    Breakdown b = estimate_workload(spec, w);
    b.total();  // throws on overflow
    return b;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::overflow) throw;
    return std::nullopt;
  }
}

// The component that grows the most from the result's value to the next one binds.
void set_binding(FitResult& r, const Breakdown& over) {
  std::uint64_t most = 0;
  for (const Item& c : over.components) {
    const Item* before = r.breakdown->find(c.name);
    const std::uint64_t was = before ? before->bytes.count() : 0;
    const std::uint64_t grew = c.bytes.count() > was ? c.bytes.count() - was : 0;
    if (grew > most || r.binding.empty()) {
      most = grew;
      r.binding = c.name;
      r.binding_bytes = c.bytes;
    }
  }
}

}  // namespace

Bytes budget_limit(Bytes budget, double threshold) {
  const std::uint64_t ppm = std::min(static_cast<std::uint64_t>(std::llround(threshold * 1e6)), kPpm);
  const std::uint64_t b = budget.count();
  return Bytes{(b / kPpm) * ppm + (b % kPpm) * ppm / kPpm};
}

std::string to_string(FitKnob knob) {
  switch (knob) {
    case FitKnob::batch: return "batch";
    case FitKnob::seq: return "seq";
    case FitKnob::attention_chunk: return "attention_chunk";
    case FitKnob::streaming_chunk: return "streaming_chunk";
    case FitKnob::gpu_layers: return "ngl";
    case FitKnob::cpu_moe_layers: return "n_cpu_moe";
  }
  return "batch";
}

FitKnob choose_fit_knob(std::string_view vary, const Workload& w) {
  const bool streaming = w.kind == WorkloadKind::streaming_extraction;
  const std::string chunk_help =
      "`kind` streaming_extraction (the `streaming_chunk` knob) or `attention` chunked|causal_linear_chunked (the "
      "`attention_chunk` knob)";
  if (vary == "batch") return FitKnob::batch;
  if (vary == "seq" || vary == "ctx") return FitKnob::seq;
  if (vary == "ngl") return FitKnob::gpu_layers;
  if (vary == "n_cpu_moe") return FitKnob::cpu_moe_layers;
  if (vary == "chunk") {
    if (streaming) return FitKnob::streaming_chunk;
    if (chunked_attention(w)) return FitKnob::attention_chunk;
    throw Error(ErrorKind::invalid_input,
                "`vary` chunk needs a workload with a chunk: " + chunk_help + "; this plan is " + to_string(w.kind) +
                    " with `attention` " + to_string(w.attention),
                "vary");
  }
  if (vary == "streaming_chunk") {
    if (!streaming) {
      throw Error(ErrorKind::invalid_input, "`vary` streaming_chunk needs `kind` streaming_extraction", "vary");
    }
    return FitKnob::streaming_chunk;
  }
  if (vary == "attention_chunk") {
    if (!chunked_attention(w)) {
      throw Error(ErrorKind::invalid_input, "`vary` attention_chunk needs `attention` chunked or causal_linear_chunked",
                  "vary");
    }
    return FitKnob::attention_chunk;
  }
  throw Error(ErrorKind::invalid_input,
              "`vary` must be batch, seq or chunk (or attention_chunk, streaming_chunk; with `engine` llama.cpp ngl, "
              "ctx or n_cpu_moe), got '" +
                  std::string(vary) + "'",
              "vary");
}

std::uint64_t fit_knob_value(const Workload& w, FitKnob knob) {
  switch (knob) {
    case FitKnob::batch: return w.batch;
    case FitKnob::seq: return w.seq_len;
    case FitKnob::attention_chunk: return w.attention_chunk;
    case FitKnob::streaming_chunk: return w.streaming_chunk;
    case FitKnob::gpu_layers:
    case FitKnob::cpu_moe_layers: return 0;  // layout options, not the workload's
  }
  return 0;
}

void set_fit_knob(Workload& w, FitKnob knob, std::uint64_t value) {
  switch (knob) {
    case FitKnob::batch: w.batch = value; break;
    case FitKnob::seq: w.seq_len = value; break;
    case FitKnob::attention_chunk: w.attention_chunk = value; break;
    case FitKnob::streaming_chunk: w.streaming_chunk = value; break;
    case FitKnob::gpu_layers:
    case FitKnob::cpu_moe_layers: break;
  }
}

std::uint64_t fit_knob_cap(const ModelSpec& spec, const Workload& w, FitKnob knob) {
  switch (knob) {
    case FitKnob::batch: return kBatchCap;
    case FitKnob::seq: {
      // An encoder-decoder's seq_len is the source: bounded by the encoder's table, if any.
      if (is_encoder_decoder(spec) && spec.encoder.mel_bins != 0) {
        throw Error(ErrorKind::invalid_input,
                    spec.name + "'s audio encoder reads exactly " + std::to_string(spec.encoder.n_positions) +
                        " positions: its source cannot vary (vary batch)",
                    "vary");
      }
      if (is_encoder_decoder(spec)) return spec.encoder.n_positions != 0 ? spec.encoder.n_positions : spec.max_seq_len;
      // The images' tokens and the new ones share the context with the text.
      const std::uint64_t others = checked_add(w.new_tokens, image_positions(spec, w), "new and image tokens");
      if (others >= spec.max_seq_len) {
        throw Error(ErrorKind::invalid_input,
                    std::to_string(others) + " new and image tokens leave no room for a prompt in " + spec.name +
                        "'s context of " + std::to_string(spec.max_seq_len),
                    "seq_len");
      }
      return spec.max_seq_len - others;
    }
    case FitKnob::attention_chunk:
    case FitKnob::streaming_chunk: return std::max<std::uint64_t>(w.seq_len, 1);
    case FitKnob::gpu_layers: return spec.n_layers + 1;
    case FitKnob::cpu_moe_layers: return spec.n_layers;
  }
  return 1;
}

FitResult fit_largest(const ModelSpec& spec, const Workload& workload, FitKnob knob, Bytes limit, std::uint64_t cap) {
  if (knob == FitKnob::gpu_layers || knob == FitKnob::cpu_moe_layers) {
    throw Error(ErrorKind::invalid_input,
                "`vary` " + to_string(knob) + " is llama.cpp's " +
                    (knob == FitKnob::gpu_layers ? "-ngl" : "--n-cpu-moe") + ": add `engine` llama.cpp",
                "vary");
  }
  FitResult r;
  r.knob = knob;
  r.cap = cap > 0 ? cap : fit_knob_cap(spec, workload, knob);
  const auto fits = [&](std::uint64_t value) {
    const std::optional<Breakdown> b = estimate_at(spec, workload, knob, value);
    return b && b->total() <= limit;
  };

  const std::optional<Breakdown> first = estimate_at(spec, workload, knob, 1);
  if (!first || first->total() > limit) {
    if (first) r.next_total = first->total();
    r.next_overflows = !first;
    return r;
  }
  // Double until a value does not fit (or the cap), then bisect, keeping fits(lo), !fits(hi).
  std::uint64_t lo = 1, hi = 0;
  while (hi == 0 && lo < r.cap) {
    const std::uint64_t next = lo > r.cap / 2 ? r.cap : lo * 2;
    (fits(next) ? lo : hi) = next;
  }
  while (hi != 0 && hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  r.value = lo;
  r.breakdown = estimate_at(spec, workload, knob, lo);
  if (hi == 0) return r;  // the cap fits

  const std::optional<Breakdown> over = estimate_at(spec, workload, knob, lo + 1);
  if (!over) {
    r.next_overflows = true;
    return r;
  }
  r.next_total = over->total();
  set_binding(r, *over);
  return r;
}

FitResult fit_llama_cpp(const ModelSpec& spec, const Workload& workload, const LayoutOptions& options, FitKnob knob,
                        Bytes limit) {
  if (knob != FitKnob::gpu_layers && knob != FitKnob::seq && knob != FitKnob::cpu_moe_layers) {
    throw Error(ErrorKind::invalid_input, "with `engine` llama.cpp, `vary` is ngl, ctx (= seq) or n_cpu_moe", "vary");
  }
  // The device the search watches: the GPU, or the host for a plan on the CPU.
  const auto at = [&](std::uint64_t value) -> std::optional<Breakdown> {
    Workload w = workload;
    LayoutOptions o = options;
    if (knob == FitKnob::gpu_layers) {
      o.llama_cpp->gpu_layers = value;
    } else if (knob == FitKnob::cpu_moe_layers) {
      o.llama_cpp->n_cpu_moe = value;
    } else {
      w.seq_len = value;
    }
    try {
      Breakdown b = estimate_layout(spec, w, o).devices.front().breakdown;
      b.total();  // throws on overflow
      return b;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::overflow) throw;
      return std::nullopt;
    }
  };
  const auto fits = [&](std::uint64_t value) {
    const std::optional<Breakdown> b = at(value);
    return b && b->total() <= limit;
  };
  FitResult r;
  r.knob = knob;
  r.cap = fit_knob_cap(spec, workload, knob);
  if (knob == FitKnob::cpu_moe_layers && spec.experts == 0) {
    throw Error(ErrorKind::invalid_input, "`vary` n_cpu_moe moves routed experts; " + spec.name + " has none", "vary");
  }
  // The search runs from the value needing the least memory (`safe`) toward the one needing the
  // most (`greedy`): the shortest context (one token for each of -np separate streams) or no
  // layer on the GPU up to the cap, or for n_cpu_moe every layer's experts on the host down to none.
  const LlamaCppOptions& l = *options.llama_cpp;
  const bool falling = knob == FitKnob::cpu_moe_layers;
  const std::uint64_t safe = falling                       ? r.cap
                             : knob == FitKnob::gpu_layers ? 0
                             : l.kv_unified                ? 1
                                                           : std::max<std::uint64_t>(l.n_seq, 1);
  const std::uint64_t greedy = falling ? 0 : r.cap;
  const auto toward_greedy = [&](std::uint64_t v) { return falling ? v - 1 : v + 1; };
  if (!fits(safe)) {
    const std::optional<Breakdown> first = at(safe);
    if (first) r.next_total = first->total();
    r.next_overflows = !first;
    return r;
  }
  std::uint64_t good = safe, bad = greedy;  // fits(good), !fits(bad)
  if (fits(greedy)) {
    good = greedy;
  } else {
    while ((good < bad ? bad - good : good - bad) > 1) {
      const std::uint64_t mid = good < bad ? good + (bad - good) / 2 : good - (good - bad) / 2;
      (fits(mid) ? good : bad) = mid;
    }
  }
  r.value = good;
  r.breakdown = at(good);
  if (good == greedy) return r;
  const std::optional<Breakdown> over = at(toward_greedy(good));
  if (!over) {
    r.next_overflows = true;
    return r;
  }
  r.next_total = over->total();
  set_binding(r, *over);
  return r;
}

}  // namespace memplan
