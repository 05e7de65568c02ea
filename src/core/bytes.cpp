#include "memplan/core/bytes.hpp"

#include <array>
#include <cctype>
#include <string>

#include "memplan/core/error.hpp"

namespace memplan {

namespace {
// Wide enough for a 64-bit mantissa times 2^50; __extension__ keeps -Wpedantic quiet.
__extension__ using Wide = unsigned __int128;
}  // namespace

void detail::throw_overflow(std::string_view what, std::string_view subject, std::uint64_t a, char op,
                            std::uint64_t b) {
  const std::string quantity = subject.empty() ? std::string(what) : std::string(what) + " " + std::string(subject);
  throw Error(ErrorKind::overflow, "arithmetic overflow computing " + quantity + ": " + std::to_string(a) + ' ' + op +
                                       ' ' + std::to_string(b) + " exceeds 2^64 - 1");
}

namespace {

struct Unit {
  std::string_view name;  // lowercase
  std::uint64_t multiplier;
};

constexpr std::array<Unit, 12> kUnits{{
    {"", 1},
    {"b", 1},
    {"kib", 1ULL << 10},
    {"mib", 1ULL << 20},
    {"gib", 1ULL << 30},
    {"tib", 1ULL << 40},
    {"pib", 1ULL << 50},
    {"kb", 1000ULL},
    {"mb", 1000ULL * 1000},
    {"gb", 1000ULL * 1000 * 1000},
    {"tb", 1000ULL * 1000 * 1000 * 1000},
    {"pb", 1000ULL * 1000 * 1000 * 1000 * 1000},
}};

[[noreturn]] void bad_size(std::string_view text, const std::string& why) {
  throw Error(ErrorKind::invalid_input, "invalid size '" + std::string(text) + "': " + why);
}

}  // namespace

Bytes parse_size(std::string_view text, SizeRounding rounding) {
  std::size_t i = 0;
  auto skip_spaces = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  skip_spaces();
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) {
    bad_size(text, text[i] == '-' ? "a size cannot be negative" : "write the number without a sign");
  }
  // The number as an integer mantissa and a count of decimal places: 1.5 -> 15, 1.
  Wide mantissa = 0;
  unsigned decimals = 0;
  bool digits = false;
  bool point = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c >= '0' && c <= '9') {
      digits = true;
      mantissa = mantissa * 10 + static_cast<unsigned>(c - '0');
      if (point) ++decimals;
      if (mantissa > UINT64_MAX || decimals > 18) {
        bad_size(text, "too many digits");
      }
    } else if (c == '.' && !point) {
      point = true;
    } else {
      break;
    }
  }
  if (!digits) bad_size(text, "expected a number such as 24GiB, 80GB or 81559MiB");
  skip_spaces();
  std::string unit;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) break;
    unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  skip_spaces();
  if (i != text.size()) bad_size(text, "unexpected text after the unit");

  const Unit* found = nullptr;
  for (const Unit& u : kUnits) {
    if (u.name == unit) found = &u;
  }
  if (found == nullptr) {
    std::string number(text.substr(0, text.find_first_not_of("0123456789. ")));
    while (!number.empty() && number.back() == ' ') number.pop_back();
    if (unit.size() == 1 && std::string_view("kmgtp").find(unit[0]) != std::string_view::npos) {
      std::string upper(1, static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0]))));
      bad_size(text, "'" + upper + "' is ambiguous: did you mean '" + number + upper + "iB' (powers of 1024) or '" +
                         number + upper + "B' (powers of 1000)?");
    }
    bad_size(text, "unknown unit '" + unit + "' (accepted: B, KiB, MiB, GiB, TiB, PiB, KB, MB, GB, TB, PB)");
  }

  Wide scale = 1;
  for (unsigned d = 0; d < decimals; ++d) scale *= 10;
  const Wide numerator = mantissa * found->multiplier;
  if (numerator % scale != 0 && rounding == SizeRounding::exact) bad_size(text, "that is not a whole number of bytes");
  const Wide bytes = numerator / scale;
  if (bytes > UINT64_MAX) {
    throw Error(ErrorKind::overflow, "invalid size '" + std::string(text) + "': exceeds 2^64 - 1 bytes");
  }
  return Bytes(static_cast<std::uint64_t>(bytes));
}

}  // namespace memplan
