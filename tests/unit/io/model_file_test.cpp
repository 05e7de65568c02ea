#include "memplan/io/model_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"

namespace memplan {
namespace model_file_test {

const std::string kData = MEMPLAN_TEST_DATA;

ConfigError config_error(const std::string& file) {
  try {
    load_model_file(kData + "/" + file);
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << file << " was accepted";
  return ConfigError("", 0, 0, "", "");
}

TEST(ModelFile, FamilyDefaultsFillTheRest) {
  const ModelEntry e = load_model_file(kData + "/tiny-gpt2.yaml");
  EXPECT_EQ(e.spec.name, "tiny-gpt2");
  EXPECT_EQ(e.spec.d_head, 64U);                      // 768 / 12
  EXPECT_EQ(e.spec.n_kv_heads, 12U);                  // = n_heads
  EXPECT_EQ(count_parameters(e.spec), 124439808ULL);  // GPT-2 small, published
}

TEST(ModelFile, ErrorsNameFileLineColumnAndKey) {
  ConfigError e = config_error("unknown-key.yaml");
  EXPECT_EQ(e.key(), "n_head");
  EXPECT_EQ(e.line(), 4U);
  EXPECT_EQ(e.column(), 1U);
  EXPECT_NE(e.message().find("did you mean 'n_heads'"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("unknown-key.yaml:4:1: "), std::string::npos) << e.what();

  e = config_error("syntax-error.yaml");
  EXPECT_GT(e.line(), 2U);
  EXPECT_NE(e.message().find("YAML syntax error"), std::string::npos);

  e = config_error("zero-layers.yaml");
  EXPECT_EQ(e.key(), "n_layers");
  EXPECT_EQ(e.line(), 3U);
  EXPECT_EQ(e.column(), 11U);

  EXPECT_EQ(config_error("negative-size.yaml").key(), "d_model");
  EXPECT_EQ(config_error("kv-heads-not-dividing.yaml").key(), "n_kv_heads");
  EXPECT_EQ(config_error("missing-key.yaml").key(), "vocab_size");
  EXPECT_EQ(config_error("wrong-type.yaml").key(), "d_model");
  EXPECT_EQ(config_error("heads-not-dividing.yaml").key(), "d_head");
  EXPECT_EQ(config_error("unknown-family.yaml").key(), "family");
  EXPECT_EQ(config_error("bad-bool.yaml").key(), "mlp_bias");
  EXPECT_EQ(config_error("huge-value.yaml").key(), "n_layers");
  EXPECT_EQ(config_error("duplicate-key.yaml").key(), "n_layers");
  EXPECT_EQ(config_error("duplicate-key.yaml").line(), 8U);
  EXPECT_NE(config_error("empty.yaml").message().find("empty"), std::string::npos);
  EXPECT_NE(config_error("not-a-mapping.yaml").message().find("mapping"), std::string::npos);
  EXPECT_NE(config_error("no-such-file.yaml").message().find("no such file"), std::string::npos);
  EXPECT_NE(config_error("").message().find("directory"), std::string::npos);
}

// The published totals live in each file with their source; memplan's count must match.
TEST(BuiltinModels, EveryCountMatchesItsPublishedTotal) {
  // No exact published total exists for these; their files say which rounded figures
  // (6.92B, 6.7B) the count was checked against.
  const std::vector<std::string> rounded_only = {"falcon-7b", "opt-6.7b"};
  const std::vector<std::string> names = builtin_model_names();
  EXPECT_GE(names.size(), 25U);
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const ModelEntry e = load_builtin_model(name);
    EXPECT_FALSE(e.source.empty()) << "every shipped model cites its config";
    const bool exempt = std::find(rounded_only.begin(), rounded_only.end(), name) != rounded_only.end();
    ASSERT_EQ(e.published_params.has_value(), !exempt);
    if (exempt) continue;
    EXPECT_FALSE(e.published_params_source.empty());
    EXPECT_EQ(count_parameters(e.spec), *e.published_params);
  }
}

TEST(BuiltinModels, CoverTheModelsTheSeedsName) {
  const std::vector<std::string> names = builtin_model_names();
  for (const char* wanted :
       {"gpt2",           "gpt2-medium", "gpt2-large",      "gpt2-xl",          "pythia-70m",    "pythia-160m",
        "pythia-410m",    "pythia-1b",   "pythia-2.8b",     "pythia-6.9b",      "pythia-12b",    "llama-2-7b",
        "llama-2-13b",    "llama-2-70b", "mistral-7b-v0.1", "llama-3-8b",       "llama-3.1-70b", "mixtral-8x7b-v0.1",
        "qwen2.5-0.5b",   "qwen2.5-7b",  "gemma-2b",        "gemma-7b",         "phi-2",         "phi-3-mini-4k",
        "tinyllama-1.1b", "opt-125m",    "falcon-7b",       "bert-base-uncased"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), wanted), names.end()) << wanted;
  }
}

TEST(BuiltinModels, UnknownNameSuggestsTheClosest) {
  try {
    find_model("llama-2-7");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_input);
    EXPECT_NE(std::string(e.what()).find("'llama-2-7b'"), std::string::npos) << e.what();
  }
}

}  // namespace model_file_test
}  // namespace memplan
