#pragma once
// One function per check family (checks/<family>.cpp), for checks.cpp and the unit tests.
// The public entry points are in checks.hpp.
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "core/node_info.hpp"

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
// Rates between two probes of one node, `seconds` apart (check --interval).
std::vector<Finding> check_bond_rates(const NodeInfo& before, const NodeInfo& after, double seconds);
std::vector<Finding> check_counter_rates(const NodeInfo& before, const NodeInfo& after, double seconds);

// A finding with its docs anchor filled in.
Finding make_finding(const std::string& id, Severity severity, std::string subject, std::string message,
                     std::string evidence, std::string remedy);

// "100 Gb/s", "2.5 Gb/s", "16 GT/s": whole numbers without decimals.
std::string format_number(double v);

// "mlx5_0:1"
std::string port_name(const RdmaDevice& dev, const RdmaPort& port);

// RDMA devices that sit on PCIe (a hardware HCA); software devices (rxe, siw) have no PCI address.
bool is_pci_rdma(const RdmaDevice& dev);

}  // namespace fabscope::checks
