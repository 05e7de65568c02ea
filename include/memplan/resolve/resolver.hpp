// The precision a job will actually run in: a requested precision ("auto", "bf16", "int4",
// ...) against what a device can run, under an engine's rules (a policy). Pure: values in,
// values out; the thresholds are data (precision_policies()), documented in docs/hardware.md.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "memplan/core/gpu_spec.hpp"
#include "memplan/core/precision.hpp"

namespace memplan {

enum class DeviceKind { gpu, cpu };

// What the resolver needs to know about a device.
struct DeviceCapability {
  DeviceKind kind = DeviceKind::cpu;
  ComputeCapability compute_capability;  // for a GPU; ignored for a CPU
  std::string name;                      // in messages: "rtx-2080", "this GPU", "the CPU"
};

// Returns the capability of a GPU from the table or the probe (named by its `name`).
DeviceCapability device_capability(const GpuSpec& gpu);
// Returns the capability of an unnamed GPU of compute capability `cc` ("this GPU").
DeviceCapability gpu_with_capability(ComputeCapability cc);
// Returns the capability of the host CPU ("the CPU").
DeviceCapability cpu_device();

// How a CPU runs a format under a policy.
enum class CpuSupport {
  native,  // runs at full speed
  slow,    // runs, but far slower than fp32 on most CPUs: kept when named, with a warning
  none,    // the engine has no CPU path: the request falls back
};

// One format's rule in a policy.
struct FormatRule {
  Format format = Format::fp32;
  ComputeCapability min_gpu;                     // lowest compute capability that runs it; 0.0 = any GPU
  ComputeCapability full_speed;                  // from here on it runs natively; 0.0 = from min_gpu
  std::string below_full_speed;                  // what happens between min_gpu and full_speed
  CpuSupport cpu = CpuSupport::native;           // how a CPU runs it
  std::string cpu_note;                          // why, for the warning or the chain
  std::vector<Format> fallback;                  // tried in order when the device cannot run `format`
  bool refused_when_named = false;               // the engine raises rather than falls back when asked by name
  std::vector<std::string> refused_model_types;  // Hugging Face model_type values the engine refuses in it
  std::string source;                            // where the threshold comes from
};

// An engine's rules: which formats a device runs and what `auto` means.
struct PrecisionPolicy {
  std::string name;                // "pytorch", "vllm"
  std::string engine;              // as people write it, for messages: "PyTorch", "vLLM"
  std::string description;         // one line
  std::vector<Format> auto_chain;  // `auto` takes the first of these the device runs
  std::vector<FormatRule> rules;   // a format without a rule runs on any device
  ComputeCapability min_device;    // the engine does not run below this at all; 0.0 = no floor
  std::string min_device_source;   // where that floor comes from
};

// Returns the built-in policies: "pytorch" (the default) and "vllm".
std::vector<PrecisionPolicy> precision_policies();
// Returns the policy called `name`. Throws Error(invalid_input, key "policy") listing the names.
PrecisionPolicy find_policy(std::string_view name);

struct ResolveRequest {
  std::string precision = "auto";  // "auto" or a name parse_precision accepts
  DeviceCapability device;         // what the job runs on
  std::string policy = "pytorch";  // whose rules: "pytorch" or "vllm"
  std::string model_type;          // Hugging Face model_type ("gemma2"), or empty when unknown
};

// One format the resolver considered, in order.
struct ResolveStep {
  Format format = Format::fp32;
  bool accepted = false;  // this is the format the job runs in
  std::string reason;     // "bf16 needs compute capability 8.0 or newer; rtx-2080 has 7.5"
};

struct Resolution {
  std::string requested;              // as asked: "auto", "fp8", "int4-g64"
  Precision precision;                // what the job will run in
  std::string policy;                 // the policy applied
  std::string device;                 // "rtx-2080 (compute capability 7.5)", "the CPU"
  std::vector<ResolveStep> chain;     // the formats considered, the accepted one last
  std::string reason;                 // one line: why `precision`
  std::vector<std::string> warnings;  // fallbacks, slow paths, engines that would refuse
  bool fell_back = false;             // a named precision was replaced by another
  bool engine_refuses = false;        // the engine would reject the request as given
};

// Returns the precision `request` runs in on its device under its policy, the chain walked
// and warnings. `auto` takes the first format of the policy's auto_chain the device runs
// (pytorch: bf16, else fp16, else fp32; on a CPU fp32). A named float format the device
// cannot run falls back along its rule's fallback list with a warning; quantised formats
// (int8, int4, nf4, fp4) are kept as named. Throws Error(invalid_input) for an unknown
// precision or policy.
Resolution resolve_precision(const ResolveRequest& request);

std::string to_string(DeviceKind kind);
std::string to_string(CpuSupport support);

}  // namespace memplan
