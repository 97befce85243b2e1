#pragma once
// The test plays NCCL: its own declarations of the tuner structs, written from NCCL's public
// headers of each version (src/include/nccl_tuner.h in 2.19/2.20, src/include/plugin/tuner/
// tuner_v2.h .. tuner_v5.h in 2.21-2.28) independently of the plugin's nccl_abi.h, so a slip in
// one shows up against the other. ncclResult_t is an int-sized enum, ncclFunc_t too.
#include <cstddef>
#include <cstdint>

namespace nccl {

enum Result : int { Success = 0 };
enum Func : int { Broadcast = 0, Reduce = 1, AllGather = 2, ReduceScatter = 3, AllReduce = 4 };
enum Algo : int { Tree = 0, Ring = 1, CollNetDirect = 2, CollNetChain = 3, Nvls = 4, NvlsTree = 5, Pat = 6 };
enum Proto : int { LL = 0, LL128 = 1, Simple = 2 };
enum LogLevel : int { LogNone = 0, LogVersion = 1, LogWarn = 2, LogInfo = 3, LogAbort = 4, LogTrace = 5 };
constexpr int kAlgoUndef = -1;
constexpr int kProtoUndef = -1;
constexpr float kIgnore = -1.0f;
// 2.28: NCCL_NUM_ALGORITHMS 7 (with PAT), NCCL_NUM_PROTOCOLS 3; 2.22: 6 algorithms.
constexpr int kNumAlgos228 = 7;
constexpr int kNumAlgos222 = 6;
constexpr int kNumProtos = 3;

using Logger = void (*)(LogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...);

struct TunerV1 {
  const char* name;
  Result (*init)(size_t nRanks, size_t nNodes, Logger log);
  Result (*getCollInfo)(Func coll, size_t nBytes, int collNetSupport, int nvlsSupport, int numPipeOps,
                        int* algorithm, int* protocol, int* nChannels);
  Result (*destroy)();
};
struct TunerV2 {
  const char* name;
  Result (*init)(size_t nRanks, size_t nNodes, Logger log, void** context);
  Result (*getCollInfo)(void* context, Func coll, size_t nBytes, int collNetSupport, int nvlsSupport,
                        int numPipeOps, int* algorithm, int* protocol, int* nChannels);
  Result (*destroy)(void* context);
};
struct TunerV3 {
  const char* name;
  Result (*init)(size_t nRanks, size_t nNodes, Logger log, void** context);
  Result (*getCollInfo)(void* context, Func coll, size_t nBytes, int numPipeOps, float** collCostTable,
                        int numAlgo, int numProto, int* nChannels);
  Result (*destroy)(void* context);
};
struct TunerV4 {
  const char* name;
  Result (*init)(size_t nRanks, size_t nNodes, Logger log, void** context);
  Result (*getCollInfo)(void* context, Func coll, size_t nBytes, int numPipeOps, float** collCostTable,
                        int numAlgo, int numProto, int regBuff, int* nChannels);
  Result (*destroy)(void* context);
};
struct NvlDomainInfoV5 {
  int nNvlDomains;
  int minRanksPerNvlDomain;
  int maxRanksPerNvlDomain;
};
struct TunerConstantsV5 {
  double baseLatencies[7][3];
  double hwLatencies[3][7][3];
  double llMaxBws[4][3];
  double perChMaxRingLL128Bws[4][3];
  double perChMaxTreeLL128Bws[4][3];
  double perChMaxTreeBws[4][3];
  double perChMaxNVLSTreeBws[4][3];
};
struct TunerV5 {
  const char* name;
  Result (*init)(void** context, uint64_t commId, size_t nRanks, size_t nNodes, Logger log,
                 NvlDomainInfoV5* nvlDomainInfo, TunerConstantsV5* constants);
  Result (*getCollInfo)(void* context, Func coll, size_t nBytes, int numPipeOps, float** collCostTable,
                        int numAlgo, int numProto, int regBuff, int* nChannels);
  Result (*finalize)(void* context);
};

}  // namespace nccl
