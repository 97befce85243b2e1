#pragma once
// PCI functions from sys/bus/pci/devices: identity, NUMA node, link speed and width, the bridge
// chain up to the root complex (from the device's sysfs path) and ACS on bridges.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/node_info.hpp"
#include "core/root.hpp"

namespace fabscope::probe {

std::vector<PciDevice> collect_pci(const core::Root& root, std::vector<std::string>& notes);

// "32.0 GT/s PCIe" -> 32.0, "8 GT/s" -> 8.0; nullopt for "Unknown" or garbage.
std::optional<double> parse_link_speed_gts(std::string_view text);

// The path of a PCI function below sys/devices ("../../../devices/pci0000:00/0000:00:01.0/
// 0000:01:00.0"): root complex "pci0000:00" and the bridges above the function, top first.
struct PciPath {
  std::string root_complex;
  std::vector<std::string> upstream;
};
PciPath parse_pci_path(std::string_view sysfs_path, std::string_view self);

// ACS Control register from a config-space dump: walks the PCIe extended capability list
// (from offset 0x100) for ID 0x000D, the control register at capability + 6.
struct AcsLookup {
  enum class Status { Unreadable, Absent, Present, Malformed };
  Status status = Status::Unreadable;  // Unreadable: 256 bytes or less (not root, or plain PCI)
  std::uint16_t ctrl = 0;              // valid when Present
};
AcsLookup find_acs_ctrl(const std::vector<std::uint8_t>& config);

// ACS Control bits that send peer-to-peer traffic up to the root complex (PCIe base spec
// 7.7.8.3): P2P Request Redirect, P2P Completion Redirect, Upstream Forwarding, P2P Egress
// Control. Source Validation and Translation Blocking alone do not reroute P2P.
constexpr std::uint16_t kAcsP2pRedirectMask = 0x0004 | 0x0008 | 0x0010 | 0x0020;
// Bytes of config space a process without CAP_SYS_ADMIN reads (drivers/pci/pci-sysfs.c).
constexpr std::size_t kUnprivilegedConfigBytes = 64;

}  // namespace fabscope::probe
