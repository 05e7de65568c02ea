// Each planning command as one call, request in, report out, for every front-end: the CLI
// prints the report; the Python module returns it (as the CLI's JSON). The model is found
// by the caller (find_model), which knows how to say what it fetches.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "memplan/frontend/command_line.hpp"
#include "memplan/frontend/device.hpp"
#include "memplan/io/model_file.hpp"
#include "memplan/report/estimate.hpp"
#include "memplan/report/fit.hpp"
#include "memplan/report/gpus.hpp"
#include "memplan/report/hooks.hpp"
#include "memplan/report/models.hpp"
#include "memplan/report/probe.hpp"
#include "memplan/report/recommend.hpp"
#include "memplan/report/sweep.hpp"

namespace memplan {

// `memplan estimate`: the plan bound to the device, and its estimate.
EstimateReport estimate_report(const ModelEntry& model, const PlanSettings& settings, const DeviceArgs& device);

// `memplan fit --vary VARY` (batch, seq, chunk, streaming_chunk, attention_chunk).
FitReport fit_report(const ModelEntry& model, const PlanSettings& settings, const DeviceArgs& device,
                     std::string_view vary);

// `memplan recommend`; `model_ref` is the model as the user named it, for the commands of
// the changed plans.
RecommendReport recommend_report(const ModelEntry& model, const std::string& model_ref,
                                 const std::vector<GivenOption>& given, const DeviceArgs& device);

// `memplan hooks`: the options of that command.
struct HooksRequest {
  std::uint64_t batch = 1;
  std::uint64_t seq = 0;  // 0: min(2048, the model's context)
  std::string precision = "bf16";
  std::vector<std::string> filter;  // hook names or globs, each one pattern
  std::string layers;               // "3", "0,5,11" or "0-11"; empty: every block
  std::uint64_t pos_slice = 0;
  bool remove_batch_dim = false;
  bool all = false;  // one row per hook, not per hook kind
};
HooksReport hooks_report(const ModelEntry& model, const HooksRequest& request);

// `memplan sweep`: the axes as words, each checked as the option of the same meaning.
struct SweepRequest {
  std::vector<ModelEntry> models;
  std::vector<std::string> workloads{"inference"};
  std::vector<std::string> batches{"1"};
  std::vector<std::string> seqs;  // empty: min(2048, the shortest context of the models)
  std::vector<std::string> precisions{"auto"};
  std::string gpu;
  bool smallest_gpu = false;
};
// `step` (may be empty) is called once per point estimated.
SweepReport sweep_report(const SweepRequest& request, const PlanSettings& settings,
                         const std::function<void()>& step = {});

// `memplan models`, `memplan gpus` (known_gpus) and `memplan probe`.
ModelsReport models_report();
GpusReport gpus_report();
ProbeReport probe_report(double warn_above);

}  // namespace memplan
