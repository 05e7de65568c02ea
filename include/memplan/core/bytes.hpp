// Exact byte counts and the checked arithmetic every estimator uses.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace memplan {

namespace detail {
[[noreturn]] void throw_overflow(std::string_view what, std::string_view subject, std::uint64_t a, char op,
                                 std::uint64_t b);
}  // namespace detail

// Returns a + b. Throws Error(overflow) naming "`what` `subject`" ("elements of" "q") when
// the sum exceeds 2^64 - 1. Inline, and the text is built only on overflow, so estimating
// in a loop costs the addition and a branch.
inline std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, std::string_view what,
                                 std::string_view subject = {}) {
  std::uint64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) [[unlikely]]
    detail::throw_overflow(what, subject, a, '+', b);
  return sum;
}
// Returns a * b. Throws Error(overflow) as checked_add does.
inline std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, std::string_view what,
                                 std::string_view subject = {}) {
  std::uint64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) [[unlikely]]
    detail::throw_overflow(what, subject, a, '*', b);
  return product;
}
// Returns ceil(a / b) for b > 0.
constexpr std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0); }

// An exact, non-negative count of bytes. Arithmetic is checked: an overflow throws
// Error(overflow) rather than wrapping.
class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(std::uint64_t count) : count_(count) {}

  constexpr std::uint64_t count() const { return count_; }

  // Checked sum and product; "`what` `subject`" names the quantity in the overflow message.
  Bytes plus(Bytes other, std::string_view what, std::string_view subject = {}) const {
    return Bytes(checked_add(count_, other.count_, what, subject));
  }
  Bytes times(std::uint64_t factor, std::string_view what, std::string_view subject = {}) const {
    return Bytes(checked_mul(count_, factor, what, subject));
  }

  Bytes operator+(Bytes other) const { return plus(other, "a byte total"); }
  Bytes& operator+=(Bytes other) { return *this = plus(other, "a byte total"); }

  constexpr auto operator<=>(const Bytes&) const = default;

 private:
  std::uint64_t count_ = 0;
};

inline constexpr std::uint64_t KiB = 1024ULL;
inline constexpr std::uint64_t MiB = 1024ULL * KiB;
inline constexpr std::uint64_t GiB = 1024ULL * MiB;
inline constexpr std::uint64_t TiB = 1024ULL * GiB;

// Parses a size a person types: "24GiB", "80 GB", "81559MiB", "1.5TiB", "4096", "512B".
// KiB/MiB/GiB/TiB/PiB are powers of 1024, KB/MB/GB/TB/PB powers of 1000 (units are
// case-insensitive). A bare K/M/G/T/P is ambiguous and rejected with both readings as a
// suggestion; so are negative and overflowing sizes, and fractional-byte ones unless
// `rounding` is down (a capacity as a tool prints it, "23.53GiB": the whole bytes below it).
// Returns the byte count; throws Error(invalid_input) or Error(overflow).
enum class SizeRounding { exact, down };
Bytes parse_size(std::string_view text, SizeRounding rounding = SizeRounding::exact);

}  // namespace memplan
