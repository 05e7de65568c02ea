// memplan calibrate: on a machine with a GPU, measure the CUDA context, the cuBLAS
// workspace and the allocators' rounding, and keep them per GPU and driver in a cache
// file. Without a GPU it says so and shows the defaults estimates use; exit 0 either way.
#include <iostream>

#include "commands.hpp"
#include "memplan/kernels/calibration.hpp"
#include "memplan/report/calibration.hpp"

namespace memplan::cli {

namespace {

struct CalibrateArgs {
  std::string cache;  // "" = calibration_cache_path()
  bool no_store = false;
  OutputOptions output;
};

int run_calibrate(const CalibrateArgs& a) {
  const PrintOptions print_options = a.output.print_options<CalibrationReport>();
  const CalibrationOutcome outcome = calibrate_cuda();
  CalibrationReport report;
  report.status = to_string(outcome.device.status);
  report.calibrated = outcome.calibration.has_value();
  const Calibration figures = outcome.calibration.value_or(default_calibration());
  if (report.calibrated) {
    report.gpu = figures.gpu;
    report.driver = figures.driver;
    if (!a.no_store) {
      report.cache_path = a.cache.empty() ? calibration_cache_path() : a.cache;
      store_calibration(report.cache_path, figures);
    }
  } else {
    report.reason = outcome.device.reason;
  }
  for (const CalibrationFigure& f : figures.figures)
    report.figures.push_back({f.name, Bytes(f.bytes), f.measured, f.source});
  print(report, print_options, std::cout);
  return 0;
}

}  // namespace

void define_calibrate(CLI::App& self, int& exit_code, const NamedOptions& /*named*/) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* cmd = &self;
  cmd->description(
      "Measure this GPU's CUDA context, cuBLAS workspace and allocator rounding, and keep them\n"
      "per GPU and driver in a cache file for later estimates. Best on an idle GPU.\n"
      "Without a GPU it says so and lists the defaults estimates use (exit 0).");
  cmd->add_option("--cache", args->cache,
                  "Cache file (default $MEMPLAN_CACHE_DIR/calibration.json, else\n"
                  "$XDG_CACHE_HOME/memplan/calibration.json or ~/.cache/memplan/calibration.json)");
  cmd->add_flag("--no-store", args->no_store, "Measure and print, but do not write the cache");
  add_output_options(*cmd, args->output);
  cmd->callback([args, &exit_code] { exit_code = run_calibrate(*args); });
}

}  // namespace memplan::cli
