// Reading a saved JSON document with fabscope's reader (parse_input_json: nlohmann's parser plus
// the refusal of duplicate keys) against nlohmann's parser alone (the anchor: the same tree built,
// no check), on the same bytes in the same process. With --callback it also times the check as
// it was first written, through nlohmann's callback parser (quadratic in an array of objects:
// give it only small documents). bench/report-json.sh runs it; numbers in bench/RESULTS.md.
// Usage: fabscope_json_bench [--runs N] [--callback] FILE...
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "core/files.hpp"
#include "core/json.hpp"

using fabscope::json;

namespace {

json parse_with_callback(const std::string& text) {
  std::vector<std::set<std::string>> open_objects;
  json::parser_callback_t cb = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) open_objects.emplace_back();
    else if (event == json::parse_event_t::object_end && !open_objects.empty()) open_objects.pop_back();
    else if (event == json::parse_event_t::key && !open_objects.empty() &&
             !open_objects.back().insert(parsed.get<std::string>()).second)
      throw std::runtime_error("duplicate key");
    return true;
  };
  return json::parse(text.begin(), text.end(), cb);
}

double best_seconds(int runs, const std::function<std::size_t()>& f, std::size_t& size) {
  double best = 1e300;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    size = f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 3;
  bool callback = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--callback")) callback = true;
    else files.emplace_back(argv[i]);
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: %s [--runs N] [--callback] FILE...\n", argv[0]);
    return 3;
  }
  std::printf("%-28s %10s %12s %12s %8s %12s\n", "file", "MB", "nlohmann s", "fabscope s", "ratio", "callback s");
  for (const auto& path : files) {
    const std::string text = fabscope::core::read_input(path, std::size_t(4) << 30);
    std::size_t n1 = 0, n2 = 0, n3 = 0;
    const double plain = best_seconds(runs, [&] { return json::parse(text).size(); }, n1);
    const double ours = best_seconds(runs, [&] { return fabscope::parse_input_json(text).size(); }, n2);
    std::string cb = "-";
    if (callback) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3f", best_seconds(1, [&] { return parse_with_callback(text).size(); }, n3));
      cb = buf;
    }
    std::string name = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
    std::printf("%-28s %10.1f %12.3f %12.3f %8.2f %12s\n", name.c_str(), text.size() / 1e6, plain, ours, ours / plain,
                cb.c_str());
    if (n1 != n2) return 1;
  }
  return 0;
}
