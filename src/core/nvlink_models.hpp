#pragma once
// The NVLinks an SXM board of a GPU model has, for the probe's view and the nvlink checks.
#include <cctype>
#include <optional>
#include <string>

namespace fabscope {

// From NVIDIA's data sheets (NVLink bandwidth over the per-link rate): H100/H200/H20/B100/B200
// 18, A100 12, H800/A800 8. nullopt for a model not listed and for PCIe and NVL cards, whose
// NVLink bridges join two or four cards with varying widths. "H20" does not match "H200".
inline std::optional<int> usual_nvlink_count(const std::string& gpu_name) {
  if (gpu_name.find("PCIe") != std::string::npos || gpu_name.find("NVL") != std::string::npos) return std::nullopt;
  struct Model {
    const char* name;
    int links;
  };
  static const Model kModels[] = {{"H100", 18}, {"H200", 18}, {"H20", 18}, {"H800", 8}, {"B200", 18},
                                  {"B100", 18}, {"GB200", 18}, {"A100", 12}, {"A800", 8}};
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  for (const auto& m : kModels) {
    const std::string n = m.name;
    auto pos = gpu_name.find(n);
    if (pos == std::string::npos) continue;
    if ((pos == 0 || !word(gpu_name[pos - 1])) &&
        (pos + n.size() == gpu_name.size() || !word(gpu_name[pos + n.size()])))
      return m.links;
  }
  return std::nullopt;
}

}  // namespace fabscope
