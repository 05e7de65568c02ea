#include "memplan/core/text.hpp"

#include <gtest/gtest.h>

namespace memplan {
namespace text_test {

TEST(Text, GroupsDigitsInThrees) {
  EXPECT_EQ(group_digits(0), "0");
  EXPECT_EQ(group_digits(999), "999");
  EXPECT_EQ(group_digits(1000), "1,000");
  EXPECT_EQ(group_digits(70426624), "70,426,624");
  EXPECT_EQ(group_digits(6738415616ULL), "6,738,415,616");
}

TEST(Text, SuggestsTheClosestName) {
  EXPECT_EQ(edit_distance("n_head", "n_heads"), 1U);
  EXPECT_EQ(did_you_mean("n_head", {"n_heads", "d_model", "n_layers"}), " (did you mean 'n_heads'?)");
  EXPECT_EQ(did_you_mean("zzzzzz", {"n_heads", "d_model"}), "");
  EXPECT_EQ(closest_names("llama-2-7", {"gpt2", "llama-2-7b", "llama-2-13b"}).front(), "llama-2-7b");
}

// A hostile name megabytes long (an unknown key in a YAML file) is too far from every
// candidate by its length alone; no edit-distance table of its size is built. The answers
// are the ones the full distance gives.
TEST(Text, LongNamesAreRuledOutByLength) {
  const std::string huge(1 << 22, 'n');
  EXPECT_EQ(did_you_mean(huge, {"n_heads", "d_model"}), "");
  EXPECT_EQ(closest_names(huge + "_heads", {"n_heads", "d_model"}),
            std::vector<std::string>{"n_heads"});                                           // contains it
  EXPECT_EQ(closest_names("n_headsss", {"n_heads"}), std::vector<std::string>{"n_heads"});  // 2 apart, 2 allowed
  EXPECT_TRUE(closest_names("n_headssss", {"d_mod"}).empty());  // 5 apart by length alone, 3 allowed
}

// printf's conversions, written out by hand.
TEST(Text, DecimalsAsPrintfWritesThem) {
  EXPECT_EQ(fixed_text(3.14159, 2), "3.14");
  EXPECT_EQ(fixed_text(2.5e6, 1), "2500000.0");
  EXPECT_EQ(scientific_text(123456789.0, 2), "1.23e+08");
  EXPECT_EQ(scientific_text(0.00042, 1), "4.2e-04");
  EXPECT_EQ(general_text(2.0 / 3.0, 4), "0.6667");
  EXPECT_EQ(general_text(1234567.0, 4), "1.235e+06");
  EXPECT_EQ(general_text(12.5, 4), "12.5");
}

TEST(Text, ShortestDecimalReadsBack) {
  EXPECT_EQ(shortest_text(0.85), "0.85");
  EXPECT_EQ(shortest_text(0.9), "0.9");
  EXPECT_EQ(shortest_text(1e20), "1e+20");
  EXPECT_EQ(shortest_text(0.1 + 0.2), "0.30000000000000004");  // 0.3 is another double
}

}  // namespace text_test
}  // namespace memplan
