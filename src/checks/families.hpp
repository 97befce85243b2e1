#pragma once
// One function per check family (checks/<family>.cpp), for checks.cpp and the unit tests.
// The public entry points are in checks.hpp.
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "core/node_info.hpp"
#include "core/strings.hpp"

namespace fabscope::checks {

std::vector<Finding> check_link(const NodeInfo& node);
std::vector<Finding> check_roce(const NodeInfo& node);
std::vector<Finding> check_gdr(const NodeInfo& node);
std::vector<Finding> check_pcie(const NodeInfo& node);
std::vector<Finding> check_os(const NodeInfo& node);
std::vector<Finding> check_versions(const NodeInfo& node);
std::vector<Finding> check_lossless(const NodeInfo& node);
std::vector<Finding> check_bonds(const NodeInfo& node);
std::vector<Finding> check_irq(const NodeInfo& node);
std::vector<Finding> check_sriov(const NodeInfo& node);
std::vector<Finding> check_firewall(const NodeInfo& node);
std::vector<Finding> check_lldp(const NodeInfo& node);
std::vector<Finding> check_nvlink(const NodeInfo& node);
// Rates between two probes of one node, `seconds` apart (check --interval).
std::vector<Finding> check_bond_rates(const NodeInfo& before, const NodeInfo& after, double seconds);
std::vector<Finding> check_counter_rates(const NodeInfo& before, const NodeInfo& after, double seconds);
std::vector<Finding> check_nvlink_rates(const NodeInfo& before, const NodeInfo& after, double seconds);

using core::format_number;

// RDMA devices that sit on PCIe (a hardware HCA); software devices (rxe, siw) have no PCI address.
bool is_pci_rdma(const RdmaDevice& dev);

}  // namespace fabscope::checks
