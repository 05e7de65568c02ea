// Text written into XML (JUnit reports, SVG charts): escaped, with the control characters
// XML 1.0 forbids dropped and any invalid UTF-8 (a file name in another encoding) replaced
// by U+FFFD, so that every reader parses what memplan writes. Private to the report layer.
#pragma once

#include <string>
#include <string_view>

namespace memplan::detail {

std::string xml_text(std::string_view text);

}  // namespace memplan::detail
