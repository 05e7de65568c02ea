// Loads a vision tower's file (--mmproj) the way llama-server sizes it before it starts and
// prints, as JSON, what llama.cpp itself reports: mtmd_get_memory_usage (the tensors' bytes and
// the warm-up image's compute buffer, tools/mtmd/mtmd.cpp), the tensors' bytes from llama.cpp's
// own GGUF reader, and the size of the CPU buffer ggml allocates for them
// (ggml_backend_alloc_ctx_tensors_from_buft, as clip.cpp loads them). Built by
// test_llama_cpp.py against the llama.cpp node-llama-cpp ships, mtmd compiled from the source
// bundle in the package (the package ships no libmtmd).
//   mmproj_probe MMPROJ FLASH_ATTN
#include <cstdio>
#include <cstdlib>

#include "ggml-backend.h"
#include "gguf.h"
#include "llama.h"
#include "mtmd.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: mmproj_probe MMPROJ FLASH_ATTN\n");
    return 2;
  }
  ggml_backend_load_all_from_path(std::getenv("LLAMA_CPP_BACKENDS"));
  llama_backend_init();
  mtmd_context_params params = mtmd_context_params_default();
  params.use_gpu = false;
  params.flash_attn_type = std::atoi(argv[2]) != 0 ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
  std::size_t usage = 0;
  for (const auto& [device, bytes] : mtmd_get_memory_usage(argv[1], params)) usage += bytes;
  if (usage == 0) {
    std::fprintf(stderr, "llama.cpp could not load %s\n", argv[1]);
    return 1;
  }
  ggml_context* meta = nullptr;
  gguf_context* file = gguf_init_from_file(argv[1], {/*no_alloc =*/true, &meta});
  if (file == nullptr) return 1;
  std::size_t tensor_bytes = 0;
  for (std::int64_t i = 0; i < gguf_get_n_tensors(file); ++i) tensor_bytes += gguf_get_tensor_size(file, i);
  ggml_backend_buffer_t buffer = ggml_backend_alloc_ctx_tensors_from_buft(
      meta, ggml_backend_dev_buffer_type(ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU)));
  std::printf("{\"usage_bytes\": %zu, \"tensor_bytes\": %zu, \"buffer_bytes\": %zu}\n", usage, tensor_bytes,
              ggml_backend_buffer_get_size(buffer));
  ggml_backend_buffer_free(buffer);
  gguf_free(file);
  ggml_free(meta);
  return 0;
}
