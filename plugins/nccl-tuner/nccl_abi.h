/* The parts of NCCL's tuner plugin ABI this plugin implements, declared from reading NCCL's
 * public sources (src/include/nccl_tuner.h of 2.19-2.20, src/include/plugin/tuner/tuner_v2.h
 * .. tuner_v5.h of 2.21-2.28). Only what crosses the boundary: result codes, the logger, the
 * collective/algorithm/protocol numbering and one struct of function pointers per version.
 *
 * Which NCCL looks for which symbol (it takes the newest it knows):
 *   ncclTunerPlugin_v1  2.19, 2.20     no context; NCCL passes algorithm/protocol out-params
 *   ncclTunerPlugin_v2  2.21 (and later as fallback)  context; algorithm/protocol out-params
 *   ncclTunerPlugin_v3  2.22, 2.23     cost table in/out (algo x proto floats, -1 = ignored)
 *   ncclTunerPlugin_v4  2.24 - 2.27    v3 plus regBuff
 *   ncclTunerPlugin_v5  2.28           init with commId, NVLink domain info, tuning constants */
#ifndef FABSCOPE_NCCL_ABI_H
#define FABSCOPE_NCCL_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int fst_nccl_result; /* ncclResult_t: an enum, passed as int */
#define FST_NCCL_SUCCESS 0
#define FST_NCCL_INTERNAL_ERROR 3
#define FST_NCCL_INVALID_ARGUMENT 4

/* ncclDebugLogLevel and the subsystem flags the plugin logs under. */
#define FST_LOG_WARN 2
#define FST_LOG_INFO 3
#define FST_LOG_TRACE 5
#define FST_LOGSUB_INIT 0x1UL
#define FST_LOGSUB_TUNING 0x40UL
typedef void (*fst_nccl_logger)(int level, unsigned long flags, const char* file, int line,
                                const char* fmt, ...);

/* ncclFunc_t: the same numbers in every version 2.19-2.28 for the five tunable collectives. */
enum { FST_COLL_BROADCAST = 0, FST_COLL_REDUCE = 1, FST_COLL_ALLGATHER = 2,
       FST_COLL_REDUCESCATTER = 3, FST_COLL_ALLREDUCE = 4, FST_COLL_COUNT = 5 };
/* NCCL_ALGO_*: PAT (6) exists from 2.23; 2.19-2.22 have six algorithms. */
enum { FST_ALGO_TREE = 0, FST_ALGO_RING = 1, FST_ALGO_COLLNET_DIRECT = 2,
       FST_ALGO_COLLNET_CHAIN = 3, FST_ALGO_NVLS = 4, FST_ALGO_NVLS_TREE = 5, FST_ALGO_PAT = 6,
       FST_ALGO_COUNT = 7 };
/* NCCL_PROTO_* */
enum { FST_PROTO_LL = 0, FST_PROTO_LL128 = 1, FST_PROTO_SIMPLE = 2, FST_PROTO_COUNT = 3 };
#define FST_ALGO_UNDEF (-1)
#define FST_PROTO_UNDEF (-1)
/* NCCL_ALGO_PROTO_IGNORE: a cost-table entry NCCL will not use. */
#define FST_COST_IGNORE (-1.0f)

typedef struct {
  const char* name;
  fst_nccl_result (*init)(size_t nRanks, size_t nNodes, fst_nccl_logger log);
  fst_nccl_result (*getCollInfo)(int collType, size_t nBytes, int collNetSupport, int nvlsSupport,
                                 int numPipeOps, int* algorithm, int* protocol, int* nChannels);
  fst_nccl_result (*destroy)(void);
} fst_tuner_v1;

typedef struct {
  const char* name;
  fst_nccl_result (*init)(size_t nRanks, size_t nNodes, fst_nccl_logger log, void** context);
  fst_nccl_result (*getCollInfo)(void* context, int collType, size_t nBytes, int collNetSupport,
                                 int nvlsSupport, int numPipeOps, int* algorithm, int* protocol,
                                 int* nChannels);
  fst_nccl_result (*destroy)(void* context);
} fst_tuner_v2;

/* collCostTable is typed float** in NCCL's header but is the address of a contiguous
 * float[numAlgo][numProto] array (NCCL casts it): entry (a, p) is ((float*)table)[a*numProto+p]. */
typedef struct {
  const char* name;
  fst_nccl_result (*init)(size_t nRanks, size_t nNodes, fst_nccl_logger log, void** context);
  fst_nccl_result (*getCollInfo)(void* context, int collType, size_t nBytes, int numPipeOps,
                                 float** collCostTable, int numAlgo, int numProto, int* nChannels);
  fst_nccl_result (*destroy)(void* context);
} fst_tuner_v3;

typedef struct {
  const char* name;
  fst_nccl_result (*init)(size_t nRanks, size_t nNodes, fst_nccl_logger log, void** context);
  fst_nccl_result (*getCollInfo)(void* context, int collType, size_t nBytes, int numPipeOps,
                                 float** collCostTable, int numAlgo, int numProto, int regBuff,
                                 int* nChannels);
  fst_nccl_result (*destroy)(void* context);
} fst_tuner_v4;

/* v5 passes two structs the plugin may read (and the constants it may change); this plugin
 * reads neither, so they stay opaque here. */
typedef struct {
  const char* name;
  fst_nccl_result (*init)(void** context, uint64_t commId, size_t nRanks, size_t nNodes,
                          fst_nccl_logger log, void* nvlDomainInfo, void* constants);
  fst_nccl_result (*getCollInfo)(void* context, int collType, size_t nBytes, int numPipeOps,
                                 float** collCostTable, int numAlgo, int numProto, int regBuff,
                                 int* nChannels);
  fst_nccl_result (*finalize)(void* context);
} fst_tuner_v5;

#ifdef __cplusplus
}
#endif
#endif
