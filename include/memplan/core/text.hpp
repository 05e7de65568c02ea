// Small text helpers for error messages: closest-name suggestions and digit grouping.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memplan {

// Returns the Levenshtein edit distance between a and b, ignoring ASCII case.
std::size_t edit_distance(std::string_view a, std::string_view b);

// Returns up to `limit` candidates nearest to `wanted` (ties of the smallest distance;
// names containing `wanted` count as nearest). A candidate
// qualifies when its edit distance is at most a third of the longer name (at least 2),
// or when one contains the other.
std::vector<std::string> closest_names(std::string_view wanted, const std::vector<std::string>& candidates,
                                       std::size_t limit = 3);

// Returns " (did you mean 'x'?)" or " (did you mean 'x', 'y' or 'z'?)", or "" when none is close.
std::string did_you_mean(std::string_view wanted, const std::vector<std::string>& candidates);

// Returns "'a', 'b' or 'c'" (or with "and"): a list for messages.
std::string quoted_list(const std::vector<std::string>& names, std::string_view conjunction = "or");

// Returns `text` with bytes outside printable ASCII written as \xNN, for quoting input.
std::string printable(std::string_view text);

// Returns n with comma thousands separators: 6738415616 -> "6,738,415,616".
std::string group_digits(std::uint64_t n);

// Returns `text` with ASCII letters lowered, for case-insensitive names.
std::string lowered(std::string_view text);

// Returns a tensor's shape as "[4096, 11008]".
std::string shape_text(const std::vector<std::uint64_t>& shape);

// A release number as "2.1", "0.43.2": two or three dot-separated whole numbers.
struct ReleaseNumbers {
  std::array<std::uint32_t, 3> parts{};  // major, minor, patch (0 when not given)
  std::size_t count = 0;                 // numbers given: 2 or 3
};
// Returns the numbers of `text`, or nullopt when it is not two or three dot-separated numbers
// of at most six digits.
std::optional<ReleaseNumbers> release_numbers(std::string_view text);

// `value` as printf's %.*f, %.*e and %.*g write it in the C locale ("0.85", "1.2e+14",
// "3.142"), whatever the global locale. Not std::to_chars: the libc++ of the WebAssembly
// build (web/) has no floating-point to_chars.
std::string fixed_text(double value, int digits);
std::string scientific_text(double value, int digits);
std::string general_text(double value, int digits);

// The shortest general_text that reads back as `value`: 0.9, 0.85.
std::string shortest_text(double value);

}  // namespace memplan
