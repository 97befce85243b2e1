/* libnccl-profiler-fabscope.so: an NCCL profiler plugin that times every collective and p2p
 * operation of every communicator of its process and publishes per-(communicator, op, size)
 * aggregates, a ring of the last operations and (with FABSCOPE_PROFILER_PROXY=1) per-peer network
 * step timings in a shared-memory segment (segment.h) that `fabscope exporter --jobs` reads.
 *
 * Rules of a plugin living inside NCCL's process (docs/job.md): C, libc only; no allocation, lock
 * or system call on NCCL's threads once a communicator exists (fixed pools claimed with atomics;
 * clock_gettime is the vDSO's); every entry returns ncclSuccess except init, whose failure only
 * disables the plugin for that communicator; an event the plugin cannot use is counted, never
 * trusted.
 *
 * Timing: NCCL starts and stops a collective's event on the host around the kernel's launch; its
 * kernel-channel events (one per channel, posted by the proxy thread) carry the GPU global timer
 * at the channel's start and stop. An operation is complete when the host has stopped it and
 * every one of its nChannels channels has stopped; its time is the last channel's stop minus the
 * first channel's start (GPU clock), else the same span as the proxy thread saw it (CPU clock). */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nccl_profiler_abi.h"
#include "segment.h"

#define EXPORT __attribute__((visibility("default")))
#define PLUGIN_NAME "fabscope"
#ifndef FABSCOPE_VERSION
#define FABSCOPE_VERSION "unknown"
#endif

_Static_assert(sizeof(fsp_header) == FSP_HEADER_BYTES, "fsp_header layout");
_Static_assert(sizeof(fsp_agg) == FSP_AGG_BYTES, "fsp_agg layout");
_Static_assert(sizeof(fsp_ring_entry) == FSP_RING_ENTRY_BYTES, "fsp_ring_entry layout");
_Static_assert(sizeof(fsp_peer) == FSP_PEER_BYTES, "fsp_peer layout");
_Static_assert(offsetof(fsp_comm, aggs) == FSP_COMM_HEAD_BYTES, "fsp_comm layout");

#define RLX __ATOMIC_RELAXED
#define ACQ __ATOMIC_ACQUIRE
#define REL __ATOMIC_RELEASE
#define AR __ATOMIC_ACQ_REL

/* Pool sizes: operations in flight per process, channels in flight, and, with the proxy events,
 * network operations and steps in flight (NCCL keeps at most NCCL_STEPS = 8 per channel and peer). */
#define TASK_POOL 4096
#define CH_POOL 16384
#define POP_POOL 4096
#define STEP_POOL 16384
#define POOL_TRIES 64

enum { K_TASK = 0x7461736bu, K_CH = 0x6368616eu, K_POP = 0x706f7021u, K_STEP = 0x73746570u };

typedef struct {
  uint32_t kind;
  uint32_t busy;
} obj_head;

/* Sampling (FABSCOPE_PROFILER_SAMPLE=N > 1): NCCL is asked for kernel-channel events for one
 * operation in N only (its activation mask is switched between enqueues). The plugin does not see
 * which mask an operation was enqueued with, so every operation of a communicator takes a ticket
 * in launch order; when the first channel of ticket k starts, the communicator's earlier tickets
 * whose channels never started were not timed (NCCL runs a communicator's kernels in order, and
 * its proxy posts their channel events in that order): they complete then, counted, untimed. */
#define PENDING 4096 /* = TASK_POOL: at most that many operations are in flight */

typedef struct {
  fsp_comm* slot; /* NULL: not recorded (every slot taken) */
  int index;
  int nranks;
  int rank;
  uint64_t next_ticket;  /* tickets given (user thread) */
  uint64_t resolved_to;  /* tickets below this one are resolved (proxy thread) */
  void* pending[PENDING]; /* ticket % PENDING -> its task, while in flight (sampling only) */
} comm_ctx;

typedef struct {
  obj_head h;
  comm_ctx* ctx;
  uint64_t seq, bytes, cpu_start;
  uint64_t gpu_start, gpu_stop;       /* min over channels' starts, max over their stops */
  uint64_t cpu_ch_start, cpu_ch_stop; /* the same, as the proxy thread saw them */
  uint32_t remaining;                 /* the host's stop + one per channel still to stop */
  uint32_t ring_idx;
  uint64_t ring_lock; /* the entry's lock value after this operation wrote it */
  uint8_t op, algo, proto, nch;
  int32_t peer;
  uint64_t ticket;      /* its place in the communicator's launch order (sampling only) */
  uint32_t ch_started;  /* channels that started */
  uint32_t untimed;     /* 1 once known to have no channel events (sampling only) */
} task_obj;

typedef struct {
  obj_head h;
  task_obj* parent;
  uint32_t stopped;
  uint32_t pad;
} ch_obj;

typedef struct {
  obj_head h;
  comm_ctx* ctx;
  int32_t peer;
  int32_t is_send;
} pop_obj;

typedef struct {
  obj_head h;
  pop_obj* op;
  uint64_t t_start, t_wait, wait_ns, bytes;
} step_obj;

static task_obj g_tasks[TASK_POOL];
static ch_obj g_chs[CH_POOL];
static pop_obj g_pops[POP_POOL];
static step_obj g_steps[STEP_POOL];
static uint32_t g_task_cur, g_ch_cur, g_pop_cur, g_step_cur;

static comm_ctx g_ctx[FSP_MAX_COMMS];
static comm_ctx g_overflow_ctx = {NULL, -1, 0, -1, 0, 0, {0}};

static pthread_mutex_t g_init_mu = PTHREAD_MUTEX_INITIALIZER; /* init and finalize only */
static fsp_segment* g_seg;
static pid_t g_seg_pid;
static int g_active_comms;
static int g_mask;
static int* g_mask_ptr;     /* NCCL's activation mask (one per process), given at init */
static uint32_t g_sample = 1; /* time one operation in g_sample (FABSCOPE_PROFILER_SAMPLE) */
static uint64_t g_sample_count;
static int g_api_version;
static int g_keep;
static char g_path[256];
static int g_fd = -1; /* the segment, open and share-locked while the process runs */
static fsp_nccl_logger g_log;

/* A segment to count into before (or without) one: events and counters of contexts whose slot is
 * NULL go nowhere, but the header counters need a place. */
static fsp_header g_dummy_header;

static fsp_header* hdr(void) { return g_seg ? &g_seg->header : &g_dummy_header; }

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts); /* vDSO: no system call */
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void say(int level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int level, const char* fmt, ...) {
  if (g_log == NULL) return;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  g_log(level, FSP_LOGSUB_INIT, __FILE__, __LINE__, "%s", buf);
}

/* ---- pools ---- */

static obj_head* pool_get(void* base, size_t objsz, uint32_t n, uint32_t* cursor, uint32_t kind) {
  for (int tries = 0; tries < POOL_TRIES; tries++) {
    uint32_t i = __atomic_fetch_add(cursor, 1, RLX) % n;
    obj_head* h = (obj_head*)((char*)base + (size_t)i * objsz);
    uint32_t zero = 0;
    if (__atomic_load_n(&h->busy, RLX) == 0 &&
        __atomic_compare_exchange_n(&h->busy, &zero, 1, 0, ACQ, RLX)) {
      h->kind = kind;
      return h;
    }
  }
  __atomic_fetch_add(&hdr()->events_dropped, 1, RLX);
  return NULL;
}

static void pool_put(obj_head* h) {
  h->kind = 0;
  __atomic_store_n(&h->busy, 0, REL);
}

/* A handle NCCL gave back: one of ours, live, of the kind expected. */
static int live(const void* p, const void* base, size_t objsz, uint32_t n, uint32_t kind) {
  const char* c = (const char*)p;
  const char* b = (const char*)base;
  if (c < b || c >= b + objsz * n || (size_t)(c - b) % objsz != 0) return 0;
  const obj_head* h = (const obj_head*)p;
  return __atomic_load_n(&h->busy, ACQ) == 1 && h->kind == kind;
}
#define LIVE_TASK(p) live((p), g_tasks, sizeof(task_obj), TASK_POOL, K_TASK)
#define LIVE_CH(p) live((p), g_chs, sizeof(ch_obj), CH_POOL, K_CH)
#define LIVE_POP(p) live((p), g_pops, sizeof(pop_obj), POP_POOL, K_POP)
#define LIVE_STEP(p) live((p), g_steps, sizeof(step_obj), STEP_POOL, K_STEP)

static void atomic_min_u64(uint64_t* p, uint64_t v) {
  uint64_t cur = __atomic_load_n(p, RLX);
  while ((cur == 0 || v < cur) && !__atomic_compare_exchange_n(p, &cur, v, 1, RLX, RLX)) {
  }
}

static void atomic_max_u64(uint64_t* p, uint64_t v) {
  uint64_t cur = __atomic_load_n(p, RLX);
  while (v > cur && !__atomic_compare_exchange_n(p, &cur, v, 1, RLX, RLX)) {
  }
}

/* ---- names NCCL passes as strings ---- */

static uint8_t op_of(const char* f) {
  if (f == NULL) return FSP_OP_OTHER;
  switch (f[0]) {
    case 'A':
      if (strcmp(f, "AllReduce") == 0) return FSP_OP_ALLREDUCE;
      if (strcmp(f, "AllGather") == 0) return FSP_OP_ALLGATHER;
      if (strcmp(f, "AlltoAll") == 0) return FSP_OP_ALLTOALL;
      break;
    case 'R':
      if (strcmp(f, "ReduceScatter") == 0) return FSP_OP_REDUCESCATTER;
      if (strcmp(f, "Reduce") == 0) return FSP_OP_REDUCE;
      if (strcmp(f, "Recv") == 0) return FSP_OP_RECV;
      break;
    case 'B':
      if (strcmp(f, "Broadcast") == 0) return FSP_OP_BROADCAST;
      break;
    case 'S':
      if (strcmp(f, "Send") == 0) return FSP_OP_SEND;
      if (strcmp(f, "Scatter") == 0) return FSP_OP_SCATTER;
      break;
    case 'G':
      if (strcmp(f, "Gather") == 0) return FSP_OP_GATHER;
      break;
    default:
      break;
  }
  return FSP_OP_OTHER;
}

/* ncclDatatypeToString's names. 0: unknown (bytes then count elements of 1 byte). */
static uint32_t type_bytes(const char* t) {
  if (t == NULL || strncmp(t, "ncclUint", 8) != 0) {
    if (t == NULL || strncmp(t, "ncclInt", 7) != 0) {
      if (t == NULL || strncmp(t, "nccl", 4) != 0) return 0;
      const char* s = t + 4;
      if (strcmp(s, "Float32") == 0) return 4;
      if (strcmp(s, "Bfloat16") == 0 || strcmp(s, "Float16") == 0) return 2;
      if (strcmp(s, "Float64") == 0) return 8;
      if (strncmp(s, "Float8", 6) == 0) return 1;
      return 0;
    }
    t += 7;
  } else {
    t += 8;
  }
  if (strcmp(t, "8") == 0) return 1;
  if (strcmp(t, "32") == 0) return 4;
  if (strcmp(t, "64") == 0) return 8;
  return 0;
}

static uint8_t algo_of(const char* a) {
  static const char* const names[] = {"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
  if (a != NULL)
    for (uint8_t i = 0; i < sizeof names / sizeof names[0]; i++)
      if (strcmp(a, names[i]) == 0) return i;
  return FSP_UNKNOWN;
}

static uint8_t proto_of(const char* p) {
  if (p == NULL) return FSP_UNKNOWN;
  if (strcmp(p, "LL") == 0) return 0;
  if (strcmp(p, "LL128") == 0) return 1;
  if (strcmp(p, "SIMPLE") == 0) return 2;
  return FSP_UNKNOWN;
}

/* ---- aggregation ---- */

static uint32_t size_class(uint64_t bytes) { return bytes == 0 ? 0 : 64u - (uint32_t)__builtin_clzll(bytes); }

static uint32_t hist_bucket(uint64_t ns) {
  uint64_t us = ns / 1000;
  uint32_t b = us == 0 ? 0 : 64u - (uint32_t)__builtin_clzll(us);
  return b >= FSP_HIST_BUCKETS ? FSP_HIST_BUCKETS - 1 : b;
}

static fsp_agg* agg_for(fsp_comm* c, uint8_t op, uint64_t bytes) {
  uint32_t key = (((uint32_t)op << 8) | size_class(bytes)) + 1;
  uint32_t i = (key * 2654435761u) % FSP_AGGS_PER_COMM;
  for (uint32_t n = 0; n < FSP_AGGS_PER_COMM; n++, i = (i + 1) % FSP_AGGS_PER_COMM) {
    fsp_agg* a = &c->aggs[i];
    uint32_t k = __atomic_load_n(&a->key, ACQ);
    if (k == key) return a;
    if (k == 0) {
      uint32_t zero = 0;
      if (__atomic_compare_exchange_n(&a->key, &zero, key, 0, AR, ACQ)) return a;
      if (zero == key) return a;
    }
  }
  __atomic_fetch_add(&hdr()->aggs_overflow, 1, RLX);
  return NULL;
}

static fsp_peer* peer_for(fsp_comm* c, int peer, int is_send) {
  if (peer < 0) return NULL;
  uint32_t key = (((uint32_t)peer << 1) | (is_send ? 1u : 0u)) + 1;
  uint32_t i = (key * 2654435761u) % FSP_PEERS_PER_COMM;
  for (uint32_t n = 0; n < FSP_PEERS_PER_COMM; n++, i = (i + 1) % FSP_PEERS_PER_COMM) {
    fsp_peer* p = &c->peers[i];
    uint32_t k = __atomic_load_n(&p->key, ACQ);
    if (k == key) return p;
    if (k == 0) {
      uint32_t zero = 0;
      if (__atomic_compare_exchange_n(&p->key, &zero, key, 0, AR, ACQ)) return p;
      if (zero == key) return p;
    }
  }
  __atomic_fetch_add(&hdr()->aggs_overflow, 1, RLX);
  return NULL;
}

/* Writes ring entry idx if no other writer holds it; returns the lock value it left (0: skipped). */
static uint64_t ring_write(fsp_comm* c, uint32_t idx, const task_obj* t, uint64_t done_ns, uint64_t expect) {
  fsp_ring_entry* e = &c->ring[idx % FSP_RING_LEN];
  uint64_t v = __atomic_load_n(&e->lock, RLX);
  if ((v & 1) || (expect && v != expect)) return 0;
  if (!__atomic_compare_exchange_n(&e->lock, &v, v + 1, 0, ACQ, RLX)) return 0;
  __atomic_thread_fence(__ATOMIC_RELEASE);
  e->seq = t->seq;
  e->bytes = t->bytes;
  e->cpu_start_unix_ns = t->cpu_start;
  e->gpu_start_ns = t->gpu_start;
  e->gpu_stop_ns = t->gpu_stop;
  e->done_unix_ns = done_ns;
  e->op = t->op;
  e->algo = t->algo;
  e->proto = t->proto;
  e->nchannels = t->nch;
  e->peer = t->peer;
  __atomic_store_n(&e->lock, v + 2, REL);
  return v + 2;
}

static void task_complete(task_obj* t) {
  if (g_sample > 1 && t->ctx != NULL) {
    void* self = t;
    __atomic_compare_exchange_n(&t->ctx->pending[t->ticket % PENDING], &self, NULL, 0, RLX, RLX);
  }
  fsp_comm* c = t->ctx ? t->ctx->slot : NULL;
  if (c != NULL) {
    uint64_t done = now_ns();
    uint64_t dur = 0;
    int gpu = 0;
    if (t->gpu_start != 0 && t->gpu_stop > t->gpu_start) {
      dur = t->gpu_stop - t->gpu_start;
      gpu = 1;
    } else if (t->cpu_ch_start != 0 && t->cpu_ch_stop > t->cpu_ch_start) {
      dur = t->cpu_ch_stop - t->cpu_ch_start;
    }
    /* no channel events (FABSCOPE_PROFILER_KERNEL=0): the host's stop is the kernel's launch, not
     * its end; the operation is counted, its time is not (0 in the sums, no histogram bucket) */
    const int timed = dur != 0;
    fsp_agg* a = agg_for(c, t->op, t->bytes);
    if (a != NULL) {
      __atomic_fetch_add(&a->count, 1, RLX);
      __atomic_fetch_add(&a->bytes, t->bytes, RLX);
      __atomic_fetch_add(&a->time_ns_sum, dur, RLX);
      if (gpu) __atomic_fetch_add(&a->gpu_timed, 1, RLX);
      if (timed) {
        __atomic_fetch_add(&a->hist[hist_bucket(dur)], 1, RLX);
        __atomic_fetch_add(&a->timed_bytes, t->bytes, RLX);
      }
    }
    if (t->ring_lock) ring_write(c, t->ring_idx, t, done, t->ring_lock);
    if (t->op < 16) atomic_max_u64(&c->op_done_seq[t->op], t->seq + 1);
    atomic_max_u64(&c->last_done_unix_ns, done);
    __atomic_fetch_add(&c->completed, 1, REL);
  }
  pool_put(&t->h);
}

static void task_release_n(task_obj* t, uint32_t n) {
  if (n != 0 && __atomic_sub_fetch(&t->remaining, n, AR) == 0) task_complete(t);
}

static void task_release(task_obj* t) { task_release_n(t, 1); }

/* Sampling: the first channel of ticket k started, so the communicator's tickets below k whose
 * channels never started were launched without kernel-channel events: their channel references
 * are given back, and each completes (untimed) now or at its host stop. Called on the
 * communicator's proxy thread; the compare-and-swap on `untimed` makes it once per task. */
static void resolve_before(comm_ctx* ctx, uint64_t k) {
  uint64_t from = __atomic_load_n(&ctx->resolved_to, ACQ);
  if (k > from + PENDING) from = k - PENDING; /* never more than the ring holds */
  for (uint64_t i = from; i < k; i++) {
    void** slot = &ctx->pending[i % PENDING];
    task_obj* u = (task_obj*)__atomic_load_n(slot, ACQ);
    if (u == NULL || !LIVE_TASK(u) || u->ticket != i) continue;
    if (__atomic_load_n(&u->ch_started, ACQ) != 0) continue;
    uint32_t zero = 0;
    if (!__atomic_compare_exchange_n(&u->untimed, &zero, 1, 0, AR, RLX)) continue;
    __atomic_compare_exchange_n(slot, (void**)&u, NULL, 0, RLX, RLX);
    task_release_n(u, u->nch);
  }
  atomic_max_u64(&ctx->resolved_to, k);
}

/* ---- the segment (init only: system calls allowed here) ---- */

static uint64_t read_start_ticks(void) {
  char buf[1024];
  int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  char* p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
  if (p == NULL) return 0;
  /* after ") ": field 3 (state) ... field 22 (starttime): skip 19 fields */
  p++;
  for (int field = 2; field < 21 && p != NULL; field++) {
    p = strchr(p + 1, ' ');
  }
  return p ? strtoull(p + 1, NULL, 10) : 0;
}

static void copy_str(char* dst, size_t cap, const char* src) {
  if (src == NULL) src = "";
  size_t n = strnlen(src, cap - 1);
  memcpy(dst, src, n);
  memset(dst + n, 0, cap - n);
}

static void job_labels(fsp_header* h) {
  const char* v;
  if ((v = getenv("SLURM_JOB_ID")) != NULL && v[0]) {
    copy_str(h->job_id, sizeof h->job_id, v);
    copy_str(h->job_source, sizeof h->job_source, "slurm");
  } else if ((v = getenv("TORCHELASTIC_RUN_ID")) != NULL && v[0]) {
    /* torchrun --standalone and a run without --rdzv-id say "none" on every job: the rendezvous
     * address names the job instead, the same on every rank */
    const char* addr = getenv("MASTER_ADDR");
    const char* port = getenv("MASTER_PORT");
    if (strcmp(v, "none") == 0 && addr != NULL && addr[0] && port != NULL && port[0]) {
      char id[FSP_STR];
      snprintf(id, sizeof id, "torchrun-%s:%s", addr, port);
      copy_str(h->job_id, sizeof h->job_id, id);
    } else {
      copy_str(h->job_id, sizeof h->job_id, v);
    }
    copy_str(h->job_source, sizeof h->job_source, "torchrun");
  } else if (getenv("KUBERNETES_SERVICE_HOST") != NULL) {
    v = getenv("POD_NAME");
    if (v == NULL || !v[0]) v = getenv("HOSTNAME");
    copy_str(h->job_id, sizeof h->job_id, v);
    copy_str(h->job_source, sizeof h->job_source, "kubernetes");
  }
  if ((v = getenv("FABSCOPE_JOB_ID")) != NULL && v[0]) { /* the user's own name wins */
    copy_str(h->job_id, sizeof h->job_id, v);
    copy_str(h->job_source, sizeof h->job_source, "env");
  }
}

/* Segments of this user whose process is gone (killed before NCCL finalized): removed by the next
 * process that starts, so a node that runs no exporter does not fill its tmpfs. A live writer holds
 * a shared lock on its segment for as long as it runs (the kernel drops it when the process ends,
 * however it ends), so an exclusive lock that succeeds means nobody writes it any more. This works
 * where pids do not: across containers' pid namespaces and after a pid was reused. */
static void sweep_dead(const char* dir) {
  DIR* d = opendir(dir);
  if (d == NULL) return;
  struct dirent* de;
  int budget = 4096;
  while ((de = readdir(d)) != NULL && budget-- > 0) {
    if (strncmp(de->d_name, FSP_FILE_PREFIX, sizeof FSP_FILE_PREFIX - 1) != 0) continue;
    int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid() && flock(fd, LOCK_EX | LOCK_NB) == 0)
      unlinkat(dirfd(d), de->d_name, 0);
    close(fd); /* drops the lock, if taken */
  }
  closedir(d);
}

static int open_segment(void) {
  if (g_seg != NULL && g_seg_pid == getpid()) return 0;
  g_seg = NULL; /* a forked child writes its own */
  const char* dir = getenv("FABSCOPE_PROFILER_DIR");
  if (dir == NULL || dir[0] == '\0') dir = "/dev/shm";
  mode_t mode = 0644; /* timings and names, no data: readable by the node's exporter (docs/job.md) */
  const char* m = getenv("FABSCOPE_PROFILER_MODE");
  if (m != NULL && m[0]) {
    char* end = NULL;
    long v = strtol(m, &end, 8);
    if (end != NULL && *end == '\0' && v >= 0 && v <= 0666) mode = (mode_t)v;
    else say(FSP_LOG_WARN, "PROFILER/fabscope: FABSCOPE_PROFILER_MODE=%s is not an octal mode up to 0666; 0644 used", m);
  }
  const char* keep = getenv("FABSCOPE_PROFILER_KEEP");
  g_keep = keep != NULL && strcmp(keep, "1") == 0;
  sweep_dead(dir);
  pid_t pid = getpid();
  char tmp[sizeof g_path];
  int n = snprintf(g_path, sizeof g_path, "%s/%s%d", dir, FSP_FILE_PREFIX, (int)pid);
  int n2 = snprintf(tmp, sizeof tmp, "%s/.%s%d.tmp", dir, FSP_FILE_PREFIX, (int)pid);
  if (n <= 0 || (size_t)n >= sizeof g_path || n2 <= 0 || (size_t)n2 >= sizeof tmp) {
    say(FSP_LOG_WARN, "PROFILER/fabscope: FABSCOPE_PROFILER_DIR is too long; profiler disabled");
    return -1;
  }
  /* Made under a name nobody reads (a leading dot), locked, sized and filled, then renamed into
   * place: the exporter and other processes' sweeps only ever see a complete segment whose writer
   * already holds its lock. */
  int fd = -1;
  for (int attempt = 0; attempt < 2 && fd < 0; attempt++) {
    fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0 && errno == EEXIST && attempt == 0) unlink(tmp); /* a dead process of this pid */
  }
  if (fd < 0) {
    say(FSP_LOG_WARN, "PROFILER/fabscope: cannot create %s: %s; profiler disabled", tmp, strerror(errno));
    return -1;
  }
  (void)fchmod(fd, mode); /* the umask may have taken bits away */
  void* p = MAP_FAILED;
  const char* failed = NULL;
  if (flock(fd, LOCK_SH | LOCK_NB) != 0) failed = "lock";
  else if (ftruncate(fd, (off_t)sizeof(fsp_segment)) != 0) failed = "size";
  else if ((p = mmap(NULL, sizeof(fsp_segment), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) failed = "map";
  if (failed != NULL) {
    say(FSP_LOG_WARN, "PROFILER/fabscope: cannot %s %s: %s; profiler disabled", failed, tmp, strerror(errno));
    close(fd);
    unlink(tmp);
    return -1;
  }
  fsp_segment* s = (fsp_segment*)p;
  fsp_header* h = &s->header;
  h->version = FSP_VERSION;
  h->header_bytes = sizeof(fsp_header);
  h->total_bytes = sizeof(fsp_segment);
  h->max_comms = FSP_MAX_COMMS;
  h->comm_bytes = sizeof(fsp_comm);
  h->aggs_per_comm = FSP_AGGS_PER_COMM;
  h->ring_len = FSP_RING_LEN;
  h->peers_per_comm = FSP_PEERS_PER_COMM;
  h->hist_buckets = FSP_HIST_BUCKETS;
  h->pid = (int32_t)pid;
  h->uid = (uint32_t)getuid();
  h->start_ticks = read_start_ticks(); /* informational: a pid of the writer's own namespace */
  h->created_unix_ns = now_ns();
  h->api_version = (uint32_t)g_api_version;
  const char* proxy = getenv("FABSCOPE_PROFILER_PROXY");
  if (proxy != NULL && strcmp(proxy, "1") == 0) h->flags |= FSP_FLAG_PROXY;
  /* The node's name as the job's tools know it: FABSCOPE_PROFILER_HOST where the process's own
   * host name is not that (a Kubernetes pod, whose host name is the pod's: set it from the node's
   * name through the downward API), else the host name. */
  char host[256] = {0};
  const char* host_env = getenv("FABSCOPE_PROFILER_HOST");
  if (host_env != NULL && host_env[0]) copy_str(host, sizeof host, host_env);
  else gethostname(host, sizeof host - 1);
  copy_str(h->host, sizeof h->host, host);
  job_labels(h);
  copy_str(h->plugin_version, sizeof h->plugin_version, FABSCOPE_VERSION);
  /* carry what was counted before the segment existed */
  h->events_dropped += g_dummy_header.events_dropped;
  h->events_invalid += g_dummy_header.events_invalid;
  __atomic_store_n(&h->magic, FSP_MAGIC, REL);
  if (rename(tmp, g_path) != 0) {
    say(FSP_LOG_WARN, "PROFILER/fabscope: cannot rename %s to %s: %s; profiler disabled", tmp, g_path, strerror(errno));
    munmap(p, sizeof(fsp_segment));
    close(fd);
    unlink(tmp);
    return -1;
  }
  /* the descriptor stays open for the process's life: its shared lock says "a writer lives" */
  if (g_fd >= 0) close(g_fd);
  g_fd = fd;
  g_seg = s;
  g_seg_pid = pid;
  return 0;
}

/* The local GPU of the calling thread's CUDA context (NCCL's init runs with the device set),
 * through the driver library the process has loaded already; nothing when it is not there. */
static void local_gpu(fsp_comm* c) {
  c->cuda_device = -1;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (lib == NULL) return;
  int (*get_device)(int*) = (int (*)(int*))dlsym(lib, "cuCtxGetDevice");
  int (*bus_id)(char*, int, int) = (int (*)(char*, int, int))dlsym(lib, "cuDeviceGetPCIBusId");
  int dev = -1;
  if (get_device != NULL && get_device(&dev) == 0 && dev >= 0) {
    c->cuda_device = dev;
    char id[32] = {0};
    if (bus_id != NULL && bus_id(id, (int)sizeof id, dev) == 0) {
      for (char* q = id; *q; q++)
        if (*q >= 'A' && *q <= 'F') *q = (char)(*q - 'A' + 'a');
      copy_str(c->bus_id, sizeof c->bus_id, id);
    }
  }
  dlclose(lib);
}

static fsp_nccl_result init_common(void** context, int* mask, const char* name, uint64_t hash, int nnodes,
                                   int nranks, int rank, fsp_nccl_logger log, int api) {
  *context = NULL;
  pthread_mutex_lock(&g_init_mu);
  if (g_log == NULL) g_log = log;
  g_api_version = api;
  if (open_segment() != 0) {
    pthread_mutex_unlock(&g_init_mu);
    return FSP_NCCL_SYSTEM_ERROR;
  }
  int events = FSP_EV_COLL | FSP_EV_P2P;
  const char* kernel = getenv("FABSCOPE_PROFILER_KERNEL");
  if (kernel == NULL || strcmp(kernel, "0") != 0) events |= FSP_EV_KERNEL_CH;
  if (g_seg->header.flags & FSP_FLAG_PROXY) events |= FSP_EV_PROXY_OP | FSP_EV_PROXY_STEP;
  const char* sample = getenv("FABSCOPE_PROFILER_SAMPLE");
  if (sample != NULL && sample[0]) {
    char* end = NULL;
    long n = strtol(sample, &end, 10);
    if (end != NULL && *end == '\0' && n >= 1 && n <= 1024) g_sample = (uint32_t)n;
    else say(FSP_LOG_WARN, "PROFILER/fabscope: FABSCOPE_PROFILER_SAMPLE=%s is not a number from 1 to 1024; 1 used", sample);
  }
  if (!(events & FSP_EV_KERNEL_CH)) g_sample = 1; /* nothing to sample */
  g_mask = events;
  g_mask_ptr = mask;
  *mask = events;
  comm_ctx* ctx = &g_overflow_ctx;
  for (int i = 0; i < FSP_MAX_COMMS; i++) {
    fsp_comm* c = &g_seg->comms[i];
    uint32_t st = __atomic_load_n(&c->state, ACQ);
    if (st != 0 && st != 3) continue;
    if (!__atomic_compare_exchange_n(&c->state, &st, 1, 0, AR, RLX)) continue;
    /* a finalized communicator's slot is reused: cleared first, while the reader skips it */
    memset((char*)c + sizeof c->state, 0, sizeof *c - sizeof c->state);
    c->comm_hash = hash;
    copy_str(c->name, sizeof c->name, name);
    c->rank = rank;
    c->nranks = nranks;
    c->nnodes = nnodes;
    local_gpu(c);
    c->init_unix_ns = now_ns();
    g_ctx[i].slot = c;
    g_ctx[i].index = i;
    g_ctx[i].nranks = nranks;
    g_ctx[i].rank = rank;
    ctx = &g_ctx[i];
    uint64_t used = (uint64_t)i + 1;
    atomic_max_u64(&g_seg->header.comms_used, used);
    __atomic_store_n(&c->state, 2, REL);
    break;
  }
  if (ctx == &g_overflow_ctx) __atomic_fetch_add(&g_seg->header.comms_overflow, 1, RLX);
  __atomic_and_fetch(&g_seg->header.flags, ~FSP_FLAG_FINALIZED, RLX);
  g_active_comms++;
  pthread_mutex_unlock(&g_init_mu);
  say(FSP_LOG_INFO,
      "PROFILER/fabscope: loaded as v%d; comm %016llx%s%s rank %d of %d (%d node(s)) %s %s%s; events 0x%x",
      api, (unsigned long long)hash, name && name[0] ? " name " : "", name && name[0] ? name : "", rank, nranks,
      nnodes, ctx->slot ? "published in" : "not recorded (every slot taken) in", g_path,
      ctx->slot && ctx->slot->bus_id[0] ? "" : " (GPU bus id unknown)", events);
  *context = ctx;
  return FSP_NCCL_SUCCESS;
}

static fsp_nccl_result fsp_init_v5(void** context, uint64_t commId, int* mask, const char* name, int nnodes,
                                   int nranks, int rank, fsp_nccl_logger log) {
  return init_common(context, mask, name, commId, nnodes, nranks, rank, log, 5);
}

static fsp_nccl_result fsp_init_v4(void** context, int* mask, const char* name, uint64_t hash, int nnodes,
                                   int nranks, int rank, fsp_nccl_logger log) {
  return init_common(context, mask, name, hash, nnodes, nranks, rank, log, 4);
}

static fsp_nccl_result fsp_finalize(void* context) {
  comm_ctx* ctx = (comm_ctx*)context;
  /* sampling: operations still waiting to learn they were not timed are complete by now */
  if (ctx != NULL && g_sample > 1) resolve_before(ctx, __atomic_load_n(&ctx->next_ticket, ACQ));
  pthread_mutex_lock(&g_init_mu);
  if (ctx != NULL && ctx->slot != NULL) {
    __atomic_store_n(&ctx->slot->state, 3, REL);
    ctx->slot = NULL; /* events still in flight for it count nowhere */
  }
  if (g_active_comms > 0 && --g_active_comms == 0 && g_seg != NULL) {
    __atomic_or_fetch(&g_seg->header.flags, FSP_FLAG_FINALIZED, REL);
    if (!g_keep) unlink(g_path); /* the mapping stays: late events still land in it */
  }
  pthread_mutex_unlock(&g_init_mu);
  return FSP_NCCL_SUCCESS;
}

/* ---- events ---- */

static void* start_task(comm_ctx* ctx, uint8_t op, uint64_t seq, size_t count, const char* dtype, uint8_t nch,
                        const char* algo, const char* proto, int peer) {
  fsp_comm* c = ctx->slot;
  if (c == NULL) return NULL;
  task_obj* t = (task_obj*)pool_get(g_tasks, sizeof(task_obj), TASK_POOL, &g_task_cur, K_TASK);
  if (t == NULL) return NULL;
  uint32_t tb = type_bytes(dtype);
  uint64_t bytes = (uint64_t)count * (tb ? tb : 1);
  /* nccl-tests' size: NCCL's count is one rank's block where the operation moves nranks of them */
  if ((op == FSP_OP_ALLGATHER || op == FSP_OP_REDUCESCATTER || op == FSP_OP_ALLTOALL || op == FSP_OP_GATHER ||
       op == FSP_OP_SCATTER) && ctx->nranks > 0)
    bytes *= (uint64_t)ctx->nranks;
  t->ctx = ctx;
  t->seq = seq;
  t->bytes = bytes;
  t->cpu_start = now_ns();
  t->gpu_start = t->gpu_stop = t->cpu_ch_start = t->cpu_ch_stop = 0;
  t->op = op;
  t->algo = algo_of(algo);
  t->proto = proto_of(proto);
  t->nch = nch;
  t->peer = peer;
  int kernel = (__atomic_load_n(&g_mask, RLX) & FSP_EV_KERNEL_CH) != 0;
  __atomic_store_n(&t->remaining, 1u + (kernel ? nch : 0u), RLX);
  t->ch_started = 0;
  t->untimed = 0;
  if (g_sample > 1) {
    t->ticket = __atomic_fetch_add(&ctx->next_ticket, 1, RLX);
    __atomic_store_n(&ctx->pending[t->ticket % PENDING], (void*)t, REL);
    /* The mask NCCL reads at the next enqueue. Operations of the process's communicators launched
     * together (nccl-tests drives every GPU of a process in one group) make one batch, and NCCL
     * has one mask for the process: one batch in g_sample asks for kernel-channel events. */
    uint64_t n = __atomic_add_fetch(&g_sample_count, 1, RLX);
    uint64_t per_batch = g_active_comms > 0 ? (uint64_t)g_active_comms : 1;
    int m = (g_mask & ~FSP_EV_KERNEL_CH) | ((n / per_batch) % g_sample == 0 ? FSP_EV_KERNEL_CH : 0);
    if (g_mask_ptr != NULL) __atomic_store_n(g_mask_ptr, m, RLX);
  }
  t->ring_idx = (uint32_t)(__atomic_fetch_add(&c->ring_next, 1, RLX) % FSP_RING_LEN);
  t->ring_lock = 0;
  t->ring_lock = ring_write(c, t->ring_idx, t, 0, 0);
  __atomic_fetch_add(&c->started, 1, RLX);
  if (op < 16) atomic_max_u64(&c->op_started_seq[op], seq + 1);
  c->last_start_unix_ns = t->cpu_start;
  return t;
}

static void* start_kernel_ch(void* parent, uint64_t ptimer) {
  if (!LIVE_TASK(parent)) {
    __atomic_fetch_add(&hdr()->events_invalid, 1, RLX);
    return NULL;
  }
  task_obj* t = (task_obj*)parent;
  if (__atomic_load_n(&t->untimed, ACQ)) {
    /* sampling judged it launched without channel events and gave their references back: a
     * channel that comes after all is not counted (NCCL broke the order the rule relies on) */
    __atomic_fetch_add(&hdr()->events_invalid, 1, RLX);
    return NULL;
  }
  ch_obj* ch = (ch_obj*)pool_get(g_chs, sizeof(ch_obj), CH_POOL, &g_ch_cur, K_CH);
  if (ch == NULL) {
    /* the channel's stop will never come for this handle: count it as stopped now */
    task_release(t);
    return NULL;
  }
  ch->parent = t;
  ch->stopped = 0;
  if (__atomic_fetch_add(&t->ch_started, 1, AR) == 0 && g_sample > 1 && t->ctx != NULL)
    resolve_before(t->ctx, t->ticket);
  if (ptimer) atomic_min_u64(&t->gpu_start, ptimer);
  atomic_min_u64(&t->cpu_ch_start, now_ns());
  return ch;
}

static void* start_proxy_op(comm_ctx* ctx, int peer, int is_send) {
  if (ctx->slot == NULL) return NULL;
  pop_obj* p = (pop_obj*)pool_get(g_pops, sizeof(pop_obj), POP_POOL, &g_pop_cur, K_POP);
  if (p == NULL) return NULL;
  p->ctx = ctx;
  p->peer = peer;
  p->is_send = is_send;
  return p;
}

static void* start_proxy_step(void* parent) {
  if (!LIVE_POP(parent)) {
    __atomic_fetch_add(&hdr()->events_invalid, 1, RLX);
    return NULL;
  }
  step_obj* s = (step_obj*)pool_get(g_steps, sizeof(step_obj), STEP_POOL, &g_step_cur, K_STEP);
  if (s == NULL) return NULL;
  s->op = (pop_obj*)parent;
  s->t_start = now_ns();
  s->t_wait = s->wait_ns = s->bytes = 0;
  return s;
}

/* The proxy op a step belongs to stays live while its steps run: NCCL stops the op after its last
 * step. A step stopped after its op (a hostile order) is counted without a peer. */
static void stop_step(step_obj* s) {
  uint64_t now = now_ns();
  if (s->t_wait) s->wait_ns += now - s->t_wait;
  pop_obj* p = s->op;
  if (LIVE_POP(p) && p->ctx->slot != NULL) {
    fsp_peer* e = peer_for(p->ctx->slot, p->peer, p->is_send);
    if (e != NULL) {
      __atomic_fetch_add(&e->steps, 1, RLX);
      __atomic_fetch_add(&e->bytes, s->bytes, RLX);
      __atomic_fetch_add(&e->step_ns_sum, now - s->t_start, RLX);
      __atomic_fetch_add(&e->wait_ns_sum, s->wait_ns, RLX);
    }
  }
  pool_put(&s->h);
}

static fsp_nccl_result fsp_stop(void* handle) {
  if (handle == NULL) return FSP_NCCL_SUCCESS;
  if (LIVE_TASK(handle)) {
    task_release((task_obj*)handle);
  } else if (LIVE_CH(handle)) {
    ch_obj* ch = (ch_obj*)handle;
    task_obj* t = ch->parent;
    if (!ch->stopped) atomic_max_u64(&t->cpu_ch_stop, now_ns());
    pool_put(&ch->h);
    task_release(t);
  } else if (LIVE_STEP(handle)) {
    stop_step((step_obj*)handle);
  } else if (LIVE_POP(handle)) {
    pool_put(&((pop_obj*)handle)->h);
  } else {
    __atomic_fetch_add(&hdr()->events_invalid, 1, RLX); /* stopped twice, or never ours */
  }
  return FSP_NCCL_SUCCESS;
}

static fsp_nccl_result fsp_record(void* handle, int state, fsp_state_args* args) {
  if (handle == NULL) return FSP_NCCL_SUCCESS;
  if (state == FSP_STATE_KERNEL_CH_STOP) {
    if (!LIVE_CH(handle)) {
      __atomic_fetch_add(&hdr()->events_invalid, 1, RLX);
      return FSP_NCCL_SUCCESS;
    }
    ch_obj* ch = (ch_obj*)handle;
    if (args != NULL && args->kernelCh.pTimer) atomic_max_u64(&ch->parent->gpu_stop, args->kernelCh.pTimer);
    atomic_max_u64(&ch->parent->cpu_ch_stop, now_ns());
    ch->stopped = 1;
    return FSP_NCCL_SUCCESS;
  }
  if (!LIVE_STEP(handle)) return FSP_NCCL_SUCCESS; /* proxy-op and control states: not used */
  step_obj* s = (step_obj*)handle;
  if (args != NULL && args->proxyStep.transSize) s->bytes = args->proxyStep.transSize;
  switch (state) {
    case FSP_STATE_SEND_WAIT:
    case FSP_STATE_RECV_WAIT:
      if (!s->t_wait) s->t_wait = now_ns();
      break;
    case FSP_STATE_RECV_FLUSH_WAIT:
    case FSP_STATE_RECV_GPU_WAIT:
      if (s->t_wait) {
        s->wait_ns += now_ns() - s->t_wait;
        s->t_wait = 0;
      }
      break;
    default:
      break;
  }
  return FSP_NCCL_SUCCESS;
}

/* v4 and v5 name the fields the plugin reads alike, in structs laid out differently: one body,
 * compiled for each. */
#define FSP_DEFINE_START(fn, descr_t)                                                                      \
  static fsp_nccl_result fn(void* context, void** handle, descr_t* d) {                                  \
    *handle = NULL;                                                                                       \
    comm_ctx* ctx = (comm_ctx*)context;                                                                   \
    if (ctx == NULL || d == NULL) return FSP_NCCL_SUCCESS;                                                \
    switch (d->type) {                                                                                    \
      case FSP_EV_COLL:                                                                                   \
        *handle = start_task(ctx, op_of(d->coll.func), d->coll.seqNumber, d->coll.count, d->coll.datatype, \
                             d->coll.nChannels, d->coll.algo, d->coll.proto, -1);                         \
        break;                                                                                            \
      case FSP_EV_P2P:                                                                                    \
        if (ctx->slot == NULL) break;                                                                     \
        *handle = start_task(ctx, op_of(d->p2p.func), __atomic_fetch_add(&ctx->slot->p2p_seq, 1, RLX),    \
                             d->p2p.count, d->p2p.datatype, d->p2p.nChannels, NULL, NULL, d->p2p.peer);   \
        break;                                                                                            \
      case FSP_EV_KERNEL_CH:                                                                              \
        *handle = start_kernel_ch(d->parentObj, d->kernelCh.pTimer);                                      \
        break;                                                                                            \
      case FSP_EV_PROXY_OP:                                                                               \
        *handle = start_proxy_op(ctx, d->proxyOp.peer, d->proxyOp.isSend);                                \
        break;                                                                                            \
      case FSP_EV_PROXY_STEP:                                                                             \
        *handle = start_proxy_step(d->parentObj);                                                         \
        break;                                                                                            \
      default:                                                                                            \
        break; /* not activated; nothing to record */                                                    \
    }                                                                                                     \
    return FSP_NCCL_SUCCESS;                                                                              \
  }

FSP_DEFINE_START(fsp_start_v5, fsp_descr_v5)
FSP_DEFINE_START(fsp_start_v4, fsp_descr_v4)

EXPORT const fsp_profiler_v5 ncclProfiler_v5 = {PLUGIN_NAME, fsp_init_v5, fsp_start_v5, fsp_stop, fsp_record,
                                                fsp_finalize};
EXPORT const fsp_profiler_v4 ncclProfiler_v4 = {PLUGIN_NAME, fsp_init_v4, fsp_start_v4, fsp_stop, fsp_record,
                                                fsp_finalize};

/* For tests and `fabscope bench`: the segment's path in this process ("" before the first init). */
EXPORT const char* fabscope_profiler_segment_path(void) { return g_seg != NULL ? g_path : ""; }
