#pragma once
// Reading a file named from outside (a peer list, a token file) that a long-running process
// rereads: opened without waiting and read only when it is a regular file, so a FIFO nobody
// writes, a device or a socket put in its place never blocks the reading thread (open() of a
// FIFO waits for a writer) and never acts on a device.
#include <cstddef>
#include <string>

namespace fabscope::core {

// The whole file, at most max_bytes. Throws fabscope::Error naming the path: "cannot open: ...",
// "not a regular file (a FIFO)" (or a directory, a device, a socket), "larger than N bytes".
std::string read_regular_file(const std::string& path, std::size_t max_bytes);

// What a file of this st_mode is, in words ("a FIFO", "a directory", ...).
const char* file_kind(unsigned int st_mode);

}  // namespace fabscope::core
