#pragma once
// Bonds from /proc/net/bonding/<bond>: mode, MII status, active slave and each slave's state.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/node_info.hpp"
#include "core/root.hpp"

namespace fabscope::probe {

// One /proc/net/bonding file as drivers/net/bonding/bond_procfs.c writes it. Unknown lines (the
// 802.3ad details, indented LACP fields) are skipped; nullopt when no "Bonding Mode:" line is found.
std::optional<Bond> parse_bonding(std::string_view name, std::string_view text);

std::vector<Bond> collect_bonds(const core::Root& root, std::vector<std::string>& notes);

}  // namespace fabscope::probe
