// memplan: plans the GPU memory of a transformer job before it starts.
// One page: build the command line, run it, map errors to exit codes in one place.
// Exit codes: 0 ok, 1 a budget check failed, 2 bad input or usage, 3 internal failure.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <sstream>

#include "commands.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "memplan/core/version.hpp"
#include "memplan/kernels/cuda.hpp"
#include "plan_options.hpp"

namespace memplan::cli {

namespace {

// clang-format off
constexpr std::array kCommands = std::to_array<Command>({
  {"estimate", "Estimate the memory a workload needs on a model, and where it goes.", define_estimate},
  {"hooks", "List a model's hook points (TransformerLens names) with shapes and bytes.", define_hooks},
  {"attention", "Tabulate the peak memory of one attention call for each variant over sequence lengths.", define_attention},
  {"models", "List the built-in models with their exact parameter counts", define_models},
  {"gpus", "List the built-in GPUs: memory as the driver reports it, compute capability, speed", define_gpus},
  {"probe", "Show the NVIDIA GPUs this machine has, its CPU, RAM and environment.", define_probe},
  {"resolve", "Say which precision a job will run in on a device, the chain walked, and why.", define_resolve},
  {"measure", "Run memplan's own kernels and compare their real peak memory with the estimate.", define_measure},
  {"calibrate", "Measure this GPU's CUDA context, cuBLAS workspace and allocator rounding, and keep them.", define_calibrate},
  {"import", "Import a real model: a Hugging Face config.json or a safetensors header becomes a model file.", define_import},
  {"check", "Check plan files against their budgets: the CI gate.", define_check},
  {"fit", "The largest batch, sequence length or chunk that fits on a GPU, and the component that binds.", define_fit},
  {"budget-table", "Regenerate the 7B / 70B memory budget tables from memplan's formulas.", define_budget_table},
  {"sweep", "Estimate a grid of plans: models x workloads x precisions x batch sizes x sequence lengths.", define_sweep},
  {"recommend", "What to change when a plan does not fit a GPU, and which GPUs it fits as given.", define_recommend},
  {"help", "Explain the plan options: 'memplan help options [WORKLOAD]'.", define_help},
  {"completion", "Print a bash completion script: source <(memplan completion bash).", define_completion},
});
// clang-format on

// The first word on the command line that is not an option (main's own options take no
// values), or nullptr.
const char* first_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] != '-') return argv[i];
  }
  return nullptr;
}

// The subcommand named on the command line, or nullptr.
const Command* invoked(int argc, char** argv) {
  const char* word = first_word(argc, argv);
  for (const Command& c : kCommands) {
    if (word != nullptr && std::strcmp(c.name, word) == 0) return &c;
  }
  return nullptr;
}

// " (did you mean '--kv-precision'?)" for an unknown option of `cmd`, from its long names.
std::string flag_suggestion(const CLI::App& cmd, const std::string& wanted) {
  // The table's options a command has are registered only when named: suggest from them all.
  std::vector<std::string> names = plan_option_flags();
  for (const CLI::Option* o : cmd.get_options()) {
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return did_you_mean(wanted, names);
}

// CLI11 says "--batch: 1 required  missing" or "--batch: 1 required TEXT missing" for an
// option given without its value; returns "--batch needs a value". Other messages are
// returned as they are.
std::string missing_value_message(const std::string& message) {
  const std::size_t colon = message.find(": ");
  const std::size_t required = message.find(" required", colon);
  if (colon == std::string::npos || required == std::string::npos || !message.ends_with(" missing")) return message;
  const std::string count = message.substr(colon + 2, required - colon - 2);
  if (count.empty() || !std::all_of(count.begin(), count.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) {
    return message;
  }
  const std::string name = message.substr(0, colon);
  return count == "1" ? name + " needs a value" : name + " needs " + count + " values";
}

// Holds what a command prints on stdout and writes it when the command ends, with the
// options the core names as `key` written as flags (--kv-precision).
class RenderedStdout {
 public:
  explicit RenderedStdout(bool render) : render_(render), original_(std::cout.rdbuf(buffer_.rdbuf())) {}
  RenderedStdout(const RenderedStdout&) = delete;
  RenderedStdout& operator=(const RenderedStdout&) = delete;
  ~RenderedStdout() {
    std::cout.rdbuf(original_);
    std::cout << (render_ ? render_for_cli(buffer_.str()) : terminal_safe(buffer_.str())) << std::flush;
  }

 private:
  bool render_;
  std::ostringstream buffer_;
  std::streambuf* original_;
};

// The first --option on the command line that `cmd` does not know, without its "=value".
std::optional<std::string> unknown_option(const CLI::App& cmd, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (!arg.starts_with("--") || arg.size() == 2) continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (cmd.get_option_no_throw(name) == nullptr && name != "--help" && name != "--version" && name != "--verbose") {
      return name;
    }
  }
  return std::nullopt;
}

}  // namespace

std::span<const Command> commands() { return kCommands; }

void add_output_options(CLI::App& command, OutputOptions& options) {
  command.add_option("--format", options.format, "Output: table (for people) or json (exact bytes, schema_version 1)")
      ->capture_default_str();
  command.add_option("--units", options.units, "Sizes in iec (KiB, MiB, GiB: powers of 1024) or si (KB, MB, GB)")
      ->capture_default_str();
}

std::vector<std::string> split_hook_filters(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const std::string& value : values) {
    std::string current;
    int depth = 0;
    for (const char c : value) {
      if (c == '{') ++depth;
      if (c == '}' && depth > 0) --depth;
      if (c == ',' && depth == 0) {
        if (!current.empty()) out.push_back(current);
        current.clear();
      } else {
        current += c;
      }
    }
    if (!current.empty()) out.push_back(current);
  }
  return out;
}

}  // namespace memplan::cli

namespace {

int run_main(int argc, char** argv) {
  using namespace memplan;
  spdlog::set_default_logger(spdlog::stderr_color_st("memplan"));
  spdlog::set_pattern("memplan: %l: %v");
  spdlog::set_level(spdlog::level::warn);

  CLI::App app{"memplan " + version() +
               ": how much GPU memory a transformer job needs, where it goes, and whether it fits.\n"
               "Examples:\n"
               "  memplan estimate llama-2-7b                 weights of Llama-2-7B in bf16\n"
               "  memplan estimate mistral-7b-v0.1 --precision int4 --gpu rtx-4090\n"
               "  memplan estimate my-model.yaml --format json\n"
               "  memplan recommend llama-2-13b --gpu rtx-4090 -w generation   what to change to fit\n"
               "  memplan sweep llama-2-7b --batch 1,8 --seq 512,2048 -p fp16,int4 --gpu a10\n"
               "  memplan models | memplan gpus               the built-in tables\n"};
  app.set_version_flag("--version", [] {
    const KernelsBuildInfo kernels = kernels_build_info();
    return "memplan " + version() + " (commit " + build_info().commit + "; CUDA kernels: " +
           (kernels.cuda_kernels ? "CUDA " + kernels.cuda_toolkit + ", sm " + kernels.cuda_architectures
                                 : std::string("not built")) +
           ")";
  });
  app.require_subcommand(0, 1);
  app.fallthrough();
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "Log what memplan reads and decides, on stderr");
  app.parse_complete_callback([&] {
    if (verbose) spdlog::set_level(spdlog::level::debug);
  });

  // Only the invoked command is registered, with only the options the command line names
  // (start-up: each CLI11 subcommand costs as much as its command's work); without one,
  // every command is listed for the help.
  int exit_code = 0;
  const cli::Command* chosen = cli::invoked(argc, argv);
  const cli::NamedOptions named(argc, argv);
  CLI::App* chosen_app = nullptr;
  if (chosen != nullptr) {
    chosen_app = app.add_subcommand(chosen->name, chosen->summary);
    chosen->define(*chosen_app, exit_code, named);
  } else {
    for (const cli::Command& c : cli::commands()) app.add_subcommand(c.name, c.summary);
  }

  try {
    // help writes the table's keys in backticks on purpose (markdown): it prints as is.
    const cli::RenderedStdout rendered(chosen == nullptr || std::strcmp(chosen->name, "help") != 0);
    app.parse(argc, argv);
    if (app.get_subcommands().empty()) std::cout << app.help();
    return exit_code;
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    // An unknown option or command: say which known one is nearest.
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      if (chosen_app != nullptr) {
        if (const std::optional<std::string> unknown = cli::unknown_option(*chosen_app, argc, argv)) {
          message = "unknown option '" + *unknown + "' for 'memplan " + chosen_app->get_name() + "'" +
                    cli::flag_suggestion(*chosen_app, *unknown);
        }
      } else if (const char* word = cli::first_word(argc, argv)) {
        std::vector<std::string> names;
        for (const cli::Command& c : cli::commands()) names.emplace_back(c.name);
        message = "'" + printable(word) + "' is not a memplan command" + did_you_mean(word, names);
      }
    } else if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
      message = cli::missing_value_message(message);
    }
    std::cerr << "memplan: error: " << terminal_safe(message)
              << "\nRun 'memplan --help' or 'memplan COMMAND --help' for usage.\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << "memplan: error: " << render_for_cli(e.what()) << '\n';
    return e.kind() == ErrorKind::internal ? 3 : 2;
  } catch (const std::exception& e) {
    std::cerr << "memplan: internal error: " << terminal_safe(e.what()) << '\n';
    return 3;
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Set-up before the parse (the logger, the command table) can throw too: nothing escapes.
  try {
    return run_main(argc, argv);
  } catch (const std::exception& e) {
    std::fputs("memplan: internal error: ", stderr);
    std::fputs(e.what(), stderr);
    std::fputs("\n", stderr);
  } catch (...) {
    std::fputs("memplan: internal error\n", stderr);
  }
  return 3;
}
