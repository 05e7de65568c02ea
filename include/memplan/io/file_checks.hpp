// What memplan accepts as a file to read or to write: regular files only, so that a FIFO
// or a device never blocks a read or is replaced by a write, and an output never
// overwrites one of the command's own inputs (docs/hardening.md, "Files").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace memplan {

// Throws ConfigError naming `path` when it exists and is not a regular file (a FIFO, a
// socket, a character or block device, a directory): `what` says what was expected ("a
// plan file"). A missing file passes: opening it reports that. Never opens the file, so
// a FIFO cannot block.
void require_regular_input(const std::string& path, std::string_view what);

// Throws ConfigError naming `path` when writing it would replace something other than a
// regular file (a device such as /dev/null, a FIFO, a socket) or one of `inputs` (the
// same file by device and inode, whatever the spelling).
void require_output_target(const std::string& path, const std::vector<std::string>& inputs);

}  // namespace memplan
