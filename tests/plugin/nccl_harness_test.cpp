// libnccl-tuner-fabscope.so opened with dlopen and called as NCCL 2.19-2.28 call it: init per
// communicator, getCollInfo per collective with the inputs NCCL prepares (a cost table with
// NCCL_ALGO_PROTO_IGNORE entries, nMaxChannels 0; or UNDEF algorithm/protocol out-params), then
// destroy/finalize.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "nccl_caller.hpp"

namespace {

std::vector<std::pair<int, std::string>> g_log;

void logger(nccl::LogLevel level, unsigned long, const char*, int, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  g_log.emplace_back(level, buf);
}

int count_log(int level, const std::string& part) {
  int n = 0;
  for (const auto& [l, s] : g_log) n += l == level && s.find(part) != std::string::npos;
  return n;
}

struct Decision {
  int algo = nccl::kAlgoUndef;
  int proto = nccl::kProtoUndef;
  int channels = 0;
  bool operator==(const Decision&) const = default;
};
std::ostream& operator<<(std::ostream& o, const Decision& d) {
  return o << "{algo " << d.algo << ", proto " << d.proto << ", channels " << d.channels << "}";
}
const Decision kUntouched{};

struct Call {
  nccl::Func coll = nccl::AllReduce;
  size_t bytes = 1 << 20;
  size_t nranks = 8, nnodes = 1;
  int pipe_ops = 1;
  int reg_buff = 0;
  int collnet = 0, nvls = 0;           // v1/v2 support flags
  std::vector<std::pair<int, int>> ignored;  // cost-table entries NCCL marked unusable
  int num_algos = nccl::kNumAlgos228;
};

class Plugin : public ::testing::Test {
 protected:
  void SetUp() override {
    handle_ = dlopen(FABSCOPE_TUNER_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    char tmpl[] = "/tmp/fabscope-tuner-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/table.csv";
    setenv("NCCL_TUNER_CONFIG_FILE", path_.c_str(), 1);
    g_log.clear();
  }
  void TearDown() override {
    std::remove(path_.c_str());
    rmdir(dir_.c_str());
    unsetenv("NCCL_TUNER_CONFIG_FILE");
    if (handle_) dlclose(handle_);
  }
  void table(const std::string& text) { std::ofstream(path_) << text; }
  template <class T>
  const T* sym(const char* name) {
    auto* p = static_cast<const T*>(dlsym(handle_, name));
    EXPECT_NE(p, nullptr) << name;
    return p;
  }

  // One communicator: init, one getCollInfo, destroy — as NCCL does per version.
  Decision call(int version, const Call& c) {
    Decision d;
    float cost[nccl::kNumAlgos228][nccl::kNumProtos];
    for (int a = 0; a < c.num_algos; ++a)
      for (int p = 0; p < nccl::kNumProtos; ++p) cost[a][p] = 100.0f + 10 * a + p;
    for (auto [a, p] : c.ignored) cost[a][p] = nccl::kIgnore;
    auto from_cost = [&] {
      for (int a = 0; a < c.num_algos; ++a)
        for (int p = 0; p < nccl::kNumProtos; ++p)
          if (cost[a][p] == 0.0f) { d.algo = a; d.proto = p; }
    };
    void* ctx = nullptr;
    switch (version) {
      case 1: {
        auto* t = sym<nccl::TunerV1>("ncclTunerPlugin_v1");
        EXPECT_EQ(t->init(c.nranks, c.nnodes, logger), nccl::Success);
        EXPECT_EQ(t->getCollInfo(c.coll, c.bytes, c.collnet, c.nvls, c.pipe_ops, &d.algo, &d.proto, &d.channels), nccl::Success);
        EXPECT_EQ(t->destroy(), nccl::Success);
        break;
      }
      case 2: {
        auto* t = sym<nccl::TunerV2>("ncclTunerPlugin_v2");
        EXPECT_EQ(t->init(c.nranks, c.nnodes, logger, &ctx), nccl::Success);
        EXPECT_EQ(t->getCollInfo(ctx, c.coll, c.bytes, c.collnet, c.nvls, c.pipe_ops, &d.algo, &d.proto, &d.channels), nccl::Success);
        EXPECT_EQ(t->destroy(ctx), nccl::Success);
        break;
      }
      case 3: {
        auto* t = sym<nccl::TunerV3>("ncclTunerPlugin_v3");
        EXPECT_EQ(t->init(c.nranks, c.nnodes, logger, &ctx), nccl::Success);
        EXPECT_EQ(t->getCollInfo(ctx, c.coll, c.bytes, c.pipe_ops, reinterpret_cast<float**>(cost), c.num_algos,
                                 nccl::kNumProtos, &d.channels), nccl::Success);
        EXPECT_EQ(t->destroy(ctx), nccl::Success);
        from_cost();
        break;
      }
      case 4: {
        auto* t = sym<nccl::TunerV4>("ncclTunerPlugin_v4");
        EXPECT_EQ(t->init(c.nranks, c.nnodes, logger, &ctx), nccl::Success);
        EXPECT_EQ(t->getCollInfo(ctx, c.coll, c.bytes, c.pipe_ops, reinterpret_cast<float**>(cost), c.num_algos,
                                 nccl::kNumProtos, c.reg_buff, &d.channels), nccl::Success);
        EXPECT_EQ(t->destroy(ctx), nccl::Success);
        from_cost();
        break;
      }
      case 5: {
        auto* t = sym<nccl::TunerV5>("ncclTunerPlugin_v5");
        nccl::NvlDomainInfoV5 nvl{1, static_cast<int>(c.nranks), static_cast<int>(c.nranks)};
        nccl::TunerConstantsV5 constants{};
        EXPECT_EQ(t->init(&ctx, 0x1234, c.nranks, c.nnodes, logger, &nvl, &constants), nccl::Success);
        EXPECT_EQ(t->getCollInfo(ctx, c.coll, c.bytes, c.pipe_ops, reinterpret_cast<float**>(cost), c.num_algos,
                                 nccl::kNumProtos, c.reg_buff, &d.channels), nccl::Success);
        EXPECT_EQ(t->finalize(ctx), nccl::Success);
        from_cost();
        break;
      }
    }
    return d;
  }

  void* handle_ = nullptr;
  std::string dir_, path_;
};

class EveryVersion : public Plugin, public ::testing::WithParamInterface<int> {};

TEST_P(EveryVersion, ExportsItsSymbolNamedFabscope) {
  std::string name = "ncclTunerPlugin_v" + std::to_string(GetParam());
  auto* t = sym<nccl::TunerV2>(name.c_str());  // name is the first member in every version
  ASSERT_NE(t, nullptr);
  EXPECT_STREQ(t->name, "fabscope");
}

TEST_P(EveryVersion, MatchingRowSetsAlgorithmProtocolChannels) {
  table("# a comment\nallreduce,0,4194304,ring,simple,16,1,8\n");
  EXPECT_EQ(call(GetParam(), {}), (Decision{nccl::Ring, nccl::Simple, 16}));
  EXPECT_EQ(count_log(nccl::LogInfo, "1 rows from " + path_), 1);
}

TEST_P(EveryVersion, EmptyTableLeavesNcclAlone) {
  table("# nothing measured\n\n");
  EXPECT_EQ(call(GetParam(), {}), kUntouched);
  EXPECT_EQ(count_log(nccl::LogWarn, ""), 0);
}

TEST_P(EveryVersion, MissingTableLeavesNcclAloneAndSaysSo) {
  EXPECT_EQ(call(GetParam(), {}), kUntouched);
  EXPECT_EQ(count_log(nccl::LogInfo, "no table (" + path_ + " cannot be opened)"), 1);
}

TEST_P(EveryVersion, SizeOutsideEveryRowLeavesNcclAlone) {
  table("allreduce,1024,65536,ring,ll,4,-1,-1\nallreduce,65537,1048575,ring,ll128,4,-1,-1\n");
  Call c;
  c.bytes = 1048576;
  EXPECT_EQ(call(GetParam(), c), kUntouched);
  c.bytes = 1023;
  EXPECT_EQ(call(GetParam(), c), kUntouched);
  c.bytes = 1024;
  EXPECT_EQ(call(GetParam(), c), (Decision{nccl::Ring, nccl::LL, 4}));
  c.bytes = 65537;
  EXPECT_EQ(call(GetParam(), c), (Decision{nccl::Ring, nccl::LL128, 4}));
}

TEST_P(EveryVersion, BadLinesAreSkippedWithFileAndLine) {
  table("allreduce,0,100,ring,simple,2,-1,-1\n"
        "allreduce,zero,100,ring,simple,2,-1,-1\n"
        "allreduce,0,100,ring\n"
        "alltoall,0,100,ring,simple,2,-1,-1\n"
        "allreduce,0,99999999999999999999999,ring,simple,2,-1,-1\n"
        "allreduce,0,4294967295,ring,simple,8,-1,-1\n");
  EXPECT_EQ(call(GetParam(), {}), (Decision{nccl::Ring, nccl::Simple, 8}));
  EXPECT_EQ(count_log(nccl::LogWarn, path_ + ":2: min_bytes is not a byte count: 'zero'"), 1);
  EXPECT_EQ(count_log(nccl::LogWarn, path_ + ":3: 4 fields"), 1);
  EXPECT_EQ(count_log(nccl::LogWarn, path_ + ":4: unknown collective"), 1);
  EXPECT_EQ(count_log(nccl::LogWarn, path_ + ":5: max_bytes"), 1);
  EXPECT_EQ(count_log(nccl::LogInfo, "2 rows from " + path_ + " (4 bad lines skipped)"), 1);
}

TEST_P(EveryVersion, GarbageTableNeverCrashes) {
  std::string junk;
  for (int i = 0; i < 4096; ++i) junk += static_cast<char>((i * 7919) % 256);
  table(junk + "\n" + std::string(5000, ',') + "\nallreduce,,,,,,,\n");
  EXPECT_EQ(call(GetParam(), {}), kUntouched);
}

TEST_P(EveryVersion, NodesAndRanksMustMatch) {
  table("allreduce,0,4294967295,ring,simple,4,2,16\nallreduce,0,4294967295,ring,ll,-1,1,8\n");
  Call c;
  EXPECT_EQ(call(GetParam(), c), (Decision{nccl::Ring, nccl::LL, 0}));  // -1 channels: NCCL's
  c.nnodes = 2;
  c.nranks = 16;
  EXPECT_EQ(call(GetParam(), c), (Decision{nccl::Ring, nccl::Simple, 4}));
  c.nranks = 12;
  EXPECT_EQ(call(GetParam(), c), kUntouched);
}

TEST_P(EveryVersion, OtherCollectivesUntouched) {
  table("allgather,0,4294967295,ring,simple,4,-1,-1\n");
  Call c;
  EXPECT_EQ(call(GetParam(), c), kUntouched);
  c.coll = nccl::AllGather;
  EXPECT_EQ(call(GetParam(), c), (Decision{nccl::Ring, nccl::Simple, 4}));
}

TEST_P(EveryVersion, MoreChannelsThanNcclOffersAreCapped) {
  table("allreduce,0,4294967295,ring,simple,1000,-1,-1\n");
  const int cap = GetParam() == 5 ? 64 : 32;
  EXPECT_EQ(call(GetParam(), {}), (Decision{nccl::Ring, nccl::Simple, cap}));
  EXPECT_EQ(count_log(nccl::LogWarn, "1000 channels asked, this NCCL interface allows " + std::to_string(cap)), 1);
}

TEST_P(EveryVersion, WindowsLineEndsAndSpaces) {
  table("# header\r\n allreduce , 0 , 4194304 , RING , Simple , 2 , -1 , -1 \r\n");
  EXPECT_EQ(call(GetParam(), {}), (Decision{nccl::Ring, nccl::Simple, 2}));
}

INSTANTIATE_TEST_SUITE_P(V, EveryVersion, ::testing::Values(1, 2, 3, 4, 5),
                         [](const auto& info) { return "v" + std::to_string(info.param); });

class CostTableVersions : public Plugin, public ::testing::WithParamInterface<int> {};

TEST_P(CostTableVersions, IgnoredEntryFallsThroughToNextMatchingRow) {
  table("allreduce,0,4294967295,nvls,simple,8,-1,-1\nallreduce,0,4294967295,tree,ll128,-1,-1,-1\n");
  Call c;
  c.ignored = {{nccl::Nvls, nccl::Simple}};
  EXPECT_EQ(call(GetParam(), c), (Decision{nccl::Tree, nccl::LL128, 0}));
  c.ignored.push_back({nccl::Tree, nccl::LL128});
  EXPECT_EQ(call(GetParam(), c), kUntouched);
}

TEST_P(CostTableVersions, PatBeyondNumAlgoOf222IsNotWritten) {
  table("reducescatter,0,4294967295,pat,simple,-1,-1,-1\n");
  Call c;
  c.coll = nccl::ReduceScatter;
  c.num_algos = nccl::kNumAlgos222;  // 2.22: no PAT, the table has 6 rows
  EXPECT_EQ(call(GetParam(), c), kUntouched);
  c.num_algos = nccl::kNumAlgos228;
  EXPECT_EQ(call(GetParam(), c), (Decision{nccl::Pat, nccl::Simple, 0}));
}

INSTANTIATE_TEST_SUITE_P(V, CostTableVersions, ::testing::Values(3, 4, 5),
                         [](const auto& info) { return "v" + std::to_string(info.param); });

class RegBuffVersions : public Plugin, public ::testing::WithParamInterface<int> {};

TEST_P(RegBuffVersions, PipeOpsAndRegBuffColumnsMatch) {
  table("allreduce,0,4294967295,ring,ll,2,-1,-1,4,1\nallreduce,0,4294967295,ring,simple,3,-1,-1,-1,0\n");
  Call c;
  c.pipe_ops = 4;
  c.reg_buff = 1;
  EXPECT_EQ(call(GetParam(), c), (Decision{nccl::Ring, nccl::LL, 2}));
  c.reg_buff = 0;
  EXPECT_EQ(call(GetParam(), c), (Decision{nccl::Ring, nccl::Simple, 3}));
  c.pipe_ops = 1;
  c.reg_buff = 1;
  EXPECT_EQ(call(GetParam(), c), kUntouched);
}

INSTANTIATE_TEST_SUITE_P(V, RegBuffVersions, ::testing::Values(4, 5),
                         [](const auto& info) { return "v" + std::to_string(info.param); });

class OutParamVersions : public Plugin, public ::testing::WithParamInterface<int> {};

TEST_P(OutParamVersions, OnlyChoicesTheseNcclVersionsAcceptArePassedOn) {
  // No cost table in 2.19-2.21: tree is all-reduce only, NVLS needs nvlsSupport, no PAT.
  table("allgather,0,4294967295,tree,simple,2,-1,-1\n"
        "allreduce,0,4294967295,nvls,simple,2,-1,-1\n"
        "reducescatter,0,4294967295,pat,simple,2,-1,-1\n");
  Call c;
  c.coll = nccl::AllGather;
  EXPECT_EQ(call(GetParam(), c), kUntouched);
  c.coll = nccl::ReduceScatter;
  EXPECT_EQ(call(GetParam(), c), kUntouched);
  c.coll = nccl::AllReduce;
  EXPECT_EQ(call(GetParam(), c), kUntouched);
  c.nvls = 1;
  EXPECT_EQ(call(GetParam(), c), (Decision{nccl::Nvls, nccl::Simple, 2}));
}

INSTANTIATE_TEST_SUITE_P(V, OutParamVersions, ::testing::Values(1, 2),
                         [](const auto& info) { return "v" + std::to_string(info.param); });

TEST_F(Plugin, ForcedChoiceReplacesTheTableForItsCollectiveOnly) {
  table("allreduce,0,4294967295,ring,simple,8,-1,-1\nallgather,0,4294967295,ring,ll,2,-1,-1\n");
  using Force = int (*)(int, int, int, int);
  using Stats = void (*)(long*, long*);
  auto force = reinterpret_cast<Force>(dlsym(handle_, "fabscope_tuner_force"));
  auto stats = reinterpret_cast<Stats>(dlsym(handle_, "fabscope_tuner_force_stats"));
  ASSERT_NE(force, nullptr);
  ASSERT_NE(stats, nullptr);
  EXPECT_EQ(force(nccl::AllReduce, nccl::Tree, nccl::LL128, 24), 0);
  EXPECT_EQ(call(5, {}), (Decision{nccl::Tree, nccl::LL128, 24}));
  Call ag;
  ag.coll = nccl::AllGather;
  EXPECT_EQ(call(5, ag), (Decision{nccl::Ring, nccl::LL, 2}));
  Call unusable;
  unusable.ignored = {{nccl::Tree, nccl::LL128}};
  EXPECT_EQ(call(5, unusable), kUntouched);
  long applied = -1, unavailable = -1;
  stats(&applied, &unavailable);
  EXPECT_EQ(applied, 1);
  EXPECT_EQ(unavailable, 1);
  EXPECT_EQ(force(nccl::AllReduce, -1, -1, 12), 0);  // channels only
  EXPECT_EQ(call(5, {}), (Decision{nccl::kAlgoUndef, nccl::kProtoUndef, 12}));
  EXPECT_EQ(force(-1, -1, -1, -1), 0);
  EXPECT_EQ(call(5, {}), (Decision{nccl::Ring, nccl::Simple, 8}));
  EXPECT_EQ(force(nccl::AllReduce, nccl::Tree, -1, 4), -1);  // algorithm without protocol
  EXPECT_EQ(force(nccl::AllReduce, 9, nccl::LL, 4), -1);
}

TEST_F(Plugin, ReportsTheShapeNcclGaveItsLastInit) {
  // fabscope tune writes rows for this shape: NCCL's node count, not the hosts' (two ranks of one
  // host with P2P and SHM disabled are two nodes to NCCL 2.28).
  using Shape = int (*)(long*, long*);
  auto shape = reinterpret_cast<Shape>(dlsym(handle_, "fabscope_tuner_shape"));
  ASSERT_NE(shape, nullptr);
  for (int version : {5, 3, 1}) {
    Call c;
    c.nranks = 2 + version;
    c.nnodes = 2;
    call(version, c);
    long nranks = 0, nnodes = 0;
    EXPECT_EQ(shape(&nranks, &nnodes), 0) << version;
    EXPECT_EQ(nranks, 2 + version) << version;
    EXPECT_EQ(nnodes, 2) << version;
  }
  EXPECT_EQ(shape(nullptr, nullptr), 0);
}

TEST(PluginLinkage, NeedsLibcOnly) {
  // NCCL loads the plugin into every training process: no libstdc++, no libgcc_s.
  std::string cmd = std::string("objdump -p '") + FABSCOPE_TUNER_PLUGIN + "' 2>/dev/null | grep NEEDED";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[256];
  std::string needed;
  while (fgets(buf, sizeof buf, p)) needed += buf;
  pclose(p);
  if (needed.empty()) GTEST_SKIP() << "objdump not available";
  for (const char* lib : {"libstdc++", "libgcc_s", "libm.so"})
    EXPECT_EQ(needed.find(lib), std::string::npos) << needed;
  EXPECT_NE(needed.find("libc.so"), std::string::npos) << needed;
}

}  // namespace
