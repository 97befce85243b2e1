#include "probe/pci.hpp"

#include <algorithm>

#include "probe/read_util.hpp"

namespace fabscope::probe {

std::optional<double> parse_link_speed_gts(std::string_view text) {
  auto pos = text.find(" GT/s");
  if (pos == std::string_view::npos) pos = text.find("GT/s");
  if (pos == std::string_view::npos) return std::nullopt;
  auto v = core::parse_double(text.substr(0, pos));
  if (!v || *v <= 0 || *v > 1000) return std::nullopt;
  return v;
}

PciPath parse_pci_path(std::string_view sysfs_path, std::string_view self) {
  PciPath out;
  for (const auto& part : core::split(sysfs_path, '/')) {
    if (core::starts_with(part, "pci") && part.size() > 3 && part.find(':') != std::string::npos) {
      out.root_complex = part;
      out.upstream.clear();
    } else if (is_pci_address(part) && !out.root_complex.empty()) {
      if (part == self) break;
      out.upstream.push_back(part);
    }
  }
  return out;
}

AcsLookup find_acs_ctrl(const std::vector<std::uint8_t>& config) {
  using S = AcsLookup::Status;
  if (config.size() <= 256) return {S::Unreadable, 0};
  auto u32 = [&](std::size_t off) {
    return static_cast<std::uint32_t>(config[off]) | static_cast<std::uint32_t>(config[off + 1]) << 8 |
           static_cast<std::uint32_t>(config[off + 2]) << 16 | static_cast<std::uint32_t>(config[off + 3]) << 24;
  };
  std::size_t off = 0x100;
  // Each header is 4-byte aligned and >= 0x100; at most (4096 - 256) / 4 entries, so a loop in
  // a corrupt list ends.
  for (int guard = 0; guard < 960; ++guard) {
    if (off < 0x100 || off + 8 > config.size()) return {S::Malformed, 0};
    std::uint32_t header = u32(off);
    // An empty list reads as 0 (or all ones when the function is gone).
    if (header == 0) return {S::Absent, 0};
    if (header == 0xffffffff) return {S::Malformed, 0};
    if ((header & 0xffff) == 0x000d) {
      return {S::Present, static_cast<std::uint16_t>(config[off + 6] | config[off + 7] << 8)};
    }
    std::size_t next = (header >> 20) & 0xffc;
    if (next == 0) return {S::Absent, 0};
    off = next;
  }
  return {S::Malformed, 0};
}

namespace {
bool is_hex_field(const std::string& s, std::size_t digits) {
  if (s.size() != digits + 2 || s[0] != '0' || s[1] != 'x') return false;
  return s.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string::npos;
}
}  // namespace

std::vector<PciDevice> collect_pci(const core::Root& root, std::vector<std::string>& notes) {
  std::vector<PciDevice> out;
  NotedReader r(root, notes);
  const std::string bus_dir = "sys/bus/pci/devices";
  auto names = root.list(bus_dir);
  out.reserve(names.size());
  for (const auto& name : names) {
    if (!is_pci_address(name)) continue;
    std::string dir = bus_dir + "/" + name;
    std::optional<std::string> where = root.link_target(dir);
    if (!where) where = root.resolve(dir);
    if (!where || !root.is_dir(dir)) {
      notes.push_back(dir + ": listed but not readable (device removed?), skipped");
      continue;
    }
    PciDevice d;
    d.address = name;
    auto path = parse_pci_path(*where, name);
    d.root_complex = std::move(path.root_complex);
    d.upstream = std::move(path.upstream);
    // The kernel writes class as 0x%06x and vendor/device as 0x%04x: any other shape is a
    // truncated or corrupt read, and a short number would be a wrong one.
    if (auto c = r.text(dir + "/class", true)) {
      if (is_hex_field(*c, 6)) d.class_code = static_cast<std::uint32_t>(*core::parse_u64(*c));
      else notes.push_back(dir + "/class: not a class code: " + quote(*c));
    }
    for (auto [file, field] : {std::pair{"/vendor", &d.vendor}, std::pair{"/device", &d.device}}) {
      if (auto v = r.text(dir + file, true)) {
        if (is_hex_field(*v, 4)) *field = std::move(*v);
        else notes.push_back(dir + file + ": not a PCI id: " + quote(*v));
      }
    }
    if (auto drv = root.link_target(dir + "/driver")) {
      auto slash = drv->find_last_of('/');
      d.driver = slash == std::string::npos ? *drv : drv->substr(slash + 1);
      if (!is_valid_utf8(d.driver)) d.driver.clear();
    }
    // numa_node is -1 when the platform gives no affinity (single-node machines, most VMs).
    if (auto n = r.integer(dir + "/numa_node"); n && *n >= 0 && *n < 4096) d.numa_node = static_cast<int>(*n);
    for (auto [file, field] : {std::pair{"/current_link_speed", &d.current_link_speed_gts},
                               std::pair{"/max_link_speed", &d.max_link_speed_gts}}) {
      auto text = root.read_line(dir + file);
      if (text) *field = parse_link_speed_gts(*text);
      // "Unknown" is the kernel's word for a link it cannot train or describe: unknown, no note.
      if (text && !*field && *text != "Unknown") notes.push_back(dir + file + ": not a link speed: " + quote(*text));
    }
    for (auto [file, field] : {std::pair{"/current_link_width", &d.current_link_width},
                               std::pair{"/max_link_width", &d.max_link_width}}) {
      if (auto w = r.integer(dir + file); w && *w >= 0 && *w <= 32) *field = static_cast<int>(*w);
    }
    // SR-IOV: a physical function has sriov_totalvfs (and sriov_numvfs, the VFs enabled now);
    // a virtual function has a physfn link to its PF (drivers/pci/iov.c).
    if (auto v = r.integer(dir + "/sriov_totalvfs"); v && *v >= 0 && *v <= 65535) d.sriov_totalvfs = static_cast<int>(*v);
    if (auto v = r.integer(dir + "/sriov_numvfs"); v && *v >= 0 && *v <= 65535) d.sriov_numvfs = static_cast<int>(*v);
    if (auto pf = root.link_target(dir + "/physfn")) d.physfn = last_pci_component(*pf);
    d.is_bridge = d.class_code && (*d.class_code >> 8) == 0x0604;
    if (d.is_bridge) {
      // Without CAP_SYS_ADMIN the kernel returns only the first 64 bytes of config space.
      if (auto config = root.read_bytes(dir + "/config", 4096)) {
        auto acs = find_acs_ctrl(*config);
        using S = AcsLookup::Status;
        if (acs.status == S::Present) {
          d.acs_ctrl = acs.ctrl;
          d.acs_enabled = (acs.ctrl & kAcsP2pRedirectMask) != 0;
        } else if (acs.status == S::Absent) {
          d.acs_enabled = false;  // no ACS capability: nothing can redirect P2P
        } else if (acs.status == S::Malformed) {
          notes.push_back(dir + "/config: extended capability list is malformed, ACS unknown");
        } else if (config->size() == kUnprivilegedConfigBytes) {
          // 64 bytes is what the kernel's pci_read_config() gives a reader without
          // CAP_SYS_ADMIN; a bridge's own config space is at least 256 bytes.
          notes.push_back(dir + "/config: ACS control not readable as this user (the kernel shows 64 bytes of "
                                "config space without CAP_SYS_ADMIN); run as root to judge ACS");
        }
      }
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace fabscope::probe
