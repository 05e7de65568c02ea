// Fuzz target: the strict parsers of what people type on the command line and in plans:
// sizes (parse_size), precisions (parse_precision) and budgets (parse_budget). What they
// accept must survive a round trip through its canonical spelling.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "memplan/core/bytes.hpp"
#include "memplan/core/precision.hpp"
#include "memplan/io/plan_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace memplan;
  const auto parses = [](auto&& parse) { return fuzz::computes_or_refuses(parse); };
  const std::string_view text = fuzz::text_of(data, size);

  Bytes bytes;
  if (parses([&] { bytes = parse_size(text); })) {
    const std::string exact = std::to_string(bytes.count());
    if (parse_size(exact) != bytes || parse_size(exact + " B") != bytes) {
      fuzz::finding("a size does not read back as its byte count", std::string(text));
    }
  }

  Precision precision;
  if (parses([&] { precision = parse_precision(text); })) {
    if (!(parse_precision(to_string(precision)) == precision)) {
      fuzz::finding("a precision does not read back from its name " + to_string(precision), std::string(text));
    }
    // The display path: every accepted precision can be described and priced.
    (void)describe(precision);
    parses([&] { (void)matrix_bits(precision, 4096, 11008); });
  }

  PlanBudget budget;
  if (parses([&] { budget = parse_budget(text); })) {
    if (budget.kind == BudgetKind::bytes && budget.bytes.count() == 0) {
      fuzz::finding("a budget of 0 bytes", std::string(text));
    }
  }
  return 0;
}
