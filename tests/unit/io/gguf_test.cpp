#include "memplan/io/gguf.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "breakdown_check.hpp"
#include "gguf_writer.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/text.hpp"
#include "memplan/estimators/parallelism.hpp"
#include "memplan/estimators/weights.hpp"
#include "memplan/plan/plan.hpp"

namespace memplan {
namespace gguf_test {

namespace fs = std::filesystem;
using testing::gguf_string;
using testing::GgufData;
using testing::GgufWriter;
using testing::le32;
using testing::le64;

// ---------------------------------------------------------------------------------------
// The type table: each type's bytes, derived by hand from its ggml block struct.

struct HandDerived {
  const char* type;
  std::uint32_t id;
  std::uint64_t block;      // elements per block
  std::uint64_t per_block;  // bytes per block, summed from the struct's fields below
};

// ggml/src/ggml-common.h (QK_K = 256; a half is 2 bytes): the fields of each block_* struct.
const HandDerived kHand[] = {
    {"F32", 0, 1, 4},
    {"F16", 1, 1, 2},
    {"BF16", 30, 1, 2},
    {"F64", 28, 1, 8},
    {"I8", 24, 1, 1},
    {"I16", 25, 1, 2},
    {"I32", 26, 1, 4},
    {"I64", 27, 1, 8},
    {"Q4_0", 2, 32, 2 + 16},                   // d; 32 x 4 bits
    {"Q4_1", 3, 32, 2 + 2 + 16},               // d, m; 32 x 4 bits
    {"Q5_0", 6, 32, 2 + 4 + 16},               // d; 32 fifth bits; 32 x 4 bits
    {"Q5_1", 7, 32, 2 + 2 + 4 + 16},           // d, m; 32 fifth bits; 32 x 4 bits
    {"Q8_0", 8, 32, 2 + 32},                   // d; 32 x int8
    {"Q8_1", 9, 32, 2 + 2 + 32},               // d, s; 32 x int8
    {"Q2_K", 10, 256, 2 + 2 + 16 + 64},        // d, dmin; 16 x 4+4-bit scales; 256 x 2 bits = 84
    {"Q3_K", 11, 256, 2 + 64 + 32 + 12},       // d; 256 x 2 bits; 256 high bits; 12 scale bytes = 110
    {"Q4_K", 12, 256, 2 + 2 + 12 + 128},       // d, dmin; 12 scale bytes; 256 x 4 bits = 144
    {"Q5_K", 13, 256, 2 + 2 + 12 + 128 + 32},  // + 256 fifth bits = 176
    {"Q6_K", 14, 256, 128 + 64 + 16 + 2},      // 256 x 4 low bits; 256 x 2 high bits; 16 int8 scales; d = 210
    {"Q8_K", 15, 256, 4 + 256 + 32},           // float d; 256 x int8; 16 x int16 block sums = 292
    {"IQ2_XXS", 16, 256, 2 + 64},              // d; 32 x uint16 = 66
    {"IQ2_XS", 17, 256, 2 + 64 + 8},           // d; 32 x uint16; 8 scale bytes = 74
    {"IQ2_S", 22, 256, 2 + 64 + 8 + 8},        // d; 64 qs; 8 qh; 8 scales = 82
    {"IQ3_XXS", 18, 256, 2 + 96},              // d; 3 x 256 / 8 = 98
    {"IQ3_S", 21, 256, 2 + 64 + 8 + 32 + 4},   // d; 64 qs; 8 qh; 32 signs; 4 scales = 110
    {"IQ1_S", 19, 256, 2 + 32 + 16},           // d; 32 qs; 8 x uint16 qh = 50
    {"IQ1_M", 29, 256, 32 + 16 + 8},           // 32 qs; 16 qh; 8 scales (the scale lives in them) = 56
    {"IQ4_NL", 20, 32, 2 + 16},                // d; 32 x 4 bits
    {"IQ4_XS", 23, 256, 2 + 2 + 4 + 128},      // d; scales_h; 4 scales_l; 256 x 4 bits = 136
    {"TQ1_0", 34, 256, 48 + 4 + 2},            // 240 ternary digits, 5 per byte; 16 more, 4 per byte; d = 54
    {"TQ2_0", 35, 256, 64 + 2},                // 256 x 2 bits; d = 66
    {"MXFP4", 39, 32, 1 + 16},                 // e8m0 exponent; 32 x fp4 = 17
    {"NVFP4", 40, 64, 4 + 32},                 // 4 e4m3 scales (one per 16); 64 x fp4 = 36
    {"Q1_0", 41, 128, 2 + 16},                 // d; 128 x 1 bit = 18
    {"Q2_0", 42, 64, 2 + 16},                  // d; 64 x 2 bits = 18
};

TEST(GgmlTypes, EachTypeIsPricedAsItsBlockStructSays) {
  ASSERT_EQ(ggml_types().size(), std::size(kHand));
  for (const HandDerived& h : kHand) {
    SCOPED_TRACE(h.type);
    const GgmlType* t = find_ggml_type(h.id);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->name, h.type);
    EXPECT_EQ(t->block_size, h.block);
    EXPECT_EQ(t->type_size, h.per_block);
    EXPECT_EQ(&parse_ggml_type(h.type), t);
    // A 4096 x 4096 matrix: 16,777,216 elements = 16,777,216 / block blocks of per_block bytes.
    EXPECT_EQ(ggml_tensor_bytes(*t, 4096ULL * 4096), 4096ULL * 4096 / h.block * h.per_block);
    // The tests' own layouts (tests/support/gguf_writer.hpp) agree.
    EXPECT_EQ(testing::ggml_layout(h.type).bytes, h.per_block);
    EXPECT_EQ(testing::ggml_layout(h.type).block, h.block);
  }
}

TEST(GgmlTypes, WorkedProducts) {
  // Llama-2-7B's attention q in Q4_K: 4096 x 4096 = 65,536 blocks of 256, 144 bytes each.
  EXPECT_EQ(ggml_tensor_bytes(parse_ggml_type("q4_k"), 4096ULL * 4096), 9'437'184U);
  // Its token embedding in Q6_K: 32,000 x 4096 = 512,000 blocks of 210 bytes.
  EXPECT_EQ(ggml_tensor_bytes(parse_ggml_type("Q6_K"), 32000ULL * 4096), 107'520'000U);
  // Q8_0: 32 elements in 34 bytes, 8.5 bits each.
  EXPECT_EQ(ggml_tensor_bytes(parse_ggml_type("Q8_0"), 4096), 128U * 34);
  // IQ2_XXS: 2.0625 bits per weight: 256 elements in 66 bytes.
  EXPECT_EQ(ggml_tensor_bytes(parse_ggml_type("IQ2_XXS"), 256), 66U);
  // F32 4 bytes, BF16 2, I64 8: block size 1.
  EXPECT_EQ(ggml_tensor_bytes(parse_ggml_type("BF16"), 3), 6U);
}

TEST(GgmlTypes, RefusalsNameTheType) {
  try {
    ggml_tensor_bytes(parse_ggml_type("Q4_K"), 100);
    FAIL() << "100 elements of Q4_K were priced";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_input);
    EXPECT_NE(std::string(e.what()).find("100 elements of Q4_K are not a whole number of its 256-element blocks"),
              std::string::npos)
        << e.what();
  }
  try {
    parse_ggml_type("Q4_KM");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.key(), "ggml_type");
    EXPECT_NE(std::string(e.what()).find("did you mean 'Q4_K'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(find_ggml_type(31), nullptr);  // Q4_0_4_4: removed from GGUF files
  EXPECT_EQ(find_ggml_type(43), nullptr);
  EXPECT_THROW(ggml_tensor_bytes(parse_ggml_type("F64"), 1ULL << 62), Error);  // 2^65 bytes
}

// ---------------------------------------------------------------------------------------
// Files

// A Mamba-2 mixer in block 0 of a d-32 model, as llama.cpp names its tensors: d_inner 64 of 4
// heads in 2 groups, state 8, conv 4 taps over 64 + 2 x 2 x 8 = 96 channels, a gated norm.
// 32 x 164 + 384 + 96 + 3 x 4 + 64 + 2,048 = 7,852 parameters.
void mamba2_keys(GgufWriter& w, const std::string& arch, bool groups = true) {
  w.u32(arch + ".ssm.conv_kernel", 4)
      .u32(arch + ".ssm.inner_size", 64)
      .u32(arch + ".ssm.state_size", 8)
      .u32(arch + ".ssm.time_step_rank", 4);
  if (groups) w.u32(arch + ".ssm.group_count", 2);
}
void mamba2_mixer(GgufWriter& w) {
  w.tensor("blk.0.ssm_in.weight", {32, 64 + 96 + 4}, "F16")
      .tensor("blk.0.ssm_conv1d.weight", {4, 96}, "F32")
      .tensor("blk.0.ssm_conv1d.bias", {96}, "F32")
      .tensor("blk.0.ssm_dt.bias", {4}, "F32")
      .tensor("blk.0.ssm_a", {1, 4}, "F32")
      .tensor("blk.0.ssm_d", {1, 4}, "F32")
      .tensor("blk.0.ssm_norm.weight", {32, 2}, "F32")
      .tensor("blk.0.ssm_out.weight", {64, 32}, "F16");
}

class Gguf : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("memplan_gguf_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // Expects load_gguf_model to refuse `file` at `key`, its message holding `says`.
  static void expect_refused(const std::string& file, const std::string& key, const std::string& says) {
    try {
      load_gguf_model(file);
      ADD_FAILURE() << "accepted " << file;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key(), key);
      EXPECT_NE(e.message().find(says), std::string::npos) << e.what();
    }
  }
  std::string write_raw(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
    return path(name);
  }

  static ConfigError error_reading(const std::string& file) {
    try {
      read_gguf(file);
    } catch (const ConfigError& e) {
      return e;
    }
    ADD_FAILURE() << file << " was accepted";
    return ConfigError("", 0, 0, "", "");
  }

  // `w`, written with `data`, is refused naming the file and `key`; the message says `says`.
  void expect_refused(const GgufWriter& w, const std::string& key, const std::string& says,
                      GgufData data = GgufData::zeros) {
    SCOPED_TRACE(says);
    const std::string file = w.write(path("hostile.gguf"), data);
    expect_error(file, key, says);
  }
  void expect_error(const std::string& file, const std::string& key, const std::string& says) {
    const ConfigError e = error_reading(file);
    EXPECT_EQ(e.file(), file);
    EXPECT_EQ(e.key(), key);
    EXPECT_EQ(std::string(e.what()).rfind(file + ": ", 0), 0U) << e.what();
    EXPECT_NE(e.message().find(says), std::string::npos) << e.what();
    EXPECT_EQ(e.kind(), ErrorKind::invalid_input);
  }

  fs::path dir_;
};

// The acceptance test: a .gguf holding every priced type; the weights are the sum of its
// tensors' bytes, each the hand-derived product.
TEST_F(Gguf, EveryPricedTypeWeighsTheSumOfItsTensors) {
  const GgufWriter w = testing::every_type_llama();
  for (const GgufData data : {GgufData::zeros, GgufData::sparse}) {
    const std::string file = w.write(path(data == GgufData::zeros ? "complete.gguf" : "sparse.gguf"), data);
    const GgufFile f = read_gguf(file);
    ASSERT_EQ(f.tensors.size(), 39U);
    std::set<std::string> types;
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < f.tensors.size(); ++i) {
      const GgufTensor& t = f.tensors[i];
      SCOPED_TRACE(t.name);
      const auto* hand = std::find_if(std::begin(kHand), std::end(kHand),
                                      [&](const HandDerived& x) { return t.type.name == x.type; });
      ASSERT_NE(hand, std::end(kHand));
      EXPECT_EQ(t.type.name, testing::ggml_layouts()[i % testing::ggml_layouts().size()].name);
      EXPECT_EQ(t.bytes, t.elements / hand->block * hand->per_block);
      types.insert(std::string(t.type.name));
      sum += t.bytes;
    }
    EXPECT_EQ(types.size(), std::size(kHand)) << "every priced type appears";
    EXPECT_EQ(f.bytes, sum);
    EXPECT_EQ(f.bytes, 2'695'948U);  // tests/cli/gguf.cmake: the same and 256 B of rotary buffers
    EXPECT_EQ(f.elements, 1'968'384U);
    EXPECT_EQ(f.version, 3U);
    EXPECT_EQ(f.alignment, 32U);
    EXPECT_EQ(f.file_bytes, w.file_bytes());
    EXPECT_EQ(f.data_offset % 32, 0U);

    const GgufImport model = gguf_model(f);
    const Breakdown weights = estimate_weights(model.entry.spec);
    testing::expect_consistent(weights);
    EXPECT_EQ(weights.total().count(), sum);
    EXPECT_EQ(*weights.components[0].params, f.elements);
    // The precision asked for does not reprice what the file stores.
    WeightsOptions int4;
    int4.precision = parse_precision("int4");
    EXPECT_EQ(estimate_weights(model.entry.spec, int4).total().count(), sum);
  }
}

TEST_F(Gguf, ATypeTotalSumsItsTensors) {
  const GgufFile f = read_gguf(testing::tiny_llama().write(path("tiny.gguf")));
  // Q4_0: attn_output 32x32 + gate 32x64 + up 32x64 + down 64x32 = 7,168 elements = 224 blocks x 18 B.
  const auto q4 = std::find_if(f.types.begin(), f.types.end(), [](const GgufTypeTotal& t) { return t.type == "Q4_0"; });
  ASSERT_NE(q4, f.types.end());
  EXPECT_EQ(q4->tensors, 4U);
  EXPECT_EQ(q4->elements, 7168U);
  EXPECT_EQ(q4->bytes, 224U * 18);
  // Q8_0: q 32x32 + k 32x16 + v 32x16 = 2,048 elements = 64 blocks x 34 B = 2,176 B.
  // F16: embedding and head 2 x 32x8 = 512 elements x 2 B; F32: 3 norms x 32 x 4 B.
  EXPECT_EQ(f.bytes, 224U * 18 + 64 * 34 + 512 * 2 + 96 * 4);
  EXPECT_EQ(f.types.front().type, "Q4_0");  // most bytes first
}

TEST_F(Gguf, HeadersOnlyAreEnoughToPriceAFile) {
  const GgufWriter w = testing::every_type_llama();
  // Only the header, with the size the whole file has (a range request's worth).
  const GgufFile f = parse_gguf(w.header(), w.file_bytes(), "every-type.gguf");
  EXPECT_EQ(f.bytes, 2'695'948U);
  // The same file cut after its header is a truncated file.
  const std::string file = w.write(path("header-only.gguf"), GgufData::none);
  expect_error(file, "token_embd.weight", "runs past the end of the file");
}

TEST_F(Gguf, MetadataValuesAreRead) {
  GgufWriter w = testing::tiny_llama();
  w.i32("test.negative", -5).boolean("test.flag", true).u64("test.big", 1ULL << 40).u32_array("test.array", {1, 2, 3});
  const GgufFile f = read_gguf(w.write(path("values.gguf")));
  ASSERT_NE(f.find("general.architecture"), nullptr);
  EXPECT_EQ(std::get<std::string>(f.find("general.architecture")->value), "llama");
  EXPECT_EQ(f.find("llama.block_count")->whole_number(), 1U);
  EXPECT_EQ(std::get<std::int64_t>(f.find("test.negative")->value), -5);
  EXPECT_FALSE(f.find("test.negative")->whole_number());
  EXPECT_EQ(std::get<bool>(f.find("test.flag")->value), true);
  EXPECT_EQ(f.find("test.big")->whole_number(), 1ULL << 40);
  const GgufValue* tokens = f.find("tokenizer.ggml.tokens");
  EXPECT_EQ(tokens->type, GgufValueType::array);
  EXPECT_EQ(tokens->element_type, GgufValueType::string);
  EXPECT_EQ(tokens->count, 8U);
  EXPECT_EQ(f.find("test.array")->count, 3U);
  EXPECT_EQ(f.find("no.such.key"), nullptr);
  EXPECT_EQ(to_string(GgufValueType::boolean), "bool");
}

TEST_F(Gguf, Version2AndOtherAlignmentsRead) {
  GgufWriter w = testing::tiny_llama();
  w.version = 2;
  w.alignment = 64;
  w.u32("general.alignment", 64);
  const GgufFile f = read_gguf(w.write(path("v2.gguf")));
  EXPECT_EQ(f.version, 2U);
  EXPECT_EQ(f.alignment, 64U);
  EXPECT_EQ(f.data_offset % 64, 0U);
  for (const GgufTensor& t : f.tensors) EXPECT_EQ(t.offset % 64, 0U) << t.name;
}

// ---------------------------------------------------------------------------------------
// Hostile headers: each refused with the file, the field and the problem.

TEST_F(Gguf, HostileCountsAreRefusedBeforeAnythingIsAllocated) {
  GgufWriter w = testing::tiny_llama();
  w.tensor_count = 1ULL << 60;
  expect_refused(w, "tensor_count", "tensor_count is 1,152,921,504,606,846,976: more than the 1,048,576 tensors");
  w.tensor_count = 1'000'000;  // under the limit, but 24 MB of infos in a small file
  expect_refused(w, "tensor_count", "tensor infos take at least 24 bytes each, and the file has");
  w.tensor_count.reset();
  w.kv_count = ~0ULL;
  expect_refused(w, "metadata_kv_count", "metadata_kv_count is 18,446,744,073,709,551,615");
  w.kv_count = 100'000;
  expect_refused(w, "metadata_kv_count", "key-value pairs take at least 14 bytes each");
}

TEST_F(Gguf, StringLengthsPastTheEndAreRefused) {
  GgufWriter w;
  w.raw_kv("general.name", le32(testing::kString) + le64(1ULL << 40) + "abc");
  expect_refused(w, "general.name",
                 "the string value of 'general.name' needs 1,099,511,627,776 bytes but the file has 3 left");

  // A key's length over the spec's 65,535.
  const std::string file = write_raw("key.gguf",
                                     "GGUF" + le32(3) + le64(0) + le64(1) + le64(1ULL << 33) + std::string(32, 'x'));
  expect_error(file, "", "metadata key 1 of 1 is 8,589,934,592 bytes long; the most a GGUF file may use is 65,535");

  GgufWriter array;
  array.raw_kv("tokenizer.ggml.tokens", le32(testing::kArray) + le32(testing::kString) + le64(1ULL << 61));
  expect_refused(array, "tokenizer.ggml.tokens", "needs at least 2^64 bytes but the file has 0 left");
  GgufWriter strings;
  strings.raw_kv("tokenizer.ggml.tokens",
                 le32(testing::kArray) + le32(testing::kString) + le64(2) + gguf_string("a") + le64(1000) + "short");
  expect_refused(strings, "tokenizer.ggml.tokens",
                 "string 1 of array 'tokenizer.ggml.tokens' (2 strings) needs 1,000 bytes");
  GgufWriter numbers;
  numbers.raw_kv("x.scores", le32(testing::kArray) + le32(testing::kF32) + le64(1000) + le32(0));
  expect_refused(numbers, "x.scores",
                 "array 'x.scores' (1,000 float32s) needs at least 4,000 bytes but the file has 4 left");
}

TEST_F(Gguf, AHeaderOver256MiBIsRefused) {
  // A sparse file of 300 MiB whose one string value claims 257 MiB of it.
  GgufWriter w;
  w.raw_kv("general.description", le32(testing::kString) + le64(257ULL << 20));
  const std::string file = w.write(path("huge.gguf"), GgufData::none);
  fs::resize_file(file, 300ULL << 20);
  expect_error(file, "general.description", "ends past 268,435,456 bytes: memplan reads GGUF headers");
}

TEST_F(Gguf, HostileOffsetsAreRefused) {
  GgufWriter w = testing::tiny_llama();
  GgufWriter unaligned = w;
  unaligned.tensor("extra.weight", {32}, "F32", 4'200);
  expect_refused(unaligned, "extra.weight", "data offset 4,200 is not a multiple of the alignment (32)");

  GgufWriter overlap;
  overlap.str("general.architecture", "llama").tensor("a", {64}, "F32").tensor("b", {64}, "F32", 128);
  expect_refused(overlap, "b",
                 "data offset 128, but the tensors before it end at 256 (after 'a', each padded to 32 bytes)");

  GgufWriter gap;
  gap.tensor("a", {8}, "F32", 64);
  expect_refused(gap, "a", "data offset 64, but the first tensor starts at 0");

  GgufWriter far;
  far.tensor("a", {1ULL << 40}, "F32");  // 4 TiB in a file of a few hundred bytes
  expect_refused(far, "a", "its data, 4,398,046,511,104 bytes at data offset 0, runs past the end of the file",
                 GgufData::none);
}

TEST_F(Gguf, HostileTypesAndShapesAreRefused) {
  GgufWriter unknown;
  unknown.tensor_id("w", {32}, 99);
  expect_refused(unknown, "w", "tensor 'w' has ggml type 99, which is not a ggml type memplan prices");
  GgufWriter removed;
  removed.tensor_id("w", {32}, 31);
  expect_refused(removed, "w", "ggml type 31 (Q4_0_4_4), which ggml has removed from GGUF files");

  GgufWriter overflow;
  overflow.tensor("w", {1ULL << 32, 1ULL << 32}, "F32");
  expect_refused(overflow, "w", "of shape [4294967296, 4294967296] has 2^63 elements or more", GgufData::none);
  GgufWriter negative;
  negative.tensor("w", {1ULL << 63}, "F32");
  expect_refused(negative, "w", "dimension 0 is 9,223,372,036,854,775,808, negative as ggml's int64_t sizes read it",
                 GgufData::none);
  GgufWriter dims;
  dims.tensor("w", {1, 1, 1, 1, 1}, "F32");
  expect_refused(dims, "w", "tensor 'w' has 5 dimensions; ggml tensors have at most 4");
  GgufWriter row;
  row.tensor("w", {100, 256}, "Q4_K");  // 25,600 elements: 100 whole blocks, but rows of 100
  expect_refused(row, "w", "is Q4_K, whose blocks hold 256 elements, but its rows hold 100");
  GgufWriter long_name;
  long_name.tensor(std::string(64, 'n'), {32}, "F32");
  expect_refused(long_name, "", "the name of tensor info 1 of 1 is 64 bytes long; ggml's limit is 63");
  GgufWriter twice;
  twice.tensor("w", {32}, "F32").tensor("w", {32}, "F32");
  expect_refused(twice, "w", "tensor 'w' appears twice");
}

TEST_F(Gguf, HostileMetadataIsRefused) {
  GgufWriter dup;
  dup.u32("a.b", 1).u32("a.b", 2);
  expect_refused(dup, "a.b", "metadata key 'a.b' appears twice");
  GgufWriter empty;
  empty.u32("", 1);
  expect_refused(empty, "", "metadata key 1 of 1 is empty");
  GgufWriter bad_bool;
  bad_bool.raw_kv("x.flag", le32(testing::kBool) + std::string(1, '\2'));
  expect_refused(bad_bool, "x.flag", "'x.flag' is a bool of value 2; GGUF bools are 0 or 1");
  GgufWriter nested;
  nested.raw_kv("x.nested", le32(testing::kArray) + le32(testing::kArray) + le64(1));
  expect_refused(nested, "x.nested", "is an array of arrays");
  GgufWriter bad_type;
  bad_type.raw_kv("x.odd", le32(13));
  expect_refused(bad_type, "x.odd", "the value type of 'x.odd' is 13, not a GGUF value type");
  GgufWriter align;
  align.u32("general.alignment", 48);
  expect_refused(align, "general.alignment", "general.alignment is 48, not a power of two");
  GgufWriter align64;
  align64.u64("general.alignment", 64);
  expect_refused(align64, "general.alignment", "general.alignment is a uint64; it must be a uint32");
}

TEST_F(Gguf, NotAGgufFileIsNamed) {
  expect_error(write_raw("short.gguf", "GGU"), "", "is 3 bytes: too short for a GGUF file");
  expect_error(write_raw("magic.gguf", "GGML" + le32(3) + le64(0) + le64(0)), "magic",
               "does not start with the GGUF magic: its first bytes are 'GGML'");
  expect_error(write_raw("v1.gguf", "GGUF" + le32(1) + le64(0) + le64(0)), "version",
               "GGUF version 1 is no longer read");
  expect_error(write_raw("v4.gguf", "GGUF" + le32(4) + le64(0) + le64(0)), "version",
               "GGUF version 4: memplan reads versions 2 and 3");
  expect_error(write_raw("be.gguf", "GGUF" + le32(3U << 24) + le64(0) + le64(0)), "version", "big-endian");
  expect_error(write_raw("cut.gguf", "GGUF" + le32(3) + le64(0)), "metadata_kv_count",
               "at byte 16: metadata_kv_count needs 8 bytes but the file has 0 left");
  expect_error(path("missing.gguf"), "", "no such file");
  expect_error(dir_.string(), "", "is a directory");
  if (fs::exists("/dev/zero")) expect_error("/dev/zero", "", "not a regular file");
  try {
    parse_gguf("GGUF", 2, "x.gguf");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), "x.gguf");
  }
}

// ---------------------------------------------------------------------------------------
// Architectures

TEST_F(Gguf, LlamaMapsToTheSpecAndCountsExactly) {
  const GgufImport m = load_gguf_model(testing::tiny_llama().write(path("tiny-llama.gguf")));
  const ModelSpec& s = m.entry.spec;
  EXPECT_EQ(m.architecture, "llama");
  EXPECT_EQ(s.name, "tiny-llama");
  EXPECT_EQ(s.family, Family::llama);
  EXPECT_EQ(s.d_model, 32U);
  EXPECT_EQ(s.n_layers, 1U);
  EXPECT_EQ(s.n_heads, 2U);
  EXPECT_EQ(s.n_kv_heads, 1U);
  EXPECT_EQ(s.d_head, 16U);
  EXPECT_EQ(s.d_mlp, 64U);
  EXPECT_EQ(s.vocab_size, 8U);
  EXPECT_EQ(s.max_seq_len, 128U);
  EXPECT_EQ(s.mlp, MlpKind::gated);
  EXPECT_EQ(s.norm, NormKind::rmsnorm);
  EXPECT_EQ(s.lm_head, LmHead::untied);
  EXPECT_FALSE(s.attn_qkv_bias);
  EXPECT_EQ(m.entry.origin, path("tiny-llama.gguf"));
  // Embedding 256 + q 1,024 + k 512 + v 512 + o 1,024 + MLP 3 x 2,048 + norms 3 x 32 + head 256.
  EXPECT_EQ(count_parameters(s), 9'824U);
  EXPECT_EQ(read_gguf(path("tiny-llama.gguf")).elements, 9'824U);
  // Grouped stored weights: the three Q4_0 MLP matrices of 2,048 elements are one group.
  const auto mlp = std::find_if(s.stored_weights.begin(), s.stored_weights.end(),
                                [](const StoredTensors& t) { return t.component == "mlp"; });
  ASSERT_NE(mlp, s.stored_weights.end());
  EXPECT_EQ(mlp->format, "Q4_0");
  EXPECT_EQ(mlp->copies, 3U);
  EXPECT_EQ(mlp->bytes, 64U * 18);
  // find_model takes a .gguf, as every command does.
  EXPECT_EQ(count_parameters(find_model(path("tiny-llama.gguf")).spec), 9'824U);
}

TEST_F(Gguf, Gemma3SlidesFiveLayersInSixAndCountsItsQkNorms) {
  // llama.cpp's gemma3: sliding_window 512, no pattern key (6: of every six layers the last is
  // global); heads of 64 wider than d / heads; per-head q/k RMSNorms; a tied head.
  GgufWriter w;
  w.str("general.architecture", "gemma3")
      .u32("gemma3.context_length", 8192)
      .u32("gemma3.embedding_length", 32)
      .u32("gemma3.block_count", 7)
      .u32("gemma3.feed_forward_length", 64)
      .u32("gemma3.attention.head_count", 2)
      .u32("gemma3.attention.head_count_kv", 1)
      .u32("gemma3.attention.key_length", 64)
      .u32("gemma3.attention.value_length", 64)
      .u32("gemma3.attention.sliding_window", 512)
      .tokens("tokenizer.ggml.tokens", 8);
  w.tensor("token_embd.weight", {32, 8}, "F16");
  for (int b = 0; b < 7; ++b) {
    const std::string p = "blk." + std::to_string(b) + ".";
    w.tensor(p + "attn_norm.weight", {32}, "F32")
        .tensor(p + "attn_q.weight", {32, 128}, "F16")
        .tensor(p + "attn_k.weight", {32, 64}, "F16")
        .tensor(p + "attn_v.weight", {32, 64}, "F16")
        .tensor(p + "attn_output.weight", {128, 32}, "F16")
        .tensor(p + "post_attention_norm.weight", {32}, "F32")
        .tensor(p + "attn_k_norm.weight", {64}, "F32")
        .tensor(p + "attn_q_norm.weight", {64}, "F32")
        .tensor(p + "ffn_norm.weight", {32}, "F32")
        .tensor(p + "ffn_gate.weight", {32, 64}, "F16")
        .tensor(p + "ffn_up.weight", {32, 64}, "F16")
        .tensor(p + "ffn_down.weight", {64, 32}, "F16")
        .tensor(p + "post_ffw_norm.weight", {32}, "F32");
  }
  w.tensor("output_norm.weight", {32}, "F32");
  const GgufImport m = load_gguf_model(w.write(path("gemma3.gguf")));
  const ModelSpec& s = m.entry.spec;
  EXPECT_EQ(s.family, Family::gemma3);
  EXPECT_EQ(s.d_head, 64U);
  EXPECT_EQ(s.sliding_window, 512U);
  EXPECT_EQ(s.global_every, 6U);
  EXPECT_EQ(s.norms_per_layer, 4U);
  EXPECT_EQ(s.qk_norm, QkNorm::head);
  EXPECT_EQ(s.lm_head, LmHead::tied);
  EXPECT_EQ(attention_kind(s, 4), AttentionKind::sliding);
  EXPECT_EQ(attention_kind(s, 5), AttentionKind::full);
  EXPECT_EQ(attention_kind(s, 6), AttentionKind::sliding);
  // A layer: q 4,096 + k 2,048 + v 2,048 + o 4,096 + MLP 3 x 2,048 + 4 norms x 32 + q/k norms
  // 2 x 64 = 18,688; 7 layers, the embedding 256 and the final norm 32.
  EXPECT_EQ(count_parameters(s), 7U * 18'688 + 256 + 32);
  EXPECT_EQ(read_gguf(path("gemma3.gguf")).elements, 7U * 18'688 + 256 + 32);
}

TEST_F(Gguf, AVisionTowersFileIsReadForItsGraph) {
  // Gemma 3's projector: 2 layers of width 64 (2 heads, MLP 128) over 56 x 56 pixels in 14-pixel
  // patches, projected into 32; 41 tensors, the projection 32 x 64 x 2 B.
  const LlamaCppProjector p = load_gguf_projector(
      testing::gemma3_mmproj({56, 14, 64, 2, 2, 128, 32, "F16"}).write(path("mmproj.gguf")));
  EXPECT_EQ(p.name, "mmproj.gguf");
  EXPECT_EQ(p.type, "gemma3");
  EXPECT_EQ(p.image_size, 56U);
  EXPECT_EQ(p.patch_size, 14U);
  EXPECT_EQ(p.d_model, 64U);
  EXPECT_EQ(p.d_ff, 128U);
  EXPECT_EQ(p.n_layers, 2U);
  EXPECT_EQ(p.n_heads, 2U);
  EXPECT_EQ(p.n_merge, 4U);
  EXPECT_EQ(p.text_width, 32U);
  EXPECT_EQ(p.patch_element_bytes, 2U);
  EXPECT_EQ(p.projection_bytes, 32U * 64 * 2);
  EXPECT_EQ(p.tensors.size(), 3U + 2 * 16 + 4);
  // Qwen3-VL's: the merger's second layer gives the text width, v.deepstack.N.* the deepstack
  // layers; llama.cpp warms it up on 46 x 46 tokens and takes images of up to 4,096.
  const LlamaCppProjector q = load_gguf_projector(
      testing::qwen3vl_mmproj({384, 16, 128, 4, 2, 512, 256, {1, 3}, "F16"}).write(path("qwen3vl.gguf")));
  EXPECT_EQ(q.type, "qwen3vl_merger");
  EXPECT_EQ(q.n_merge, 2U);
  EXPECT_EQ(q.text_width, 256U);
  EXPECT_EQ(q.deepstack, (std::vector<bool>{false, true, false, true}));
  EXPECT_EQ(q.warmup_tokens, 2116U);
  EXPECT_EQ(q.max_tokens, 4096U);
  EXPECT_EQ(q.projection_bytes, 0U);
  // Qwen2.5-VL's: its window pattern (clip.vision.n_wa_pattern); Qwen2-VL's has none.
  const LlamaCppProjector q25 = load_gguf_projector(
      testing::qwen2vl_mmproj({true, 448, 14, 128, 4, 2, 512, 384, 8, "F16"}).write(path("qwen25vl.gguf")));
  EXPECT_EQ(q25.type, "qwen2.5vl_merger");
  EXPECT_EQ(q25.window_pattern, 8U);
  EXPECT_EQ(q25.text_width, 384U);
  EXPECT_EQ(q25.warmup_tokens, 2116U);
  EXPECT_EQ(load_gguf_projector(
                testing::qwen2vl_mmproj({false, 448, 14, 128, 3, 2, 512, 384, 0, "F16"}).write(path("qwen2vl.gguf")))
                .window_pattern,
            0U);
  // A file that is not a tower, a projector not recorded, a tower without its projection.
  const auto refused = [&](const std::string& file, const std::string& key) {
    try {
      load_gguf_projector(file);
      ADD_FAILURE() << file << " was read";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key(), key) << e.what();
    }
  };
  refused(testing::tiny_llama().write(path("llama.gguf")), "general.architecture");
  refused(testing::gemma3_mmproj({56, 14, 64, 2, 2, 128, 32, "F16", "qwen2.5vl"}).write(path("qwen.gguf")),
          "clip.projector_type");
  GgufWriter omni = testing::gemma3_mmproj({56, 14, 64, 2, 2, 128, 32, "F16"});
  omni.boolean("clip.has_audio_encoder", true);
  refused(omni.write(path("omni.gguf")), "clip.has_audio_encoder");
  // Qwen2.5-VL's tower as the old surgery script wrote it: qwen2vl_merger with a gated MLP.
  GgufWriter old_format = testing::qwen2vl_mmproj({false, 448, 14, 128, 3, 2, 512, 384, 0, "F16"});
  old_format.tensor("v.blk.0.ffn_gate.weight", {128, 512}, "F16");
  refused(old_format.write(path("old-qwen25vl.gguf")), "v.blk.0.ffn_gate.weight");
  GgufWriter no_projection = testing::gemma3_mmproj({56, 14, 64, 2, 2, 128, 32, "F16"});
  GgufWriter cut;
  for (const GgufWriter::Tensor& t : no_projection.tensors()) {
    if (t.name != "mm.input_projection.weight") cut.tensor_id(t.name, t.shape, t.type);
  }
  cut.str("general.architecture", "clip").boolean("clip.has_vision_encoder", true).str("clip.projector_type", "gemma3");
  for (const char* k : {"image_size", "patch_size", "embedding_length", "feed_forward_length", "block_count"})
    cut.u32(std::string("clip.vision.") + k, 64);
  cut.u32("clip.vision.attention.head_count", 2);
  refused(cut.write(path("cut.gguf")), "mm.input_projection.weight");
}

TEST_F(Gguf, Mamba2MapsToStateSpaceSizesAndCountsExactly) {
  // llama.cpp's mamba2 keys and tensors (src/models/mamba2.cpp): d 32, 1 layer, d_inner 64 of
  // 4 heads (time_step_rank) in 2 groups, state 8, conv 4 taps over 64 + 2 x 2 x 8 = 96 channels.
  const auto file = [](bool groups) {
    GgufWriter w;
    w.str("general.architecture", "mamba2")
        .u32("mamba2.context_length", 1U << 20U)
        .u32("mamba2.embedding_length", 32)
        .u32("mamba2.block_count", 1)
        .u32("mamba2.feed_forward_length", 0)
        .u32("mamba2.attention.head_count", 0)
        .tokens("tokenizer.ggml.tokens", 8);
    mamba2_keys(w, "mamba2", groups);
    w.tensor("token_embd.weight", {32, 8}, "F16").tensor("blk.0.attn_norm.weight", {32}, "F32");
    mamba2_mixer(w);
    w.tensor("output_norm.weight", {32}, "F32");
    return w;
  };
  const GgufImport m = load_gguf_model(file(true).write(path("mamba2.gguf")));
  const ModelSpec& s = m.entry.spec;
  EXPECT_EQ(s.family, Family::mamba2);
  EXPECT_EQ(s.ssm.version, 2U);
  EXPECT_EQ(s.ssm.d_inner, 64U);
  EXPECT_EQ(s.ssm.d_state, 8U);
  EXPECT_EQ(s.ssm.d_conv, 4U);
  EXPECT_EQ(s.ssm.heads, 4U);
  EXPECT_EQ(s.ssm.groups, 2U);
  EXPECT_TRUE(s.ssm.gated_norm);
  EXPECT_EQ(s.norms_per_layer, 1U);  // ssm_norm is the mixer's gated norm, not a second layer norm
  EXPECT_EQ(s.lm_head, LmHead::tied);
  EXPECT_EQ(ssm_only_layers(s), 1U);
  // Embedding 256 + norm 32 + in_proj 32 x 164 = 5,248 + conv 384 + 96 + dt_bias, A, D 3 x 4 +
  // gated norm 64 + out_proj 2,048 + final norm 32.
  EXPECT_EQ(count_parameters(s), 8'172U);
  EXPECT_EQ(read_gguf(path("mamba2.gguf")).elements, 8'172U);
  for (const std::string& note : m.notes) EXPECT_EQ(note.find("the architecture counts"), std::string::npos) << note;

  expect_refused(file(false).write(path("no-groups.gguf")), "mamba2.ssm.group_count",
                 "missing 'mamba2.ssm.group_count'");
}

TEST_F(Gguf, NemotronHLayersAreReadFromTheirTensors) {
  // llama.cpp's nemotron_h marks a layer's kind with per-layer head_count_kv and
  // feed_forward_length arrays (0 where it has none); its tensors say the same. Layers M * -:
  // d 32, a Mamba-2 of 4 heads over d_inner 64 in 2 groups, state 8; attention of 4 heads of 8
  // with 2 KV heads; a ReLU² MLP of 48.
  GgufWriter w;
  w.str("general.architecture", "nemotron_h")
      .u32("nemotron_h.context_length", 4096)
      .u32("nemotron_h.embedding_length", 32)
      .u32("nemotron_h.block_count", 3)
      .u32("nemotron_h.attention.head_count", 4)
      .u32_array("nemotron_h.attention.head_count_kv", {0, 2, 0})
      .u32_array("nemotron_h.feed_forward_length", {0, 0, 48})
      .u32("nemotron_h.attention.key_length", 8)
      .tokens("tokenizer.ggml.tokens", 8);
  mamba2_keys(w, "nemotron_h");
  w.tensor("token_embd.weight", {32, 8}, "F16");
  for (int b = 0; b < 3; ++b) w.tensor("blk." + std::to_string(b) + ".attn_norm.weight", {32}, "F32");
  mamba2_mixer(w);
  w.tensor("blk.1.attn_q.weight", {32, 32}, "F16")
      .tensor("blk.1.attn_k.weight", {32, 16}, "F16")
      .tensor("blk.1.attn_v.weight", {32, 16}, "F16")
      .tensor("blk.1.attn_output.weight", {32, 32}, "F16")
      .tensor("blk.2.ffn_up.weight", {32, 48}, "F16")
      .tensor("blk.2.ffn_down.weight", {48, 32}, "F16")
      .tensor("output_norm.weight", {32}, "F32")
      .tensor("output.weight", {32, 8}, "F16");
  const GgufImport m = load_gguf_model(w.write(path("nemotron_h.gguf")));
  const ModelSpec& s = m.entry.spec;
  EXPECT_EQ(s.family, Family::nemotron_h);
  EXPECT_EQ(s.layer_types, (std::vector<AttentionKind>{AttentionKind::mamba, AttentionKind::full, AttentionKind::mlp}));
  EXPECT_EQ(s.n_heads, 4U);
  EXPECT_EQ(s.n_kv_heads, 2U);
  EXPECT_EQ(s.d_head, 8U);
  EXPECT_EQ(s.d_mlp, 48U);
  EXPECT_EQ(s.ssm.heads, 4U);
  // Embedding 256 + norms 3 x 32 + Mamba-2 (5,248 + 384 + 96 + 3 x 4 + 64 + 2,048) + attention
  // (1,024 + 512 + 512 + 1,024) + MLP 2 x 1,536 + final norm 32 + head 256.
  EXPECT_EQ(count_parameters(s), 14'636U);
  EXPECT_EQ(read_gguf(path("nemotron_h.gguf")).elements, 14'636U);
}

TEST_F(Gguf, FalconH1RunsAttentionAndAMixerInEveryLayer) {
  // llama.cpp's falcon-h1 (src/models/falcon-h1.cpp): every layer attention and a Mamba-2 mixer
  // side by side, then a gated MLP after ffn_norm (named without ".weight"). d 32, one layer;
  // attention of 4 heads of 8, 2 KV heads; a Mamba-2 of 4 heads over d_inner 64 in 2 groups,
  // state 8, its gated norm; an MLP of 48.
  GgufWriter w;
  w.str("general.architecture", "falcon-h1")
      .u32("falcon-h1.context_length", 4096)
      .u32("falcon-h1.embedding_length", 32)
      .u32("falcon-h1.block_count", 1)
      .u32("falcon-h1.feed_forward_length", 48)
      .u32("falcon-h1.attention.head_count", 4)
      .u32("falcon-h1.attention.head_count_kv", 2)
      .u32("falcon-h1.attention.key_length", 8)
      .tokens("tokenizer.ggml.tokens", 8);
  mamba2_keys(w, "falcon-h1");
  w.tensor("token_embd.weight", {32, 8}, "F16").tensor("blk.0.attn_norm.weight", {32}, "F32");
  mamba2_mixer(w);
  w.tensor("blk.0.attn_q.weight", {32, 32}, "F16")
      .tensor("blk.0.attn_k.weight", {32, 16}, "F16")
      .tensor("blk.0.attn_v.weight", {32, 16}, "F16")
      .tensor("blk.0.attn_output.weight", {32, 32}, "F16")
      .tensor("blk.0.ffn_norm", {32}, "F32")
      .tensor("blk.0.ffn_gate.weight", {32, 48}, "F16")
      .tensor("blk.0.ffn_up.weight", {32, 48}, "F16")
      .tensor("blk.0.ffn_down.weight", {48, 32}, "F16")
      .tensor("output_norm.weight", {32}, "F32")
      .tensor("output.weight", {32, 8}, "F16");
  const GgufImport m = load_gguf_model(w.write(path("falcon-h1.gguf")));
  const ModelSpec& s = m.entry.spec;
  EXPECT_EQ(s.family, Family::falcon_h1);
  EXPECT_TRUE(s.parallel_ssm);
  EXPECT_EQ(ssm_layers(s), 1U);
  EXPECT_EQ(attention_layers(s), 1U);
  EXPECT_EQ(s.norms_per_layer, 2U);
  EXPECT_EQ(s.mlp, MlpKind::gated);
  // Embedding 256 + 2 norms 64 + Mamba-2 7,852 + attention 3,072 + MLP 3 x 1,536 + final norm 32
  // + head 256.
  EXPECT_EQ(count_parameters(s), 16'140U);
  EXPECT_EQ(read_gguf(path("falcon-h1.gguf")).elements, 16'140U);
}

TEST_F(Gguf, Qwen35ReadsItsLayersFromTensorsAndLeavesItsMtpBlockOut) {
  // llama.cpp's qwen35 (src/models/qwen35.cpp): d 32, block 0 gated DeltaNet (2 key heads and 4
  // value heads of 8: qkv 32 -> 2 x 16 + 32, the gate 32 -> 32, an unbiased conv over 64
  // channels of 4 taps, dt and a per value head, beta and alpha 32 -> 4, a norm of 8, out 32 ->
  // 32), block 1 gated attention (4 heads of 8, q 32 -> 2 x 32, 2 KV heads, q/k norms of 8), a
  // SwiGLU MLP of 48 and two norms in each; block 2 the MTP block (nextn_predict_layers 1),
  // which llama.cpp skips unless it drafts with it.
  GgufWriter w;
  w.str("general.architecture", "qwen35")
      .u32("qwen35.context_length", 4096)
      .u32("qwen35.embedding_length", 32)
      .u32("qwen35.block_count", 3)
      .u32("qwen35.nextn_predict_layers", 1)
      .u32("qwen35.feed_forward_length", 48)
      .u32("qwen35.attention.head_count", 4)
      .u32("qwen35.attention.head_count_kv", 2)
      .u32("qwen35.attention.key_length", 8)
      .u32("qwen35.rope.dimension_count", 4)
      .u32("qwen35.ssm.conv_kernel", 4)
      .u32("qwen35.ssm.inner_size", 32)
      .u32("qwen35.ssm.state_size", 8)
      .u32("qwen35.ssm.time_step_rank", 4)
      .u32("qwen35.ssm.group_count", 2)
      .tokens("tokenizer.ggml.tokens", 8);
  w.tensor("token_embd.weight", {32, 8}, "F16");
  for (int b = 0; b < 3; ++b) {
    const std::string p = "blk." + std::to_string(b) + ".";
    w.tensor(p + "attn_norm.weight", {32}, "F32").tensor(p + "post_attention_norm.weight", {32}, "F32");
    if (b == 0) {
      w.tensor(p + "attn_qkv.weight", {32, 64}, "F16")
          .tensor(p + "attn_gate.weight", {32, 32}, "F16")
          .tensor(p + "ssm_conv1d.weight", {4, 64}, "F32")
          .tensor(p + "ssm_dt.bias", {4}, "F32")
          .tensor(p + "ssm_a", {4}, "F32")
          .tensor(p + "ssm_beta.weight", {32, 4}, "F16")
          .tensor(p + "ssm_alpha.weight", {32, 4}, "F16")
          .tensor(p + "ssm_norm.weight", {8}, "F32")
          .tensor(p + "ssm_out.weight", {32, 32}, "F16");
    } else {
      w.tensor(p + "attn_q.weight", {32, 64}, "F16")
          .tensor(p + "attn_k.weight", {32, 16}, "F16")
          .tensor(p + "attn_v.weight", {32, 16}, "F16")
          .tensor(p + "attn_output.weight", {32, 32}, "F16")
          .tensor(p + "attn_q_norm.weight", {8}, "F32")
          .tensor(p + "attn_k_norm.weight", {8}, "F32");
    }
    w.tensor(p + "ffn_gate.weight", {32, 48}, "F16")
        .tensor(p + "ffn_up.weight", {32, 48}, "F16")
        .tensor(p + "ffn_down.weight", {48, 32}, "F16");
  }
  w.tensor("output_norm.weight", {32}, "F32").tensor("output.weight", {32, 8}, "F16");
  const GgufImport m = load_gguf_model(w.write(path("qwen35.gguf")));
  const ModelSpec& s = m.entry.spec;
  EXPECT_EQ(s.family, Family::qwen3_next);
  EXPECT_EQ(s.n_layers, 2U);
  EXPECT_EQ(s.mtp_layers, 1U);
  EXPECT_EQ(s.layer_types, (std::vector<AttentionKind>{AttentionKind::mamba, AttentionKind::full}));
  EXPECT_EQ(s.ssm.version, 3U);
  EXPECT_EQ(ssm_conv_channels(s.ssm), 64U);
  EXPECT_EQ(s.n_heads, 4U);
  EXPECT_EQ(s.n_kv_heads, 2U);
  EXPECT_EQ(s.rotary_dim, 4U);
  EXPECT_EQ(s.norms_per_layer, 2U);
  // Embedding 256 + 4 norms 128 + DeltaNet (2,048 + 1,024 + 256 + 4 + 4 + 2 x 128 + 8 + 1,024) +
  // attention (2,048 + 512 + 512 + 1,024 + 2 x 8) + 2 MLPs of 3 x 1,536 + final norm 32 + head 256.
  const std::uint64_t deltanet = 2048 + 1024 + 256 + 4 + 4 + 2 * 128 + 8 + 1024;
  const std::uint64_t attention = 2048 + 512 + 512 + 1024 + 2 * 8;
  EXPECT_EQ(count_parameters(s), 256 + 128 + deltanet + attention + 2 * 3 * 1536 + 32 + 256U);
  // The weights are the two layers' tensors, not the MTP block's; the DeltaNet layer's attn_qkv
  // is its mixer's (the ssm row: 2,048 + 1,024 + 256 + 4 + 4 + 256 + 1,024, its norm a norm).
  std::uint64_t stored = 0, ssm = 0;
  for (const StoredTensors& t : s.stored_weights) {
    stored += t.elements * t.copies;
    if (t.component == "ssm") ssm += t.elements * t.copies;
  }
  EXPECT_EQ(stored, count_parameters(s));
  EXPECT_EQ(ssm, deltanet - 8);
}

TEST_F(Gguf, AGraniteHybridsExpertsAndSharedExpertAreRead) {
  // Granite 4.0-H Tiny and Small (granitehybrid, src/models/granite-hybrid.cpp): after every
  // mixer routed experts of feed_forward_length (ffn_*_exps) beside a shared expert of
  // expert_shared_feed_forward_length (ffn_*_shexp). Layers M *: d 32, a Mamba-2 of 4 heads over
  // d_inner 64 in 2 groups, state 8; attention of 4 heads of 8 with 2 KV heads; 4 experts of 16
  // (2 a token) and a shared expert of 32 in each layer; tied.
  GgufWriter w;
  w.str("general.architecture", "granitehybrid")
      .u32("granitehybrid.context_length", 4096)
      .u32("granitehybrid.embedding_length", 32)
      .u32("granitehybrid.block_count", 2)
      .u32("granitehybrid.attention.head_count", 4)
      .u32_array("granitehybrid.attention.head_count_kv", {0, 2})
      .u32("granitehybrid.attention.key_length", 8)
      .u32("granitehybrid.feed_forward_length", 16)
      .u32("granitehybrid.expert_count", 4)
      .u32("granitehybrid.expert_used_count", 2)
      .u32("granitehybrid.expert_shared_feed_forward_length", 32)
      .tokens("tokenizer.ggml.tokens", 8);
  mamba2_keys(w, "granitehybrid");
  w.tensor("token_embd.weight", {32, 8}, "F16");
  mamba2_mixer(w);
  w.tensor("blk.1.attn_q.weight", {32, 32}, "F16")
      .tensor("blk.1.attn_k.weight", {32, 16}, "F16")
      .tensor("blk.1.attn_v.weight", {32, 16}, "F16")
      .tensor("blk.1.attn_output.weight", {32, 32}, "F16");
  for (int b = 0; b < 2; ++b) {
    const std::string p = "blk." + std::to_string(b) + ".";
    w.tensor(p + "attn_norm.weight", {32}, "F32")
        .tensor(p + "ffn_norm.weight", {32}, "F32")
        .tensor(p + "ffn_gate_inp.weight", {32, 4}, "F32")
        .tensor(p + "ffn_gate_exps.weight", {32, 16, 4}, "F16")
        .tensor(p + "ffn_up_exps.weight", {32, 16, 4}, "F16")
        .tensor(p + "ffn_down_exps.weight", {16, 32, 4}, "F16")
        .tensor(p + "ffn_gate_shexp.weight", {32, 32}, "F16")
        .tensor(p + "ffn_up_shexp.weight", {32, 32}, "F16")
        .tensor(p + "ffn_down_shexp.weight", {32, 32}, "F16");
  }
  w.tensor("output_norm.weight", {32}, "F32");
  const GgufImport m = load_gguf_model(w.write(path("granite-moe.gguf")));
  const ModelSpec& s = m.entry.spec;
  EXPECT_EQ(s.family, Family::bamba);
  EXPECT_EQ(s.layer_types, (std::vector<AttentionKind>{AttentionKind::mamba, AttentionKind::full}));
  EXPECT_EQ(s.experts, 4U);
  EXPECT_EQ(s.experts_per_token, 2U);
  EXPECT_EQ(s.d_expert, 16U);
  EXPECT_EQ(s.d_shared_expert, 32U);
  // Embedding 256 + norms 2 x 2 x 32 + Mamba-2 7,852 + attention 3,072 + 2 x (router 128 +
  // experts 4 x 3 x 32 x 16 + shared 3 x 32 x 32) + final norm 32; the head is the embedding.
  EXPECT_EQ(count_parameters(s), 256 + 128 + 7'852 + 3'072 + 2 * (128 + 6'144 + 3'072) + 32U);
  EXPECT_EQ(read_gguf(path("granite-moe.gguf")).elements, 30'028U);
}

TEST_F(Gguf, NemotronThreesExpertLayersAreRead) {
  // Nemotron 3 (nemotron_h_moe, src/models/nemotron-h.cpp): E layers of ReLU² experts of
  // expert_feed_forward_length (ffn_up_exps, ffn_down_exps; no gate) beside a shared expert, a
  // router with a bias per expert (exp_probs_b). Layers M E *: d 32, the Mamba-2 mixer of the other
  // tests; 4 experts of 16 (2 a token), a shared expert of 32; attention of 4 heads of 8 with 2 KV
  // heads. Experts in a latent space
  // (Nemotron 3 Super's moe_latent_size) are refused.
  const auto file = [&](bool latent) {
    GgufWriter w;
    w.str("general.architecture", "nemotron_h_moe")
        .u32("nemotron_h_moe.context_length", 4096)
        .u32("nemotron_h_moe.embedding_length", 32)
        .u32("nemotron_h_moe.block_count", 3)
        .u32("nemotron_h_moe.attention.head_count", 4)
        .u32_array("nemotron_h_moe.attention.head_count_kv", {0, 0, 2})
        .u32("nemotron_h_moe.attention.key_length", 8)
        .u32_array("nemotron_h_moe.feed_forward_length", {0, 16, 0})
        .u32("nemotron_h_moe.expert_count", 4)
        .u32("nemotron_h_moe.expert_used_count", 2)
        .u32("nemotron_h_moe.expert_feed_forward_length", 16)
        .u32("nemotron_h_moe.expert_shared_feed_forward_length", 32)
        .tokens("tokenizer.ggml.tokens", 8);
    if (latent) w.u32("nemotron_h_moe.moe_latent_size", 16);
    mamba2_keys(w, "nemotron_h_moe");
    w.tensor("token_embd.weight", {32, 8}, "F16");
    for (int b = 0; b < 3; ++b) w.tensor("blk." + std::to_string(b) + ".attn_norm.weight", {32}, "F32");
    mamba2_mixer(w);
    w.tensor("blk.2.attn_q.weight", {32, 32}, "F16")
        .tensor("blk.2.attn_k.weight", {32, 16}, "F16")
        .tensor("blk.2.attn_v.weight", {32, 16}, "F16")
        .tensor("blk.2.attn_output.weight", {32, 32}, "F16")
        .tensor("blk.1.ffn_gate_inp.weight", {32, 4}, "F32")
        .tensor("blk.1.exp_probs_b.bias", {4}, "F32")
        .tensor("blk.1.ffn_up_exps.weight", {32, 16, 4}, "F16")
        .tensor("blk.1.ffn_down_exps.weight", {16, 32, 4}, "F16")
        .tensor("blk.1.ffn_up_shexp.weight", {32, 32}, "F16")
        .tensor("blk.1.ffn_down_shexp.weight", {32, 32}, "F16")
        .tensor("output_norm.weight", {32}, "F32")
        .tensor("output.weight", {32, 8}, "F16");
    return w.write(path(latent ? "nemotron-latent.gguf" : "nemotron-moe.gguf"));
  };
  const GgufImport m = load_gguf_model(file(false));
  const ModelSpec& s = m.entry.spec;
  EXPECT_EQ(s.family, Family::nemotron_h);
  EXPECT_EQ(s.layer_types, (std::vector<AttentionKind>{AttentionKind::mamba, AttentionKind::mlp, AttentionKind::full}));
  EXPECT_EQ(s.experts, 4U);
  EXPECT_EQ(s.d_expert, 16U);
  EXPECT_EQ(s.d_shared_expert, 32U);
  EXPECT_TRUE(s.router_bias);
  EXPECT_EQ(s.mlp, MlpKind::plain);
  // Embedding 256 + norms 3 x 32 + Mamba-2 7,852 + router 128 and its bias 4 + experts 4 x 2 x 32 x
  // 16 + shared 2 x 32 x 32 + attention 3,072 + final norm 32 + head 256.
  EXPECT_EQ(count_parameters(s), 256 + 96 + 7'852 + 128 + 4 + 4'096 + 2'048 + 3'072 + 32 + 256U);
  EXPECT_EQ(read_gguf(path("nemotron-moe.gguf")).elements, count_parameters(s));
  expect_refused(file(true), "nemotron_h_moe.moe_latent_size", "Nemotron 3 Super");
}

TEST_F(Gguf, Qwen3VLsTextModelReadsItsDeepstackLayersAndMRope) {
  // llama.cpp's qwen3vl (src/models/qwen3vl.cpp): Qwen3's layers, M-RoPE's sections and
  // n_deepstack_layers, the layers that add the tower's deepstack features. Nothing of its own
  // to count: a layer is q 2,048 + k 1,024 + v 1,024 + o 2,048 + MLP 3 x 2,048 + 2 norms x 32 +
  // q/k norms 2 x 32 = 12,416.
  const auto vl = [&](std::uint32_t deepstack) {
    GgufWriter w;
    w.str("general.architecture", "qwen3vl")
        .u32("qwen3vl.context_length", 262144)
        .u32("qwen3vl.embedding_length", 32)
        .u32("qwen3vl.block_count", 4)
        .u32("qwen3vl.feed_forward_length", 64)
        .u32("qwen3vl.attention.head_count", 2)
        .u32("qwen3vl.attention.head_count_kv", 1)
        .u32("qwen3vl.attention.key_length", 32)
        .u32("qwen3vl.attention.value_length", 32)
        .u32("qwen3vl.n_deepstack_layers", deepstack)
        .u32_array("qwen3vl.rope.dimension_sections", {6, 5, 5, 0})
        .tokens("tokenizer.ggml.tokens", 8);
    w.tensor("token_embd.weight", {32, 8}, "F16");
    for (int b = 0; b < 4; ++b) {
      const std::string p = "blk." + std::to_string(b) + ".";
      w.tensor(p + "attn_norm.weight", {32}, "F32")
          .tensor(p + "attn_q.weight", {32, 64}, "F16")
          .tensor(p + "attn_k.weight", {32, 32}, "F16")
          .tensor(p + "attn_v.weight", {32, 32}, "F16")
          .tensor(p + "attn_output.weight", {64, 32}, "F16")
          .tensor(p + "attn_k_norm.weight", {32}, "F32")
          .tensor(p + "attn_q_norm.weight", {32}, "F32")
          .tensor(p + "ffn_norm.weight", {32}, "F32")
          .tensor(p + "ffn_gate.weight", {32, 64}, "F16")
          .tensor(p + "ffn_up.weight", {32, 64}, "F16")
          .tensor(p + "ffn_down.weight", {64, 32}, "F16");
    }
    w.tensor("output_norm.weight", {32}, "F32");
    return w.write(path("qwen3vl-" + std::to_string(deepstack) + ".gguf"));
  };
  const ModelSpec s = load_gguf_model(vl(3)).entry.spec;
  EXPECT_EQ(s.family, Family::qwen3);
  EXPECT_TRUE(s.mrope);
  EXPECT_EQ(s.deepstack_layers, 3U);
  EXPECT_EQ(s.qk_norm, QkNorm::head);
  EXPECT_EQ(s.norms_per_layer, 2U);
  EXPECT_EQ(count_parameters(s), 4U * 12'416 + 256 + 32);
  // As many deepstack layers as layers leaves none to read the padded embeddings past them.
  try {
    load_gguf_model(vl(4));
    ADD_FAILURE() << "four deepstack layers of four read";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "qwen3vl.n_deepstack_layers");
  }
}

TEST_F(Gguf, TensorsDecideBiasesHeadTyingPositionsAndExperts) {
  GgufWriter qwen;
  qwen.str("general.architecture", "qwen2")
      .u32("qwen2.context_length", 64)
      .u32("qwen2.embedding_length", 32)
      .u32("qwen2.block_count", 1)
      .u32("qwen2.feed_forward_length", 64)
      .u32("qwen2.attention.head_count", 2)
      .u32("qwen2.attention.head_count_kv", 2)
      .tokens("tokenizer.ggml.tokens", 8);
  qwen.tensor("token_embd.weight", {32, 8}, "F32")
      .tensor("blk.0.attn_q.weight", {32, 32}, "F32")
      .tensor("blk.0.attn_q.bias", {32}, "F32")
      .tensor("blk.0.attn_norm.weight", {32}, "F32");
  GgufImport m = load_gguf_model(qwen.write(path("qwen.gguf")));
  EXPECT_EQ(m.entry.spec.family, Family::qwen2);
  EXPECT_TRUE(m.entry.spec.attn_qkv_bias);
  EXPECT_EQ(m.entry.spec.lm_head, LmHead::tied);  // no output.weight: llama.cpp uses token_embd
  EXPECT_FALSE(m.entry.spec.final_norm);
  EXPECT_FALSE(m.notes.empty());  // a partial file: its elements differ from the architecture
  const Breakdown tied = estimate_weights(m.entry.spec);
  testing::expect_consistent(tied);
  EXPECT_EQ(tied.total().count(), 4U * (256 + 1024 + 32 + 32));  // F32: embedding, q, q bias, norm
  ASSERT_EQ(tied.components[0].detail.back().name, "lm_head");
  EXPECT_EQ(tied.components[0].detail.back().bytes.count(), 0U);  // shares the embedding

  GgufWriter gpt2;
  gpt2.str("general.architecture", "gpt2")
      .u32("gpt2.context_length", 16)
      .u32("gpt2.embedding_length", 32)
      .u32("gpt2.block_count", 1)
      .u32("gpt2.feed_forward_length", 128)
      .u32("gpt2.attention.head_count", 4)
      .tokens("tokenizer.ggml.tokens", 8);
  gpt2.tensor("token_embd.weight", {32, 8}, "F32")
      .tensor("position_embd.weight", {32, 16}, "F32")
      .tensor("blk.0.attn_norm.weight", {32}, "F32")
      .tensor("blk.0.attn_norm.bias", {32}, "F32")
      .tensor("blk.0.ffn_up.weight", {32, 128}, "F32");
  m = load_gguf_model(gpt2.write(path("gpt2.gguf")));
  EXPECT_EQ(m.entry.spec.family, Family::gpt2);
  EXPECT_EQ(m.entry.spec.positional, Positional::learned);
  EXPECT_EQ(m.entry.spec.norm, NormKind::layernorm);
  EXPECT_EQ(m.entry.spec.mlp, MlpKind::plain);

  GgufWriter mixtral = testing::tiny_llama();
  mixtral.u32("llama.expert_count", 8).u32("llama.expert_used_count", 2);
  m = load_gguf_model(mixtral.write(path("mixtral.gguf")));
  EXPECT_EQ(m.entry.spec.family, Family::mixtral);
  EXPECT_EQ(m.entry.spec.experts, 8U);
  EXPECT_EQ(m.entry.spec.experts_per_token, 2U);
}

TEST_F(Gguf, UnmappedArchitecturesAndBadKeysAreNamed) {
  GgufWriter rwkv;
  rwkv.str("general.architecture", "rwkv6");
  std::string file = rwkv.write(path("rwkv6.gguf"));
  try {
    load_gguf_model(file);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), file);
    EXPECT_EQ(e.key(), "general.architecture");
    EXPECT_NE(e.message().find("unsupported architecture 'rwkv6'"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find(
                  "memplan maps 'falcon', 'falcon-h1', 'gemma', 'gemma2', 'gemma3', 'gemma4', 'gpt2', 'gptneox', "
                  "'granitehybrid', 'llama', "
                  "'mamba', 'mamba2', 'nemotron_h', 'nemotron_h_moe', 'phi2', 'phi3', 'qwen2', 'qwen2vl', 'qwen3', "
                  "'qwen35', 'qwen35moe', 'qwen3moe', 'qwen3next', 'qwen3vl' and 'qwen3vlmoe'"),
              std::string::npos)
        << e.what();
  }
  const auto refused = [&](GgufWriter w, const std::string& key, const std::string& says) {
    SCOPED_TRACE(says);
    const std::string f = w.write(path("bad.gguf"));
    try {
      load_gguf_model(f);
      ADD_FAILURE() << "accepted";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.file(), f);
      EXPECT_EQ(e.key(), key);
      EXPECT_NE(e.message().find(says), std::string::npos) << e.what();
    }
  };
  GgufWriter no_arch;
  refused(no_arch, "general.architecture", "missing 'general.architecture'");
  GgufWriter missing;
  missing.str("general.architecture", "llama").u32("llama.embedding_length", 32);
  refused(missing, "llama.block_count", "missing 'llama.block_count', which llama.cpp writes for every llama model");
  refused(testing::tiny_llama().u32("llama.expert_count", 4), "llama.expert_used_count",
          "missing 'llama.expert_used_count'");
  GgufWriter arrays;
  arrays.str("general.architecture", "llama").u32_array("llama.embedding_length", {32, 32});
  refused(arrays, "llama.embedding_length", "is a per-layer array of 2 uint32s");
  GgufWriter kv = testing::tiny_llama();
  kv.u32("llama.attention.key_length", 16).u32("llama.attention.value_length", 32);
  refused(kv, "llama.attention.value_length", "differs from key_length 16");
  GgufWriter heads = testing::tiny_llama();
  heads.u32("llama.attention.head_count_kv", 3);  // duplicate of tiny_llama's key: refused by the reader
  refused(heads, "llama.attention.head_count_kv", "appears twice");
  GgufWriter typed;
  typed.str("general.architecture", "llama").str("llama.embedding_length", "big");
  refused(typed, "llama.embedding_length", "must be a whole number >= 0, got a string");
  GgufWriter huge;
  huge.str("general.architecture", "llama").u64("llama.embedding_length", 1ULL << 50);
  refused(huge, "llama.embedding_length", "is 1,125,899,906,842,624; it must be from 1 to 2^40");
  // Each size within 2^40, their products past 2^64 (found by fuzz_gguf): located, kind overflow.
  GgufWriter giant;
  giant.str("general.architecture", "llama").u64("llama.vocab_size", 1ULL << 40).u64("llama.context_length", 1);
  for (const char* key :
       {"llama.embedding_length", "llama.block_count", "llama.feed_forward_length", "llama.attention.head_count"}) {
    giant.u64(key, 1ULL << 40);
  }
  refused(giant, "llama.embedding_length",
          "the architecture's sizes overflow: the model's parameter count does not fit in 64 bits");
  try {
    load_gguf_model(giant.write(path("giant.gguf")));
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::overflow);
  }
}

TEST_F(Gguf, APlanOnAGgufPricesItsWeightsAsStored) {
  const std::string file = testing::every_type_llama().write(path("every-type.gguf"), GgufData::sparse);
  const ModelEntry entry = find_model(file);
  PlanSettings settings;
  settings.workload.kind = WorkloadKind::inference;
  const Plan plan = bind(entry.spec, settings, DeviceChoice{});
  const PlanEstimate result = estimate(plan);
  testing::expect_consistent(result.breakdown);
  ASSERT_NE(result.breakdown.find("weights"), nullptr);
  // The stored tensors' 2,695,948 B and transformers' two fp32 rotary buffers of 64 / 2 elements.
  EXPECT_EQ(result.breakdown.find("weights")->bytes.count(), 2'695'948U + 2 * 32 * 4);
  EXPECT_EQ(estimate_totals(plan).bytes.total, result.total);  // the fast path agrees

  // A tensor-parallel shard splits the stored tensors as it splits the architecture: the F32
  // token embedding's 256 x 256 x 4 = 262,144 B in halves, the norms whole.
  const TensorShard shard = tensor_parallel_shard(entry.spec, {2, 1, false});
  ASSERT_EQ(shard.spec.stored_weights.size(), entry.spec.stored_weights.size());
  std::size_t embeddings = 0, norms = 0;
  for (std::size_t i = 0; i < shard.spec.stored_weights.size(); ++i) {
    const StoredTensors& whole = entry.spec.stored_weights[i];
    const StoredTensors& half = shard.spec.stored_weights[i];
    if (whole.component == "embeddings") {
      EXPECT_EQ(whole.bytes, 262'144U);
      EXPECT_EQ(half.bytes, 131'072U);
      ++embeddings;
    }
    if (whole.component == "norms") {
      EXPECT_EQ(half.bytes, whole.bytes);
      ++norms;
    }
  }
  EXPECT_EQ(embeddings, 1U);
  EXPECT_GT(norms, 0U);
  EXPECT_FALSE(shard.spec.stored_layers.has_value());
}

}  // namespace gguf_test
}  // namespace memplan
