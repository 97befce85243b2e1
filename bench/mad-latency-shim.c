// A management-packet latency model between a program and ibsim (bench/fabric-latency.sh).
// Preloaded before umad2sim (LD_PRELOAD=mad-latency-shim.so:libumad2sim.so): libibumad's
// write/read/poll on a umad file descriptor come here first and go on to umad2sim (RTLD_NEXT).
// umad2sim numbers its umad descriptors 1024-2047; nothing else is touched.
//
// A request written is stamped with the time its answer may be seen; an answer read from umad2sim
// is held until then. Two models, from the environment:
//   MADLAT_RTT_US=R       a round trip of R µs per MAD, every destination answering in parallel
//   MADLAT_SERVICE_US=S   besides, each destination's agent handles one MAD at a time for S µs
//                         (a switch's management processor): the request reaches the agent R/2
//                         after it was sent, waits until the agent is free, takes S, and the
//                         answer arrives R/2 later.
// The destination of a MAD: its DLID for a LID-routed MAD (every port of a switch shares the
// switch's LID, so its counter queries all queue at one agent), the hops of the initial path for
// a directed-route SMP (the node at the end of the path; a node reached by two paths counts as two
// agents). Answers are matched to requests by the low 32 bits of the transaction id (umad2sim puts
// the agent number in the high ones); an answer with no request (a trap, a late answer) is not held.
// Waits under 2 ms spin in poll() (a sleep that short wakes late on a loaded machine: the model
// would be the scheduler's); longer ones wait in umad2sim's poll, so an answer that comes in
// meanwhile is taken in. The measured command therefore uses a CPU while it waits, as a tool
// polling a NIC's completion would not: on a machine short of CPUs that slows the simulator.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define UMAD_HDR 64     // sizeof(struct ib_user_mad): 5 words, then the 44-byte address
#define LID_OFF 28      // ib_user_mad.addr.lid (big endian)
#define MAD_MAX 256
#define TRACK 4096      // requests remembered (more than any tool keeps in flight)
#define HELD 1024       // answers held back
#define AGENTS 65536

static ssize_t (*next_read)(int, void*, size_t);
static ssize_t (*next_write)(int, const void*, size_t);
static int (*next_poll)(struct pollfd*, nfds_t, int);
static int64_t rtt_ns, service_ns;

struct request { uint32_t tid; int used; int64_t due; };
static struct request track[TRACK];
struct answer { int64_t due; size_t len; unsigned char buf[UMAD_HDR + MAD_MAX]; };
static struct answer held[HELD];
static int nheld;
// Each destination's agent: when it is next free. Hashed (open addressing) by the key's bytes.
struct agent { uint64_t key; int used; int64_t free_at; };
static struct agent agents[AGENTS];

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

__attribute__((constructor)) static void init(void) {
  next_read = (ssize_t(*)(int, void*, size_t))dlsym(RTLD_NEXT, "read");
  next_write = (ssize_t(*)(int, const void*, size_t))dlsym(RTLD_NEXT, "write");
  next_poll = (int (*)(struct pollfd*, nfds_t, int))dlsym(RTLD_NEXT, "poll");
  const char* r = getenv("MADLAT_RTT_US");
  const char* s = getenv("MADLAT_SERVICE_US");
  rtt_ns = r ? (int64_t)(atof(r) * 1000) : 0;
  service_ns = s ? (int64_t)(atof(s) * 1000) : 0;
}

static int is_umad(int fd) { return fd >= 1024 && fd < 2048 && (rtt_ns > 0 || service_ns > 0); }

// The destination as 64 bits: the DLID, or the path's hops folded (FNV-1a) with the hop count.
static uint64_t dest_key(const unsigned char* u) {
  const unsigned char* m = u + UMAD_HDR;
  if (m[1] != 0x81) return 0x1000000ULL | ((uint64_t)u[LID_OFF] << 8) | u[LID_OFF + 1];
  uint64_t h = 1469598103934665603ULL ^ m[7];
  for (int i = 1; i <= m[7] && i < 64; ++i) h = (h ^ m[128 + i]) * 1099511628211ULL;
  return h | (1ULL << 63);
}

static struct agent* agent_of(uint64_t key) {
  size_t i = (size_t)(key * 11400714819323198485ULL) % AGENTS;
  for (size_t n = 0; n < AGENTS; ++n, i = (i + 1) % AGENTS) {
    if (!agents[i].used) {
      agents[i].used = 1;
      agents[i].key = key;
      agents[i].free_at = 0;
      return &agents[i];
    }
    if (agents[i].key == key) return &agents[i];
  }
  return &agents[0];  // full: share one (never with the fabrics benchmarked)
}

static uint32_t tid_low(const unsigned char* u) {
  const unsigned char* m = u + UMAD_HDR;
  return (uint32_t)m[12] << 24 | (uint32_t)m[13] << 16 | (uint32_t)m[14] << 8 | m[15];
}

ssize_t write(int fd, const void* buf, size_t count) {
  if (is_umad(fd) && count >= UMAD_HDR + 24) {
    const unsigned char* u = buf;
    int response = u[UMAD_HDR + 3] & 0x80;
    if (!response) {
      int64_t t = now_ns(), due;
      if (service_ns > 0) {
        struct agent* a = agent_of(dest_key(u));
        int64_t start = t + rtt_ns / 2;
        if (a->free_at > start) start = a->free_at;
        a->free_at = start + service_ns;
        due = a->free_at + rtt_ns - rtt_ns / 2;
      } else {
        due = t + rtt_ns;
      }
      uint32_t tid = tid_low(u);
      struct request* q = &track[tid % TRACK];
      q->tid = tid;
      q->used = 1;
      q->due = due;
    }
  }
  return next_write(fd, buf, count);
}

// Takes in every answer umad2sim has, each with the time it may be seen.
static void drain(int fd) {
  while (nheld < HELD) {
    struct answer* a = &held[nheld];
    ssize_t n = next_read(fd, a->buf, sizeof a->buf);
    if (n <= 0) return;  // umad2sim: -EWOULDBLOCK when its queue is empty
    a->len = (size_t)n;
    a->due = 0;
    if ((size_t)n >= UMAD_HDR + 24) {
      struct request* q = &track[tid_low(a->buf) % TRACK];
      if (q->used && q->tid == tid_low(a->buf)) {
        a->due = q->due;
        q->used = 0;
      }
    }
    ++nheld;
  }
}

static int earliest(void) {
  int best = -1;
  for (int i = 0; i < nheld; ++i)
    if (best < 0 || held[i].due < held[best].due) best = i;
  return best;
}

ssize_t read(int fd, void* buf, size_t count) {
  if (!is_umad(fd)) return next_read(fd, buf, count);
  drain(fd);
  int i = earliest();
  if (i < 0 || held[i].due > now_ns()) {  // as umad2sim says "nothing yet"
    errno = EWOULDBLOCK;
    return -EWOULDBLOCK;
  }
  size_t n = held[i].len < count ? held[i].len : count;
  memcpy(buf, held[i].buf, n);
  held[i] = held[--nheld];
  return (ssize_t)n;
}

int poll(struct pollfd* fds, nfds_t nfds, int timeout) {
  int u = -1;
  for (nfds_t i = 0; i < nfds; ++i)
    if (is_umad(fds[i].fd)) u = (int)i;
  if (u < 0 || nfds != 1) return next_poll(fds, nfds, timeout);
  int64_t end = timeout < 0 ? INT64_MAX : now_ns() + (int64_t)timeout * 1000000;
  for (;;) {
    drain(fds[u].fd);
    int i = earliest();
    int64_t t = now_ns();
    if (i >= 0 && held[i].due <= t) {
      fds[u].revents = POLLIN;
      return 1;
    }
    if (t >= end) {
      fds[u].revents = 0;
      return 0;
    }
    int64_t wait = end - t;
    if (i >= 0 && held[i].due - t < wait) wait = held[i].due - t;
    if (wait >= 2000000) {  // long: in umad2sim's poll, which returns when an answer comes
      struct pollfd p = fds[u];
      int rc = next_poll(&p, 1, (int)(wait / 1000000) - 1);
      if (rc < 0) return rc;
    }
    // Short: spin (taking in what comes). A sleep of 20 µs on a loaded machine wakes
    // milliseconds later, which would model the scheduler instead of the fabric.
  }
}
