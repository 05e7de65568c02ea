// Loads a GGUF model with llama.cpp (node-llama-cpp's CPU build) and prints, as JSON, what
// llama.cpp itself reports: the exact bytes of the model's buffers and of the context's
// (KV cache + compute buffer; llama_context::memory_breakdown), and its log lines' figures.
//   node load.mjs MODEL.gguf '{"contextSize": 1000, "batchSize": 512, ...}'
import {getLlama, LlamaLogLevel} from "node-llama-cpp";

const [, , path, options] = process.argv;
const lines = [];
const llama = await getLlama({
  gpu: false, build: "never", logLevel: LlamaLogLevel.debug, logger: (level, message) => lines.push(message)});
const model = await llama.loadModel({modelPath: path, gpuLayers: 0, useMmap: false});
const modelBytes = model._model.getMemoryBreakdown().cpuRam;
const context = await model.createContext({sequences: 1, ...JSON.parse(options)});
const contextBytes = context._ctx.getMemoryBreakdown().cpuRam;
await context.dispose();
await model.dispose();
const log = lines.join("");
const mib = (pattern) => {
  const m = log.match(pattern);
  return m ? Number(m[1]) : null;
};
console.log(JSON.stringify({
  model_bytes: modelBytes,
  context_bytes: contextBytes,
  cells: mib(/\(\s*(\d+) cells/),
  n_ubatch: mib(/n_ubatch\s+=\s*(\d+)/),
  kv_mib: mib(/CPU KV buffer size =\s*([\d.]+) MiB/),
  output_mib: mib(/CPU\s+output buffer size =\s*([\d.]+) MiB/),
  compute_mib: mib(/CPU compute buffer size is\s*([\d.]+) MiB/),
  flash_attn: /Flash Attention enabled|flash_attn\s+=\s+enabled/.test(log),
  // An AMX CPU (or another with an extra buffer type) repacks the matrices into a layout of its
  // own, whose buffer is not the file's bytes.
  repacked: /(AMX|CPU_REPACK) model buffer size/.test(log),
}));
