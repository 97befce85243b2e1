#include "probe/irq.hpp"

#include <algorithm>

#include "probe/read_util.hpp"

namespace fabscope::probe {

namespace {
constexpr int kMaxCpu = 65535;
}

std::optional<std::vector<int>> parse_cpulist(std::string_view text) {
  std::vector<int> out;
  text = core::trim(text);
  if (text.empty()) return out;
  for (const auto& part : core::split(text, ',')) {
    auto dash = part.find('-');
    auto lo = core::parse_int(std::string_view(part).substr(0, dash));
    auto hi = dash == std::string::npos ? lo : core::parse_int(std::string_view(part).substr(dash + 1));
    if (!lo || !hi || *lo < 0 || *hi < *lo || *hi > kMaxCpu) return std::nullopt;
    // A stride ("0-7:2") is only used when writing; the kernel prints plain ranges.
    for (auto c = *lo; c <= *hi; ++c) out.push_back(static_cast<int>(c));
    if (out.size() > kMaxCpu + 1) return std::nullopt;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::map<int, InterruptLine> parse_interrupts(std::string_view text) {
  std::map<int, InterruptLine> out;
  auto lines = core::split(text, '\n');
  if (lines.empty()) return out;
  // Header: "           CPU0       CPU1 ..."; one count column per online CPU.
  std::size_t cpus = 0;
  for (const auto& w : core::split_ws(lines[0]))
    if (core::starts_with(w, "CPU")) ++cpus;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    auto words = core::split_ws(lines[i]);
    if (words.size() < 2 || words[0].size() < 2 || words[0].back() != ':') continue;
    auto irq = core::parse_int(std::string_view(words[0]).substr(0, words[0].size() - 1));
    if (!irq || *irq < 0 || *irq > 1'000'000) continue;  // NMI:, LOC:, ERR:, ...
    InterruptLine l;
    std::size_t k = 1;
    for (; k < words.size() && k <= cpus; ++k) {
      auto v = core::parse_u64(words[k]);
      if (!v) break;
      l.total += *v;
    }
    if (k < words.size()) l.name = words.back();
    out[static_cast<int>(*irq)] = std::move(l);
  }
  return out;
}

std::vector<NumaNode> collect_numa_nodes(const core::Root& root, std::vector<std::string>& notes) {
  std::vector<NumaNode> out;
  const std::string dir = "sys/devices/system/node";
  for (const auto& name : root.list(dir)) {
    if (!core::starts_with(name, "node")) continue;
    auto id = core::parse_int(std::string_view(name).substr(4));
    if (!id || *id < 0 || *id > 4095) continue;
    const std::string rel = dir + "/" + name + "/cpulist";
    auto line = root.read(rel, 64 * 1024);
    if (!line) {
      if (root.exists(rel)) notes.push_back(rel + ": " + unreadable_reason(root, rel));
      continue;
    }
    auto cpus = parse_cpulist(*line);
    if (!cpus) {
      notes.push_back(rel + ": not a CPU list: " + quote(*line));
      continue;
    }
    out.push_back(NumaNode{static_cast<int>(*id), std::move(*cpus)});
  }
  std::sort(out.begin(), out.end(), [](const NumaNode& a, const NumaNode& b) { return a.node < b.node; });
  return out;
}

std::vector<NicIrqs> collect_nic_irqs(const core::Root& root, const std::vector<Netdev>& netdevs,
                                      const std::vector<RdmaDevice>& rdma, const std::vector<PciDevice>& pci,
                                      std::vector<std::string>& notes) {
  std::vector<NicIrqs> out;
  auto entry = [&](const std::string& addr) -> NicIrqs& {
    for (auto& n : out)
      if (n.pci_address == addr) return n;
    out.push_back(NicIrqs{});
    out.back().pci_address = addr;
    return out.back();
  };
  for (const auto& n : netdevs)
    if (!n.is_virtual && !n.pci_address.empty()) entry(n.pci_address).netdevs.push_back(n.name);
  for (const auto& d : rdma)
    if (!d.pci_address.empty()) entry(d.pci_address).rdma_devices.push_back(d.name);
  if (out.empty()) return out;

  std::map<int, InterruptLine> counts;
  if (auto text = root.read("proc/interrupts", 32u << 20)) counts = parse_interrupts(*text);

  for (auto& nic : out) {
    for (const auto& p : pci)
      if (p.address == nic.pci_address) nic.numa_node = p.numa_node;
    const std::string dir = "sys/bus/pci/devices/" + nic.pci_address + "/msi_irqs";
    if (!root.is_dir(dir)) {
      nic.note = root.exists("sys/bus/pci/devices/" + nic.pci_address) ? "no msi_irqs (legacy INTx or not captured)"
                                                                       : "PCI function not in sys/bus/pci/devices";
      continue;
    }
    std::vector<int> irqs;
    for (const auto& e : root.list(dir))
      if (auto v = core::parse_int(e); v && *v >= 0 && *v <= 1'000'000) irqs.push_back(static_cast<int>(*v));
    std::sort(irqs.begin(), irqs.end());
    std::size_t unreadable = 0;
    std::string reason;
    for (int irq : irqs) {
      IrqInfo info;
      info.irq = irq;
      if (auto it = counts.find(irq); it != counts.end()) {
        info.count = it->second.total;
        info.name = is_valid_utf8(it->second.name) ? it->second.name : "";
      }
      // The effective affinity is where the interrupt is delivered now (one CPU on x86 for
      // managed vectors); smp_affinity_list is the allowed set, which may span every CPU.
      for (const char* file : {"effective_affinity_list", "smp_affinity_list"}) {
        const std::string rel = "proc/irq/" + std::to_string(irq) + "/" + file;
        auto line = root.read_line(rel);
        if (!line) {
          if (root.exists(rel)) {
            ++unreadable;
            reason = unreadable_reason(root, rel);
          }
          continue;
        }
        auto cpus = parse_cpulist(*line);
        if (!cpus || cpus->empty()) continue;
        info.affinity_cpus = std::move(*cpus);
        info.affinity_source = file;
        break;
      }
      nic.irqs.push_back(std::move(info));
    }
    if (unreadable > 0 && std::none_of(nic.irqs.begin(), nic.irqs.end(),
                                       [](const IrqInfo& i) { return !i.affinity_cpus.empty(); })) {
      nic.note = "proc/irq/N affinity " + reason;
      notes.push_back(dir + ": interrupt affinities " + reason + ", IRQ placement not judged");
    }
  }
  return out;
}

}  // namespace fabscope::probe
