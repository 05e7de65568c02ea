#include "memplan/resolve/resolver.hpp"

#include <gtest/gtest.h>

#include "memplan/core/error.hpp"
#include "memplan/io/gpu_table.hpp"

namespace memplan {
namespace resolver_test {

Resolution resolve(const std::string& precision, const DeviceCapability& device, const std::string& policy = "pytorch",
                   const std::string& model_type = "") {
  ResolveRequest request;
  request.precision = precision;
  request.device = device;
  request.policy = policy;
  request.model_type = model_type;
  return resolve_precision(request);
}

DeviceCapability cc(std::uint32_t major, std::uint32_t minor) { return gpu_with_capability({major, minor}); }

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& line : lines) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

// TheLoom's "GPU Compute Capability Reference", row by row. "Limited" fp16 (Maxwell 5.2)
// is below its own FP16 threshold of 5.3, so fp16 falls back to fp32 there.
struct CapabilityRow {
  const char* family;
  std::uint32_t major, minor;
  const char* auto_pick;   // bf16 if BF16 support, else fp16 if FP16 support, else fp32
  const char* named_bf16;  // what a named bf16 becomes
  const char* named_fp16;  // what a named fp16 becomes
};

const CapabilityRow kSeedTable[] = {
    {"RTX 40xx (Ada)", 8, 9, "bf16", "bf16", "fp16"},
    {"RTX 30xx (Ampere)", 8, 6, "bf16", "bf16", "fp16"},
    {"A100", 8, 0, "bf16", "bf16", "fp16"},
    {"H100", 9, 0, "bf16", "bf16", "fp16"},
    {"RTX 20xx (Turing)", 7, 5, "fp16", "fp16", "fp16"},
    {"GTX 10xx (Pascal)", 6, 1, "fp16", "fp16", "fp16"},
    {"GTX 9xx (Maxwell)", 5, 2, "fp32", "fp32", "fp32"},
};

TEST(Resolver, EveryRowOfTheSeedCapabilityTable) {
  for (const CapabilityRow& row : kSeedTable) {
    SCOPED_TRACE(row.family);
    const DeviceCapability device = cc(row.major, row.minor);
    EXPECT_EQ(to_string(resolve("auto", device).precision), row.auto_pick);
    const Resolution bf16 = resolve("bf16", device);
    EXPECT_EQ(to_string(bf16.precision), row.named_bf16);
    EXPECT_EQ(bf16.fell_back, std::string(row.named_bf16) != "bf16");
    EXPECT_EQ(bf16.warnings.empty(), !bf16.fell_back);
    const Resolution fp16 = resolve("fp16", device);
    EXPECT_EQ(to_string(fp16.precision), row.named_fp16);
    EXPECT_EQ(fp16.fell_back, std::string(row.named_fp16) != "fp16");
    EXPECT_EQ(resolve("fp32", device).precision, precisions::fp32);
  }
}

TEST(Resolver, AutoOnTuringSaysWhyItIsFp16) {
  const Resolution r = resolve("auto", device_capability(find_gpu("rtx2080", builtin_gpus())));
  EXPECT_EQ(r.precision, precisions::fp16);
  EXPECT_EQ(r.policy, "pytorch");
  EXPECT_NE(r.reason.find("bf16 needs compute capability 8.0 or newer; rtx-2080 has 7.5"), std::string::npos)
      << r.reason;
  ASSERT_EQ(r.chain.size(), 2U);
  EXPECT_EQ(r.chain[0].format, Format::bf16);
  EXPECT_FALSE(r.chain[0].accepted);
  EXPECT_EQ(r.chain[1].format, Format::fp16);
  EXPECT_TRUE(r.chain[1].accepted);
  EXPECT_TRUE(r.warnings.empty());  // auto choosing is not a fallback from a request
  EXPECT_FALSE(r.fell_back);
}

TEST(Resolver, AutoOnA100IsBf16) {
  const Resolution r = resolve("auto", device_capability(find_gpu("a100-80gb", builtin_gpus())));
  EXPECT_EQ(r.precision, precisions::bf16);
  EXPECT_EQ(r.chain.size(), 1U);
}

TEST(Resolver, Fp16OnMaxwellFallsBackToFp32WithAWarning) {
  const Resolution r = resolve("fp16", cc(5, 2));
  EXPECT_EQ(r.precision, precisions::fp32);
  EXPECT_TRUE(r.fell_back);
  ASSERT_EQ(r.warnings.size(), 1U);
  EXPECT_NE(r.warnings[0].find("needs compute capability 5.3"), std::string::npos) << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("fp32 takes 2x the memory of fp16"), std::string::npos) << r.warnings[0];
  // The boundary itself: 5.3 runs fp16.
  EXPECT_EQ(resolve("fp16", cc(5, 3)).precision, precisions::fp16);
}

TEST(Resolver, Fp8NeedsAdaOrHopperUnderPyTorch) {
  EXPECT_EQ(resolve("fp8", cc(8, 9)).precision.format, Format::fp8_e4m3);
  EXPECT_EQ(resolve("fp8_e5m2", cc(9, 0)).precision.format, Format::fp8_e5m2);
  const Resolution ampere = resolve("fp8", cc(8, 6));
  EXPECT_EQ(ampere.precision, precisions::bf16);  // the next of its fallback list Ampere runs
  EXPECT_TRUE(mentions(ampere.warnings, "8.9"));
  EXPECT_TRUE(mentions(ampere.warnings, "bf16 takes 2x the memory of fp8_e4m3"));
  EXPECT_EQ(resolve("fp8", cc(7, 5)).precision, precisions::fp16);
}

TEST(Resolver, QuantisedFormatsAreKeptAsNamed) {
  for (const char* name : {"int8", "int4", "int4-g64-zp", "nf4-dq", "fp4"}) {
    SCOPED_TRACE(name);
    const Resolution r = resolve(name, cc(6, 1));
    EXPECT_EQ(r.precision, parse_precision(name));  // layout, group size and scales too
    EXPECT_FALSE(r.fell_back);
    EXPECT_TRUE(r.warnings.empty());
  }
}

TEST(Resolver, Tf32IsAnAmpereModeStoredAsFp32) {
  EXPECT_EQ(resolve("tf32", cc(8, 0)).precision.format, Format::tf32);
  const Resolution turing = resolve("tf32", cc(7, 5));
  EXPECT_EQ(turing.precision, precisions::fp32);
  EXPECT_FALSE(mentions(turing.warnings, "the memory of"));  // same 32 bits: no memory change to report
}

TEST(Resolver, CpuAutoIsFp32AndSaysWhy) {
  const Resolution r = resolve("auto", cpu_device());
  EXPECT_EQ(r.precision, precisions::fp32);
  EXPECT_NE(r.reason.find("on a CPU, auto takes the first format it runs at full speed"), std::string::npos)
      << r.reason;
  EXPECT_NE(r.reason.find("slower than fp32"), std::string::npos) << r.reason;
  ASSERT_EQ(r.chain.size(), 3U);
  EXPECT_TRUE(r.chain.back().accepted);
}

TEST(Resolver, CpuKeepsNamedHalfPrecisionWithASpeedWarning) {
  for (const char* name : {"bf16", "fp16"}) {
    SCOPED_TRACE(name);
    const Resolution r = resolve(name, cpu_device());
    EXPECT_EQ(to_string(r.precision), name);  // memory is planned as asked
    EXPECT_FALSE(r.fell_back);
    EXPECT_TRUE(mentions(r.warnings, "slower than fp32"));
  }
  EXPECT_EQ(resolve("fp8", cpu_device()).precision, precisions::fp32);   // no fp8 path on a CPU
  EXPECT_EQ(resolve("tf32", cpu_device()).precision, precisions::fp32);  // TF32 is a GPU tensor-core mode
  const Resolution int4 = resolve("int4", cpu_device());
  EXPECT_EQ(int4.precision.format, Format::int4);
  EXPECT_TRUE(mentions(int4.warnings, "CUDA"));
}

TEST(Resolver, VllmNeedsPascalForFp16) {
  // PyTorch runs fp16 from 5.3; vLLM's CUDA platform lists fp16 only from 6.0.
  EXPECT_EQ(resolve("fp16", cc(5, 3), "pytorch").precision, precisions::fp16);
  EXPECT_EQ(resolve("fp16", cc(5, 3), "vllm").precision, precisions::fp32);
  EXPECT_EQ(resolve("auto", cc(5, 3), "vllm").precision, precisions::fp32);
  EXPECT_EQ(resolve("auto", cc(6, 0), "vllm").precision, precisions::fp16);
  const Resolution r = resolve("auto", cc(6, 1), "vllm");
  EXPECT_EQ(r.policy, "vllm");
  EXPECT_TRUE(mentions(r.warnings, "vLLM needs compute capability 7.0"));  // below its supported floor
  EXPECT_TRUE(resolve("auto", cc(7, 0), "vllm").warnings.empty());
}

TEST(Resolver, VllmRefusesNamedBf16BeforeAmpere) {
  const Resolution r = resolve("bf16", cc(7, 5), "vllm");
  EXPECT_EQ(r.precision, precisions::fp16);
  EXPECT_TRUE(r.engine_refuses);
  EXPECT_TRUE(mentions(r.warnings, "vLLM raises an error for bf16"));
  // PyTorch falls back quietly: a warning, but no refusal.
  EXPECT_FALSE(resolve("bf16", cc(7, 5), "pytorch").engine_refuses);
}

TEST(Resolver, VllmRefusesFp16ForSomeModelTypes) {
  // On Turing, gemma2 has neither bf16 (cc) nor fp16 (vLLM refuses it): fp32.
  const Resolution automatic = resolve("auto", cc(7, 5), "vllm", "gemma2");
  EXPECT_EQ(automatic.precision, precisions::fp32);
  EXPECT_NE(automatic.reason.find("refuses fp16 for model type 'gemma2'"), std::string::npos) << automatic.reason;
  const Resolution named = resolve("fp16", cc(8, 0), "vllm", "gemma2");
  EXPECT_EQ(named.precision, precisions::bf16);  // what vLLM's message suggests instead
  EXPECT_TRUE(named.engine_refuses);
  EXPECT_EQ(resolve("auto", cc(7, 5), "vllm", "llama").precision, precisions::fp16);
  EXPECT_EQ(resolve("fp16", cc(7, 5), "pytorch", "gemma2").precision, precisions::fp16);  // a vLLM rule only
}

TEST(Resolver, VllmRunsFp8WeightOnlyOnTuringAndAmpere) {
  const Resolution r = resolve("fp8", cc(8, 6), "vllm");
  EXPECT_EQ(r.precision.format, Format::fp8_e4m3);
  EXPECT_TRUE(mentions(r.warnings, "W8A16"));
  EXPECT_TRUE(resolve("fp8", cc(8, 9), "vllm").warnings.empty());
  EXPECT_EQ(resolve("fp8", cc(7, 0), "vllm").precision, precisions::fp16);
}

TEST(Resolver, VllmAutoOnCpuIsBf16) {
  // vLLM's x86/aarch64 CPU backend lists bf16 first among its supported dtypes.
  const Resolution r = resolve("auto", cpu_device(), "vllm");
  EXPECT_EQ(r.precision, precisions::bf16);
  EXPECT_TRUE(r.warnings.empty());
}

TEST(Resolver, NewerGpusNeverResolveAutoToAWiderFormat) {
  const std::vector<ComputeCapability> ladder = {{3, 5}, {5, 0}, {5, 2}, {5, 3}, {6, 0}, {6, 1},  {7, 0},
                                                 {7, 5}, {8, 0}, {8, 6}, {8, 9}, {9, 0}, {10, 0}, {12, 0}};
  for (const PrecisionPolicy& policy : precision_policies()) {
    std::uint32_t previous = 32;
    for (const ComputeCapability c : ladder) {
      SCOPED_TRACE(policy.name + " " + to_string(c));
      const Resolution r = resolve("auto", gpu_with_capability(c), policy.name);
      const std::uint32_t bits = element_bits(r.precision.format);
      EXPECT_LE(bits, previous);
      previous = bits;
      // One accepted step, and it is the last.
      ASSERT_FALSE(r.chain.empty());
      EXPECT_TRUE(r.chain.back().accepted);
      for (std::size_t i = 0; i + 1 < r.chain.size(); ++i) EXPECT_FALSE(r.chain[i].accepted);
    }
  }
}

TEST(Resolver, PoliciesAreDataWithSources) {
  const std::vector<PrecisionPolicy> policies = precision_policies();
  ASSERT_EQ(policies.size(), 2U);
  EXPECT_EQ(policies[0].name, "pytorch");
  EXPECT_EQ(policies[1].name, "vllm");
  for (const PrecisionPolicy& p : policies) {
    SCOPED_TRACE(p.name);
    EXPECT_FALSE(p.auto_chain.empty());
    EXPECT_EQ(p.auto_chain.back(), Format::fp32);
    for (const FormatRule& rule : p.rules) EXPECT_FALSE(rule.source.empty()) << to_string(rule.format);
  }
  EXPECT_EQ(find_policy("vllm").engine, "vLLM");
}

TEST(Resolver, UnknownPolicyAndPrecisionAreInputErrors) {
  try {
    resolve("auto", cpu_device(), "vlm");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_input);
    EXPECT_EQ(e.key(), "policy");
    EXPECT_NE(std::string(e.what()).find("did you mean 'vllm'"), std::string::npos) << e.what();
  }
  try {
    resolve("int3", cpu_device());
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.key(), "precision");
  }
}

}  // namespace resolver_test
}  // namespace memplan
