// memplan models: the built-in model table.
#include <iostream>

#include "commands.hpp"
#include "memplan/frontend/requests.hpp"

namespace memplan::cli {

void define_models(CLI::App& self, int& exit_code, const NamedOptions& /*named*/) {
  auto output = std::make_shared<OutputOptions>();
  CLI::App* cmd = &self;
  cmd->description("List the built-in models with their exact parameter counts");
  add_output_options(*cmd, *output);
  cmd->callback([output, &exit_code] {
    const PrintOptions print_options = output->print_options<ModelsReport>();
    print(models_report(), print_options, std::cout);
    exit_code = 0;
  });
}

}  // namespace memplan::cli
