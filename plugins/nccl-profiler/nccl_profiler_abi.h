/* The parts of NCCL's profiler plugin ABI this plugin implements, declared from reading NCCL's
 * public sources (ext-profiler/example/nccl/profiler.h, profiler_v4.h, profiler_v5.h of 2.26-2.28)
 * and NCCL's own caller (src/plugin/profiler.cc of 2.28). Only what crosses the boundary.
 *
 * Which NCCL looks for which symbol (it takes the newest it knows):
 *   ncclProfiler_v5  2.28          init(context, commId, mask, commName, nNodes, nranks, rank, log);
 *                                  64-bit event type; API events (group/coll/p2p API, kernel launch)
 *   ncclProfiler_v4  2.26, 2.27    init(context, mask, commName, commHash, nNodes, nranks, rank, log);
 *                                  kernel-channel events carry the GPU global timer
 *   v1-v3 (2.23-2.25) carry no GPU time and, before 2.25, no completion of a collective whose
 *   channels use no proxy (NVLink, shared memory): this plugin does not export them, so those
 *   versions report it unsupported and run without it. */
#ifndef FABSCOPE_NCCL_PROFILER_ABI_H
#define FABSCOPE_NCCL_PROFILER_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef int fsp_nccl_result; /* ncclResult_t */
#define FSP_NCCL_SUCCESS 0
#define FSP_NCCL_SYSTEM_ERROR 2
#define FSP_NCCL_INTERNAL_ERROR 3

#define FSP_LOG_WARN 2
#define FSP_LOG_INFO 3
#define FSP_LOGSUB_INIT 0x1UL
#define FSP_LOGSUB_ENV 0x1000UL
typedef void (*fsp_nccl_logger)(int level, unsigned long flags, const char* file, int line,
                                const char* fmt, ...);

/* Event types (ncclProfile*): bits, also the activation mask. */
enum {
  FSP_EV_GROUP = 1 << 0,
  FSP_EV_COLL = 1 << 1,
  FSP_EV_P2P = 1 << 2,
  FSP_EV_PROXY_OP = 1 << 3,
  FSP_EV_PROXY_STEP = 1 << 4,
  FSP_EV_PROXY_CTRL = 1 << 5,
  FSP_EV_KERNEL_CH = 1 << 6,
  FSP_EV_NET_PLUGIN = 1 << 7,
  FSP_EV_GROUP_API = 1 << 8,
  FSP_EV_COLL_API = 1 << 9,
  FSP_EV_P2P_API = 1 << 10,
  FSP_EV_KERNEL_LAUNCH = 1 << 11
};

/* Event states (ncclProfilerEventState_t) the plugin reads. */
enum {
  FSP_STATE_SEND_GPU_WAIT = 8,
  FSP_STATE_SEND_WAIT = 9,
  FSP_STATE_RECV_WAIT = 10,
  FSP_STATE_RECV_FLUSH_WAIT = 11,
  FSP_STATE_RECV_GPU_WAIT = 12,
  FSP_STATE_SEND_PEER_WAIT = 20,
  FSP_STATE_KERNEL_CH_STOP = 22
};

typedef struct {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    struct { int graphCaptured; int groupDepth; } groupApi;
    struct { const char* func; size_t count; const char* datatype; int root; void* stream; bool graphCaptured; } collApi;
    struct { const char* func; size_t count; const char* datatype; void* stream; bool graphCaptured; } p2pApi;
    struct { void* stream; } kernelLaunch;
    struct {
      uint64_t seqNumber; const char* func; void const* sendBuff; void* recvBuff; size_t count; int root;
      const char* datatype; uint8_t nChannels; uint8_t nWarps; const char* algo; const char* proto;
      void* parentGroup;
    } coll;
    struct { const char* func; void* buff; const char* datatype; size_t count; int peer; uint8_t nChannels; void* parentGroup; } p2p;
    struct { pid_t pid; uint8_t channelId; int peer; int nSteps; int chunkSize; int isSend; } proxyOp;
    struct { int step; } proxyStep;
    struct { uint8_t channelId; uint64_t pTimer; } kernelCh;
    struct { int64_t id; void* data; } netPlugin;
  };
} fsp_descr_v5;

typedef struct {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      uint64_t seqNumber; const char* func; void const* sendBuff; void* recvBuff; size_t count; int root;
      const char* datatype; uint8_t nChannels; uint8_t nWarps; const char* algo; const char* proto;
    } coll;
    struct { const char* func; void* buff; const char* datatype; size_t count; int peer; uint8_t nChannels; } p2p;
    struct { pid_t pid; uint8_t channelId; int peer; int nSteps; int chunkSize; int isSend; } proxyOp;
    struct { int step; } proxyStep;
    struct { uint8_t channelId; uint64_t pTimer; } kernelCh;
    struct { int64_t id; void* data; } netPlugin;
  };
} fsp_descr_v4;

/* The same layout in v4 and v5. */
typedef union {
  struct { size_t transSize; } proxyStep;
  struct { int appendedProxyOps; } proxyCtrl;
  struct { void* data; } netPlugin;
  struct { uint64_t pTimer; } kernelCh;
} fsp_state_args;

typedef struct {
  const char* name;
  fsp_nccl_result (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                          int nNodes, int nranks, int rank, fsp_nccl_logger logfn);
  fsp_nccl_result (*startEvent)(void* context, void** eHandle, fsp_descr_v5* eDescr);
  fsp_nccl_result (*stopEvent)(void* eHandle);
  fsp_nccl_result (*recordEventState)(void* eHandle, int eState, fsp_state_args* eStateArgs);
  fsp_nccl_result (*finalize)(void* context);
} fsp_profiler_v5;

typedef struct {
  const char* name;
  fsp_nccl_result (*init)(void** context, int* eActivationMask, const char* commName, uint64_t commHash,
                          int nNodes, int nranks, int rank, fsp_nccl_logger logfn);
  fsp_nccl_result (*startEvent)(void* context, void** eHandle, fsp_descr_v4* eDescr);
  fsp_nccl_result (*stopEvent)(void* eHandle);
  fsp_nccl_result (*recordEventState)(void* eHandle, int eState, fsp_state_args* eStateArgs);
  fsp_nccl_result (*finalize)(void* context);
} fsp_profiler_v4;

#ifdef __cplusplus
}
#endif

#endif
