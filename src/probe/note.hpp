#pragma once
// A probe note: why a value read under the root is unknown. Notes are typed (the file, what went
// wrong, the detail) so a reader can count or label them by kind; probe output and logs show
// them as text, "file: detail".
//
// Policy, the same for every collector and for the exporter's re-reads:
//  - an optional attribute that is missing is silently unknown (drivers differ in what they
//    expose); a missing attribute every driver has is a note of kind missing;
//  - a file that exists but cannot be read is unreadable; one that reads as nothing is empty;
//  - bytes that are not UTF-8 text are not_text; text that is not a value of the attribute's
//    form is bad_value; one note per file, quoting the value with probe::quote();
//  - a device or port that disappears while being read is removed.
#include <string>
#include <utility>
#include <vector>

namespace fabscope::probe {

enum class NoteKind { Missing, Unreadable, Empty, NotText, BadValue, Removed };

// "missing", "unreadable", "empty", "not_text", "bad_value", "removed" (metric label values).
const char* to_string(NoteKind kind);

struct Note {
  std::string file;    // relative to the root: "sys/class/infiniband/mlx5_0/ports/1/rate"
  NoteKind kind = NoteKind::BadValue;
  std::string detail;  // "not a rate: '400 Gbps'"

  std::string text() const { return file + ": " + detail; }
};

// Where notes go: typed, or as text (NodeInfo::probe_notes). Order is kept either way.
class NoteSink {
 public:
  explicit NoteSink(std::vector<Note>& typed) : typed_(&typed) {}
  explicit NoteSink(std::vector<std::string>& texts) : texts_(&texts) {}

  void add(Note n) {
    if (typed_) typed_->push_back(std::move(n));
    else texts_->push_back(n.text());
  }
  void add(std::string file, NoteKind kind, std::string detail) {
    add(Note{std::move(file), kind, std::move(detail)});
  }

 private:
  std::vector<Note>* typed_ = nullptr;
  std::vector<std::string>* texts_ = nullptr;
};

}  // namespace fabscope::probe
