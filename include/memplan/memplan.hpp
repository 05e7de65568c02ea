// memplan: the one include for the common case — the core value types, the precision
// resolver, the estimators, and the io layer (built-in models, model files, the GPU
// table). Link memplan::io; it brings memplan::core. docs/api.md walks through it with a
// complete example.
//
// Not included: the reports (memplan/report/*.hpp, link memplan::report).
// A program that needs only the pure core (no YAML, no I/O) includes the core/ and
// estimators/ headers it uses and links memplan::core alone.
//
// Adding an estimator adds its header to the list below (docs/estimators.md).
#pragma once

#include "memplan/version_config.hpp"  // MEMPLAN_VERSION_MAJOR/MINOR/PATCH/STRING, MEMPLAN_GIT_COMMIT

#include "memplan/core/breakdown.hpp"
#include "memplan/core/bytes.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/gpu_spec.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/precision.hpp"
#include "memplan/core/rows.hpp"
#include "memplan/core/text.hpp"
#include "memplan/core/version.hpp"

#include "memplan/resolve/resolver.hpp"

#include "memplan/estimators/activations.hpp"
#include "memplan/estimators/attention.hpp"
#include "memplan/estimators/attention_analysis.hpp"
#include "memplan/estimators/block_eig.hpp"
#include "memplan/estimators/compute_time.hpp"
#include "memplan/estimators/curvature.hpp"
#include "memplan/estimators/kv_cache.hpp"
#include "memplan/estimators/lanczos.hpp"
#include "memplan/estimators/layout_estimate.hpp"
#include "memplan/estimators/megatron.hpp"
#include "memplan/estimators/placement.hpp"
#include "memplan/estimators/representation.hpp"
#include "memplan/estimators/sae.hpp"
#include "memplan/estimators/sample_gradients.hpp"
#include "memplan/estimators/serving.hpp"
#include "memplan/estimators/sharding.hpp"
#include "memplan/estimators/training.hpp"
#include "memplan/estimators/weights.hpp"

#include "memplan/plan/fit.hpp"        // fit_largest: the largest batch, sequence or chunk under a limit
#include "memplan/plan/layout.hpp"     // estimate_layout: a workload over several GPUs, per device
#include "memplan/plan/recommend.hpp"  // recommend, gpu_options: ranked changes, GPU choice
#include "memplan/plan/sweep.hpp"      // run_sweep: a grid of plans
#include "memplan/plan/workload.hpp"   // estimate_workload: every estimator a workload needs, composed

#include "memplan/io/gpu_table.hpp"
#include "memplan/io/model_file.hpp"
