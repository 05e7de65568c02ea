#include "memplan/core/bytes.hpp"

#include <gtest/gtest.h>

#include <cstdint>

#include "memplan/core/error.hpp"

namespace memplan {
namespace bytes_test {

ErrorKind kind_of(auto&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "expected memplan::Error";
  return ErrorKind::internal;
}

std::string message_of(auto&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected memplan::Error";
  return "";
}

TEST(CheckedArithmetic, ExactBelowTheLimit) {
  EXPECT_EQ(checked_mul(4294967296ULL, 4294967295ULL, "x"), 18446744069414584320ULL);  // 2^32 (2^32 - 1)
  EXPECT_EQ(checked_add(UINT64_MAX - 1, 1, "x"), UINT64_MAX);
}

TEST(CheckedArithmetic, OverflowIsAnErrorNamingTheQuantity) {
  EXPECT_EQ(kind_of([] { checked_mul(4294967296ULL, 4294967296ULL, "kv cache"); }), ErrorKind::overflow);
  EXPECT_EQ(kind_of([] { checked_add(UINT64_MAX, 1, "total"); }), ErrorKind::overflow);
  EXPECT_NE(message_of([] { checked_mul(1ULL << 40, 1ULL << 30, "weights of mlp"); }).find("weights of mlp"),
            std::string::npos);
  EXPECT_EQ(kind_of([] { Bytes(UINT64_MAX).plus(Bytes(1), "sum"); }), ErrorKind::overflow);
  EXPECT_EQ(kind_of([] { Bytes(1ULL << 63).times(2, "double"); }), ErrorKind::overflow);
}

TEST(ParseSize, BinaryAndDecimalUnits) {
  EXPECT_EQ(parse_size("24GiB").count(), 24ULL * 1073741824ULL);  // 25,769,803,776
  EXPECT_EQ(parse_size("80GB").count(), 80000000000ULL);
  EXPECT_EQ(parse_size("81559MiB").count(), 85520809984ULL);  // 81559 * 1048576
  EXPECT_EQ(parse_size("1.5TiB").count(), 1649267441664ULL);  // 1.5 * 2^40
  EXPECT_EQ(parse_size("1.5TB").count(), 1500000000000ULL);
  EXPECT_EQ(parse_size("80 gb").count(), 80000000000ULL);
  EXPECT_EQ(parse_size("4096").count(), 4096ULL);
  EXPECT_EQ(parse_size("512B").count(), 512ULL);
  EXPECT_EQ(parse_size("0.5KiB").count(), 512ULL);
}

TEST(ParseSize, AmbiguousUnitSuggestsBothReadings) {
  const std::string message = message_of([] { parse_size("1.5T"); });
  EXPECT_NE(message.find("1.5TiB"), std::string::npos) << message;
  EXPECT_NE(message.find("1.5TB"), std::string::npos) << message;
  EXPECT_NE(message_of([] { parse_size("80G"); }).find("80GiB"), std::string::npos);
}

TEST(ParseSize, RejectsWhatIsNotASize) {
  for (const char* text : {"", "GiB", "-5GB", "+5GB", "0.3B", "12 parsecs", "1.2.3GB", "5GB extra"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(kind_of([&] { parse_size(text); }), ErrorKind::invalid_input);
  }
  EXPECT_EQ(kind_of([] { parse_size("20000PiB"); }), ErrorKind::overflow);  // 2.25e19 > 2^64
}

// A capacity as PyTorch and vLLM print it: 23.53 x 1,073,741,824 = 25,265,145,118.72 B, the
// whole bytes below it when asked to round; exact parsing still refuses the fraction.
TEST(ParseSize, RoundsACapacityDownWhenAsked) {
  EXPECT_EQ(parse_size("23.53GiB", SizeRounding::down).count(), 25265145118ULL);
  EXPECT_EQ(parse_size("24GiB", SizeRounding::down).count(), 24ULL << 30);
  EXPECT_EQ(kind_of([] { parse_size("23.53GiB"); }), ErrorKind::invalid_input);
}

}  // namespace bytes_test
}  // namespace memplan
