#include "plan_options.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "memplan/io/gpu_table.hpp"
#include "memplan/kernels/calibration.hpp"
#include "memplan/probe/probe.hpp"

namespace memplan::cli {

namespace {

std::string dashed(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

std::string help_of(const OptionDef& o) {
  std::string help(o.help);
  if (!o.default_text.empty()) help += " (default: " + std::string(o.default_text) + ")";
  if (o.applies != all_workloads) help += " [" + applies_text(o) + "]";
  return help;
}

// Returns the figures `memplan calibrate` stored for this GPU and driver, or nothing; an
// unreadable cache is a warning, not an error: the documented defaults still apply.
std::optional<Calibration> cached_calibration(const std::string& gpu, const std::string& cuda,
                                              std::vector<std::string>& warnings) {
  std::string path;
  try {
    path = calibration_cache_path();
  } catch (const Error&) {
    return std::nullopt;  // no cache directory: nothing was ever stored
  }
  try {
    return load_calibration(path, gpu, cuda);
  } catch (const Error& e) {
    warnings.push_back("calibration cache " + path + " not used: " + e.what() +
                       "; the overhead uses the documented defaults");
    return std::nullopt;
  }
}

std::vector<GpuSpec> gpu_list(const std::vector<std::string>& entries, const std::vector<GpuSpec>& table) {
  constexpr std::uint64_t kMostGpus = 4096;
  std::vector<GpuSpec> out;
  for (const std::string& entry : entries) {
    std::uint64_t copies = 1;
    std::string name = entry;
    const std::size_t x = entry.find('x');
    if (x != std::string::npos && x > 0 &&
        std::all_of(entry.begin(), entry.begin() + static_cast<std::ptrdiff_t>(x),
                    [](unsigned char c) { return std::isdigit(c) != 0; })) {
      const std::string digits = entry.substr(0, x);
      copies = digits.size() > 4 ? kMostGpus + 1 : std::stoull(digits);
      name = entry.substr(x + 1);
      if (copies == 0 || copies > kMostGpus) {
        throw Error(ErrorKind::invalid_input,
                    "--gpus: '" + printable(entry) + "' asks for " + digits + " GPUs (1 to " +
                        std::to_string(kMostGpus) + ")",
                    "gpus");
      }
    }
    const GpuSpec gpu = find_gpu(name, table);
    for (std::uint64_t i = 0; i < copies; ++i) out.push_back(gpu);
    if (out.size() > kMostGpus) {
      throw Error(ErrorKind::invalid_input, "--gpus lists more than " + std::to_string(kMostGpus) + " GPUs", "gpus");
    }
  }
  return out;
}

}  // namespace

std::string flag_of(const OptionDef& option) { return "--" + dashed(option.flag); }

NamedOptions::NamedOptions(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word == "--") break;  // the rest are positional
    if (word == "--help" || word == "-h") all_ = true;
    if (word.starts_with("--") && word.size() > 2) {
      std::string name(word.substr(2, word.find('=') - 2));
      std::replace(name.begin(), name.end(), '-', '_');
      long_names_.push_back(std::move(name));
    } else if (word.size() > 1 && word[0] == '-' && std::isdigit(static_cast<unsigned char>(word[1])) == 0) {
      short_flags_ = true;
    }
  }
}

bool NamedOptions::names(const OptionDef& option) const {
  if (all_ || (short_flags_ && option.short_flag != 0)) return true;
  return std::find(long_names_.begin(), long_names_.end(), option.flag) != long_names_.end();
}

std::vector<std::string> plan_option_flags() {
  std::vector<std::string> out;
  for (const OptionDef& o : plan_options()) out.push_back(flag_of(o));
  return out;
}

void add_plan_options(CLI::App& cmd, PlanOptions& out, const NamedOptions& named,
                      const std::vector<std::string_view>& skip, bool show_all) {
  for (const OptionDef& o : plan_options()) {
    if (!named.names(o) || std::find(skip.begin(), skip.end(), o.key) != skip.end()) continue;
    std::string names = flag_of(o);
    if (o.short_flag != 0) names = std::string("-") + o.short_flag + "," + names;
    CLI::Option* opt = o.kind == OptionKind::flag ? cmd.add_flag(names) : cmd.add_option(names);
    opt->description(help_of(o));
    if (o.kind == OptionKind::list) {
      opt->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    } else if (o.kind != OptionKind::flag) {
      opt->expected(1);
    }
    opt->group(show_all || o.common ? std::string(o.group) : std::string());
    out.options.emplace_back(&o, opt);
  }
}

PlanSettings plan_settings(const PlanOptions& options) {
  PlanSettings s;
  for (const auto& [def, opt] : options.options) {
    if (opt->count() == 0) continue;
    set_option(s, *def, def->kind == OptionKind::flag ? std::vector<std::string>{} : opt->results());
  }
  return s;
}

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\n' && c != '\t') || byte == 0x7f) {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    } else {
      out += c;
    }
  }
  return out;
}

std::string render_for_cli(std::string_view text) {
  return render_option_refs(terminal_safe(text), [](std::string_view key) -> std::optional<std::string> {
    if (key == "kind") return std::string("-w");
    if (const OptionDef* o = find_option(key)) return flag_of(*o);
    // The command-line options outside the table.
    for (const char* cli_only : {"gpu", "vary", "budget", "format", "units", "explain", "probe", "as"}) {
      if (key == cli_only) return "--" + std::string(key);
    }
    return std::nullopt;
  });
}

void add_as_option(CLI::App& cmd, std::string& as) {
  cmd.add_option("--as", as,
                 "Read a config.json whose model_type memplan does not know as this known model_type\n"
                 "(e.g. llama); every config key it did not use is shown as a warning")
      ->type_name("MODEL_TYPE");
}

void add_device_options(CLI::App& cmd, DeviceArgs& args, bool gpu_required, bool probe, bool capacity) {
  std::string help = gpu_required ? "GPU of the table the plan must fit (see 'memplan gpus')"
                                  : "Say whether it fits on this GPU (see 'memplan gpus')";
  if (capacity) help += gpu_required ? ", or a capacity such as 24GiB" : " or in a capacity\nsuch as 24GiB";
  if (!gpu_required) help += "; MEMPLAN_GPU_FILE adds your own GPUs";
  CLI::Option* gpu = cmd.add_option("-g,--gpu", args.gpu, help);
  if (gpu_required) gpu->required();
  if (!probe) return;
  cmd.add_flag("--probe", args.probe,
               "Plan for the first GPU this machine has, against its free memory; the overhead uses\n"
               "this GPU's 'memplan calibrate' figures when they are cached");
  cmd.add_flag("--no-calibration", args.no_calibration, "With --probe: ignore cached calibration figures");
}

std::vector<GpuSpec> known_gpus() {
  const char* file = std::getenv("MEMPLAN_GPU_FILE");
  try {
    return gpu_table(file != nullptr ? file : "");
  } catch (const Error& e) {
    throw Error(e.kind(), std::string(e.what()) + " (the GPU file MEMPLAN_GPU_FILE names)", e.key());
  }
}

DeviceChoice choose_device(const DeviceArgs& args, const PlanSettings& settings) {
  DeviceChoice d;
  if (args.probe) {
    const ProbeResult probed = probe();
    if (const ProbedDevice* device = first_device(probed)) {
      if (!args.no_calibration) d.calibration = cached_calibration(device->name, probed.cuda_version, d.warnings);
      d.gpu = to_gpu_spec(*device);
      d.probed = true;
      if (device->free_memory) {
        d.gpu->memory = *device->free_memory;  // plan against what is free now, not the card's total
        d.gpu->display += " (free memory now)";
      }
      spdlog::debug("probed {}: {} bytes free", d.gpu->display, d.gpu->memory.count());
    } else {
      d.warnings.push_back("--probe found no usable GPU (" + probed.reason + ")" +
                           (args.gpu.empty() ? "" : "; using --gpu " + args.gpu));
    }
  }
  // The table (with the user's GPU file) is read once, and only when a GPU is looked up.
  std::optional<std::vector<GpuSpec>> loaded;
  const auto table = [&]() -> const std::vector<GpuSpec>& {
    if (!loaded) loaded = known_gpus();
    return *loaded;
  };
  if (!d.gpu && !args.gpu.empty()) {
    // A name of the table first ("4090" is an alias); else text that starts with a digit is
    // a capacity, with its unit: a bare "24" would be 24 bytes.
    const std::string& text = args.gpu;
    if (const GpuSpec* named = match_gpu(text, table())) {
      d.gpu = *named;
    } else if (std::isdigit(static_cast<unsigned char>(text.front())) == 0) {
      d.gpu = find_gpu(text, table());  // throws, naming the closest GPUs
    } else if (std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) {
      throw Error(ErrorKind::invalid_input,
                  "--gpu " + printable(text) + ": no GPU has that name, and a capacity needs its unit (" + text +
                      "GiB or " + text + "GB)",
                  "gpu");
    } else {
      d.budget = parse_size(text);
    }
  }
  if (!settings.layout.gpus.empty()) d.gpus = gpu_list(settings.layout.gpus, table());
  const WorkloadKind kind = settings.workload.kind;
  if (kind == WorkloadKind::hessian || kind == WorkloadKind::full_fisher) {
    // Only the full-curvature analyses say how many parameters the largest GPU could take.
    const auto largest = std::max_element(table().begin(), table().end(),
                                          [](const GpuSpec& x, const GpuSpec& y) { return x.memory < y.memory; });
    if (largest != table().end()) d.largest = DeviceLimit{largest->name, largest->memory};
  }
  return d;
}

void require_named_gpu(const DeviceChoice& device, std::string_view command) {
  if (device.gpu || !device.budget) return;
  throw Error(ErrorKind::invalid_input,
              std::string(command) + " needs a GPU from the table (--gpu NAME; memplan gpus lists them): it " +
                  "resolves precisions by the GPU's compute capability, which a bare capacity does not have",
              "gpu");
}

std::vector<std::string> estimate_command(const std::string& model, const DeviceArgs& device, const PlanOptions& given,
                                          const std::vector<OptionSetting>& change) {
  std::vector<std::string> out = {"memplan", "estimate", model};
  if (!device.gpu.empty()) out.insert(out.end(), {"--gpu", device.gpu});
  const auto changed = [&](const OptionDef& o) {
    return std::any_of(change.begin(), change.end(), [&](const OptionSetting& c) { return c.key == o.key; });
  };
  for (const auto& [def, opt] : given.options) {
    if (opt->count() == 0 || changed(*def)) continue;
    out.push_back(flag_of(*def));
    if (def->kind == OptionKind::flag) continue;
    std::string joined;
    for (const std::string& v : opt->results()) joined += (joined.empty() ? "" : ",") + v;
    out.push_back(joined);
  }
  for (const OptionSetting& c : change) {
    const OptionDef* def = find_option(c.key);
    if (def == nullptr) throw Error(ErrorKind::internal, "a recommendation sets '" + c.key + "', which is no option");
    out.push_back(flag_of(*def));
    if (!c.value.empty()) out.push_back(c.value);
  }
  return out;
}

}  // namespace memplan::cli
