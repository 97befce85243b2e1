#include "core/hostlist.hpp"

#include "core/error.hpp"

namespace fabscope::core {

std::vector<std::string> expand_hostlist(const std::string& text) {
  std::vector<std::string> out;
  auto bad = [&](const std::string& why) { return UsageError("node list '" + text + "': " + why); };
  std::size_t i = 0;
  while (i < text.size()) {
    // One item: prefix[ranges]suffix up to a comma outside brackets.
    std::size_t end = i;
    int depth = 0;
    while (end < text.size() && (text[end] != ',' || depth)) {
      if (text[end] == '[') ++depth;
      if (text[end] == ']') --depth;
      if (depth < 0 || depth > 1) throw bad("unbalanced brackets");
      ++end;
    }
    if (depth) throw bad("unbalanced brackets");
    std::string item = text.substr(i, end - i);
    i = end + 1;
    if (item.empty()) continue;
    auto open = item.find('[');
    if (open == std::string::npos) {
      out.push_back(item);
    } else {
      auto close = item.find(']', open);
      const std::string prefix = item.substr(0, open), suffix = item.substr(close + 1);
      if (suffix.find('[') != std::string::npos) throw bad("one bracket group per name is supported");
      std::string ranges = item.substr(open + 1, close - open - 1);
      std::size_t j = 0;
      while (j <= ranges.size()) {
        auto comma = ranges.find(',', j);
        if (comma == std::string::npos) comma = ranges.size();
        std::string r = ranges.substr(j, comma - j);
        j = comma + 1;
        auto dash = r.find('-');
        std::string lo = r.substr(0, dash), hi = dash == std::string::npos ? lo : r.substr(dash + 1);
        auto digits = [](const std::string& s) {
          return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string::npos;
        };
        if (!digits(lo) || !digits(hi)) throw bad("range '" + r + "' is not N or N-M");
        long a = std::stol(lo), b = std::stol(hi);
        if (b < a) throw bad("range '" + r + "' runs backwards");
        for (long n = a; n <= b; ++n) {
          std::string num = std::to_string(n);
          if (num.size() < lo.size()) num.insert(0, lo.size() - num.size(), '0');  // keep zero padding
          out.push_back(prefix + num + suffix);
          if (out.size() > 100000) throw bad("more than 100,000 names");
        }
      }
    }
    if (out.size() > 100000) throw bad("more than 100,000 names");
  }
  return out;
}

}  // namespace fabscope::core
