#include "probe/nvlink.hpp"

#include <algorithm>
#include <cctype>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "probe/affinity.hpp"

namespace fabscope::probe {

namespace {

constexpr std::size_t kMaxNvmlGpus = 64;
constexpr unsigned kFieldDataTx = 138;  // NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, KiB
constexpr unsigned kFieldDataRx = 139;
constexpr unsigned kFieldRawTx = 140;   // ..._RAW_TX: with protocol overhead
constexpr unsigned kFieldRawRx = 141;
constexpr std::uint64_t kKiB = 1024;

// Checked access to the capture document: every refusal names the field.
const json& member(const json& obj, const std::string& key, const std::string& where) {
  if (!obj.is_object()) throw Error("NVML capture: '" + where + "' is not an object");
  auto it = obj.find(key);
  if (it == obj.end()) throw Error("NVML capture: field '" + where + "." + key + "' is missing");
  return *it;
}

std::int64_t int_field(const json& obj, const std::string& key, const std::string& where) {
  const json& v = member(obj, key, where);
  if (!v.is_number_integer()) throw Error("NVML capture: field '" + where + "." + key + "' is " + v.dump(-1).substr(0, 40) + ", not an integer");
  if (v.is_number_unsigned()) {
    auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(INT64_MAX)) throw Error("NVML capture: field '" + where + "." + key + "' is out of range");
    return static_cast<std::int64_t>(u);
  }
  return v.get<std::int64_t>();
}

int small_int(const json& obj, const std::string& key, const std::string& where) {
  auto v = int_field(obj, key, where);
  if (v < -1 || v > 0xFFFF) throw Error("NVML capture: field '" + where + "." + key + "' is " + std::to_string(v) + ", out of range");
  return static_cast<int>(v);
}

std::uint64_t counter_field(const json& obj, const std::string& key, const std::string& where) {
  const json& v = member(obj, key, where);
  if (!v.is_number_unsigned()) throw Error("NVML capture: field '" + where + "." + key + "' is " + v.dump(-1).substr(0, 40) + ", not a counter");
  return v.get<std::uint64_t>();
}

std::string string_field(const json& obj, const std::string& key, const std::string& where) {
  const json& v = member(obj, key, where);
  if (!v.is_string() || v.get_ref<const std::string&>().size() > 128)
    throw Error("NVML capture: field '" + where + "." + key + "' is not a string of at most 128 bytes");
  return v.get<std::string>();
}

const json& array_field(const json& obj, const std::string& key, const std::string& where, std::size_t max) {
  const json& v = member(obj, key, where);
  if (!v.is_array() || v.size() > max)
    throw Error("NVML capture: field '" + where + "." + key + "' is not an array of at most " + std::to_string(max));
  return v;
}

std::string p2p_status_name(int rc, int status) {
  if (rc != 0) return "";
  switch (status) {
    case 0: return "ok";
    case 1: return "chipset_not_supported";
    case 2: return "gpu_not_supported";
    case 3: return "topology_not_supported";
    case 4: return "disabled_by_regkey";
    case 5: return "not_supported";
    default: return "unknown";
  }
}

std::string ancestor_level(int rc, int level) {
  if (rc != 0) return "";
  switch (level) {
    case 0:  // NVML_TOPOLOGY_INTERNAL: one board (dual-GPU cards)
    case 10: return "PIX";
    case 20: return "PXB";
    case 30: return "PHB";
    case 40: return "NODE";
    case 50: return "SYS";
    default: return "";
  }
}

std::string remote_type_name(int rc, int type) {
  if (rc != 0) return "";
  switch (type) {
    case 0: return "gpu";
    case 1: return "ibmnpu";
    case 2: return "switch";
    default: return "unknown";
  }
}

std::optional<std::uint64_t> answered(int rc, std::uint64_t v) {
  return rc == 0 ? std::optional<std::uint64_t>(v) : std::nullopt;
}

std::optional<std::uint64_t> kib_field(const NvmlGpuAnswer& g, unsigned id, unsigned scope) {
  for (const auto& f : g.fields)
    if (f.id == id && f.scope == scope && f.rc == 0) {
      if (f.value > UINT64_MAX / kKiB) return std::nullopt;
      return f.value * kKiB;
    }
  return std::nullopt;
}

// The number of active links of a toward b: direct links to b's address, or, when both reach
// NVSwitches, the fewer of their switch links (every switch port reaches every GPU, so a pair's
// bandwidth is the narrower side's; nvidia-smi topo -m prints NV18 for two H200 of an HGX board).
int links_between(const Gpu& a, const Gpu& b) {
  int direct = 0, a_switch = 0, b_switch = 0;
  for (const auto& l : a.nvlinks) {
    if (l.active != true) continue;
    if (l.remote_type == "gpu" && l.remote_pci_address == b.pci_address) ++direct;
    if (l.remote_type == "switch") ++a_switch;
  }
  for (const auto& l : b.nvlinks)
    if (l.active == true && l.remote_type == "switch") ++b_switch;
  return direct + std::min(a_switch, b_switch);
}

}  // namespace

std::string normalize_nvml_bus_id(const std::string& bus_id) {
  // domain:bus:device.function, domain of 4 or 8 hex digits
  auto colon1 = bus_id.find(':');
  if (colon1 == std::string::npos || bus_id.size() > 32) return "";
  std::string domain = bus_id.substr(0, colon1), rest = bus_id.substr(colon1 + 1);
  if (domain.empty() || domain.size() > 8 || rest.size() != 7 || rest[2] != ':' || rest[5] != '.') return "";
  auto hex = [](const std::string& s) {
    return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c) != 0; });
  };
  if (!hex(domain) || !hex(rest.substr(0, 2)) || !hex(rest.substr(3, 2)) || !hex(rest.substr(6, 1))) return "";
  const std::string lower = core::lower(bus_id);
  if (lower == "ffffffff:ff:ff.0") return "";
  std::string dom = lower.substr(0, colon1);
  if (dom.size() > 4) {
    if (dom.find_first_not_of('0') < dom.size() - 4) return "";  // a domain above 0xffff: not a PCI address here
    dom = dom.substr(dom.size() - 4);
  }
  while (dom.size() < 4) dom = "0" + dom;
  return dom + ":" + lower.substr(colon1 + 1);
}

NvmlAnswers parse_nvml_capture(const json& doc) {
  NvmlAnswers out;
  if (!doc.is_object()) throw Error("NVML capture: not a JSON object");
  if (doc.value("capture", "") != "fabscope.nvml-capture")
    throw Error("NVML capture: field 'capture' is not \"fabscope.nvml-capture\"");
  if (doc.contains("error")) return out;  // NVML missing on the captured machine
  if (int_field(doc, "version", "") != 1) throw Error("NVML capture: field 'version' is not 1");
  const json& gpus = array_field(doc, "gpus", "", kMaxNvmlGpus);
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const std::string where = "gpus[" + std::to_string(i) + "]";
    const json& g = gpus[i];
    NvmlGpuAnswer ga;
    ga.bus_id = string_field(g, "bus_id", where);
    const json& links = array_field(g, "links", where, kNvmlMaxLinks);
    for (std::size_t k = 0; k < links.size(); ++k) {
      const std::string lw = where + ".links[" + std::to_string(k) + "]";
      const json& l = links[k];
      NvmlLinkAnswer la;
      auto link = int_field(l, "link", lw);
      if (link < 0 || link >= static_cast<std::int64_t>(kNvmlMaxLinks))
        throw Error("NVML capture: field '" + lw + ".link' is " + std::to_string(link) + ", not 0-17");
      la.link = static_cast<unsigned>(link);
      la.state_rc = small_int(l, "state_rc", lw);
      la.state = small_int(l, "state", lw);
      la.version_rc = small_int(l, "version_rc", lw);
      la.version = static_cast<unsigned>(std::max(0, small_int(l, "version", lw)));
      la.remote_rc = small_int(l, "remote_rc", lw);
      la.remote_bus_id = string_field(l, "remote_bus_id", lw);
      la.remote_type_rc = small_int(l, "remote_type_rc", lw);
      la.remote_type = small_int(l, "remote_type", lw);
      const json& errors = array_field(l, "errors", lw, 8);
      for (std::size_t e = 0; e < errors.size(); ++e) {
        const std::string ew = lw + ".errors[" + std::to_string(e) + "]";
        auto counter = int_field(errors[e], "counter", ew);
        if (counter < 0 || counter > 4) continue;  // a counter this build does not read
        la.error_rc[counter] = small_int(errors[e], "rc", ew);
        la.error[counter] = counter_field(errors[e], "value", ew);
      }
      ga.links.push_back(std::move(la));
    }
    if (g.contains("fields")) {
      const json& fields = array_field(g, "fields", where, 1024);
      for (std::size_t k = 0; k < fields.size(); ++k) {
        const std::string fw = where + ".fields[" + std::to_string(k) + "]";
        NvmlFieldAnswer fa;
        auto id = int_field(fields[k], "id", fw);
        if (id < 0 || id > 0xFFFF) throw Error("NVML capture: field '" + fw + ".id' is out of range");
        fa.id = static_cast<unsigned>(id);
        if (fields[k].contains("scope")) {
          auto scope = int_field(fields[k], "scope", fw);
          if (scope < 0 || scope > 0xFFFFFFFFll) throw Error("NVML capture: field '" + fw + ".scope' is out of range");
          fa.scope = static_cast<unsigned>(scope);
        }
        // call_rc: the whole nvmlDeviceGetFieldValues call; rc: this value's own.
        const int call_rc = fields[k].contains("call_rc") ? small_int(fields[k], "call_rc", fw) : 0;
        fa.rc = call_rc != 0 ? call_rc : small_int(fields[k], "rc", fw);
        fa.value = counter_field(fields[k], "ull", fw);
        ga.fields.push_back(fa);
      }
    }
    out.gpus.push_back(std::move(ga));
  }
  if (doc.contains("pairs")) {
    const json& pairs = array_field(doc, "pairs", "", kMaxNvmlGpus * kMaxNvmlGpus);
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const std::string pw = "pairs[" + std::to_string(i) + "]";
      NvmlPairAnswer pa;
      auto a = int_field(pairs[i], "a", pw), b = int_field(pairs[i], "b", pw);
      if (a < 0 || b < 0 || static_cast<std::size_t>(a) >= out.gpus.size() ||
          static_cast<std::size_t>(b) >= out.gpus.size() || a == b)
        throw Error("NVML capture: field '" + pw + "' names GPUs " + std::to_string(a) + " and " +
                          std::to_string(b) + ", not two of the " + std::to_string(out.gpus.size()) + " captured");
      pa.a = static_cast<std::size_t>(a);
      pa.b = static_cast<std::size_t>(b);
      pa.ancestor_rc = small_int(pairs[i], "ancestor_rc", pw);
      pa.ancestor = small_int(pairs[i], "ancestor", pw);
      const json& p2p = array_field(pairs[i], "p2p", pw, 8);
      for (std::size_t k = 0; k < p2p.size(); ++k) {
        const std::string kw = pw + ".p2p[" + std::to_string(k) + "]";
        auto index = int_field(p2p[k], "index", kw);
        if (index < 0 || index > 3) continue;  // 4: NVML_P2P_CAPS_INDEX_PROP, not judged
        pa.p2p_rc[index] = small_int(p2p[k], "rc", kw);
        pa.p2p_status[index] = small_int(p2p[k], "status", kw);
      }
      out.pairs.push_back(pa);
    }
  }
  return out;
}

std::vector<GpuPair> apply_nvml_answers(const NvmlAnswers& nvml, std::vector<Gpu>& gpus) {
  std::vector<Gpu*> matched(nvml.gpus.size(), nullptr);
  for (std::size_t i = 0; i < nvml.gpus.size(); ++i) {
    const NvmlGpuAnswer& ga = nvml.gpus[i];
    const std::string addr = normalize_nvml_bus_id(ga.bus_id);
    auto it = std::find_if(gpus.begin(), gpus.end(), [&](const Gpu& g) { return !addr.empty() && g.pci_address == addr; });
    if (it == gpus.end()) continue;
    Gpu& g = *it;
    matched[i] = &g;
    g.nvlinks.clear();
    int total = 0, active = 0;
    for (const auto& la : ga.links) {
      // A link whose state NVML does not report is absent (PCIe cards, a GPU passed through
      // alone: every call answers NVML_ERROR_NOT_SUPPORTED, tests/fixtures/nvml-h200x1).
      if (la.state_rc != 0) continue;
      NvLink l;
      l.link = static_cast<int>(la.link);
      l.active = la.state == 1;
      ++total;
      if (la.state == 1) ++active;
      if (la.version_rc == 0 && la.version > 0) l.version_code = static_cast<int>(la.version);
      l.remote_type = remote_type_name(la.remote_type_rc, la.remote_type);
      if (la.remote_rc == 0 && l.remote_type != "switch") l.remote_pci_address = normalize_nvml_bus_id(la.remote_bus_id);
      l.replay_errors = answered(la.error_rc[0], la.error[0]);
      l.recovery_errors = answered(la.error_rc[1], la.error[1]);
      l.crc_flit_errors = answered(la.error_rc[2], la.error[2]);
      l.crc_data_errors = answered(la.error_rc[3], la.error[3]);
      l.ecc_data_errors = answered(la.error_rc[4], la.error[4]);
      l.data_transmitted_bytes = kib_field(ga, kFieldDataTx, la.link);
      l.data_received_bytes = kib_field(ga, kFieldDataRx, la.link);
      g.nvlinks.push_back(std::move(l));
    }
    g.nvlink_total = total;
    g.nvlink_active = active;
    g.nvlink_data_transmitted_bytes = kib_field(ga, kFieldDataTx, kNvmlScopeAllLinks);
    g.nvlink_data_received_bytes = kib_field(ga, kFieldDataRx, kNvmlScopeAllLinks);
    g.nvlink_raw_transmitted_bytes = kib_field(ga, kFieldRawTx, kNvmlScopeAllLinks);
    g.nvlink_raw_received_bytes = kib_field(ga, kFieldRawRx, kNvmlScopeAllLinks);
  }
  std::vector<GpuPair> out;
  for (const auto& pa : nvml.pairs) {
    const Gpu* a = matched[pa.a];
    const Gpu* b = matched[pa.b];
    if (!a || !b || a->index > b->index) continue;  // one direction per pair: a before b
    GpuPair p;
    p.gpu_a = a->pci_address;
    p.gpu_b = b->pci_address;
    p.source = "nvml";
    p.nvlinks = links_between(*a, *b);
    p.level = *p.nvlinks > 0 ? "NV" + std::to_string(*p.nvlinks) : ancestor_level(pa.ancestor_rc, pa.ancestor);
    p.p2p_read = p2p_status_name(pa.p2p_rc[0], pa.p2p_status[0]);
    p.p2p_write = p2p_status_name(pa.p2p_rc[1], pa.p2p_status[1]);
    p.p2p_nvlink = p2p_status_name(pa.p2p_rc[2], pa.p2p_status[2]);
    p.p2p_atomics = p2p_status_name(pa.p2p_rc[3], pa.p2p_status[3]);
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<GpuPair> gpu_topology(const std::vector<Gpu>& gpus, const std::vector<PciDevice>& pci,
                                  const std::vector<GpuPair>& nvml_pairs) {
  auto find_pci = [&](const std::string& addr) -> const PciDevice* {
    for (const auto& d : pci)
      if (d.address == addr) return &d;
    return nullptr;
  };
  std::vector<GpuPair> out;
  for (std::size_t i = 0; i < gpus.size(); ++i)
    for (std::size_t j = i + 1; j < gpus.size(); ++j) {
      const Gpu& a = gpus[i];
      const Gpu& b = gpus[j];
      auto it = std::find_if(nvml_pairs.begin(), nvml_pairs.end(), [&](const GpuPair& p) {
        return p.gpu_a == a.pci_address && p.gpu_b == b.pci_address;
      });
      if (it != nvml_pairs.end()) {
        out.push_back(*it);
        continue;
      }
      GpuPair p;
      p.gpu_a = a.pci_address;
      p.gpu_b = b.pci_address;
      // NVLinks known without NVML's pair answers (a replayed probe of an older build).
      if (!a.nvlinks.empty() && !b.nvlinks.empty()) {
        p.nvlinks = links_between(a, b);
        if (*p.nvlinks > 0) {
          p.level = "NV" + std::to_string(*p.nvlinks);
          p.source = "nvml";
          out.push_back(std::move(p));
          continue;
        }
      }
      const PciDevice* pa = find_pci(a.pci_address);
      const PciDevice* pb = find_pci(b.pci_address);
      if (pa && pb) {
        p.level = classify_affinity(*pa, *pb);
        if (!p.level.empty()) p.source = "pci";
      }
      out.push_back(std::move(p));
    }
  return out;
}

std::string nvlink_version_name(int code) {
  switch (code) {
    case 1: return "1.0";
    case 2: return "2.0";
    case 3: return "2.2";
    case 4: return "3.0";
    case 5: return "3.1";
    case 6: return "4.0";
    case 7: return "5.0";
    default: return "";
  }
}

}  // namespace fabscope::probe
