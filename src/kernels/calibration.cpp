// Calibration figures: the documented defaults, and the per-GPU, per-driver cache file.
// (Measuring them is calibrate_cuda, in cuda_runtime.cpp or cuda_unavailable.cpp.)
#include "memplan/kernels/calibration.hpp"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "memplan/core/bytes.hpp"
#include "memplan/core/error.hpp"
#include "memplan/io/atomic_file.hpp"

namespace memplan {

namespace {

using nlohmann::json;
constexpr const char* kCacheKind = "memplan-calibration";
constexpr int kCacheVersion = 1;

json figure_json(const CalibrationFigure& f) {
  return {{"name", f.name}, {"bytes", f.bytes}, {"measured", f.measured}, {"source", f.source}};
}

json read_cache(const std::string& path) {
  std::ifstream in(path);
  if (!in) return json{{"kind", kCacheKind}, {"schema_version", kCacheVersion}, {"entries", json::array()}};
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("kind", "") != kCacheKind || !j.contains("entries") ||
      !j["entries"].is_array()) {
    throw Error(ErrorKind::invalid_input, path + ": not a memplan calibration cache (remove it and run 'memplan calibrate')");
  }
  return j;
}

}  // namespace

std::string calibration_cache_path() {
  namespace fs = std::filesystem;
  if (const char* dir = std::getenv("MEMPLAN_CACHE_DIR"); dir && *dir) return (fs::path(dir) / "calibration.json").string();
  if (const char* dir = std::getenv("XDG_CACHE_HOME"); dir && *dir) {
    return (fs::path(dir) / "memplan" / "calibration.json").string();
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return (fs::path(home) / ".cache" / "memplan" / "calibration.json").string();
  }
  throw Error(ErrorKind::invalid_input, "no cache directory: set MEMPLAN_CACHE_DIR, XDG_CACHE_HOME or HOME");
}

void store_calibration(const std::string& path, const Calibration& calibration) {
  namespace fs = std::filesystem;
  json cache = read_cache(path);
  json entry{{"gpu", calibration.gpu}, {"driver", calibration.driver}, {"figures", json::array()}};
  for (const CalibrationFigure& f : calibration.figures) entry["figures"].push_back(figure_json(f));
  json kept = json::array();
  for (const json& e : cache["entries"]) {
    if (e.value("gpu", "") != calibration.gpu || e.value("driver", "") != calibration.driver) kept.push_back(e);
  }
  kept.push_back(entry);
  cache["entries"] = kept;
  std::error_code ec;
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  // Atomically: an interrupted store must not leave a cache that no later run can read.
  try {
    write_file_atomically(path, cache.dump(2) + '\n');
  } catch (const Error& e) {
    throw Error(ErrorKind::internal, std::string(e.what()) + " (the calibration cache)");
  }
}

std::optional<Calibration> load_calibration(const std::string& path, const std::string& gpu,
                                            const std::string& driver) {
  const json cache = read_cache(path);
  for (const json& e : cache["entries"]) {
    if (e.value("gpu", "") != gpu || e.value("driver", "") != driver) continue;
    Calibration c{gpu, driver, {}};
    try {
      for (const json& f : e.at("figures")) {
        c.figures.push_back({f.at("name").get<std::string>(), f.at("bytes").get<std::uint64_t>(),
                             f.at("measured").get<bool>(), f.at("source").get<std::string>()});
      }
    } catch (const json::exception& ex) {
      throw Error(ErrorKind::invalid_input, path + ": malformed calibration entry for " + gpu + ": " + ex.what());
    }
    return c;
  }
  return std::nullopt;
}

}  // namespace memplan
