#pragma once
// Lint: NCCL settings (the process environment, nccl.conf files, env-files) judged against the
// variable table and the node. lint() is pure; lint_process_environment() reads the process
// environment and NCCL's configuration files first (collect.hpp). Findings use the checks'
// Finding type, severities and exit codes; ids are documented in docs/ncclenv.md.
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "core/finding_registry.hpp"
#include "core/node_info.hpp"
#include "ncclenv/envfile.hpp"
#include "ncclenv/vars.hpp"

namespace fabscope::ncclenv {

// Every lint id (family "env"), in the order docs/ncclenv.md lists them.
const std::vector<FindingInfo>& lint_rules();

// entries come in precedence order: the first setting of a key is the one NCCL uses, later
// ones are shadowed (env.duplicate). Keys that do not start with NCCL_ are ignored.
std::vector<Finding> lint(const NodeInfo& node, const std::vector<EnvEntry>& entries,
                          const std::vector<VarInfo>& vars = known_vars());

// Reads the current process environment and the nccl.conf files NCCL would read (through the
// node's root: /etc/nccl.conf, $NCCL_CONF_FILE or else ~/.nccl.conf) and runs the lint rules,
// file syntax findings included.
std::vector<Finding> lint_process_environment(const NodeInfo& node);

// NCCL_IB_HCA / NCCL_SOCKET_IFNAME syntax: an optional leading '^' (exclude the listed names),
// then an optional '=' (exact names instead of prefixes), then a comma list; NCCL_IB_HCA items
// may end in ":port".
struct NameFilter {
  bool exclude = false;
  bool exact = false;
  struct Item {
    std::string name;
    int port = -1;  // -1: any port
  };
  std::vector<Item> items;
};
NameFilter parse_name_filter(const std::string& value, bool with_ports);
bool filter_item_matches(const NameFilter& f, const NameFilter::Item& item, const std::string& name, int port);
// Whether NCCL would use (name, port) under this filter.
bool filter_selects(const NameFilter& f, const std::string& name, int port = -1);

}  // namespace fabscope::ncclenv
