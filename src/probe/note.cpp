#include "probe/note.hpp"

namespace fabscope::probe {

const char* to_string(NoteKind kind) {
  switch (kind) {
    case NoteKind::Missing: return "missing";
    case NoteKind::Unreadable: return "unreadable";
    case NoteKind::Empty: return "empty";
    case NoteKind::NotText: return "not_text";
    case NoteKind::BadValue: return "bad_value";
    case NoteKind::Removed: return "removed";
  }
  return "bad_value";
}

}  // namespace fabscope::probe
