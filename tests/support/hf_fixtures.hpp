// The Hugging Face config.json fixtures (tests/data/hf/NAME/config.json) as models, and the
// rows of a breakdown by name: what the family tests share.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "memplan/core/breakdown.hpp"
#include "memplan/io/hf_config.hpp"

namespace memplan::testing {

inline ModelSpec hf_fixture(const std::string& name) {
  const std::filesystem::path path = std::filesystem::path(MEMPLAN_TEST_FIXTURES) / "hf" / name / "config.json";
  return load_hf_config(path.string()).entry.spec;
}

// The row called `name`, or nullptr.
inline const Item* find_row(const std::vector<Item>& items, const std::string& name) {
  for (const Item& i : items) {
    if (i.name == name) return &i;
  }
  return nullptr;
}

// The bytes of the row called `name`; a test failure (and 0) when there is none.
inline std::uint64_t row_bytes(const std::vector<Item>& items, const std::string& name) {
  const Item* i = find_row(items, name);
  if (i == nullptr) {
    ADD_FAILURE() << "no row " << name;
    return 0;
  }
  return i->bytes.count();
}

}  // namespace memplan::testing
