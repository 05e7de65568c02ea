// Multi-GPU layouts, all rooms at once: how the engines people use spread a model over
// devices, and what each device then holds. Each room has its own header; include the one
// you need:
//   estimators/megatron.hpp         tensor and pipeline parallelism, the training step over t x p x d
//   estimators/sharding.hpp         ZeRO stages 1-3 and FSDP (the Sharding a training layout names)
//   estimators/placement.hpp        accelerate's device_map layer placement
//   estimators/serving.hpp          vLLM's KV-cache budget
//   estimators/layout_estimate.hpp  LayoutEstimate and DeviceMemory, the result they share
// docs/estimators.md#parallelism-multi-gpu-layouts gives every formula and its source.
#pragma once

#include "memplan/estimators/layout_estimate.hpp"
#include "memplan/estimators/megatron.hpp"
#include "memplan/estimators/placement.hpp"
#include "memplan/estimators/serving.hpp"
#include "memplan/estimators/sharding.hpp"
