#pragma once
// Small helpers shared by the collectors: a rooted read that records why a value is unknown,
// following the note policy of probe/note.hpp.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/root.hpp"
#include "probe/note.hpp"

namespace fabscope::probe {

class NotedReader {
 public:
  NotedReader(const core::Root& root, std::vector<std::string>& notes) : root_(root), notes_(notes) {}
  NotedReader(const core::Root& root, std::vector<Note>& notes) : root_(root), notes_(notes) {}

  const core::Root& root() const { return root_; }
  NoteSink& notes() { return notes_; }

  // First line of rel; nullopt (with a note when present-but-unreadable, or required-but-missing).
  std::optional<std::string> text(const std::string& rel, bool required = false);
  // Integer (decimal or 0x hex); a present file that is not a number gets a note quoting it.
  std::optional<std::int64_t> integer(const std::string& rel, bool required = false);

 private:
  void unknown(const std::string& rel, bool required);
  const core::Root& root_;
  NoteSink notes_;
};

// Why an existing path is not read at all: "a FIFO, not a regular file; not read" (a FIFO or a
// device planted in a tree is never opened), "a link that leads out of the root; not read"; ""
// for a regular file inside the root.
std::string refused_reason(const core::Root& root, const std::string& rel);

// Why an existing file could not be read: refused_reason when there is one, else "not readable
// as this user" (EACCES, e.g. a root-only file for a non-root probe) or "unreadable".
std::string unreadable_reason(const core::Root& root, const std::string& rel);

// "0000:17:00.0": domain:bus:device.function, lowercase hex.
bool is_pci_address(std::string_view s);
// Last path component that is a PCI address ("../../devices/pci0000:00/0000:00:03.0/virtio2" ->
// "0000:00:03.0"); "" when none.
std::string last_pci_component(std::string_view path);
// Well-formed UTF-8 (sysfs text is ASCII; anything else that is not UTF-8 is garbage, and would
// make the JSON output fail).
bool is_valid_utf8(std::string_view s);

// The one quoting of values in notes: single quotes, cut to 40 characters ("..." after), "\n" for
// a newline and core::printable for the rest (a control byte or broken UTF-8 becomes '?'), so a
// note is one printable line.
std::string quote(std::string_view v);

}  // namespace fabscope::probe
