// JUnit XML for memplan check: one testcase per plan, so CI systems show each plan as a test.
#pragma once

#include <string>

#include "memplan/report/check.hpp"
#include "memplan/report/print.hpp"

namespace memplan {

// Returns a JUnit XML document: one <testsuite name="memplan check"> holding one
// <testcase> per plan; a plan over its limit carries a <failure>, a plan that could not
// be read or estimated an <error>. Text is XML-escaped; control characters are dropped.
std::string junit_xml(const CheckReport& report, Units units = Units::iec);

}  // namespace memplan
