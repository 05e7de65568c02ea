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

}  // namespace text_test
}  // namespace memplan
