// Fuzz target: a model file (parse_model_yaml), then what `memplan estimate FILE` computes
// from what it accepts: the parameter count and the default workloads' estimates.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/io/model_file.hpp"
#include "memplan/plan/workload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace memplan;
  ModelEntry entry;
  if (!fuzz::reads_or_locates([&] { entry = parse_model_yaml(fuzz::text_of(data, size), "fuzz.yaml", "fuzz"); })) {
    return 0;
  }
  const ModelSpec& spec = entry.spec;
  fuzz::computes_or_refuses([&] { (void)count_parameters(spec); });
  for (const WorkloadKind kind : {WorkloadKind::weights, WorkloadKind::inference, WorkloadKind::generation}) {
    Workload w;
    w.kind = kind;
    w.seq_len = spec.max_seq_len < w.seq_len ? spec.max_seq_len : w.seq_len;  // as estimate's default does
    if (kind == WorkloadKind::generation) w.new_tokens = 1;
    fuzz::computes_or_refuses([&] { (void)estimate_workload(spec, w); });
  }
  return 0;
}
