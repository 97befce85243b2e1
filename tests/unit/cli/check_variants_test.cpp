// Each check id on a real fixture changed in one value (tests/fixtures/VARIANTS.md lists them and
// why). A variant is made at test time: copy the real tree (or probe JSON) into a TempDir, change
// the value, run `fabscope check --json`; the id must fire on the variant and not on the tree it
// was derived from.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <set>

#include "support/cli_run.hpp"
#include "core/json.hpp"
#include "support/fixtures.hpp"

using fabscope::json;
using fabscope::testing::fixture;
using fabscope::testing::quote;
using fabscope::testing::TempDir;
using fabscope::testing::write_file;

namespace {

namespace fs = std::filesystem;

// A fixture tree copied into a TempDir (the ttar unpacked).
struct Tree {
  TempDir dir;
  explicit Tree(const std::string& name) {
    if (name == "procfs-infiniband")
      fabscope::testing::unpack_ttar(fixture("procfs-infiniband/sys-class-infiniband-and-net.ttar"), dir.path());
    else
      fabscope::testing::copy_tree(fixture(name), dir.path());
  }
  void set(const std::string& rel, const std::string& text) const { write_file(dir.path(), rel, text); }
  std::string read(const std::string& rel) const {
    std::ifstream in(dir.path() / rel);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

std::multiset<std::string> ids_of(const std::string& args) {
  auto r = fabscope::testing::run_fabscope("check --json " + args, "", false);
  EXPECT_GE(r.exit_code, 0);
  EXPECT_LE(r.exit_code, 2) << r.out;
  std::multiset<std::string> ids;
  if (r.exit_code < 0 || r.exit_code > 2) return ids;
  const json j = json::parse(r.out);  // a named object: the loop must not range over a temporary's member
  for (const auto& f : j.at("findings")) ids.insert(f.at("id").get<std::string>());
  return ids;
}

std::multiset<std::string> ids_on(const Tree& t) { return ids_of("--root " + quote(t.dir.path().string())); }

// The id is absent from `quiet` and present in `fires`, both derived from `base`.
void expect_variant(const std::string& base, const std::string& id, const std::function<void(const Tree&)>& quiet,
                    const std::function<void(const Tree&)>& fires, std::size_t count = 1) {
  Tree clean(base), variant(base);
  quiet(clean);
  quiet(variant);
  fires(variant);
  EXPECT_EQ(ids_on(clean).count(id), 0u) << id << " on " << base;
  EXPECT_EQ(ids_on(variant).count(id), count) << id << " on the variant of " << base;
}

void nothing(const Tree&) {}

const char* kRxe1Port = "sys/class/infiniband/rxe1/ports/1/";
const char* kMlx4Port = "sys/class/infiniband/mlx4_0/ports/1/";
const char* kGpu0 = "sys/bus/pci/devices/0000:00:06.0/";

}  // namespace

TEST(CheckVariants, PortDown) {
  expect_variant("rxe-vm", "link.port_down", nothing,
                 [](const Tree& t) { t.set(std::string(kRxe1Port) + "state", "1: DOWN\n"); });
}

TEST(CheckVariants, PortDownMakesCheckExitTwo) {
  Tree t("rxe-vm");
  t.set(std::string(kRxe1Port) + "state", "1: DOWN\n");
  EXPECT_EQ(fabscope::testing::run_fabscope("check --root " + quote(t.dir.path().string())).exit_code, 2);
}

TEST(CheckVariants, PhysStateNotLinkUp) {
  expect_variant("procfs-infiniband", "link.phys_state", nothing, [](const Tree& t) {
    t.set("sys/class/infiniband/hfi1_0/ports/1/phys_state", "2: Polling\n");
  });
}

TEST(CheckVariants, RateDegraded) {
  expect_variant("rxe-vm", "link.rate_degraded", nothing,
                 [](const Tree& t) { t.set(std::string(kRxe1Port) + "rate", "2.5 Gb/sec (1X SDR)\n"); });
}

TEST(CheckVariants, ErrorCounters) {
  const std::pair<const char*, const char*> cases[] = {{"symbol_error", "link.symbol_errors"},
                                                       {"link_downed", "link.link_downed"},
                                                       {"link_error_recovery", "link.link_error_recovery"},
                                                       {"port_rcv_errors", "link.port_rcv_errors"}};
  for (const auto& [counter, id] : cases) {
    std::string file = std::string(kMlx4Port) + "counters/" + counter;
    expect_variant("procfs-infiniband", id, nothing, [&](const Tree& t) { t.set(file, "7\n"); });
  }
}

TEST(CheckVariants, NoRoceV2Gid) {
  // One setting, two files: both GID entries of rxe1 typed RoCE v1.
  expect_variant("rxe-vm", "roce.no_v2_gid", nothing, [](const Tree& t) {
    for (const char* i : {"0", "1"}) t.set(std::string(kRxe1Port) + "gid_attrs/types/" + i, "IB/RoCE v1\n");
  });
}

TEST(CheckVariants, NoIpv4Gid) {
  // veth1's IPv4 address removed: the kernel zeroes its GID slot.
  expect_variant("rxe-vm", "roce.no_ipv4_gid", nothing, [](const Tree& t) {
    t.set(std::string(kRxe1Port) + "gids/1", "0000:0000:0000:0000:0000:0000:0000:0000\n");
  });
}

TEST(CheckVariants, GidIndexMismatch) {
  // rxe1's two entries in the other order: its IPv4 entry at index 0, rxe0's at index 1.
  expect_variant("rxe-vm", "roce.gid_index_mismatch", nothing, [](const Tree& t) {
    std::string g0 = t.read(std::string(kRxe1Port) + "gids/0"), g1 = t.read(std::string(kRxe1Port) + "gids/1");
    t.set(std::string(kRxe1Port) + "gids/0", g1);
    t.set(std::string(kRxe1Port) + "gids/1", g0);
  });
}

TEST(CheckVariants, MtuLow) {
  expect_variant("rxe-vm", "roce.mtu_low", nothing, [](const Tree& t) { t.set("sys/class/net/veth0/mtu", "1500\n"); });
}

TEST(CheckVariants, GpuLinkDownclocked) {
  expect_variant("h200x2-node", "pcie.gpu_link_downclocked", nothing,
                 [](const Tree& t) { t.set(std::string(kGpu0) + "current_link_speed", "16.0 GT/s PCIe\n"); });
}

TEST(CheckVariants, GpuLinkNarrow) {
  expect_variant("h200x2-node", "pcie.gpu_link_narrow", nothing,
                 [](const Tree& t) { t.set(std::string(kGpu0) + "current_link_width", "8\n"); });
}

namespace {
// Rewrites the "Max locked memory" line of proc/self/limits (kernel layout: %-25s %-20s %-20s %-10s).
void set_memlock(const Tree& t, const std::string& soft_and_hard) {
  std::string limits = t.read("proc/self/limits");
  auto pos = limits.find("Max locked memory");
  ASSERT_NE(pos, std::string::npos);
  auto end = limits.find('\n', pos);
  char line[128];
  std::snprintf(line, sizeof line, "%-25s %-20s %-20s %-10s", "Max locked memory", soft_and_hard.c_str(),
                soft_and_hard.c_str(), "bytes");
  t.set("proc/self/limits", limits.replace(pos, end - pos, line));
}
}  // namespace

TEST(CheckVariants, MemlockLimited) {
  // The capture itself has 8 MiB; the quiet tree is the same with the limit raised.
  expect_variant(
      "rxe-vm", "os.memlock_limited", [](const Tree& t) { set_memlock(t, "unlimited"); },
      [](const Tree& t) { set_memlock(t, "8388608"); });
}

TEST(CheckVariants, SocketBuffersSmall) {
  // The capture has 4 MiB; the quiet tree has both raised to 16 MiB.
  expect_variant(
      "h200x2-node", "os.socket_buffers_small",
      [](const Tree& t) {
        t.set("proc/sys/net/core/rmem_max", "16777216\n");
        t.set("proc/sys/net/core/wmem_max", "16777216\n");
      },
      [](const Tree& t) { t.set("proc/sys/net/core/wmem_max", "4194304\n"); });
}

TEST(CheckVariants, IommuNotPassthrough) {
  expect_variant("h200x2-node", "os.iommu_not_passthrough", nothing, [](const Tree& t) {
    std::string cmdline = t.read("proc/cmdline");
    t.set("proc/cmdline", "intel_iommu=on " + cmdline);
  });
}

TEST(CheckVariants, FirmwareMismatch) {
  // mlx5_0 relabelled as the same HCA type as mlx4_0 (MT4099): two of one type, two firmwares.
  expect_variant("procfs-infiniband", "versions.fw_mismatch", nothing,
                 [](const Tree& t) { t.set("sys/class/infiniband/mlx5_0/hca_type", "MT4099\n"); });
}

// Facts only a live probe has (libibverbs' active MTU, ncclGetVersion): variants of the VM's
// live probe JSON, judged with --node.
namespace {
void expect_json_variant(const std::string& id, const std::function<void(json&)>& change) {
  std::ifstream in(fixture("rxe-vm") / "probe-live.json");
  json j = json::parse(in);
  TempDir t;
  write_file(t.path(), "clean.json", j.dump());
  change(j);
  write_file(t.path(), "variant.json", j.dump());
  EXPECT_EQ(ids_of("--node " + quote((t.path() / "clean.json").string())).count(id), 0u) << id;
  EXPECT_EQ(ids_of("--node " + quote((t.path() / "variant.json").string())).count(id), 1u) << id;
}
}  // namespace

TEST(CheckVariants, MtuMismatchOnTheLiveProbe) {
  expect_json_variant("roce.mtu_mismatch", [](json& j) {
    j["rdma_devices"][0]["ports"][0]["active_mtu"] = 1024;  // the kernel's own, via ibv_query_port
  });
}

TEST(CheckVariants, NcclOldOnTheLiveProbe) {
  expect_json_variant("versions.nccl_old", [](json& j) {
    j["versions"]["nccl"] = "2.13.4";
    j["versions"]["nccl_code"] = 21304;
  });
}

TEST(CheckVariants, VerbsDeviceNotVisibleOnTheRealNoProviderProbe) {
  // Not a variant: the VM's real probe with the rxe provider moved away.
  auto ids = ids_of("--node " + quote((fixture("rxe-vm") / "probe-live-no-provider.json").string()));
  EXPECT_EQ(ids.count("verbs.device_not_visible"), 2u);
  EXPECT_EQ(ids_of("--node " + quote((fixture("rxe-vm") / "probe-live.json").string())).count("verbs.device_not_visible"),
            0u);
}

TEST(CheckVariants, IrqRemoteNuma) {
  // The VM has one NUMA node; split its two vCPUs into two nodes and put eth0's function on the
  // second: two of eth0's three vectors (config and output.0) are delivered to CPU 0.
  expect_variant("virtio-2cpu-node", "irq.remote_numa", nothing, [](const Tree& t) {
    t.set("sys/devices/system/node/node0/cpulist", "0\n");
    t.set("sys/devices/system/node/node1/cpulist", "1\n");
    t.set("sys/bus/pci/devices/0000:00:03.0/numa_node", "1\n");
  });
}
