#include "probe/bonding.hpp"

#include "probe/read_util.hpp"

namespace fabscope::probe {

namespace {

// "Speed: 25000 Mbps"; "Unknown" when the slave is down or the driver does not report it.
std::optional<std::int64_t> parse_speed(std::string_view v) {
  if (!v.ends_with(" Mbps")) return std::nullopt;
  auto n = core::parse_int(v.substr(0, v.size() - 5));
  if (!n || *n <= 0 || *n > 10'000'000) return std::nullopt;
  return n;
}

}  // namespace

std::optional<Bond> parse_bonding(std::string_view name, std::string_view text) {
  Bond b;
  b.name = name;
  bool seen_mode = false;
  BondSlave* slave = nullptr;
  for (const auto& raw : core::split(text, '\n')) {
    // Indented lines belong to 802.3ad detail blocks ("details actor lacp pdu:").
    if (raw.empty() || raw[0] == ' ' || raw[0] == '\t') continue;
    auto colon = raw.find(": ");
    if (colon == std::string::npos) continue;
    std::string key = raw.substr(0, colon);
    std::string value{core::trim(std::string_view(raw).substr(colon + 2))};
    if (value.size() > 256 || !is_valid_utf8(value)) continue;
    if (key == "Slave Interface") {
      if (b.slaves.size() >= 256) break;
      b.slaves.push_back(BondSlave{});
      slave = &b.slaves.back();
      slave->name = value;
      continue;
    }
    if (!slave) {
      if (key == "Bonding Mode") {
        b.mode = value;
        seen_mode = true;
      } else if (key == "MII Status") {
        b.mii_status = value;
      } else if (key == "Currently Active Slave") {
        b.active_slave = value == "None" ? "" : value;
      } else if (key == "MII Polling Interval (ms)") {
        if (auto v = core::parse_int(value); v && *v >= 0 && *v < 1'000'000) b.mii_polling_ms = static_cast<int>(*v);
      }
      continue;
    }
    if (key == "MII Status") slave->mii_status = value;
    else if (key == "Speed") slave->speed_mbps = parse_speed(value);
    else if (key == "Duplex") slave->duplex = value;
    else if (key == "Link Failure Count") slave->link_failure_count = core::parse_u64(value);
    else if (key == "Permanent HW addr") slave->permanent_hw_addr = value;
  }
  if (!seen_mode) return std::nullopt;
  return b;
}

std::vector<Bond> collect_bonds(const core::Root& root, std::vector<std::string>& notes) {
  std::vector<Bond> out;
  const std::string dir = "proc/net/bonding";
  for (const auto& name : root.list(dir)) {
    if (!is_valid_utf8(name)) continue;
    const std::string rel = dir + "/" + name;
    auto text = root.read(rel, 64 * 1024);
    if (!text) {
      if (root.exists(rel)) notes.push_back(rel + ": " + unreadable_reason(root, rel) + ", bond not judged");
      continue;
    }
    if (auto b = parse_bonding(name, *text)) out.push_back(std::move(*b));
    else notes.push_back(rel + ": no 'Bonding Mode:' line, not a bonding status file");
  }
  return out;
}

}  // namespace fabscope::probe
