// Output files (import -o, check --junit, sweep --svg, ...) are written atomically: a
// reader, or the next CI step, sees the old file or the whole new one, never a part.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace memplan {

// Writes `text` to `path` so that readers see either the old file or the whole new one:
// a temporary file in the same directory (".NAME.tmp-PID-N"), flushed to disk, then renamed
// over `path`; a file it replaces keeps its permission bits. On any failure the temporary
// is removed and `path` is left as it was. Throws ConfigError naming `path` (missing
// directory, permission denied, a directory in the way, disk full), and before writing
// anything when `path` is a device, a FIFO or a socket, or one of `inputs`
// (require_output_target).
void write_file_atomically(const std::string& path, std::string_view text, const std::vector<std::string>& inputs = {});

}  // namespace memplan
