#include "memplan/io/safetensors.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/text.hpp"
#include "memplan/io/hf_config.hpp"

namespace memplan {
namespace safetensors_test {

namespace fs = std::filesystem;

const fs::path kHf = fs::path(MEMPLAN_TEST_FIXTURES) / "hf";

std::string le64(std::uint64_t n) {
  std::string out(8, '\0');
  for (std::size_t i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out;
}

// A scratch directory per test, removed afterwards.
class Safetensors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("memplan_safetensors_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes raw bytes; returns the path.
  std::string write(const std::string& name, const std::string& bytes) const {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
  // A well-formed file: the header's length, the header, `data_size` zero bytes.
  std::string file(const std::string& name, const std::string& header, std::uint64_t data_size) const {
    return write(name, le64(header.size()) + header + std::string(data_size, '\0'));
  }

  // The error reading `path` gives; fails the test when it reads.
  static ConfigError error(const std::string& path) {
    try {
      read_checkpoint(path);
    } catch (const ConfigError& e) {
      return e;
    }
    ADD_FAILURE() << path << " was accepted";
    return ConfigError("", 0, 0, "", "");
  }

  // The hostile header `header` (over `data_size` bytes) is refused naming the file and,
  // when given, the tensor; the message says `says`.
  void expect_refused(const std::string& header, std::uint64_t data_size, const std::string& tensor,
                      const std::string& says) {
    SCOPED_TRACE(header);
    const std::string path = file("hostile.safetensors", header, data_size);
    const ConfigError e = error(path);
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.key(), tensor);
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(path, 0), 0U) << what;
    if (!tensor.empty()) {
      EXPECT_NE(what.find("'" + printable(tensor) + "'"), std::string::npos) << what;
    }
    EXPECT_NE(what.find(says), std::string::npos) << what;
  }

  fs::path dir_;
};

TEST_F(Safetensors, ReadsTensorsTotalsAndMetadata) {
  const std::string header =
      R"({"__metadata__":{"format":"pt"},)"
      R"("b":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
      R"("a":{"dtype":"BF16","shape":[4],"data_offsets":[24,32]},)"
      R"("s":{"dtype":"I64","shape":[],"data_offsets":[32,40]},)"
      R"("z":{"dtype":"F16","shape":[0,5],"data_offsets":[40,40]}}    )";  // padded with spaces, as writers do
  const std::string path = file("model.safetensors", header, 40);
  const SafetensorsInventory inv = read_safetensors(path);
  ASSERT_EQ(inv.tensors.size(), 4U);
  EXPECT_EQ(inv.tensors[0].name, "a");
  EXPECT_EQ(inv.tensors[1].name, "b");
  EXPECT_EQ(inv.tensors[1].shape, (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(inv.tensors[1].elements, 6U);
  EXPECT_EQ(inv.tensors[1].bytes, 24U);
  EXPECT_EQ(inv.tensors[2].elements, 1U);  // a scalar
  EXPECT_EQ(inv.tensors[3].elements, 0U);  // an empty tensor
  EXPECT_EQ(inv.tensors[0].file, path);
  EXPECT_EQ(inv.elements, 11U);
  EXPECT_EQ(inv.bytes, 40U);
  EXPECT_EQ(inv.file_bytes, 8 + header.size() + 40);
  ASSERT_EQ(inv.dtypes.size(), 4U);
  EXPECT_EQ(inv.dtypes[0].dtype, "F32");  // most bytes first
  EXPECT_EQ(inv.dtypes[0].bytes, 24U);
  EXPECT_EQ(inv.dtypes[3].dtype, "F16");
  ASSERT_EQ(inv.metadata.size(), 1U);
  EXPECT_EQ(inv.metadata[0], (std::pair<std::string, std::string>{"format", "pt"}));
  EXPECT_EQ(inv.files, std::vector<std::string>{path});
}

TEST_F(Safetensors, SubByteDtypesCountBits) {
  EXPECT_EQ(safetensors_dtype_bits("F4"), 4U);
  EXPECT_EQ(safetensors_dtype_bits("F6_E3M2"), 6U);
  EXPECT_EQ(safetensors_dtype_bits("C64"), 64U);
  const SafetensorsInventory inv = read_safetensors(file(
      "fp4.safetensors",
      R"({"w":{"dtype":"F4","shape":[4],"data_offsets":[0,2]},"x":{"dtype":"F6_E2M3","shape":[4],"data_offsets":[2,5]}})",
      5));
  EXPECT_EQ(inv.elements, 8U);
  EXPECT_EQ(inv.bytes, 5U);
  expect_refused(R"({"w":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})", 2, "w",
                 "3 elements of F4 (4 bits each) are not a whole number of bytes");
}

TEST_F(Safetensors, HostileLengthsAreRefusedBeforeAnythingIsRead) {
  std::string path = write("huge.safetensors", le64(1ULL << 62) + "{}");
  ConfigError e = error(path);
  EXPECT_EQ(e.file(), path);
  EXPECT_NE(e.message().find("over the 100 MiB limit"), std::string::npos) << e.what();

  path = write("just-over.safetensors", le64(max_safetensors_header_bytes + 1) + "{}");
  EXPECT_NE(error(path).message().find("over the 100 MiB limit"), std::string::npos);

  path = write("truncated.safetensors", le64(100) + R"({"a":{"dtype")");
  e = error(path);
  EXPECT_EQ(e.file(), path);
  EXPECT_NE(e.message().find("header length 100 bytes runs past the end of the file (13 bytes follow"),
            std::string::npos)
      << e.what();

  path = write("short.safetensors", "abc");
  EXPECT_NE(error(path).message().find("is 3 bytes: too short"), std::string::npos);
  EXPECT_NE(error(write("empty.safetensors", "")).message().find("is 0 bytes"), std::string::npos);
  EXPECT_NE(error((dir_ / "missing.safetensors").string()).message().find("no such file"), std::string::npos);
  EXPECT_NE(error(dir_.string()).message().find("is a directory"), std::string::npos);
}

TEST_F(Safetensors, HostileHeadersNameTheFileAndTheTensor) {
  // Offsets.
  expect_refused(
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
      12, "b", "data_offsets [4, 12] overlap tensor 'a' [0, 8]");
  expect_refused(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4, "a",
                 "data_offsets [0, 8] run past the end of the data area (4 bytes)");
  expect_refused(
      R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
      12, "b", "leave bytes [4, 8] of the data area to no tensor (after tensor 'a')");
  expect_refused(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8, "a", "leave bytes [0, 4]");
  expect_refused(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 8, "a",
                 "the data area has 8 bytes but the tensors cover 4: bytes [4, 8] belong to no tensor");
  expect_refused(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})", 8, "a", "end before they begin");
  expect_refused(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", 4, "a",
                 "data_offsets must be [begin, end]");
  expect_refused(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,-4]}})", 4, "a",
                 "data_offsets must be [begin, end]");
  expect_refused("{}", 16, "", "the data area has 16 bytes but the tensors cover 0");
  // Dtypes and shapes.
  expect_refused(R"({"a":{"dtype":"Q7","shape":[1],"data_offsets":[0,4]}})", 4, "a", "unknown dtype 'Q7'");
  expect_refused(R"({"a":{"dtype":"bf16","shape":[1],"data_offsets":[0,2]}})", 2, "a", "'BF16'?)");
  expect_refused(R"({"a":{"dtype":7,"shape":[1],"data_offsets":[0,4]}})", 4, "a", "dtype must be a string");
  expect_refused(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8, "a",
                 "shape [3] of F32 needs 12 bytes but data_offsets [0, 8] hold 8");
  expect_refused(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4, "a", "shape must be a list of sizes");
  expect_refused(R"({"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", 4, "a",
                 "shape must be a list of sizes");
  expect_refused(R"({"a":{"dtype":"U8","shape":[4294967296,4294967296,2],"data_offsets":[0,4]}})", 4, "a",
                 "holds more than 2^64 bits");
  expect_refused(R"({"a":{"dtype":"F32","data_offsets":[0,4]}})", 4, "a", "missing \"shape\"");
  expect_refused(R"({"a":[1,2,3]})", 4, "a", "expected {\"dtype\", \"shape\", \"data_offsets\"}");
  // Names and structure.
  expect_refused("{\"w\xff\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "w\xff",
                 "(in the string 'w\\xff')");
  expect_refused(
      R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
      4, "a", "appears twice in the header");
  expect_refused("[1, 2]", 0, "", "the header must be a JSON object of tensor names, got an array");
  expect_refused(R"({"a":{"dtype":"F32",)", 0, "", ": at byte 2");  // "at byte 2N: JSON syntax error: ..."
  expect_refused(R"({"__metadata__":{"format":1}})", 0, "__metadata__", "'__metadata__' must map strings to strings");
  expect_refused(R"({"__metadata__":"pt"})", 0, "__metadata__", "'__metadata__' must map strings to strings");
  expect_refused(std::string(80, '[') + std::string(80, ']'), 0, "", "nested more than 64 levels");
}

// The data area is never read: a header over a sparse 4 GiB data area reads at once.
TEST_F(Safetensors, NeverReadsTensorData) {
  const std::uint64_t data = 4ULL << 30;
  const std::string header = R"({"w":{"dtype":"F32","shape":[1024,1048576],"data_offsets":[0,4294967296]}})";
  const std::string path = write("big.safetensors", le64(header.size()) + header);
  std::error_code ec;
  fs::resize_file(path, 8 + header.size() + data, ec);  // a hole: no data is written
  if (ec) GTEST_SKIP() << "cannot make a sparse file here: " << ec.message();
  const auto start = std::chrono::steady_clock::now();
  const SafetensorsInventory inv = read_safetensors(path);
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(inv.elements, 1ULL << 30);
  EXPECT_EQ(inv.bytes, data);
  EXPECT_LT(seconds, 1.0);
}

TEST_F(Safetensors, ShardedCheckpointsReadEveryShardHeader) {
  file("model-00001-of-00002.safetensors",
       R"({"__metadata__":{"format":"pt"},"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]}})", 8);
  file("model-00002-of-00002.safetensors", R"({"b":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}})", 12);
  const std::string index = write("model.safetensors.index.json", R"({
  "metadata": {"total_size": 20},
  "weight_map": {
    "a": "model-00001-of-00002.safetensors",
    "b": "model-00002-of-00002.safetensors"
  }
})");
  const SafetensorsInventory inv = read_checkpoint(index);
  EXPECT_EQ(inv.path, index);
  ASSERT_EQ(inv.files.size(), 2U);
  EXPECT_EQ(inv.tensors.size(), 2U);
  EXPECT_EQ(inv.elements, 7U);
  EXPECT_EQ(inv.bytes, 20U);
  EXPECT_EQ(inv.index_total_size, std::optional<std::uint64_t>(20));
  EXPECT_EQ(inv.tensors[1].file, (dir_ / "model-00002-of-00002.safetensors").string());
  ASSERT_EQ(inv.metadata.size(), 1U);

  // Index and shards must agree.
  const auto index_error = [&](const std::string& text) { return error(write("bad.index.json", text)); };
  ConfigError e = index_error(
      R"({"weight_map": {"a": "model-00001-of-00002.safetensors", "c": "model-00001-of-00002.safetensors"}})");
  EXPECT_EQ(e.key(), "c");
  EXPECT_NE(e.message().find(
                "weight_map puts tensor 'c' in 'model-00001-of-00002.safetensors', which holds no such tensor"),
            std::string::npos)
      << e.what();
  EXPECT_EQ(e.line(), 1U);
  e = index_error(R"({"weight_map": {"b": "model-00001-of-00002.safetensors"}})");
  EXPECT_EQ(e.key(), "a");
  EXPECT_EQ(e.file(), (dir_ / "model-00001-of-00002.safetensors").string());
  EXPECT_NE(e.message().find("is in this shard but not in the weight_map"), std::string::npos) << e.what();
  e = index_error(R"({"weight_map": {"a": "../model-00001-of-00002.safetensors"}})");
  EXPECT_EQ(e.key(), "weight_map");
  EXPECT_NE(e.message().find("inside the index's directory"), std::string::npos) << e.what();
  EXPECT_NE(index_error(R"({"weight_map": {"a": "/etc/passwd"}})").message().find("inside the index's directory"),
            std::string::npos);
  EXPECT_NE(index_error(R"({"weight_map": {"a": "missing.safetensors"}})").message().find("no such file"),
            std::string::npos);
  EXPECT_NE(index_error(R"({"weight_map": []})").message().find("must map each tensor name"), std::string::npos);
  EXPECT_NE(index_error(R"({"weight_map": {"a": 3}})").message().find("not a file name"), std::string::npos);
  EXPECT_NE(index_error(R"({"metadata": {"total_size": "20"}, "weight_map": {"a": "x"}})").message().find("total_size"),
            std::string::npos);
  EXPECT_NE(index_error(R"({"metadata": {}})").message().find("missing required key 'weight_map'"), std::string::npos);
  EXPECT_NE(index_error("{\n  \"weight_map\": {,}\n}").message().find("JSON syntax error"), std::string::npos);
  // A shard's own problems name the shard.
  file("broken.safetensors", R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", 4);
  e = index_error(R"({"weight_map": {"x": "broken.safetensors"}})");
  EXPECT_EQ(e.file(), (dir_ / "broken.safetensors").string());
  EXPECT_EQ(e.key(), "x");
}

// A checkpoint header written as transformers names the tensors, over a data area of the
// right size (never written: parse_safetensors_header needs only its size).
struct FakeCheckpoint {
  std::string header = "{";
  std::uint64_t offset = 0;
  void add(const std::string& name, const std::string& dtype, std::vector<std::uint64_t> shape) {
    std::uint64_t n = 1;
    std::string dims;
    for (const std::uint64_t d : shape) {
      n *= d;
      dims += (dims.empty() ? "" : ",") + std::to_string(d);
    }
    const std::uint64_t size = n * safetensors_dtype_bits(dtype) / 8;
    header += (header.size() > 1 ? "," : "") + std::string("\"") + name + "\":{\"dtype\":\"" + dtype +
              "\",\"shape\":[" + dims + "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + size) + "]}";
    offset += size;
  }
  SafetensorsInventory parse() const { return parse_safetensors_header(header + "}", offset, "model.safetensors"); }
};

ModelSpec fixture_spec(const char* name) { return load_hf_config((kHf / name / "config.json").string()).entry.spec; }

TEST(CompareCheckpoint, Llama2StoresRotaryBuffers) {
  // meta-llama/Llama-2-7b-hf: safetensors.total 6,738,417,664 (configs/models/llama-2-7b.yaml).
  FakeCheckpoint c;
  c.add("model.embed_tokens.weight", "BF16", {32000, 4096});
  for (int i = 0; i < 32; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    for (const char* proj : {"q_proj", "k_proj", "v_proj", "o_proj"})
      c.add(p + "self_attn." + proj + ".weight", "BF16", {4096, 4096});
    c.add(p + "self_attn.rotary_emb.inv_freq", "F32", {64});
    c.add(p + "mlp.gate_proj.weight", "BF16", {11008, 4096});
    c.add(p + "mlp.up_proj.weight", "BF16", {11008, 4096});
    c.add(p + "mlp.down_proj.weight", "BF16", {4096, 11008});
    c.add(p + "input_layernorm.weight", "BF16", {4096});
    c.add(p + "post_attention_layernorm.weight", "BF16", {4096});
  }
  c.add("model.norm.weight", "BF16", {4096});
  c.add("lm_head.weight", "BF16", {32000, 4096});
  const SafetensorsInventory inv = c.parse();
  EXPECT_EQ(inv.elements, 6738417664ULL);
  const CheckpointComparison cmp = compare_checkpoint(inv, fixture_spec("llama-2-7b"));
  EXPECT_EQ(cmp.architecture_params, 6738415616ULL);
  ASSERT_EQ(cmp.extra.size(), 1U);
  EXPECT_EQ(cmp.extra[0].kind, "buffer");
  EXPECT_EQ(cmp.extra[0].pattern, "model.layers.*.self_attn.rotary_emb.inv_freq");
  EXPECT_EQ(cmp.extra[0].tensors, 32U);
  EXPECT_EQ(cmp.extra[0].elements, 2048U);
  EXPECT_TRUE(cmp.matches());
}

TEST(CompareCheckpoint, Falcon7bStoresItsTiedHeadTwice) {
  // tiiuae/falcon-7b: a public table lists 7,217,189,760 (configs/models/falcon-7b.yaml),
  // the 6.92B architecture plus a second copy of the 65024 x 4544 head.
  FakeCheckpoint c;
  c.add("transformer.word_embeddings.weight", "BF16", {65024, 4544});
  for (int i = 0; i < 32; ++i) {
    const std::string p = "transformer.h." + std::to_string(i) + ".";
    c.add(p + "self_attention.query_key_value.weight", "BF16", {4544 + 2 * 64, 4544});
    c.add(p + "self_attention.dense.weight", "BF16", {4544, 4544});
    c.add(p + "mlp.dense_h_to_4h.weight", "BF16", {18176, 4544});
    c.add(p + "mlp.dense_4h_to_h.weight", "BF16", {4544, 18176});
    c.add(p + "input_layernorm.weight", "BF16", {4544});
    c.add(p + "input_layernorm.bias", "BF16", {4544});
  }
  c.add("transformer.ln_f.weight", "BF16", {4544});
  c.add("transformer.ln_f.bias", "BF16", {4544});
  c.add("lm_head.weight", "BF16", {65024, 4544});
  const SafetensorsInventory inv = c.parse();
  EXPECT_EQ(inv.elements, 7217189760ULL);
  const CheckpointComparison cmp = compare_checkpoint(inv, fixture_spec("falcon-7b"));
  ASSERT_EQ(cmp.extra.size(), 1U);
  EXPECT_EQ(cmp.extra[0].kind, "tied copy");
  EXPECT_EQ(cmp.extra[0].elements, 65024ULL * 4544);
  EXPECT_EQ(cmp.compared_elements, 6921720704ULL);
  EXPECT_TRUE(cmp.matches());
}

TEST(CompareCheckpoint, Gpt2MaskBuffersAndBertTaskHeads) {
  FakeCheckpoint g;
  g.add("wte.weight", "F32", {50257, 768});
  g.add("wpe.weight", "F32", {1024, 768});
  for (int i = 0; i < 12; ++i) {
    const std::string p = "h." + std::to_string(i) + ".";
    g.add(p + "attn.bias", "F32", {1, 1, 1024, 1024});  // the causal mask, a buffer
    g.add(p + "attn.c_attn.weight", "F32", {768, 2304});
    g.add(p + "attn.c_attn.bias", "F32", {2304});
    g.add(p + "attn.c_proj.weight", "F32", {768, 768});
    g.add(p + "attn.c_proj.bias", "F32", {768});
    g.add(p + "mlp.c_fc.weight", "F32", {768, 3072});
    g.add(p + "mlp.c_fc.bias", "F32", {3072});
    g.add(p + "mlp.c_proj.weight", "F32", {3072, 768});
    g.add(p + "mlp.c_proj.bias", "F32", {768});
    for (const char* ln : {"ln_1", "ln_2"}) {
      g.add(p + ln + ".weight", "F32", {768});
      g.add(p + ln + ".bias", "F32", {768});
    }
  }
  g.add("ln_f.weight", "F32", {768});
  g.add("ln_f.bias", "F32", {768});
  CheckpointComparison cmp = compare_checkpoint(g.parse(), fixture_spec("gpt2"));
  ASSERT_EQ(cmp.extra.size(), 1U);
  EXPECT_EQ(cmp.extra[0].pattern, "h.*.attn.bias");
  EXPECT_EQ(cmp.extra[0].elements, 12ULL << 20);
  EXPECT_EQ(cmp.compared_elements, 124439808ULL);
  EXPECT_TRUE(cmp.matches());

  // BertForPreTraining: BertModel plus cls.* heads and the position_ids buffer.
  FakeCheckpoint b;
  const ModelSpec bert = fixture_spec("bert-base-uncased");
  for (const TensorGroup& t : model_tensors(bert)) {
    for (std::uint64_t i = 0; i < t.copies; ++i) {
      b.add("bert." + std::string(t.component) + "." + std::to_string(i) + "." + std::string(t.name), "F32",
            {t.rows, t.cols});
    }
  }
  b.add("bert.embeddings.position_ids", "I64", {1, 512});
  b.add("cls.predictions.bias", "F32", {30522});
  b.add("cls.predictions.transform.dense.weight", "F32", {768, 768});
  b.add("cls.seq_relationship.weight", "F32", {2, 768});
  cmp = compare_checkpoint(b.parse(), bert);
  EXPECT_EQ(cmp.extra.size(), 4U);
  EXPECT_EQ(cmp.compared_elements, 109482240ULL);
  EXPECT_TRUE(cmp.matches());

  // Anything else is left in, and the difference shows.
  b.add("bert.extra.weight", "F32", {3});
  EXPECT_FALSE(compare_checkpoint(b.parse(), bert).matches());
}

}  // namespace safetensors_test
}  // namespace memplan
