// memplan help options [WORKLOAD]: every plan option from the option table, by section, with
// its plan-file key, default and the workloads it applies to; --format markdown writes the
// table docs/options.md shows. memplan completion bash: completion from the same table.
#include <iostream>

#include "commands.hpp"
#include "memplan/core/error.hpp"
#include "plan_options.hpp"

namespace memplan::cli {

namespace {

struct HelpArgs {
  std::vector<std::string> topic;  // "options" [WORKLOAD]
  std::string format = "text";
};

std::string value_hint(const OptionDef& o) {
  switch (o.kind) {
    case OptionKind::flag: return "";
    case OptionKind::count: return " N";
    case OptionKind::number: return " X";
    case OptionKind::list: return " A,B";
    case OptionKind::text: return " VALUE";
  }
  return "";
}

int run_help(const HelpArgs& a) {
  if (a.topic.empty() || a.topic.front() != "options" || a.topic.size() > 2) {
    throw Error(ErrorKind::invalid_input, "usage: memplan help options [WORKLOAD] (the topics: options)", "topic");
  }
  if (a.format != "text" && a.format != "markdown") {
    throw Error(ErrorKind::invalid_input, "--format takes text or markdown, not '" + a.format + "'", "format");
  }
  WorkloadMask only = all_workloads;
  if (a.topic.size() == 2) only = workload_bit(parse_workload_kind(a.topic[1]));
  const bool md = a.format == "markdown";
  std::string_view group;
  std::size_t shown = 0;
  for (const OptionDef& o : plan_options()) {
    if ((o.applies & only) == 0) continue;
    if (o.group != group) {
      group = o.group;
      if (md) {
        std::cout << "\n### " << group
                  << "\n\n| option | plan-file key | applies to | default | what it sets |\n|---|---|---|---|---|\n";
      } else {
        std::cout << '\n' << group << ":\n";
      }
    }
    const std::string flag = (o.short_flag != 0 ? std::string("-") + o.short_flag + ", " : std::string()) + flag_of(o);
    if (md) {
      std::cout << "| `" << flag << value_hint(o) << "` | `" << o.key << "` | " << applies_text(o) << " | "
                << (o.default_text.empty() ? "-" : std::string(o.default_text)) << " | " << o.help << " |\n";
    } else {
      std::cout << "  " << flag << value_hint(o) << "   (plan file: " << o.key << ")\n      " << o.help << '\n';
      if (!o.default_text.empty()) std::cout << "      default: " << o.default_text << '\n';
      if (o.applies != all_workloads) std::cout << "      applies to: " << applies_text(o) << '\n';
    }
    ++shown;
  }
  if (!md) {
    std::cout << '\n'
              << shown << " options. Each is a command-line flag of estimate, fit, recommend and sweep, and a key\n"
              << "of a plan file's workload: section (docs/configs.md). One given for a workload it does not apply\n"
              << "to is an error.\n";
  }
  return 0;
}

}  // namespace

void define_help(CLI::App& cmd, int& exit_code, const NamedOptions& /*named*/) {
  auto args = std::make_shared<HelpArgs>();
  cmd.description(
      "Explain the plan options: every option of estimate, fit, recommend and sweep, by section.\n"
      "Examples:\n"
      "  memplan help options              all of them\n"
      "  memplan help options training     those that apply to -w training");
  cmd.add_option("TOPIC", args->topic, "options [WORKLOAD]")->required();
  cmd.add_option("--format", args->format, "text, or markdown (the table in docs/options.md)")->capture_default_str();
  cmd.callback([args, &exit_code] { exit_code = run_help(*args); });
}

void define_completion(CLI::App& cmd, int& exit_code, const NamedOptions& /*named*/) {
  auto shell = std::make_shared<std::string>();
  cmd.description("Print a bash completion script for memplan: source <(memplan completion bash)");
  cmd.add_option("SHELL", *shell, "bash")->required();
  cmd.callback([shell, &exit_code] {
    if (*shell != "bash")
      throw Error(ErrorKind::invalid_input, "completion is written for bash, not '" + *shell + "'", "shell");
    std::string commands_list, options_list;
    for (const Command& c : commands()) commands_list += std::string(commands_list.empty() ? "" : " ") + c.name;
    for (const OptionDef& o : plan_options()) options_list += " " + flag_of(o);
    std::cout << "# memplan bash completion: commands, plan options, workloads.\n"
                 "_memplan() {\n"
                 "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
                 "  if [ \"$COMP_CWORD\" -eq 1 ]; then COMPREPLY=($(compgen -W \""
              << commands_list
              << "\" -- \"$cur\")); return; fi\n"
                 "  case \"$prev\" in -w|--workload) COMPREPLY=($(compgen -W \"";
    for (const std::string& w : workload_names()) std::cout << w << ' ';
    std::cout << "\" -- \"$cur\")); return;; esac\n"
                 "  COMPREPLY=($(compgen -W \"--gpu --probe --format --units --explain"
              << options_list
              << "\" -- \"$cur\"))\n"
                 "}\n"
                 "complete -F _memplan memplan\n";
    exit_code = 0;
  });
}

}  // namespace memplan::cli
