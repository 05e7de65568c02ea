// A complete program that uses memplan as a library: it loads a built-in model, resolves
// the precision a GPU runs it in, estimates serving it (weights and KV cache), and checks
// the total against GPUs from the built-in table. tests/package builds it against an
// installed memplan (find_package) and runs it.
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <memplan/memplan.hpp>

int main() {
  try {
    // The headers' version (macros) and the linked library's (functions).
    std::cout << "memplan " << memplan::version() << " (headers " << MEMPLAN_VERSION_STRING << ", commit "
              << memplan::build_info().commit << ")\n";

    // Model: a built-in name; memplan::load_model_file("my.yaml") reads a file instead.
    const memplan::ModelEntry model = memplan::load_builtin_model("llama-2-7b");
    std::cout << model.spec.name << ": " << memplan::count_parameters(model.spec) << " parameters\n";

    // Device: a GPU from the built-in table, memory as its driver reports it.
    const std::vector<memplan::GpuSpec> gpus = memplan::builtin_gpus();
    const memplan::GpuSpec gpu = memplan::find_gpu("rtx-4090", gpus);

    // Precision: "auto" on that GPU under PyTorch's rules (bf16 from compute capability 8.0).
    memplan::ResolveRequest request;
    request.precision = "auto";
    request.device = memplan::device_capability(gpu);
    const memplan::Resolution resolved = memplan::resolve_precision(request);
    std::cout << "precision: " << memplan::to_string(resolved.precision) << " (" << resolved.reason << ")\n";

    // Workload: the weights, plus the KV cache of one 4096-token sequence.
    memplan::WeightsOptions weights;
    weights.precision = resolved.precision;
    memplan::KvCacheOptions kv_cache;
    kv_cache.batch = 1;
    kv_cache.tokens = 4096;
    kv_cache.precision = resolved.precision;

    // Each estimator returns a Breakdown: named components, exact bytes, and formulas.
    memplan::Breakdown plan = memplan::estimate_weights(model.spec, weights);
    for (memplan::Item& item : memplan::estimate_kv_cache(model.spec, kv_cache).components) {
      plan.components.push_back(std::move(item));
    }
    for (const memplan::Item& item : plan.components) {
      std::cout << "  " << item.name << ": " << item.bytes.count() << " bytes\n";
    }
    const memplan::Bytes total = plan.total();
    std::cout << "  total: " << total.count() << " bytes\n";

    // Check: does it fit?
    for (const std::string name : {"rtx-4090", "rtx-3060"}) {
      const memplan::GpuSpec device = memplan::find_gpu(name, gpus);
      std::cout << device.name << " (" << device.memory.count()
                << " bytes): " << (total <= device.memory ? "fits" : "does not fit") << '\n';
    }

    // Bad input is a memplan::Error whose kind says whose fault it is.
    try {
      memplan::parse_precision("int3");
    } catch (const memplan::Error& e) {
      std::cout << "rejected (" << memplan::to_string(e.kind()) << "): " << e.what() << '\n';
    }

    // llama-2-7b has 6,738,415,616 parameters: 2 bytes each in bf16.
    return plan.find("weights")->bytes.count() == 13'476'831'232ULL ? EXIT_SUCCESS : EXIT_FAILURE;
  } catch (const memplan::ConfigError& e) {  // a model file was wrong: file, line, column, key
    std::cerr << e.file() << ':' << e.line() << ':' << e.column() << ": " << e.message() << '\n';
  } catch (const memplan::Error& e) {
    std::cerr << "error (" << memplan::to_string(e.kind()) << "): " << e.what() << '\n';
  }
  return EXIT_FAILURE;
}
