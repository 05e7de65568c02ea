#include <gtest/gtest.h>

#include "memplan/report/print.hpp"

namespace memplan {
namespace units_test {

TEST(FormatBytes, BinaryByDefaultSiOnRequest) {
  // Llama-2-7B in bf16: 13,476,831,232 bytes = 12.551 GiB = 13.477 GB.
  EXPECT_EQ(format_bytes(Bytes(13476831232ULL), Units::iec), "12.55 GiB");
  EXPECT_EQ(format_bytes(Bytes(13476831232ULL), Units::si), "13.48 GB");
  EXPECT_EQ(format_bytes(Bytes(512), Units::iec), "512 B");
  EXPECT_EQ(format_bytes(Bytes(1024), Units::iec), "1.00 KiB");
  EXPECT_EQ(format_bytes(Bytes(1000), Units::si), "1.00 KB");
  EXPECT_EQ(format_bytes(Bytes(1048575), Units::iec), "1.00 MiB");  // not "1024.00 KiB"
  EXPECT_EQ(format_bytes(Bytes(81559ULL << 20), Units::iec), "79.65 GiB");
}

}  // namespace units_test
}  // namespace memplan
