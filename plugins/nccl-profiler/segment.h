/* The shared-memory segment libnccl-profiler-fabscope.so publishes and the exporter reads
 * (`fabscope exporter --jobs`): one per process that loaded the plugin, a regular file
 * <dir>/fabscope-job.<pid> (dir: FABSCOPE_PROFILER_DIR, default /dev/shm), of a fixed size.
 *
 * Layout, version 1 (docs/job.md "The segment"): a header, then FSP_MAX_COMMS communicator slots.
 * Every field is little-endian host order of the writer (the reader runs on the same host), every
 * struct has a size fixed here and checked by static assertions on both sides, strings are
 * NUL-padded arrays. The writer never moves anything: a slot, once claimed, keeps its place.
 *
 * Concurrency: counters are updated with relaxed atomic adds by NCCL's threads (the user's thread
 * for host events, the proxy thread for kernel-channel and network events); a reader takes a copy
 * (pread) and may see one operation counted in `count` and not yet in `time_ns_sum`, never a value
 * out of its bounds. Ring entries carry a sequence lock (odd while written). A reader validates
 * every index and length it uses: the file may be truncated, stale or written by someone else.
 *
 * Version rules: a new field goes into a reserved area or at the end of a struct with a new
 * version number; the reader accepts every version it knows (docs/formats.md). */
#ifndef FABSCOPE_PROFILER_SEGMENT_H
#define FABSCOPE_PROFILER_SEGMENT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FSP_MAGIC 0x316a706f63736266ULL /* "fbscopj1" read as little-endian bytes */
#define FSP_VERSION 1u
#define FSP_FILE_PREFIX "fabscope-job."

#define FSP_MAX_COMMS 16      /* communicators per process; more are counted, not recorded */
#define FSP_AGGS_PER_COMM 48  /* (op, size bucket) pairs per communicator */
#define FSP_RING_LEN 64       /* the last operations of each communicator */
#define FSP_PEERS_PER_COMM 32 /* (peer, direction) pairs with network-step timings */
#define FSP_HIST_BUCKETS 32   /* bucket i: duration < 2^i microseconds (i = 31: the rest) */
#define FSP_STR 64

/* Operations, as NCCL names them in the events ("AllReduce", ...). */
enum {
  FSP_OP_OTHER = 0,
  FSP_OP_ALLREDUCE = 1,
  FSP_OP_ALLGATHER = 2,
  FSP_OP_REDUCESCATTER = 3,
  FSP_OP_BROADCAST = 4,
  FSP_OP_REDUCE = 5,
  FSP_OP_SEND = 6,
  FSP_OP_RECV = 7,
  FSP_OP_ALLTOALL = 8,
  FSP_OP_GATHER = 9,
  FSP_OP_SCATTER = 10,
  FSP_OP_COUNT = 11
};

/* Algorithms and protocols, NCCL's numbering (NCCL_ALGO_*, NCCL_PROTO_*); 255: unknown. */
#define FSP_UNKNOWN 255

/* Header flags. */
#define FSP_FLAG_PROXY 1u      /* FABSCOPE_PROFILER_PROXY=1: per-peer network steps recorded */
#define FSP_FLAG_FINALIZED 2u  /* every communicator of the process was finalized */

typedef struct {
  uint64_t magic;            /* FSP_MAGIC */
  uint32_t version;          /* FSP_VERSION */
  uint32_t header_bytes;     /* sizeof(fsp_header) */
  uint64_t total_bytes;      /* the file's size */
  uint32_t max_comms;        /* FSP_MAX_COMMS */
  uint32_t comm_bytes;       /* sizeof(fsp_comm) */
  uint32_t aggs_per_comm;    /* FSP_AGGS_PER_COMM */
  uint32_t ring_len;         /* FSP_RING_LEN */
  uint32_t peers_per_comm;   /* FSP_PEERS_PER_COMM */
  uint32_t hist_buckets;     /* FSP_HIST_BUCKETS */
  int32_t pid;               /* the writing process */
  uint32_t uid;              /* its real uid (the reader also checks the file's owner) */
  uint64_t start_ticks;      /* /proc/<pid>/stat field 22: tells a reused pid apart */
  uint64_t created_unix_ns;  /* CLOCK_REALTIME at creation */
  uint32_t api_version;      /* the profiler interface version NCCL took (1-5) */
  uint32_t flags;            /* FSP_FLAG_* (atomic) */
  char host[FSP_STR];        /* gethostname() */
  char job_id[FSP_STR];      /* SLURM_JOB_ID, TORCHELASTIC_RUN_ID, POD_NAME/HOSTNAME in a pod, or "" */
  char job_source[16];       /* "slurm", "torchrun", "kubernetes" or "" */
  char plugin_version[16];   /* the fabscope version that wrote it */
  uint64_t comms_used;       /* slots claimed so far (atomic; at most max_comms) */
  uint64_t comms_overflow;   /* communicators not recorded: every slot taken */
  uint64_t events_dropped;   /* events not recorded: an event pool was exhausted */
  uint64_t events_invalid;   /* events NCCL gave that the plugin could not use */
  uint64_t aggs_overflow;    /* operations not aggregated: a communicator's (op, size) table was full */
  uint64_t reserved[8];
} fsp_header;

/* One (op, size bucket) aggregate. key = 0: free; else (op << 8 | size_log2) + 1. */
typedef struct {
  uint32_t key;              /* written once (atomic compare-and-swap) */
  uint32_t reserved0;
  uint64_t count;            /* operations completed */
  uint64_t bytes;            /* their bytes: count x datatype size (a collective's message size) */
  uint64_t time_ns_sum;      /* their durations (GPU time where NCCL gave it, else CPU) */
  uint64_t gpu_timed;        /* how many of them were timed by the GPU's clock */
  uint64_t timed_bytes;      /* the bytes of the operations that have a time (sampling, KERNEL=0) */
  uint64_t hist[FSP_HIST_BUCKETS];
} fsp_agg;

/* One entry of the ring of recent operations. lock is odd while the entry is written. */
typedef struct {
  uint64_t lock;
  uint64_t seq;              /* NCCL's seq number of the op (per op type), p2p: the plugin's count */
  uint64_t bytes;
  uint64_t cpu_start_unix_ns;  /* the collective's start event on the host */
  uint64_t gpu_start_ns;     /* the first channel's start, GPU global timer (0: none) */
  uint64_t gpu_stop_ns;      /* the last channel's stop, GPU global timer (0: none) */
  uint64_t done_unix_ns;     /* when the plugin saw it complete (0: in flight) */
  uint8_t op, algo, proto, nchannels;
  int32_t peer;              /* p2p: the peer rank; collectives: -1 */
} fsp_ring_entry;

/* Network steps of one (peer, direction), with FABSCOPE_PROFILER_PROXY=1. key = 0: free; else
 * (peer << 1 | is_send) + 1. */
typedef struct {
  uint32_t key;
  uint32_t reserved0;
  uint64_t steps;            /* network steps completed */
  uint64_t bytes;            /* their sizes as NCCL reported them */
  uint64_t step_ns_sum;      /* start to stop of each step */
  uint64_t wait_ns_sum;      /* in the network's own state (send: SendWait; recv: RecvWait) */
  uint64_t reserved[3];
} fsp_peer;

/* state: 0 free, 1 being filled, 2 active, 3 finalized. */
typedef struct {
  uint32_t state;
  uint32_t reserved0;
  uint64_t comm_hash;
  char name[FSP_STR];        /* the communicator's name as the user gave it (NCCL 2.27+), or "" */
  char bus_id[16];           /* the local GPU's PCI bus id, "0000:19:00.0", or "" */
  int32_t rank, nranks, nnodes, cuda_device;
  uint64_t init_unix_ns;
  uint64_t started;          /* operations started on the host */
  uint64_t completed;        /* operations completed */
  uint64_t last_start_unix_ns;   /* the last operation's start */
  uint64_t last_done_unix_ns;    /* the last completion: the job's progress */
  uint64_t ring_next;        /* entries written so far; entry i is ring[i % FSP_RING_LEN] */
  uint64_t p2p_seq;          /* p2p operations started (their seq) */
  uint64_t reserved[7];
  uint64_t op_started_seq[16];  /* per FSP_OP_*: the highest seq number started, plus 1 (0: none) */
  uint64_t op_done_seq[16];     /* per FSP_OP_*: the highest seq number completed, plus 1 */
  fsp_agg aggs[FSP_AGGS_PER_COMM];
  fsp_ring_entry ring[FSP_RING_LEN];
  fsp_peer peers[FSP_PEERS_PER_COMM];
} fsp_comm;

typedef struct {
  fsp_header header;
  fsp_comm comms[FSP_MAX_COMMS];
} fsp_segment;

/* Sizes the reader checks: a change here is a new version. */
#define FSP_HEADER_BYTES 344u
#define FSP_COMM_HEAD_BYTES 480u /* fsp_comm up to aggs */
#define FSP_AGG_BYTES 304u
#define FSP_RING_ENTRY_BYTES 64u
#define FSP_PEER_BYTES 64u

#ifdef __cplusplus
}
#endif

#endif
