#include "memplan/resolve/resolver.hpp"

#include <algorithm>
#include <utility>

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"

namespace memplan {

namespace {

constexpr ComputeCapability any_gpu{0, 0};

const std::vector<Format> kQuantised = {Format::int8, Format::int4, Format::nf4, Format::fp4};

const char* const kQuantisedCpuNote =
    "quantised kernels (bitsandbytes, GPTQ, AWQ, Marlin) mostly target CUDA GPUs; check that your engine "
    "runs this format on a CPU";

// Adds a rule for each quantised format: any GPU runs it, a CPU maybe (kept, with a warning).
void add_quantised_rules(std::vector<FormatRule>& rules, const std::string& source) {
  for (const Format f : kQuantised) {
    rules.push_back({f, any_gpu, any_gpu, "", CpuSupport::slow, kQuantisedCpuNote, {}, false, {}, source});
  }
}

PrecisionPolicy pytorch_policy() {
  PrecisionPolicy p;
  p.name = "pytorch";
  p.engine = "PyTorch";
  p.description = "PyTorch / Hugging Face transformers: the thresholds of TheLoom's fallback chain";
  p.auto_chain = {Format::bf16, Format::fp16, Format::fp32};
  const std::string cpu_bf16 =
      "most PyTorch CPU kernels run bf16 slower than fp32 unless the CPU has AVX512-BF16 or AMX";
  const std::string cpu_fp16 = "most PyTorch CPU kernels run fp16 slower than fp32 unless the CPU has AVX512-FP16";
  p.rules = {
      {Format::fp32, any_gpu, any_gpu, "", CpuSupport::native, "", {}, false, {}, "every CUDA GPU and CPU"},
      {Format::tf32,
       {8, 0},
       any_gpu,
       "",
       CpuSupport::none,
       "TF32 is a tensor-core mode of Ampere and newer GPUs",
       {Format::fp32},
       false,
       {},
       "https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices"},
      {Format::fp16,
       {5, 3},
       any_gpu,
       "",
       CpuSupport::slow,
       cpu_fp16,
       {Format::fp32},
       false,
       {},
       "TheLoom (FP16: compute capability 5.3+); CUDA C++ Programming Guide: native half arithmetic from 5.3"},
      {Format::bf16,
       {8, 0},
       any_gpu,
       "",
       CpuSupport::slow,
       cpu_bf16,
       {Format::fp16, Format::fp32},
       false,
       {},
       "TheLoom (BF16: Ampere+, compute capability 8.0+); torch.cuda.is_bf16_supported()"},
      {Format::fp8_e4m3,
       {8, 9},
       any_gpu,
       "",
       CpuSupport::none,
       "PyTorch has no fp8 matrix multiply on a CPU",
       {Format::bf16, Format::fp16, Format::fp32},
       false,
       {},
       "torch._scaled_mm: 'only supported on CUDA devices with compute capability >= 9.0 or 8.9'"},
      {Format::fp8_e5m2,
       {8, 9},
       any_gpu,
       "",
       CpuSupport::none,
       "PyTorch has no fp8 matrix multiply on a CPU",
       {Format::bf16, Format::fp16, Format::fp32},
       false,
       {},
       "torch._scaled_mm: 'only supported on CUDA devices with compute capability >= 9.0 or 8.9'"},
  };
  add_quantised_rules(p.rules, "quantisation is a choice the user names; memplan keeps it");
  return p;
}

PrecisionPolicy vllm_policy() {
  PrecisionPolicy p;
  p.name = "vllm";
  p.engine = "vLLM";
  p.description = "vLLM serving: its CUDA platform's supported dtypes, fp8 weight-only on older GPUs";
  p.auto_chain = {Format::bf16, Format::fp16, Format::fp32};
  p.min_device = {7, 0};
  p.min_device_source =
      "https://docs.vllm.ai/en/stable/getting_started/installation/gpu/ (compute capability 7.0 or higher)";
  const std::string dtypes = "vllm/platforms/cuda.py supported_dtypes: bf16 from 8.0, fp16 from 6.0, else fp32 only";
  const std::string fp8 =
      "https://docs.vllm.ai/en/stable/features/quantization/fp8/ (W8A8 from 8.9; weight-only W8A16 with FP8 Marlin "
      "from 7.5)";
  const std::string fp8_slow =
      "runs as weight-only W8A16 (FP8 Marlin) below compute capability 8.9: weights in fp8, "
      "activations in 16-bit";
  const std::string cpu_fp8 = "vLLM's CPU backend has no fp8 path";
  p.rules = {
      {Format::fp32, any_gpu, any_gpu, "", CpuSupport::native, "", {}, false, {}, dtypes},
      {Format::tf32,
       {8, 0},
       any_gpu,
       "",
       CpuSupport::none,
       "TF32 is a tensor-core mode of Ampere and newer GPUs",
       {Format::fp32},
       false,
       {},
       "TF32 tensor cores: Ampere (8.0) and newer"},
      {Format::fp16,
       {6, 0},
       any_gpu,
       "",
       CpuSupport::native,
       "vllm/platforms/cpu.py: x86 and aarch64 run fp16",
       {Format::bf16, Format::fp32},
       false,
       {"gemma2", "gemma3", "gemma3_text", "plamo2", "glm4"},
       dtypes + "; vllm/config/model.py _FLOAT16_NOT_SUPPORTED_MODELS (numerical instability)"},
      {Format::bf16,
       {8, 0},
       any_gpu,
       "",
       CpuSupport::native,
       "vllm/platforms/cpu.py: x86 and aarch64 run bf16",
       {Format::fp16, Format::fp32},
       true,
       {},
       dtypes + "; named bf16 below 8.0 raises 'Bfloat16 is only supported on GPUs with compute capability of at "
                "least 8.0' (vLLM's dtype=half)"},
      {Format::fp8_e4m3,
       {7, 5},
       {8, 9},
       fp8_slow,
       CpuSupport::none,
       cpu_fp8,
       {Format::bf16, Format::fp16, Format::fp32},
       false,
       {},
       fp8},
      {Format::fp8_e5m2,
       {7, 5},
       {8, 9},
       fp8_slow,
       CpuSupport::none,
       cpu_fp8,
       {Format::bf16, Format::fp16, Format::fp32},
       false,
       {},
       fp8},
  };
  add_quantised_rules(p.rules,
                      "quantisation is a choice the user names (vLLM's quantization setting); memplan keeps it");
  return p;
}

bool is_any(ComputeCapability cc) { return cc == any_gpu; }

const FormatRule* find_rule(const PrecisionPolicy& policy, Format format) {
  for (const FormatRule& r : policy.rules) {
    if (r.format == format) return &r;
  }
  return nullptr;
}

// What the device does with one format, and why.
struct FormatJudgement {
  bool runs = false;
  std::string reason;
  std::string warning;         // set when it runs, but not as well as asked
  bool model_refused = false;  // the engine refuses this format for the model type
};

// `prefer_native`: on a CPU, count only formats it runs natively (what `auto` and a
// fallback want); a format named by the user may also run slowly.
FormatJudgement judge(const PrecisionPolicy& policy, Format format, const ResolveRequest& request, bool prefer_native) {
  const DeviceCapability& device = request.device;
  const std::string name = to_string(format);
  const FormatRule* rule = find_rule(policy, format);
  FormatJudgement v;
  if (rule && !request.model_type.empty() &&
      std::find(rule->refused_model_types.begin(), rule->refused_model_types.end(), request.model_type) !=
          rule->refused_model_types.end()) {
    v.reason = policy.engine + " refuses " + name + " for model type '" + request.model_type +
               "' (numerical instability)";
    v.model_refused = true;
    return v;
  }
  if (device.kind == DeviceKind::cpu) {
    const CpuSupport support = rule ? rule->cpu : CpuSupport::native;
    switch (support) {
      case CpuSupport::native:
        v.runs = true;
        v.reason = name + " runs natively on " + device.name;
        break;
      case CpuSupport::slow:
        v.runs = !prefer_native;
        v.reason = name + " runs on " + device.name + ", but not at full speed: " + rule->cpu_note;
        if (v.runs) v.warning = name + " on " + device.name + ": " + rule->cpu_note + "; memory is planned in " + name;
        break;
      case CpuSupport::none: v.reason = name + " does not run on " + device.name + ": " + rule->cpu_note; break;
    }
    return v;
  }
  const ComputeCapability has = device.compute_capability;
  if (!rule || is_any(rule->min_gpu)) {
    v.runs = true;
    v.reason = name + " runs on any GPU";
    if (rule && is_quantized(Precision{format})) v.reason += " (a quantisation choice, kept as named)";
    return v;
  }
  v.reason = name + " needs compute capability " + to_string(rule->min_gpu) + " or newer; " + device.name + " has " +
             to_string(has);
  v.runs = has >= rule->min_gpu;
  if (v.runs && !is_any(rule->full_speed) && has < rule->full_speed) {
    v.warning = name + " on compute capability " + to_string(has) + ": " + rule->below_full_speed;
    v.reason += " (" + rule->below_full_speed + ")";
  }
  return v;
}

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : separator) + p;
  return out;
}

// "fp32 takes 2x the memory of fp16", or "" when the sizes match.
std::string memory_change(Format from, Format to) {
  const std::uint32_t a = element_bits(from);
  const std::uint32_t b = element_bits(to);
  if (a == b) return "";
  if (b > a) return "; " + to_string(to) + " takes " + std::to_string(b / a) + "x the memory of " + to_string(from);
  return "; " + to_string(to) + " takes 1/" + std::to_string(a / b) + " the memory of " + to_string(from);
}

std::string describe_device(const DeviceCapability& d) {
  if (d.kind == DeviceKind::cpu) return d.name;
  return d.name + " (compute capability " + to_string(d.compute_capability) + ")";
}

}  // namespace

DeviceCapability device_capability(const GpuSpec& gpu) { return {DeviceKind::gpu, gpu.compute_capability, gpu.name}; }

DeviceCapability gpu_with_capability(ComputeCapability cc) { return {DeviceKind::gpu, cc, "this GPU"}; }

DeviceCapability cpu_device() { return {DeviceKind::cpu, {}, "the CPU"}; }

std::vector<PrecisionPolicy> precision_policies() { return {pytorch_policy(), vllm_policy()}; }

PrecisionPolicy find_policy(std::string_view name) {
  std::vector<std::string> names;
  for (PrecisionPolicy& p : precision_policies()) {
    if (p.name == name) return std::move(p);
    names.push_back(p.name);
  }
  throw Error(ErrorKind::invalid_input,
              "unknown policy '" + printable(name) + "'" + did_you_mean(name, names) +
                  "; accepted: " + quoted_list(names),
              "policy");
}

Resolution resolve_precision(const ResolveRequest& request) {
  const PrecisionPolicy policy = find_policy(request.policy);
  Resolution r;
  r.requested = request.precision;
  r.policy = policy.name;
  r.device = describe_device(request.device);

  if (request.precision == "auto") {
    std::vector<std::string> rejected;
    std::vector<std::string> rejected_names;
    Format chosen = Format::fp32;
    bool found = false;
    for (const Format f : policy.auto_chain) {
      const FormatJudgement v = judge(policy, f, request, true);
      r.chain.push_back({f, v.runs, v.reason});
      if (v.runs) {
        chosen = f;
        found = true;
        if (!v.warning.empty()) r.warnings.push_back(v.warning);
        break;
      }
      rejected.push_back(v.reason);
      rejected_names.push_back(to_string(f));
    }
    if (!found) r.chain.push_back({Format::fp32, true, "fp32 runs everywhere"});
    r.precision = Precision{chosen};
    if (request.device.kind == DeviceKind::cpu && !rejected.empty()) {
      // The chain gives each format's reason; one line says the rule.
      r.reason = "auto picks " + to_string(chosen) + ": on a CPU, auto takes the first format it runs at full speed; " +
                 join(rejected_names, " and ") + " run slower than fp32 on most CPUs under " + policy.engine;
    } else {
      r.reason = "auto picks " + to_string(chosen) + ": " +
                 (rejected.empty() ? r.chain.back().reason : join(rejected, "; "));
    }
  } else {
    const Precision named = parse_precision(request.precision);
    const FormatJudgement v = judge(policy, named.format, request, false);
    r.chain.push_back({named.format, v.runs, v.reason});
    if (v.runs) {
      r.precision = named;
      r.reason = v.reason;
      if (!v.warning.empty()) r.warnings.push_back(v.warning);
    } else {
      const FormatRule* rule = find_rule(policy, named.format);
      Format chosen = Format::fp32;
      bool found = false;
      for (const Format f : rule ? rule->fallback : std::vector<Format>{}) {
        const FormatJudgement next = judge(policy, f, request, true);
        r.chain.push_back({f, next.runs, next.reason});
        if (next.runs) {
          chosen = f;
          found = true;
          break;
        }
      }
      if (!found) r.chain.push_back({Format::fp32, true, "fp32 runs everywhere"});
      r.precision = Precision{chosen};
      r.fell_back = true;
      r.engine_refuses = v.model_refused || (rule && rule->refused_when_named);
      r.reason = v.reason + "; falls back to " + to_string(chosen);
      std::string warning = v.reason + ": planning " + to_string(chosen) + " instead of " + to_string(named) +
                            memory_change(named.format, chosen);
      if (r.engine_refuses) {
        warning += "; " + policy.engine + " raises an error for " + to_string(named.format) +
                   " here rather than falling back: ask for " + to_string(chosen) + " explicitly";
      }
      r.warnings.insert(r.warnings.begin(), warning);
    }
  }

  if (request.device.kind == DeviceKind::gpu && !is_any(policy.min_device) &&
      request.device.compute_capability < policy.min_device) {
    r.warnings.push_back(policy.engine + " needs compute capability " + to_string(policy.min_device) + " or newer; " +
                         request.device.name + " has " + to_string(request.device.compute_capability) + " (" +
                         policy.min_device_source + ")");
  }
  return r;
}

std::string to_string(DeviceKind kind) { return kind == DeviceKind::gpu ? "gpu" : "cpu"; }

std::string to_string(CpuSupport support) {
  switch (support) {
    case CpuSupport::native: return "native";
    case CpuSupport::slow: return "slow";
    case CpuSupport::none: return "none";
  }
  return "none";
}

}  // namespace memplan
