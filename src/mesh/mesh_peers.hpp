#pragma once
// The mesh's peers: where they come from (a file, a DNS name with many addresses, Slurm's node
// list) and which few of them one node probes at a time. Pure: the mesh (mesh.hpp) reads the
// file, resolves the name and reads the environment, and hands the text or the names over.
//
// Selection keeps the probing cost of a node flat in N: a node probes the peers under its own
// switch (when the list says which switch a peer hangs under; at most max_neighbours at once)
// and `sample` others, and the others change every rotation window. The others are taken in a
// fixed order that starts after the node's own place in the sorted list, `sample` per window, so
// every peer is probed within ceil(others / sample) windows (the coverage period) and, as every
// node does the same, each node is probed by about `sample` others at any time.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fabscope::mesh {

struct MeshPeer {
  std::string host;    // a name or an address as written (IPv6 without brackets)
  int port = 0;        // the peer's mesh port
  std::string switch_name;  // "" unknown
  // The peer's label: "host" when it listens on the default port, else "host:port" ("[v6]:port").
  std::string id;
};

// "host" or "host:port" of a peer; IPv6 addresses in brackets with a port.
std::string mesh_peer_id(const std::string& host, int port, int default_port);

struct PeerListLine {
  std::size_t line = 0;   // 1-based
  std::string text;       // the line as read (printable, cut at 200 characters)
  std::string why;
};

struct PeerList {
  std::vector<MeshPeer> peers;         // sorted by id, no duplicates
  std::vector<PeerListLine> bad_lines;
};

// Upper bounds of a peer list: more peers than any cluster has, lines longer than any host name.
inline constexpr std::size_t kMaxMeshPeers = 100000;
inline constexpr std::size_t kMaxPeerLineBytes = 1024;

// One peer per line: HOST, HOST:PORT or [IPV6]:PORT, optionally followed by switch=NAME (the
// switch the peer's port is cabled to); '#' starts a comment; blank lines are skipped. A bad
// line is left out and named in bad_lines (the others still count). More than kMaxMeshPeers
// peers throws fabscope::Error naming `source`.
PeerList parse_peer_list(const std::string& text, const std::string& source, int default_port);

// Peers from names (Slurm's expanded node list, a DNS name's addresses), all on default_port.
PeerList peers_from_hosts(const std::vector<std::string>& hosts, int default_port);

// A host as compared for identity: lower case without a trailing '.', an address in its one
// canonical text (127.1 -> 127.0.0.1, ::ffff:10.0.0.1 -> 10.0.0.1, IPv6 compressed).
std::string canonical_host(const std::string& host);
// localhost (and *.localhost, ip6-localhost), 127.0.0.0/8 in any numeric form, ::1, ::ffff:127.x.
bool is_loopback_host(const std::string& host);
// Whether a listed peer is this node: on own_port, and a loopback host or one of self_names
// (the host name, its short form, the node's own addresses), compared canonically.
bool is_self(const MeshPeer& p, const std::vector<std::string>& self_names, int own_port);
// Which entry of the list is this node: the first that is_self. nullopt: not listed.
std::optional<std::size_t> find_self(const std::vector<MeshPeer>& peers, const std::vector<std::string>& self_names,
                                     int own_port);

struct SelectOptions {
  std::size_t sample = 4;          // peers beyond the own switch, per window
  std::size_t max_neighbours = 8;  // peers under the own switch, per window
};

struct Selection {
  std::vector<std::size_t> peers;  // indices into the list, neighbours first
  // Windows until every peer has been selected once (1 when all fit in one window).
  std::uint64_t coverage_windows = 1;
};

// The peers to probe in rotation window `window`. self: this node's index in the list (left
// out), or nullopt with self_hash placing the node instead. self_switch: "" unknown (then no
// peer counts as a neighbour).
Selection select_peers(const std::vector<MeshPeer>& peers, std::optional<std::size_t> self, std::uint64_t self_hash,
                       const std::string& self_switch, std::uint64_t window, const SelectOptions& opts);

}  // namespace fabscope::mesh
