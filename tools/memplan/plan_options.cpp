#include "plan_options.hpp"

#include <algorithm>
#include <cctype>

namespace memplan::cli {

namespace {

std::string help_of(const OptionDef& o) {
  std::string help(o.help);
  if (!o.default_text.empty()) help += " (default: " + std::string(o.default_text) + ")";
  if (o.applies != all_workloads) help += " [" + applies_text(o) + "]";
  return help;
}

}  // namespace

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

std::vector<GivenOption> given_options(const PlanOptions& options) {
  std::vector<GivenOption> out;
  for (const auto& [def, opt] : options.options) {
    if (opt->count() == 0) continue;
    out.push_back({def, def->kind == OptionKind::flag ? std::vector<std::string>{} : opt->results()});
  }
  return out;
}

PlanSettings plan_settings(const PlanOptions& options) { return settings_from(given_options(options)); }

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
  add_cpu_option(cmd, args);
}

void add_cpu_option(CLI::App& cmd, DeviceArgs& args) {
  cmd.add_option("--cpu", args.cpu,
                 "Plan for this machine's CPU instead of a GPU: fp32 by default, no CUDA context or caching\n"
                 "allocator, held against the RAM available now, or a size (--cpu=64GiB)")
      ->expected(0, 1)
      ->default_str("host")
      ->type_name("[=SIZE]");
}

}  // namespace memplan::cli
