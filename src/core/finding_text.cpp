#include "core/finding_text.hpp"

#include <algorithm>
#include <sstream>

#include "core/strings.hpp"

namespace fabscope::core {

namespace {

constexpr std::size_t kIndent = 5;

// Words of text on lines of at most width columns, the first starting with first, the others
// with indent; a word longer than a line is split there and only there.
std::string wrap_words(const std::string& text, std::size_t width, const std::string& first, const std::string& indent) {
  std::string out, cur = first;
  bool empty = true;
  std::istringstream words(text);
  std::string word;
  const std::size_t room = width > indent.size() + 8 ? width - indent.size() : 8;
  while (words >> word) {
    word = printable(word);
    while (word.size() > room) {  // longer than any line: split it
      if (!empty) out += cur + "\n", cur = indent, empty = true;
      out += cur + word.substr(0, room) + "\n";
      word.erase(0, room);
      cur = indent;
    }
    if (word.empty()) continue;
    if (!empty && cur.size() + 1 + word.size() > width) out += cur + "\n", cur = indent, empty = true;
    if (!empty) cur += ' ';
    cur += word;
    empty = false;
  }
  if (!empty) out += cur + "\n";
  return out;
}

}  // namespace

std::string render_finding_blocks(const std::vector<Finding>& findings, std::size_t width, bool with_remedy) {
  width = std::max<std::size_t>(width, 60);
  const std::string indent(kIndent, ' ');
  std::string out;
  bool first = true;
  for (const auto& f : findings) {
    if (!first) out += "\n";
    first = false;
    std::string sev = upper(to_string(f.severity));
    sev.resize(std::max<std::size_t>(sev.size(), kIndent - 1), ' ');
    const std::string head = sev + " " + printable(f.id);
    const std::string subject = printable(f.subject);
    if (subject.empty())
      out += head + "\n";
    else if (head.size() + 2 + subject.size() <= width)
      out += head + "  " + subject + "\n";
    else
      out += head + "\n" + wrap_words(subject, width, indent, indent);
    out += wrap_words(f.message, width, indent, indent);
    if (!f.evidence.empty()) out += wrap_words("evidence: " + f.evidence, width, indent, indent);
    if (with_remedy && !f.remedy.empty()) out += wrap_words("remedy: " + f.remedy, width, indent, indent);
    if (with_remedy && !f.docs.empty()) out += wrap_words("docs: " + f.docs, width, indent, indent);
  }
  return out;
}

}  // namespace fabscope::core
