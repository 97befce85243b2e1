#include "fabric/mad.hpp"

#include <charconv>

namespace fabscope::fabric::mad {

namespace {

void need(std::span<const std::uint8_t> d, std::size_t n, const char* what) {
  if (d.size() < n)
    throw Error(std::string("MAD ") + what + ": " + std::to_string(d.size()) + " bytes, need " +
                std::to_string(n));
}

std::uint64_t be(std::span<const std::uint8_t> d, std::size_t off, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = (v << 8) | d[off + i];
  return v;
}

void put(std::uint8_t* p, std::uint64_t v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) p[n - 1 - i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// LinkWidth bits (1: 1X, 2: 4X, 4: 8X, 8: 12X, 16: 2X) to a WidthMask of lane counts.
WidthMask width_mask(unsigned bits) {
  WidthMask m = 0;
  if (bits & 1) m |= width_bit(1);
  if (bits & 2) m |= width_bit(4);
  if (bits & 4) m |= width_bit(8);
  if (bits & 8) m |= width_bit(12);
  if (bits & 16) m |= width_bit(2);
  return m;
}

SpeedMask speed_mask(unsigned bits) {  // LinkSpeed: 1 SDR, 2 DDR, 4 QDR
  SpeedMask m = 0;
  if (bits & 1) m |= speed_bit(Speed::SDR);
  if (bits & 2) m |= speed_bit(Speed::DDR);
  if (bits & 4) m |= speed_bit(Speed::QDR);
  return m;
}

SpeedMask ext_speed_mask(unsigned bits) {  // LinkSpeedExt: 1 FDR, 2 EDR, 4 HDR, 8 NDR
  SpeedMask m = 0;
  if (bits & 1) m |= speed_bit(Speed::FDR);
  if (bits & 2) m |= speed_bit(Speed::EDR);
  if (bits & 4) m |= speed_bit(Speed::HDR);
  if (bits & 8) m |= speed_bit(Speed::NDR);
  return m;
}

int mtu_bytes(unsigned code) { return code >= 1 && code <= 5 ? 128 << code : 0; }

}  // namespace

Header decode_header(std::span<const std::uint8_t> m) {
  need(m, 24, "header");
  Header h;
  h.base_version = m[0];
  h.mgmt_class = m[1];
  h.class_version = m[2];
  h.method = m[3];
  h.status = static_cast<std::uint16_t>(be(m, 4, 2));
  h.tid = be(m, 8, 8);
  h.attr_id = static_cast<std::uint16_t>(be(m, 16, 2));
  h.attr_mod = static_cast<std::uint32_t>(be(m, 20, 4));
  return h;
}

std::array<std::uint8_t, kMadSize> pma_get(std::uint16_t attr, int port, std::uint64_t tid) {
  std::array<std::uint8_t, kMadSize> m{};
  m[0] = 1;
  m[1] = PerfMgt;
  m[2] = 1;
  m[3] = Get;
  put(&m[8], tid, 8);
  put(&m[16], attr, 2);
  if (attr != ClassPortInfo) m[kPmaDataOffset + 1] = static_cast<std::uint8_t>(port);
  return m;
}

std::array<std::uint8_t, kMadSize> smp_dr_get(std::uint16_t attr, std::uint32_t mod, std::uint64_t tid,
                                              const std::vector<std::uint8_t>& path) {
  if (path.size() > 63) throw Error("directed route of " + std::to_string(path.size()) + " hops (at most 63)");
  std::array<std::uint8_t, kMadSize> m{};
  m[0] = 1;
  m[1] = SmpDirected;
  m[2] = 1;
  m[3] = Get;
  // Status word: D bit 0 (outbound), then HopPointer (byte 6) and HopCount (byte 7).
  m[6] = 0;
  m[7] = static_cast<std::uint8_t>(path.size());
  put(&m[8], tid, 8);
  put(&m[16], attr, 2);
  put(&m[20], mod, 4);
  put(&m[32], 0xffff, 2);  // DrSLID: permissive
  put(&m[34], 0xffff, 2);  // DrDLID: permissive
  for (std::size_t i = 0; i < path.size(); ++i) m[128 + 1 + i] = path[i];  // InitialPath[0] unused
  return m;
}

std::vector<std::uint8_t> parse_dr_path(const std::string& s) {
  std::vector<std::uint8_t> out;
  std::size_t i = 0;
  bool first = true;
  while (i <= s.size()) {
    std::size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    unsigned v = 0;
    auto r = std::from_chars(s.data() + i, s.data() + j, v);
    if (i == j || r.ec != std::errc() || r.ptr != s.data() + j || v > 255)
      throw Error("directed route \"" + s + "\": not a list of port numbers like 0,1,31");
    if (first) {
      if (v != 0) throw Error("directed route \"" + s + "\": must start with 0 (the local node)");
      first = false;
    } else {
      if (v == 0) throw Error("directed route \"" + s + "\": port 0 inside the path");
      out.push_back(static_cast<std::uint8_t>(v));
    }
    i = j + 1;
  }
  if (out.size() > 63) throw Error("directed route \"" + s + "\": more than 63 hops");
  return out;
}

std::span<const std::uint8_t> smp_data(std::span<const std::uint8_t> m) {
  need(m, kSmpDataOffset + kSmpDataSize, "SMP");
  return m.subspan(kSmpDataOffset, kSmpDataSize);
}

std::span<const std::uint8_t> pma_data(std::span<const std::uint8_t> m) {
  need(m, kPmaDataOffset + kPmaDataSize, "PerfMgt");
  return m.subspan(kPmaDataOffset, kPmaDataSize);
}

NodeInfoFields decode_node_info(std::span<const std::uint8_t> d) {
  need(d, 40, "NodeInfo");
  NodeInfoFields n;
  unsigned t = d[2];
  n.type = t >= 1 && t <= 3 ? static_cast<NodeType>(t) : NodeType::Unknown;
  n.num_ports = d[3];
  n.system_guid = be(d, 4, 8);
  n.node_guid = be(d, 12, 8);
  n.port_guid = be(d, 20, 8);
  n.device_id = static_cast<std::uint16_t>(be(d, 30, 2));
  n.revision = static_cast<std::uint32_t>(be(d, 32, 4));
  n.local_port = d[36];
  n.vendor_id = static_cast<std::uint32_t>(be(d, 37, 3));
  return n;
}

std::string decode_node_desc(std::span<const std::uint8_t> d) {
  need(d, 64, "NodeDescription");
  std::string s;
  for (std::size_t i = 0; i < 64 && d[i] != 0; ++i) s += (d[i] < 0x20 || d[i] == 0x7f) ? '?' : static_cast<char>(d[i]);
  return s;
}

fabric::PortInfo decode_port_info(std::span<const std::uint8_t> d, std::optional<std::uint32_t> cap_mask) {
  need(d, 64, "PortInfo");
  fabric::PortInfo p;
  p.lid = static_cast<std::uint16_t>(be(d, 16, 2));
  p.sm_lid = static_cast<std::uint16_t>(be(d, 18, 2));
  p.capability_mask = static_cast<std::uint32_t>(be(d, 20, 4));
  p.width_enabled = width_mask(d[29]);
  p.width_supported = width_mask(d[30]);
  unsigned wa = d[31];  // one bit when the link is up; anything else is unknown
  p.width_active = (wa & (wa - 1)) == 0 ? widest(width_mask(wa)) : 0;
  p.speed_supported = speed_mask(d[32] >> 4);
  unsigned state = d[32] & 0xf;
  p.state = state >= 1 && state <= 4 ? static_cast<PortState>(state) : PortState::Unknown;
  unsigned phys = d[33] >> 4;
  p.phys_state = phys >= 1 && phys <= 7 ? static_cast<PhysState>(phys) : PhysState::Unknown;
  p.link_down_default = d[33] & 0xf;
  p.lmc = d[34] & 0x7;
  unsigned active = d[35] >> 4;
  p.speed_enabled = speed_mask(d[35] & 0xf);
  p.mtu_active = mtu_bytes(d[36] >> 4);
  p.mtu_max = mtu_bytes(d[41] & 0xf);
  Speed base = Speed::Unknown;
  if (active == 1) base = Speed::SDR;
  else if (active == 2) base = Speed::DDR;
  else if (active == 4) base = Speed::QDR;
  p.speed_active = base;
  if ((cap_mask ? *cap_mask : p.capability_mask) & kCapExtendedSpeeds) {
    unsigned ext_active = d[62] >> 4;
    p.speed_supported |= ext_speed_mask(d[62] & 0xf);
    p.speed_enabled |= ext_speed_mask(d[63] & 0x1f);
    Speed ext = ext_active == 1 ? Speed::FDR : ext_active == 2 ? Speed::EDR : ext_active == 4 ? Speed::HDR
              : ext_active == 8 ? Speed::NDR : Speed::Unknown;
    if (ext != Speed::Unknown) p.speed_active = ext;
  }
  return p;
}

SmInfo decode_sm_info(std::span<const std::uint8_t> d) {
  need(d, 21, "SMInfo");
  SmInfo s;
  s.guid = be(d, 0, 8);
  s.act_count = static_cast<std::uint32_t>(be(d, 16, 4));
  s.priority = d[20] >> 4;
  unsigned state = d[20] & 0xf;  // 0..3 defined
  s.state = state <= 3 ? static_cast<SmState>(state) : SmState::NotActive;
  return s;
}

SwitchInfoFields decode_switch_info(std::span<const std::uint8_t> d) {
  need(d, 20, "SwitchInfo");
  SwitchInfoFields w;
  w.linear_fdb_cap = static_cast<std::uint16_t>(be(d, 0, 2));
  w.random_fdb_cap = static_cast<std::uint16_t>(be(d, 2, 2));
  w.mcast_fdb_cap = static_cast<std::uint16_t>(be(d, 4, 2));
  w.linear_fdb_top = static_cast<std::uint16_t>(be(d, 6, 2));
  w.default_port = d[8];
  w.life_time = d[11] >> 3;
  w.port_state_change = (d[11] >> 2) & 1;
  w.lids_per_port = static_cast<std::uint16_t>(be(d, 12, 2));
  w.partition_enforcement_cap = static_cast<std::uint16_t>(be(d, 14, 2));
  w.enhanced_port0 = (d[16] >> 3) & 1;
  w.mcast_fdb_top = static_cast<std::uint16_t>(be(d, 18, 2));
  return w;
}

std::array<std::uint8_t, 64> decode_lft_block(std::span<const std::uint8_t> d) {
  need(d, 64, "LinearForwardingTable");
  std::array<std::uint8_t, 64> out{};
  for (std::size_t i = 0; i < 64; ++i) out[i] = d[i];
  return out;
}

std::uint16_t decode_pma_capability(std::span<const std::uint8_t> d) {
  need(d, 4, "ClassPortInfo");
  return static_cast<std::uint16_t>(be(d, 2, 2));
}

int decode_port_select(std::span<const std::uint8_t> d) {
  need(d, 2, "PortCounters");
  return d[1];
}

void decode_port_counters(std::span<const std::uint8_t> d, bool xmit_wait, Counters& c) {
  need(d, xmit_wait ? 44 : 40, "PortCounters");
  c[Counter::SymbolErrorCounter] = be(d, 4, 2);
  c[Counter::LinkErrorRecoveryCounter] = d[6];
  c[Counter::LinkDownedCounter] = d[7];
  c[Counter::PortRcvErrors] = be(d, 8, 2);
  c[Counter::PortRcvRemotePhysicalErrors] = be(d, 10, 2);
  c[Counter::PortRcvSwitchRelayErrors] = be(d, 12, 2);
  c[Counter::PortXmitDiscards] = be(d, 14, 2);
  c[Counter::PortXmitConstraintErrors] = d[16];
  c[Counter::PortRcvConstraintErrors] = d[17];
  c[Counter::LocalLinkIntegrityErrors] = d[19] >> 4;
  c[Counter::ExcessiveBufferOverrunErrors] = d[19] & 0xf;
  c[Counter::VL15Dropped] = be(d, 22, 2);
  c[Counter::PortXmitData] = be(d, 24, 4);
  c[Counter::PortRcvData] = be(d, 28, 4);
  c[Counter::PortXmitPkts] = be(d, 32, 4);
  c[Counter::PortRcvPkts] = be(d, 36, 4);
  if (xmit_wait) c[Counter::PortXmitWait] = be(d, 40, 4);
  else c[Counter::PortXmitWait] = std::nullopt;
  c.extended = false;
}

void decode_port_counters_ext(std::span<const std::uint8_t> d, Counters& c) {
  need(d, 40, "PortCountersExtended");
  c[Counter::PortXmitData] = be(d, 8, 8);
  c[Counter::PortRcvData] = be(d, 16, 8);
  c[Counter::PortXmitPkts] = be(d, 24, 8);
  c[Counter::PortRcvPkts] = be(d, 32, 8);
  c.extended = true;
}

}  // namespace fabscope::fabric::mad
