// Calibration without a GPU: the defaults, the cache file, and how figures reach the
// overhead estimator. Plus the run-time answers about CUDA, which never throw.
#include "memplan/kernels/calibration.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "memplan/core/error.hpp"

namespace memplan {
namespace calibration_test {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("memplan-calibration-test-" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  return dir;
}

TEST(Calibration, DefaultsNameEveryFigureAndItsSource) {
  const Calibration c = default_calibration();
  ASSERT_EQ(c.figures.size(), 4u);
  EXPECT_EQ(c.figures[0].name, "cuda_context");
  EXPECT_EQ(c.figures[0].bytes, OverheadOptions{}.cuda_context.count());  // one default, shared with the estimator
  for (const CalibrationFigure& f : c.figures) {
    EXPECT_FALSE(f.measured) << f.name;
    EXPECT_GT(f.bytes, 0u) << f.name;
    EXPECT_FALSE(f.source.empty()) << f.name;
  }
}

TEST(Calibration, CacheKeepsOneEntryPerGpuAndDriver) {
  const fs::path file = scratch("store") / "sub" / "calibration.json";
  EXPECT_FALSE(load_calibration(file.string(), "gpu", "13.0"));  // no file yet
  Calibration a{"NVIDIA H100 80GB HBM3", "13.0", {{"cuda_context", 123456789, true, "measured"}}};
  store_calibration(file.string(), a);
  Calibration b = a;
  b.driver = "12.4";
  b.figures[0].bytes = 42;
  store_calibration(file.string(), b);
  a.figures[0].bytes = 987654321;  // replaces the first entry
  store_calibration(file.string(), a);
  const auto got_a = load_calibration(file.string(), a.gpu, "13.0");
  const auto got_b = load_calibration(file.string(), b.gpu, "12.4");
  ASSERT_TRUE(got_a && got_b);
  EXPECT_EQ(got_a->figures.at(0).bytes, 987654321u);
  EXPECT_EQ(got_b->figures.at(0).bytes, 42u);
  EXPECT_FALSE(load_calibration(file.string(), "NVIDIA A100-SXM4-80GB", "13.0"));
  fs::remove_all(file.parent_path().parent_path());
}

TEST(Calibration, AForeignFileIsAnError) {
  const fs::path dir = scratch("foreign");
  fs::create_directories(dir);
  std::ofstream(dir / "calibration.json") << "{\"not\": \"ours\"}";
  EXPECT_THROW(load_calibration((dir / "calibration.json").string(), "g", "d"), Error);
  EXPECT_THROW(store_calibration((dir / "calibration.json").string(), default_calibration()), Error);
  fs::remove_all(dir);
}

TEST(Calibration, CachePathFollowsTheEnvironment) {
  const char* saved = std::getenv("MEMPLAN_CACHE_DIR");
  const std::string keep = saved ? saved : "";
  ::setenv("MEMPLAN_CACHE_DIR", "/some/dir", 1);
  EXPECT_EQ(calibration_cache_path(), "/some/dir/calibration.json");
  if (saved) {
    ::setenv("MEMPLAN_CACHE_DIR", keep.c_str(), 1);
  } else {
    ::unsetenv("MEMPLAN_CACHE_DIR");
  }
}

TEST(Calibration, MeasuredFiguresReplaceTheOverheadAssumptions) {
  Calibration c = default_calibration();
  c.figures[0].bytes = 600 * MiB;
  c.figures[0].measured = true;
  const OverheadOptions o = apply_calibration(c, OverheadOptions{});
  EXPECT_EQ(o.cuda_context, Bytes(600 * MiB));
  EXPECT_EQ(o.cuda_context_low, Bytes(600 * MiB));
  EXPECT_EQ(o.cuda_context_high, Bytes(600 * MiB));
  EXPECT_FALSE(o.cublas_workspace);  // not measured: the estimator's default stays
  EXPECT_NE(o.cuda_context_source.find("measured by memplan calibrate"), std::string::npos) << o.cuda_context_source;
  EXPECT_TRUE(o.cublas_workspace_source.empty());
}

TEST(CudaStatus, AnswersWithoutThrowing) {
  const CudaDeviceInfo info = cuda_device_info();
  if (!kernels_cuda_available()) {
    EXPECT_EQ(info.status, CudaStatus::not_built);
  }
  EXPECT_EQ(kernels_build_info().cuda_kernels, kernels_cuda_available());
  EXPECT_FALSE(kernels_build_info().eigen.empty());
  if (info.status != CudaStatus::ok) {
    EXPECT_EQ(info.reason.rfind("no CUDA device: ", 0), 0u) << info.reason;
    EXPECT_THROW(measure_attention_cuda(AttentionVariant::eager, {}, Format::fp32, 1), Error);
    const CalibrationOutcome outcome = calibrate_cuda();
    EXPECT_FALSE(outcome.calibration);
    EXPECT_EQ(outcome.device.reason, info.reason);
  }
}

}  // namespace calibration_test
}  // namespace memplan
