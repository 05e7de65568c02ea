// memplan models: the built-in model table.
#include <iostream>

#include "commands.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/io/model_file.hpp"

namespace memplan::cli {

void define_models(CLI::App& self, int& exit_code) {
  auto output = std::make_shared<OutputOptions>();
  CLI::App* cmd = &self;
  cmd->description(
      "List the built-in models with their exact parameter counts");
  add_output_options(*cmd, *output);
  cmd->callback([output, &exit_code] {
    const auto printer = output->printer();
    std::vector<ModelRow> rows;
    for (const std::string& name : builtin_model_names()) {
      const ModelEntry e = load_builtin_model(name);
      const ModelSpec& s = e.spec;
      rows.push_back({s.name, to_string(s.family), count_parameters(s), e.published_params, s.n_layers, s.d_model,
                      s.n_heads, s.n_kv_heads, s.vocab_size, s.max_seq_len, e.source});
    }
    printer->models(rows, std::cout);
    exit_code = 0;
  });
}

}  // namespace memplan::cli
