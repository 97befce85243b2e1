#pragma once
// LLDP neighbours of the node's netdevs (which switch and port each NIC is cabled to, the frame
// size the switch port takes), read from lldpd with its client: `lldpcli -f json show neighbors
// details`, one run for every interface. Never changes lldpd's configuration.
//
// lldpcli's JSON comes in two shapes, and the parser takes both:
//  - "json" since lldpd 0.9.2 (jansson, json-c, and the built-in writer of 1.0.x): a list with
//    one member is written as the member alone and an object whose only key is "value" as that
//    value, and an object with a "name" becomes {name: object}. So one interface is
//    {"interface": {"eth0": {...}}} and several are {"interface": [{"eth0": {...}}, ...]}; a
//    chassis with a system name is {"chassis": {"leaf1": {"id": ...}}}, without one
//    {"chassis": {"id": ...}}; one management address is a string, several a list.
//  - "json0" (`-f json0` in 1.0.x, the json-c output before 0.9.2, and what Cumulus Linux's
//    lldpd prints): every element is a list of objects and every text is {"value": text}:
//    {"lldp": [{"interface": [{"name": "eth0", "chassis": [{"name": [{"value": "leaf1"}]}]}]}]}.
#include <string>
#include <string_view>
#include <vector>

#include "core/node_info.hpp"
#include "probe/run_tool.hpp"

namespace fabscope::probe {

// The environment variable naming a non-default lldpd control socket (lldpcli -u SOCKET), for
// an lldpd started with -u, or one per network namespace.
inline constexpr const char* kLldpSocketEnv = "FABSCOPE_LLDPCLI_SOCKET";

struct LldpEntry {
  std::string netdev;  // the local interface lldpd heard the neighbour on
  LldpNeighbor neighbor;
};

// Parses lldpcli's JSON, either shape. Throws fabscope::Error naming the element and value when
// the text is not lldpcli JSON or a field is out of range (an MFS beyond 16 bits, a VLAN id
// beyond 4095), or when there are more than 4096 neighbours. Fields a neighbour did not send
// stay empty.
std::vector<LldpEntry> parse_lldpcli_json(std::string_view text);

// The command line: lldpcli [-u SOCKET] -f json show neighbors details. socket_env is the value
// of FABSCOPE_LLDPCLI_SOCKET (nullptr or "" for lldpd's default socket); a value that is not an
// absolute path of at most 107 bytes leaves argv empty and says why in error.
std::vector<std::string> lldpcli_argv(const char* socket_env, std::string& error);

// Judges one run of lldpcli: attaches the neighbours to netdevs (by interface name) and returns
// the state, with the reason when the neighbours are unknown. A neighbour on an interface that is
// not among netdevs is left out with a note.
LldpState apply_lldpcli_result(const ToolResult& result, std::vector<Netdev>& netdevs,
                               std::vector<std::string>& notes);

// live: run lldpcli (timeout_ms; the socket from FABSCOPE_LLDPCLI_SOCKET) and attach the
// neighbours; otherwise unknown. lldpcli absent, not executable, or no lldpd answering is told in
// LldpState::note, never an error.
// run: how lldpcli is run (run_tool when empty).
LldpState collect_lldp(bool live, std::vector<Netdev>& netdevs, std::vector<std::string>& notes,
                       int timeout_ms = 5000, const ToolRunner& run = {});

}  // namespace fabscope::probe
