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
#include "memplan/io/file_checks.hpp"

namespace memplan {

namespace {

using nlohmann::json;
constexpr const char* kCacheKind = "memplan-calibration";
constexpr int kCacheVersion = 1;

json figure_json(const CalibrationFigure& f) {
  return {{"name", f.name}, {"bytes", f.bytes}, {"measured", f.measured}, {"source", f.source}};
}

json read_cache(const std::string& path) {
  require_regular_input(path, "a calibration cache");
  std::ifstream in(path);
  if (!in) return json{{"kind", kCacheKind}, {"schema_version", kCacheVersion}, {"entries", json::array()}};
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("kind", "") != kCacheKind || !j.contains("entries") ||
      !j["entries"].is_array()) {
    throw Error(ErrorKind::invalid_input,
                path + ": not a memplan calibration cache (remove it and run 'memplan calibrate')");
  }
  return j;
}

}  // namespace

std::string calibration_cache_path() {
  namespace fs = std::filesystem;
  if (const char* dir = std::getenv("MEMPLAN_CACHE_DIR"); dir && *dir)
    return (fs::path(dir) / "calibration.json").string();
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
  // Every value is checked for its type and range: the cache is an input like any other,
  // and a figure past these bounds is a damaged file, not a measurement.
  constexpr std::uint64_t kMostBytes = 64ULL << 30;  // no context or workspace is 64 GiB
  const json cache = read_cache(path);
  const auto bad = [&](const std::string& what) {
    return Error(ErrorKind::invalid_input, path + ": malformed calibration cache: " + what);
  };
  const auto text = [&](const json& o, const char* key) {
    if (!o.contains(key) || !o[key].is_string()) throw bad(std::string("'") + key + "' must be a string");
    return o[key].get<std::string>();
  };
  for (const json& e : cache["entries"]) {
    if (!e.is_object()) throw bad("an entry is not an object");
    if (text(e, "gpu") != gpu || text(e, "driver") != driver) continue;
    if (!e.contains("figures") || !e["figures"].is_array())
      throw bad("the entry for " + gpu + " has no 'figures' list");
    Calibration c{gpu, driver, {}};
    for (const json& f : e["figures"]) {
      if (!f.is_object()) throw bad("a figure is not an object");
      const json bytes = f.contains("bytes") ? f["bytes"] : json();
      if (!bytes.is_number_unsigned() || bytes.get<std::uint64_t>() > kMostBytes) {
        throw bad("'bytes' of '" + text(f, "name") + "' must be a whole number of bytes up to 64 GiB");
      }
      if (!f.contains("measured") || !f["measured"].is_boolean()) throw bad("'measured' must be true or false");
      c.figures.push_back({text(f, "name"), bytes.get<std::uint64_t>(), f["measured"].get<bool>(), text(f, "source")});
    }
    return c;
  }
  return std::nullopt;
}

}  // namespace memplan
