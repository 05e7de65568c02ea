#!/usr/bin/env bash
# One pass of every GPU check, for a machine with an NVIDIA GPU, PyTorch and transformers:
# the probe, the GPU tests, calibration, and torch_peaks.py. Everything is logged to
# $OUT/log.txt; torch_peaks.py's JSON lines go to $OUT/torch-peaks.jsonl.
#
# Usage: OUT=DIR bench/accuracy/on_gpu.sh BIN [torch_peaks.py options]
#   BIN is a build folder made with -DMEMPLAN_CUDA=ON (memplan and the two GPU test binaries), and lib/ with
#   any shared library the machine lacks (`ldd BIN/memplan` on the target says which).
set -u
bin=$1
shift
out=${OUT:?set OUT to a folder for the log and results}
export LD_LIBRARY_PATH="$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MEMPLAN_CACHE_DIR="$out/cache"
mkdir -p "$MEMPLAN_CACHE_DIR"
{
  date
  nvidia-smi
  echo "== probe"
  "$bin/memplan" probe
  echo "== gpu tests"
  for t in memplan_probe_gpu_tests memplan_kernels_gpu_tests; do  # a build folder keeps them under tests/
    if [ -x "$bin/$t" ]; then "$bin/$t"; else "$bin/tests/$t"; fi
  done
  echo "== calibrate"
  "$bin/memplan" calibrate
  echo "== torch peaks"
  PYTHONUNBUFFERED=1 python3 bench/accuracy/torch_peaks.py --memplan "$bin/memplan" --out "$out/torch-peaks.jsonl" "$@"
  echo "== done"
  date
} 2>&1 | tee "$out/log.txt"
