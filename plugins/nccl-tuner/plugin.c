/* libnccl-tuner-fabscope.so: NCCL tuner plugin reading the table named by NCCL_TUNER_CONFIG_FILE
 * (the variable NVIDIA's example plugin reads; default nccl_tuner.conf in the working directory)
 * and applying its first matching row to each collective. Outside the table NCCL decides alone.
 *
 * Rules of a plugin living inside NCCL's process: C, libc only, nothing thrown, every entry
 * returns ncclSuccess (NCCL 2.21+ fails the collective on any other code from getCollInfo), a bad
 * table line is skipped with a warning naming file:line, a missing or unreadable table only
 * means "no rows".
 *
 * fabscope's own search drives the plugin in-process through fabscope_tuner_force(): a forced
 * choice for one collective replaces the table while set (see src/tune). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_abi.h"
#include "table.h"

#define EXPORT __attribute__((visibility("default")))
#define PLUGIN_NAME "fabscope"
#define MAX_TABLE_BYTES (16u << 20)

/* Channel ceilings: NCCL's MAXCHANNELS was 32 up to 2.24 and 64 from 2.25. v4 is also taken by
 * 2.24, so only v5 (2.28+) may ask for more than 32. */
#define MAX_CHANNELS_OLD 32
#define MAX_CHANNELS_V5 64

typedef struct {
  fst_table table;
  size_t nranks;
  size_t nnodes;
  fst_nccl_logger log;
  int max_channels;
  int clamp_warned;
  char path[512];
} context;

static void say(const context* c, int level, unsigned long flags, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void say(const context* c, int level, unsigned long flags, const char* fmt, ...) {
  if (c == NULL || c->log == NULL) return;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  c->log(level, flags, __FILE__, __LINE__, "%s", buf);
}

static void on_bad_line(void* arg, size_t line_no, const char* why) {
  const context* c = (const context*)arg;
  say(c, FST_LOG_WARN, FST_LOGSUB_TUNING, "TUNER/fabscope: %s:%zu: %s; line skipped", c->path,
      line_no, why);
}

static void load_table(context* c) {
  const char* path = getenv("NCCL_TUNER_CONFIG_FILE");
  if (path == NULL || path[0] == '\0') path = "nccl_tuner.conf";
  snprintf(c->path, sizeof c->path, "%s", path);
  FILE* f = fopen(path, "rb");
  if (f == NULL) {
    say(c, FST_LOG_INFO, FST_LOGSUB_INIT | FST_LOGSUB_TUNING,
        "TUNER/fabscope: no table (%s cannot be opened); NCCL's own choice everywhere", c->path);
    return;
  }
  char* text = (char*)malloc(MAX_TABLE_BYTES + 1);
  size_t n = text == NULL ? 0 : fread(text, 1, MAX_TABLE_BYTES + 1, f);
  int read_error = text != NULL && ferror(f);
  fclose(f);
  if (text == NULL || read_error || n > MAX_TABLE_BYTES) {
    say(c, FST_LOG_WARN, FST_LOGSUB_TUNING, "TUNER/fabscope: %s: %s; table not used", c->path,
        text == NULL ? "out of memory" : read_error ? "read error" : "larger than 16 MiB");
    free(text);
    return;
  }
  if (fst_parse_text(text, n, &c->table, on_bad_line, c) != 0)
    say(c, FST_LOG_WARN, FST_LOGSUB_TUNING, "TUNER/fabscope: %s: out of memory after %zu rows",
        c->path, c->table.count);
  free(text);
  say(c, FST_LOG_INFO, FST_LOGSUB_INIT | FST_LOGSUB_TUNING,
      "TUNER/fabscope: %zu rows from %s (%zu bad lines skipped), nRanks %zu nNodes %zu",
      c->table.count, c->path, c->table.bad_lines, c->nranks, c->nnodes);
}

/* The shape NCCL gave the last communicator's init (process-wide): what a table row's nNodes and
 * nRanks must match. NCCL counts nodes its own way: ranks of one host that reach each other only
 * over the network (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1) are separate nodes to it. */
static long g_shape_nranks = -1, g_shape_nnodes = -1;

EXPORT int fabscope_tuner_shape(long* nranks, long* nnodes) {
  long r = __atomic_load_n(&g_shape_nranks, __ATOMIC_SEQ_CST), n = __atomic_load_n(&g_shape_nnodes, __ATOMIC_SEQ_CST);
  if (nranks) *nranks = r;
  if (nnodes) *nnodes = n;
  return r > 0 && n > 0 ? 0 : -1;
}

static context* new_context(size_t nranks, size_t nnodes, fst_nccl_logger log, int max_channels) {
  __atomic_store_n(&g_shape_nranks, (long)nranks, __ATOMIC_SEQ_CST);
  __atomic_store_n(&g_shape_nnodes, (long)nnodes, __ATOMIC_SEQ_CST);
  context* c = (context*)calloc(1, sizeof *c);
  if (c == NULL) return NULL;
  c->nranks = nranks;
  c->nnodes = nnodes;
  c->log = log;
  c->max_channels = max_channels;
  load_table(c);
  return c;
}

static void free_context(context* c) {
  if (c == NULL) return;
  fst_table_free(&c->table);
  free(c);
}

/* ---- the choice forced by fabscope's search (process-wide, atomics) ---- */
static int g_force_coll = -1, g_force_algo = -1, g_force_proto = -1, g_force_channels = -1;
static long g_force_applied = 0, g_force_unavailable = 0;

/* coll < 0 clears. algo/proto -1 = leave NCCL's (then channels alone may be forced). */
EXPORT int fabscope_tuner_force(int coll, int algo, int proto, int channels) {
  if (coll >= FST_COLL_COUNT || algo >= FST_ALGO_COUNT || proto >= FST_PROTO_COUNT ||
      channels > MAX_CHANNELS_V5 || ((algo < 0) != (proto < 0)))
    return -1;
  __atomic_store_n(&g_force_coll, -1, __ATOMIC_SEQ_CST);
  __atomic_store_n(&g_force_algo, algo, __ATOMIC_SEQ_CST);
  __atomic_store_n(&g_force_proto, proto, __ATOMIC_SEQ_CST);
  __atomic_store_n(&g_force_channels, channels <= 0 ? -1 : channels, __ATOMIC_SEQ_CST);
  __atomic_store_n(&g_force_applied, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&g_force_unavailable, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&g_force_coll, coll < 0 ? -1 : coll, __ATOMIC_SEQ_CST);
  return 0;
}

/* Calls since the last fabscope_tuner_force that took the forced choice / could not (NCCL had
 * marked the algorithm/protocol as unusable for that call). */
EXPORT void fabscope_tuner_force_stats(long* applied, long* unavailable) {
  if (applied) *applied = __atomic_load_n(&g_force_applied, __ATOMIC_SEQ_CST);
  if (unavailable) *unavailable = __atomic_load_n(&g_force_unavailable, __ATOMIC_SEQ_CST);
}

typedef struct {
  int algo, proto, channels;
} choice;

/* Can this version of NCCL run algo/proto for this call? */
typedef int (*usable_fn)(const void* arg, int algo, int proto);

static int clamp_channels(context* c, int channels) {
  if (channels <= 0) return 0; /* 0 = NCCL's choice */
  if (channels > c->max_channels) {
    if (!__atomic_exchange_n(&c->clamp_warned, 1, __ATOMIC_SEQ_CST))
      say(c, FST_LOG_WARN, FST_LOGSUB_TUNING,
          "TUNER/fabscope: %s: %d channels asked, this NCCL interface allows %d; using %d",
          c->path, channels, c->max_channels, c->max_channels);
    return c->max_channels;
  }
  return channels;
}

/* Fills *out and returns 1 when a forced choice or a table row applies. */
static int decide(context* c, int coll, size_t bytes, int pipe_ops, int reg_buff, usable_fn usable,
                  const void* arg, choice* out) {
  if (c == NULL) return 0;
  int fcoll = __atomic_load_n(&g_force_coll, __ATOMIC_SEQ_CST);
  if (fcoll >= 0 && fcoll == coll) {
    choice f = {__atomic_load_n(&g_force_algo, __ATOMIC_SEQ_CST),
                __atomic_load_n(&g_force_proto, __ATOMIC_SEQ_CST),
                __atomic_load_n(&g_force_channels, __ATOMIC_SEQ_CST)};
    if (f.algo >= 0 && !usable(arg, f.algo, f.proto)) {
      __atomic_add_fetch(&g_force_unavailable, 1, __ATOMIC_SEQ_CST);
      return 0;
    }
    __atomic_add_fetch(&g_force_applied, 1, __ATOMIC_SEQ_CST);
    f.channels = clamp_channels(c, f.channels);
    *out = f;
    return 1;
  }
  size_t from = 0;
  for (;;) {
    long i = fst_match(&c->table, from, coll, (uint64_t)bytes, (int)c->nnodes, (int)c->nranks,
                       pipe_ops, reg_buff);
    if (i < 0) return 0;
    const fst_row* r = &c->table.rows[i];
    if (usable(arg, r->algo, r->proto)) {
      out->algo = r->algo;
      out->proto = r->proto;
      out->channels = clamp_channels(c, r->channels);
      say(c, FST_LOG_TRACE, FST_LOGSUB_TUNING,
          "TUNER/fabscope: %s %zu bytes: row %ld -> %s/%s channels %d", fst_coll_name(coll),
          bytes, i + 1, fst_algo_name(out->algo), fst_proto_name(out->proto), out->channels);
      return 1;
    }
    say(c, FST_LOG_TRACE, FST_LOGSUB_TUNING,
        "TUNER/fabscope: %s %zu bytes: row %ld wants %s/%s, which NCCL cannot use here",
        fst_coll_name(coll), bytes, i + 1, fst_algo_name(r->algo), fst_proto_name(r->proto));
    from = (size_t)i + 1;
  }
}

/* ---- v3, v4, v5: the cost table says what is usable ---- */
typedef struct {
  float* cost;
  int num_algo, num_proto;
} cost_table;

static int usable_in_table(const void* arg, int algo, int proto) {
  const cost_table* t = (const cost_table*)arg;
  if (t->cost == NULL || algo < 0 || proto < 0 || algo >= t->num_algo || proto >= t->num_proto) return 0;
  return t->cost[algo * t->num_proto + proto] != FST_COST_IGNORE;
}

static fst_nccl_result get_with_table(void* ctx, int coll, size_t bytes, int pipe_ops,
                                      float** table, int num_algo, int num_proto, int reg_buff,
                                      int* nchannels) {
  cost_table t = {(float*)table, num_algo, num_proto};
  choice ch;
  if (nchannels == NULL || coll < 0 || coll >= FST_COLL_COUNT || num_algo <= 0 || num_proto <= 0 ||
      num_algo > 64 || num_proto > 64)
    return FST_NCCL_SUCCESS;
  if (!decide((context*)ctx, coll, bytes, pipe_ops, reg_buff, usable_in_table, &t, &ch))
    return FST_NCCL_SUCCESS;
  if (ch.algo >= 0) t.cost[ch.algo * num_proto + ch.proto] = 0.0f; /* cheapest: NCCL takes it */
  if (ch.channels > 0) *nchannels = ch.channels;
  return FST_NCCL_SUCCESS;
}

static fst_nccl_result init_v3(size_t nranks, size_t nnodes, fst_nccl_logger log, void** ctx) {
  if (ctx != NULL) *ctx = new_context(nranks, nnodes, log, MAX_CHANNELS_OLD);
  return FST_NCCL_SUCCESS;
}
static fst_nccl_result destroy_ctx(void* ctx) {
  free_context((context*)ctx);
  return FST_NCCL_SUCCESS;
}
static fst_nccl_result get_v3(void* ctx, int coll, size_t bytes, int pipe_ops, float** table,
                              int num_algo, int num_proto, int* nchannels) {
  return get_with_table(ctx, coll, bytes, pipe_ops, table, num_algo, num_proto, -1, nchannels);
}
static fst_nccl_result init_v5(void** ctx, uint64_t comm_id, size_t nranks, size_t nnodes,
                               fst_nccl_logger log, void* nvl, void* constants) {
  (void)comm_id;
  (void)nvl;
  (void)constants;
  if (ctx != NULL) *ctx = new_context(nranks, nnodes, log, MAX_CHANNELS_V5);
  return FST_NCCL_SUCCESS;
}

/* ---- v1, v2: the plugin names algorithm and protocol; no cost table says what is usable, so
 * only choices every 2.19-2.21 build accepts for that collective are passed on. ---- */
typedef struct {
  int coll, collnet, nvls;
} support;

static int usable_by_rule(const void* arg, int algo, int proto) {
  const support* s = (const support*)arg;
  if (proto < 0 || proto >= FST_PROTO_COUNT) return 0;
  switch (algo) {
    case FST_ALGO_RING: return 1;
    case FST_ALGO_TREE: return s->coll == FST_COLL_ALLREDUCE;
    case FST_ALGO_COLLNET_DIRECT:
    case FST_ALGO_COLLNET_CHAIN: return s->coll == FST_COLL_ALLREDUCE && s->collnet;
    case FST_ALGO_NVLS:
    case FST_ALGO_NVLS_TREE: return s->coll == FST_COLL_ALLREDUCE && s->nvls && proto == FST_PROTO_SIMPLE;
    default: return 0; /* PAT: not in these versions */
  }
}

static fst_nccl_result get_with_outputs(void* ctx, int coll, size_t bytes, int collnet, int nvls,
                                        int pipe_ops, int* algo, int* proto, int* nchannels) {
  support s = {coll, collnet, nvls};
  choice ch;
  if (algo == NULL || proto == NULL || nchannels == NULL || coll < 0 || coll >= FST_COLL_COUNT)
    return FST_NCCL_SUCCESS;
  if (!decide((context*)ctx, coll, bytes, pipe_ops, -1, usable_by_rule, &s, &ch))
    return FST_NCCL_SUCCESS;
  if (ch.algo >= 0) {
    *algo = ch.algo;
    *proto = ch.proto;
  }
  if (ch.channels > 0) *nchannels = ch.channels;
  return FST_NCCL_SUCCESS;
}

static fst_nccl_result get_v2(void* ctx, int coll, size_t bytes, int collnet, int nvls,
                              int pipe_ops, int* algo, int* proto, int* nchannels) {
  return get_with_outputs(ctx, coll, bytes, collnet, nvls, pipe_ops, algo, proto, nchannels);
}

/* v1 has no context: one shared table, counted per communicator. nRanks/nNodes are those of
 * the communicator created last (2.19/2.20 give the plugin no way to tell them apart). */
static pthread_mutex_t g_v1_lock = PTHREAD_MUTEX_INITIALIZER;
static context* g_v1_ctx = NULL;
static int g_v1_refs = 0;

static fst_nccl_result init_v1(size_t nranks, size_t nnodes, fst_nccl_logger log) {
  pthread_mutex_lock(&g_v1_lock);
  if (g_v1_ctx == NULL) g_v1_ctx = new_context(nranks, nnodes, log, MAX_CHANNELS_OLD);
  if (g_v1_ctx != NULL) {
    g_v1_ctx->nranks = nranks;
    g_v1_ctx->nnodes = nnodes;
    ++g_v1_refs;
  }
  pthread_mutex_unlock(&g_v1_lock);
  return FST_NCCL_SUCCESS;
}
static fst_nccl_result get_v1(int coll, size_t bytes, int collnet, int nvls, int pipe_ops,
                              int* algo, int* proto, int* nchannels) {
  pthread_mutex_lock(&g_v1_lock);
  fst_nccl_result r = get_with_outputs(g_v1_ctx, coll, bytes, collnet, nvls, pipe_ops, algo, proto, nchannels);
  pthread_mutex_unlock(&g_v1_lock);
  return r;
}
static fst_nccl_result destroy_v1(void) {
  pthread_mutex_lock(&g_v1_lock);
  if (g_v1_refs > 0 && --g_v1_refs == 0) {
    free_context(g_v1_ctx);
    g_v1_ctx = NULL;
  }
  pthread_mutex_unlock(&g_v1_lock);
  return FST_NCCL_SUCCESS;
}

static fst_nccl_result init_v2(size_t nranks, size_t nnodes, fst_nccl_logger log, void** ctx) {
  return init_v3(nranks, nnodes, log, ctx);
}

EXPORT const fst_tuner_v5 ncclTunerPlugin_v5 = {PLUGIN_NAME, init_v5, get_with_table, destroy_ctx};
EXPORT const fst_tuner_v4 ncclTunerPlugin_v4 = {PLUGIN_NAME, init_v3, get_with_table, destroy_ctx};
EXPORT const fst_tuner_v3 ncclTunerPlugin_v3 = {PLUGIN_NAME, init_v3, get_v3, destroy_ctx};
EXPORT const fst_tuner_v2 ncclTunerPlugin_v2 = {PLUGIN_NAME, init_v2, get_v2, destroy_ctx};
EXPORT const fst_tuner_v1 ncclTunerPlugin_v1 = {PLUGIN_NAME, init_v1, get_v1, destroy_v1};
