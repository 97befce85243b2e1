#pragma once
// Files the user names (not sysfs/procfs, which go through core::Root): reading an input whole
// (a saved probe, a JSON output of another command, an nccl-tests log; "-" is stdin) and writing
// an output. Every failure throws fabscope::Error whose message starts with the path, so the
// command's "exit 3" line names it.
#include <cstddef>
#include <string>

namespace fabscope::core {

// The whole file (or stdin for "-"), at most max_bytes: a directory, an unreadable file, a read
// error or a larger file throws.
std::string read_input(const std::string& path, std::size_t max_bytes);

// Writes text to path through path + ".tmp" and a rename, so a reader never sees half a file;
// a link to a file is replaced by the file. Only a regular file (or a new path) is replaced: a FIFO
// or a character device (/dev/null, /dev/stdout, a pipe) is written in place (a FIFO nobody reads
// is an error, not a wait), a directory, a block device or a socket is refused.
// A name of one of this process's open descriptors (/dev/stdout, /dev/fd/N, /proc/self/fd/N, or a
// link to one) is written through that descriptor, at its offset, whatever it is open on.
void write_output(const std::string& path, const std::string& text);

// The open descriptor of this process that path names through links: /dev/stdout, /dev/fd/N,
// /proc/self/fd/N, /proc/<this pid>/fd/N (procfs's links name an open file, not a path); -1 if none.
int named_descriptor(const std::string& path);

// Whether path names this process's standard output (through /dev/stdout and the like, or as the
// same file): a command writing its output there prints its own lines elsewhere.
bool names_stdout(const std::string& path);

}  // namespace fabscope::core
