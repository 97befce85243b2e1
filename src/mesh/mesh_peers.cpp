#include "mesh/mesh_peers.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace fabscope::mesh {

namespace {

// Host names (RFC 1123 letters, digits, '-', '.'; '_' as Kubernetes and /etc/hosts allow it) and
// IP addresses (digits, '.', hex digits and ':' of IPv6, '%' of a scope id).
bool valid_host(std::string_view h) {
  if (h.empty() || h.size() > 253) return false;
  for (char c : h)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
          c == '_' || c == ':' || c == '%'))
      return false;
  return h.front() != '-' && h.front() != '.';
}

// "" when fine, else why; fills host and port.
std::string parse_endpoint(std::string_view e, int default_port, std::string& host, int& port) {
  port = default_port;
  if (!e.empty() && e.front() == '[') {
    auto close = e.find(']');
    if (close == std::string_view::npos) return "'[' without ']'";
    host = std::string(e.substr(1, close - 1));
    auto rest = e.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return "text after ']' is not :PORT";
      auto p = core::parse_int(rest.substr(1));
      if (!p || *p < 1 || *p > 65535) return "port '" + std::string(rest.substr(1)) + "' is not 1-65535";
      port = static_cast<int>(*p);
    }
    if (host.find(':') == std::string::npos) return "brackets hold an IPv6 address";
  } else {
    const auto colon = e.find(':');
    if (colon != std::string_view::npos && e.find(':', colon + 1) != std::string_view::npos) {
      host = std::string(e);  // a bare IPv6 address, on the default port
    } else if (colon != std::string_view::npos) {
      host = std::string(e.substr(0, colon));
      auto p = core::parse_int(e.substr(colon + 1));
      if (!p || *p < 1 || *p > 65535) return "port '" + std::string(e.substr(colon + 1)) + "' is not 1-65535";
      port = static_cast<int>(*p);
    } else {
      host = std::string(e);
    }
  }
  if (!valid_host(host)) return "'" + core::printable(host) + "' is not a host name or address";
  return "";
}

PeerList finish(std::vector<MeshPeer> peers, std::vector<PeerListLine> bad) {
  std::sort(peers.begin(), peers.end(), [](const MeshPeer& a, const MeshPeer& b) { return a.id < b.id; });
  peers.erase(std::unique(peers.begin(), peers.end(), [](const MeshPeer& a, const MeshPeer& b) { return a.id == b.id; }),
              peers.end());
  return PeerList{std::move(peers), std::move(bad)};
}

}  // namespace

std::string mesh_peer_id(const std::string& host, int port, int default_port) {
  if (port == default_port) return host;
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

PeerList parse_peer_list(const std::string& text, const std::string& source, int default_port) {
  std::vector<MeshPeer> peers;
  std::vector<PeerListLine> bad;
  std::size_t line_no = 0, pos = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string_view raw(text.data() + pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    auto add_bad = [&](const std::string& why) {
      if (bad.size() < 1000) bad.push_back({line_no, core::printable(raw.substr(0, 200)), why});
    };
    if (raw.size() > kMaxPeerLineBytes) {
      add_bad("longer than " + std::to_string(kMaxPeerLineBytes) + " bytes");
      continue;
    }
    std::string_view line = raw;
    if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    auto fields = core::split_ws(core::trim(line));
    if (fields.empty()) continue;
    MeshPeer p;
    std::string why = parse_endpoint(fields[0], default_port, p.host, p.port);
    for (std::size_t i = 1; why.empty() && i < fields.size(); ++i) {
      if (core::starts_with(fields[i], "switch=") && fields[i].size() > 7 && fields[i].size() <= 7 + 128)
        p.switch_name = fields[i].substr(7);
      else
        why = "'" + core::printable(fields[i]) + "' is not switch=NAME";
    }
    if (!why.empty()) {
      add_bad(why);
      continue;
    }
    p.id = mesh_peer_id(p.host, p.port, default_port);
    peers.push_back(std::move(p));
    if (peers.size() > kMaxMeshPeers)
      throw Error(source + ": more than " + std::to_string(kMaxMeshPeers) + " peers (line " + std::to_string(line_no) +
                  ")");
  }
  return finish(std::move(peers), std::move(bad));
}

PeerList peers_from_hosts(const std::vector<std::string>& hosts, int default_port) {
  std::vector<MeshPeer> peers;
  std::vector<PeerListLine> bad;
  std::size_t n = 0;
  for (const auto& h : hosts) {
    ++n;
    if (!valid_host(h)) {
      if (bad.size() < 1000) bad.push_back({n, core::printable(h.substr(0, 200)), "not a host name or address"});
      continue;
    }
    peers.push_back(MeshPeer{h, default_port, "", h});
    if (peers.size() > kMaxMeshPeers) throw Error("more than " + std::to_string(kMaxMeshPeers) + " peers");
  }
  return finish(std::move(peers), std::move(bad));
}

std::string canonical_host(const std::string& host) {
  std::string h = core::lower(host);
  if (!h.empty() && h.back() == '.') h.pop_back();  // a fully qualified name's root
  in6_addr v6{};
  char buf[INET6_ADDRSTRLEN] = {};
  if (inet_pton(AF_INET6, h.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_V4MAPPED(&v6)) {
      in_addr v4{};
      std::memcpy(&v4, &v6.s6_addr[12], 4);
      inet_ntop(AF_INET, &v4, buf, sizeof buf);
    } else {
      inet_ntop(AF_INET6, &v6, buf, sizeof buf);
    }
    return buf;
  }
  in_addr v4{};
  // inet_aton takes what the resolver takes for a number: 127.1, 0x7f.0.0.1, 2130706433.
  if (h.find_first_not_of("0123456789abcdefx.") == std::string::npos && inet_aton(h.c_str(), &v4) == 1) {
    inet_ntop(AF_INET, &v4, buf, sizeof buf);
    return buf;
  }
  return h;
}

bool is_loopback_host(const std::string& host) {
  const std::string h = canonical_host(host);
  const std::string_view suffix = ".localhost";
  if (h == "localhost" || h == "ip6-localhost" || h == "ip6-loopback" ||
      (h.size() > suffix.size() && h.compare(h.size() - suffix.size(), suffix.size(), suffix) == 0))
    return true;
  in_addr v4{};
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  return h == "::1";
}

bool is_self(const MeshPeer& p, const std::vector<std::string>& self_names, int own_port) {
  if (p.port != own_port) return false;
  if (is_loopback_host(p.host)) return true;  // a loopback address on this node's port is this node
  const std::string h = canonical_host(p.host);
  for (const auto& n : self_names)
    if (!n.empty() && h == canonical_host(n)) return true;
  return false;
}

std::optional<std::size_t> find_self(const std::vector<MeshPeer>& peers, const std::vector<std::string>& self_names,
                                     int own_port) {
  for (std::size_t i = 0; i < peers.size(); ++i)
    if (is_self(peers[i], self_names, own_port)) return i;
  return std::nullopt;
}

Selection select_peers(const std::vector<MeshPeer>& peers, std::optional<std::size_t> self, std::uint64_t self_hash,
                       const std::string& self_switch, std::uint64_t window, const SelectOptions& opts) {
  std::vector<std::size_t> neighbours, others;
  // Others in the list's order starting after this node's own place: node i probes i+1, i+2…
  // first, so the nodes' probes spread over everyone instead of piling on the first entries.
  const std::size_t n = peers.size();
  const std::size_t start = self ? *self + 1 : (n ? static_cast<std::size_t>(self_hash % n) : 0);
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = (start + k) % n;
    if (self && i == *self) continue;
    if (!self_switch.empty() && peers[i].switch_name == self_switch) neighbours.push_back(i);
    else others.push_back(i);
  }
  Selection s;
  auto take = [&](const std::vector<std::size_t>& from, std::size_t per_window) {
    if (from.empty() || per_window == 0) return;
    const std::uint64_t windows = (from.size() + per_window - 1) / per_window;
    s.coverage_windows = std::max(s.coverage_windows, windows);
    const std::size_t first = static_cast<std::size_t>((window % windows) * per_window);
    for (std::size_t j = 0; j < std::min(per_window, from.size()); ++j)
      s.peers.push_back(from[(first + j) % from.size()]);
  };
  take(neighbours, opts.max_neighbours);
  take(others, opts.sample);
  // A window that wraps past the end picks entries of the next round; never one twice.
  std::vector<std::size_t> seen;
  std::vector<std::size_t> unique;
  for (auto i : s.peers)
    if (std::find(seen.begin(), seen.end(), i) == seen.end()) {
      seen.push_back(i);
      unique.push_back(i);
    }
  s.peers = std::move(unique);
  return s;
}

}  // namespace fabscope::mesh
