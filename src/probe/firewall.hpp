#pragma once
// The firewall as the kernel holds it, read with `nft -j list ruleset` (nftables' JSON, which
// also shows rules made through iptables-nft). Never changes anything. Each rule is reduced to
// the matches that decide whether RDMA and NCCL traffic hits it (protocol, destination port);
// everything else is kept as an "other" match with its text.
#include <string>
#include <string_view>

#include "core/node_info.hpp"
#include "probe/run_tool.hpp"

namespace fabscope::probe {

// Parses nft's JSON (libnftables-json(5), json_schema_version 1). Throws fabscope::Error naming
// the element when the text is not nft JSON.
Firewall parse_nft_json(std::string_view text);

// live: run `nft -j list ruleset` (5 s timeout); otherwise unknown. Absence of nft, or a ruleset
// this user may not read, is a note in Firewall::note, not an error.
// run: how nft is run (run_tool when empty).
Firewall collect_firewall(bool live, std::vector<std::string>& notes, const ToolRunner& run = {});

// The command line collect_firewall runs.
std::vector<std::string> nft_argv();

}  // namespace fabscope::probe
