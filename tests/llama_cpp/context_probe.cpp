// Creates one llama.cpp context with settings node-llama-cpp does not pass (a unified cache,
// n_outputs_max as llama-server sets it) and prints, as JSON, the bytes llama.cpp itself
// reports for it (llama_context::memory_breakdown, summed over the host's buffer types).
// Built by test_llama_cpp.py against the llama.cpp that node-llama-cpp ships: its libraries
// and the headers of the same release, from the source bundle in the package.
// With FIT_BUDGET (bytes), N_CTX is left unset (0) and llama.cpp's own --fit (common_fit_params,
// as llama-server runs it) chooses the context for a host of that much memory with its 1 GiB
// margin; "fit_n_ctx" is what it chose.
//   context_probe MODEL N_CTX N_UBATCH N_SEQ KV_UNIFIED N_OUTPUTS_MAX FLASH_ATTN TYPE_K TYPE_V [FIT_BUDGET]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fit.h"

#include "ggml-backend.h"
#include "llama-context.h"
#include "llama.h"

int main(int argc, char** argv) {
  if (argc != 10 && argc != 11) {
    std::fprintf(stderr,
                 "usage: context_probe MODEL N_CTX N_UBATCH N_SEQ KV_UNIFIED N_OUTPUTS_MAX FLASH_ATTN TYPE_K TYPE_V "
                 "[FIT_BUDGET]\n");
    return 2;
  }
  // The CPU backend is a library of its own beside libllama (LLAMA_CPP_BACKENDS names the folder).
  ggml_backend_load_all_from_path(std::getenv("LLAMA_CPP_BACKENDS"));
  llama_backend_init();
  llama_log_set([](ggml_log_level, const char*, void*) {}, nullptr);

  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  // The weights as the file stores them: no second, repacked copy of the CPU's k-quant matrices
  // (node-llama-cpp's figures, which the other cases compare with, have none either).
  mp.use_extra_bufts = false;
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (model == nullptr) {
    std::fprintf(stderr, "llama.cpp could not load %s\n", argv[1]);
    return 1;
  }
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = static_cast<std::uint32_t>(std::atoi(argv[2]));
  cp.n_batch = cp.n_ubatch = static_cast<std::uint32_t>(std::atoi(argv[3]));
  cp.n_seq_max = static_cast<std::uint32_t>(std::atoi(argv[4]));
  cp.kv_unified = std::atoi(argv[5]) != 0;
  cp.n_outputs_max = static_cast<std::uint32_t>(std::atoi(argv[6]));
  cp.flash_attn_type = std::atoi(argv[7]) != 0 ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
  cp.type_k = static_cast<ggml_type>(std::atoi(argv[8]));
  cp.type_v = static_cast<ggml_type>(std::atoi(argv[9]));
  // Sliding-window layers keep their window, not the whole context, as llama-server and
  // llama-cli run them (common_params::swa_full is false; the library's default is true).
  cp.swa_full = false;
  long long fit_n_ctx = -1;
  if (argc == 11) {
    // llama.cpp fits the CPU's plan to the host's total memory less the margin: a margin of
    // total - budget + 1 GiB fits it to the budget with llama-server's 1 GiB (--fit-target).
    std::size_t free = 0, total = 0;
    ggml_backend_dev_memory(ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU), &free, &total);
    const std::size_t budget = std::strtoull(argv[10], nullptr, 10);
    std::vector<std::size_t> margins(llama_max_devices() + 1, total - budget + (std::size_t{1} << 30));
    std::vector<float> split(llama_max_devices(), 0.0F);
    std::vector<llama_model_tensor_buft_override> overrides(llama_max_tensor_buft_overrides());
    cp.n_ctx = 0;
    common_fit_params(argv[1], &mp, &cp, split.data(), overrides.data(), margins.data(), 4096, nullptr,
                      GGML_LOG_LEVEL_ERROR);
    fit_n_ctx = cp.n_ctx;
  }
  llama_context* context = llama_init_from_model(model, cp);
  if (context == nullptr) {
    std::fprintf(stderr, "llama.cpp could not create the context\n");
    return 1;
  }
  std::size_t model_bytes = 0, kv_bytes = 0, compute_bytes = 0;
  for (const auto& [type, bytes] : context->memory_breakdown()) {
    model_bytes += bytes.model;
    kv_bytes += bytes.context;
    compute_bytes += bytes.compute;
  }
  std::printf("{\"model_bytes\": %zu, \"kv_bytes\": %zu, \"compute_bytes\": %zu, \"fit_n_ctx\": %lld}\n", model_bytes,
              kv_bytes, compute_bytes, fit_n_ctx);
  llama_free(context);
  llama_model_free(model);
  return 0;
}
