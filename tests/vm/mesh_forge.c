// A stranger on the probe mesh's RDMA segment, for tests/vm/mesh.sh (phase "strangers"). It has a
// UD queue pair of its own on the node's soft-RoCE device and the mesh's Q_Key (a constant of the
// source, src/mesh/mesh_rdma.cpp: not a secret), but not the mesh's token, so it never saw an
// accept: it knows no exporter's QP number and no cookie. It guesses both, as an attacker would:
// soft-RoCE numbers a device's queue pairs from 17 up in order of creation, so an exporter's UD QP
// is one of a few small numbers, and a cookie is 64 random bits it can only draw at random.
//
// Usage: mesh_forge MODE -t IPV4[:QPN] [-t ...]... [-q LO-HI] [-s SECONDS] [-r PER_SECOND] [-d DEV]
//   A target's datagrams go to its QPN when one is given (the test's shortcut for "the attacker
//   found the number"), else to every QP number of the range (-q, 1-64).
//   scan     one datagram of each kind below to every QP number of every target: what reaches an
//            exporter's queue pair must be refused and counted
//   flood    probes, replies and timing datagrams with random cookies, round robin over the
//            targets and QP numbers, for -s seconds (10) at -r datagrams a second (0: as fast as
//            the send queue takes them)
//   replies  replies and timing datagrams with random cookies and sequence numbers, as in flood
// The kinds of scan (sizes in bytes of the SEND's payload; the mesh's datagram is 40):
//   40 random bytes; "FSMU" with kind 0, 4 and 255; a probe, a reply and a timing datagram with
//   a random cookie; a probe with cookie 0; sizes 0, 1, 39, 41 and 64; 65, 200 and 256 (beyond
//   the 64 bytes the mesh's receive buffers once held: soft-RoCE put the queue pair in error for
//   them); 1000 (within the 1024-byte MTU of the test's ports). And one probe with another Q_Key,
//   which the device drops.
// Prints one line: "mesh_forge MODE: sent N datagrams [(K per QP number)] in S s, F failed".
// Exit: 0 done, 1 a verbs call failed, 2 usage.
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { kMaxTargets = 16, kSlots = 128, kSlotBytes = 1024, kMeshBytes = 40 };
static const uint32_t kMeshQkey = 0x46534d51;  // "FSMQ", src/mesh/mesh_rdma.cpp

struct forge {
  struct ibv_context* ctx;
  struct ibv_pd* pd;
  struct ibv_cq* cq;
  struct ibv_qp* qp;
  struct ibv_mr* mr;
  unsigned char* buf;
  int free_slots[kSlots];
  int nfree;
  int gid_index;
  struct ibv_ah* ah[kMaxTargets];
  uint32_t qpn[kMaxTargets];  // 0: the range
  int ntargets;
  unsigned long sent, failed;
  uint64_t rng;
};

static uint64_t next_random(struct forge* f) {
  // xorshift64*: the cookies need not be good, only different from the exporters'.
  f->rng ^= f->rng >> 12;
  f->rng ^= f->rng << 25;
  f->rng ^= f->rng >> 27;
  return f->rng * 0x2545F4914F6CDD1Dull;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void put32(unsigned char* b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[i] = (unsigned char)(v >> (24 - 8 * i));
}
static void put64(unsigned char* b, uint64_t v) {
  for (int i = 0; i < 8; ++i) b[i] = (unsigned char)(v >> (56 - 8 * i));
}

// The mesh's datagram layout (src/mesh/mesh_wire.hpp): "FSMU", kind, 3 zero bytes, sequence,
// 4 zero bytes, cookie, delay, device delay.
static void mesh_datagram(unsigned char* b, unsigned kind, uint32_t seq, uint64_t cookie, uint64_t delay,
                          uint64_t hw_delay) {
  memset(b, 0, kMeshBytes);
  memcpy(b, "FSMU", 4);
  b[4] = (unsigned char)kind;
  put32(b + 8, seq);
  put64(b + 16, cookie);
  put64(b + 24, delay);
  put64(b + 32, hw_delay);
}

// The send completions so far; with `wait`, until a slot is free or 5 s have passed.
static void reap(struct forge* f, int wait) {
  struct ibv_wc wc[32];
  const double give_up = now_s() + 5;
  for (;;) {
    int n = ibv_poll_cq(f->cq, 32, wc);
    if (n < 0) return;
    for (int i = 0; i < n; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) ++f->failed;
      f->free_slots[f->nfree++] = (int)wc[i].wr_id;
    }
    if (n > 0 || !wait || f->nfree > 0 || now_s() > give_up) return;
  }
}

// One datagram of `len` bytes (its first bytes from `payload`, the rest random) to QP `qpn` of
// target `t`.
static int send_one(struct forge* f, int t, uint32_t qpn, const unsigned char* payload, size_t plen, size_t len,
                    uint32_t qkey) {
  reap(f, 0);
  if (f->nfree == 0) reap(f, 1);
  if (f->nfree == 0) {
    ++f->failed;
    return -1;
  }
  const int slot = f->free_slots[--f->nfree];
  unsigned char* b = f->buf + (size_t)slot * kSlotBytes;
  for (size_t i = 0; i < len; ++i) b[i] = (unsigned char)next_random(f);
  if (plen > len) plen = len;
  if (plen) memcpy(b, payload, plen);
  struct ibv_sge sge = {(uintptr_t)b, (uint32_t)len, f->mr->lkey};
  struct ibv_send_wr wr, *bad = NULL;
  memset(&wr, 0, sizeof wr);
  wr.wr_id = (uint64_t)slot;
  wr.sg_list = len ? &sge : NULL;
  wr.num_sge = len ? 1 : 0;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.ud.ah = f->ah[t];
  wr.wr.ud.remote_qpn = qpn;
  wr.wr.ud.remote_qkey = qkey;
  int rc = ibv_post_send(f->qp, &wr, &bad);
  if (rc != 0) {
    f->free_slots[f->nfree++] = slot;
    ++f->failed;
    return -1;
  }
  ++f->sent;
  return 0;
}

// The RoCE v2 GID of this node's IPv4 address on port 1: the index the AHs send from.
static int roce_v2_ipv4_gid(struct ibv_context* ctx) {
  struct ibv_port_attr pa;
  if (ibv_query_port(ctx, 1, &pa) != 0) return -1;
  for (int i = 0; i < pa.gid_tbl_len; ++i) {
    struct ibv_gid_entry e;
    if (ibv_query_gid_ex(ctx, 1, (uint32_t)i, &e, 0) != 0) continue;
    static const unsigned char v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (e.gid_type == IBV_GID_TYPE_ROCE_V2 && memcmp(e.gid.raw, v4mapped, 12) == 0) return i;
  }
  return -1;
}

static int open_forge(struct forge* f, const char* dev) {
  int n = 0;
  struct ibv_device** list = ibv_get_device_list(&n);
  for (int i = 0; list && i < n && !f->ctx; ++i)
    if (!dev || strcmp(ibv_get_device_name(list[i]), dev) == 0) f->ctx = ibv_open_device(list[i]);
  if (list) ibv_free_device_list(list);
  if (!f->ctx) {
    fprintf(stderr, "mesh_forge: no RDMA device %s\n", dev ? dev : "");
    return -1;
  }
  f->gid_index = roce_v2_ipv4_gid(f->ctx);
  if (f->gid_index < 0) {
    fprintf(stderr, "mesh_forge: no RoCE v2 IPv4 GID on port 1\n");
    return -1;
  }
  f->buf = calloc(kSlots, kSlotBytes);
  if (!f->buf || !(f->pd = ibv_alloc_pd(f->ctx)) || !(f->cq = ibv_create_cq(f->ctx, kSlots, NULL, NULL, 0)) ||
      !(f->mr = ibv_reg_mr(f->pd, f->buf, (size_t)kSlots * kSlotBytes, IBV_ACCESS_LOCAL_WRITE))) {
    fprintf(stderr, "mesh_forge: PD, CQ or MR: %s\n", strerror(errno));
    return -1;
  }
  struct ibv_qp_init_attr qa;
  memset(&qa, 0, sizeof qa);
  qa.send_cq = qa.recv_cq = f->cq;
  qa.qp_type = IBV_QPT_UD;
  qa.sq_sig_all = 1;
  qa.cap.max_send_wr = kSlots;
  qa.cap.max_recv_wr = 1;
  qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
  if (!(f->qp = ibv_create_qp(f->pd, &qa))) {
    fprintf(stderr, "mesh_forge: ibv_create_qp(UD): %s\n", strerror(errno));
    return -1;
  }
  struct ibv_qp_attr a;
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qkey = kMeshQkey;
  int rc = ibv_modify_qp(f->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTR;
  if (rc == 0) rc = ibv_modify_qp(f->qp, &a, IBV_QP_STATE);
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = 1;
  if (rc == 0) rc = ibv_modify_qp(f->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
  if (rc != 0) {
    fprintf(stderr, "mesh_forge: ibv_modify_qp: %s\n", strerror(rc));
    return -1;
  }
  for (int i = 0; i < kSlots; ++i) f->free_slots[f->nfree++] = i;
  f->rng = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid() ^ (uint64_t)f->qp->qp_num << 40;
  if (f->rng == 0) f->rng = 1;
  return 0;
}

static int add_target(struct forge* f, const char* target) {
  char ipv4[64];
  unsigned qpn = 0;
  struct in_addr in;
  const char* colon = strchr(target, ':');
  const size_t n = colon ? (size_t)(colon - target) : strlen(target);
  if (f->ntargets == kMaxTargets || n >= sizeof ipv4 ||
      (colon && (sscanf(colon + 1, "%u", &qpn) != 1 || qpn == 0 || qpn > 0xffffff))) {
    fprintf(stderr, "mesh_forge: bad or too many targets: '%s'\n", target);
    return -1;
  }
  memcpy(ipv4, target, n);
  ipv4[n] = 0;
  if (inet_pton(AF_INET, ipv4, &in) != 1) {
    fprintf(stderr, "mesh_forge: not an IPv4 address: '%s'\n", ipv4);
    return -1;
  }
  f->qpn[f->ntargets] = qpn;
  struct ibv_ah_attr a;
  memset(&a, 0, sizeof a);
  a.port_num = 1;
  a.is_global = 1;
  a.grh.dgid.raw[10] = a.grh.dgid.raw[11] = 0xff;  // ::ffff:IPV4, the RoCE v2 GID of the address
  memcpy(a.grh.dgid.raw + 12, &in, 4);
  a.grh.sgid_index = (uint8_t)f->gid_index;
  a.grh.hop_limit = 64;
  if (!(f->ah[f->ntargets] = ibv_create_ah(f->pd, &a))) {
    fprintf(stderr, "mesh_forge: ibv_create_ah to %s: %s\n", ipv4, strerror(errno));
    return -1;
  }
  ++f->ntargets;
  return 0;
}

// scan: every kind to one QP number of one target; returns how many kinds.
static int scan_one(struct forge* f, int t, uint32_t qpn) {
  unsigned char d[kMeshBytes];
  int k = 0;
  send_one(f, t, qpn, NULL, 0, kMeshBytes, kMeshQkey), ++k;  // random bytes
  static const unsigned kinds[] = {0, 4, 255};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
    mesh_datagram(d, kinds[i], 1, next_random(f), 0, 0);
    send_one(f, t, qpn, d, kMeshBytes, kMeshBytes, kMeshQkey), ++k;
  }
  for (unsigned kind = 1; kind <= 3; ++kind) {
    mesh_datagram(d, kind, (uint32_t)next_random(f), next_random(f), 1000, kind == 3 ? 999 : 0);
    send_one(f, t, qpn, d, kMeshBytes, kMeshBytes, kMeshQkey), ++k;
  }
  mesh_datagram(d, 1, 7, 0, 0, 0);
  send_one(f, t, qpn, d, kMeshBytes, kMeshBytes, kMeshQkey), ++k;
  static const size_t sizes[] = {0, 1, 39, 41, 64, 65, 200, 256, 1000};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
    mesh_datagram(d, 1, 9, next_random(f), 0, 0);
    send_one(f, t, qpn, d, kMeshBytes, sizes[i], kMeshQkey), ++k;
  }
  mesh_datagram(d, 1, 11, next_random(f), 0, 0);
  send_one(f, t, qpn, d, kMeshBytes, kMeshBytes, kMeshQkey ^ 1), ++k;  // another Q_Key
  return k;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: mesh_forge scan|flood|replies -t IPV4[:QPN]... [-q LO-HI] [-s SECONDS] [-r PER_SECOND] "
                    "[-d DEV]\n");
    return 2;
  }
  const char* mode = argv[1];
  const char* dev = NULL;
  const char* targets[kMaxTargets];
  int ntargets = 0;
  unsigned lo = 1, hi = 64;
  double seconds = 10, rate = 0;
  int opt;
  optind = 2;
  while ((opt = getopt(argc, argv, "t:q:s:r:d:")) != -1) {
    switch (opt) {
      case 't':
        if (ntargets < kMaxTargets) targets[ntargets++] = optarg;
        break;
      case 'q':
        if (sscanf(optarg, "%u-%u", &lo, &hi) != 2 || lo == 0 || hi < lo || hi > 0xffffff) {
          fprintf(stderr, "mesh_forge: -q LO-HI, 1 <= LO <= HI\n");
          return 2;
        }
        break;
      case 's': seconds = atof(optarg); break;
      case 'r': rate = atof(optarg); break;
      case 'd': dev = optarg; break;
      default: return 2;
    }
  }
  const int scan = strcmp(mode, "scan") == 0, flood = strcmp(mode, "flood") == 0,
            replies = strcmp(mode, "replies") == 0;
  if (!(scan || flood || replies) || ntargets == 0) {
    fprintf(stderr, "mesh_forge: a mode (scan, flood, replies) and at least one -t IPV4\n");
    return 2;
  }
  struct forge f;
  memset(&f, 0, sizeof f);
  if (open_forge(&f, dev) != 0) return 1;
  for (int i = 0; i < ntargets; ++i)
    if (add_target(&f, targets[i]) != 0) return 1;
  const double t0 = now_s();
  int per_qpn = 0;
  if (scan) {
    for (int t = 0; t < f.ntargets; ++t) {
      if (f.qpn[t]) per_qpn = scan_one(&f, t, f.qpn[t]);
      else
        for (uint32_t q = lo; q <= hi; ++q) per_qpn = scan_one(&f, t, q);
    }
  } else {
    const double end = t0 + seconds;
    unsigned long k = 0;
    unsigned char d[kMeshBytes];
    per_qpn = -1;
    while (now_s() < end) {
      const int t = (int)(k % (unsigned long)f.ntargets);
      const uint32_t q = f.qpn[t] ? f.qpn[t] : lo + (uint32_t)((k / (unsigned long)f.ntargets) % (hi - lo + 1));
      const unsigned kind = replies ? 2 + (unsigned)(k & 1) : 1 + (unsigned)(k % 3);
      mesh_datagram(d, kind, (uint32_t)next_random(&f), next_random(&f), 1000, kind == 3 ? 500 : 0);
      send_one(&f, t, q, d, kMeshBytes, kMeshBytes, kMeshQkey);
      ++k;
      if (rate > 0) {
        // Paced: sleep until this datagram's turn (in steps of at least 1 ms).
        const double due = t0 + (double)k / rate;
        const double ahead = due - now_s();
        if (ahead > 0.001) usleep((useconds_t)(ahead * 1e6));
      }
    }
  }
  while (f.nfree < kSlots) {
    const int before = f.nfree;
    reap(&f, 0);
    if (f.nfree == before) usleep(1000);
    if (now_s() - t0 > seconds + 30) break;  // completions that never come: do not hang
  }
  const double took = now_s() - t0;
  char per[48] = "";
  if (per_qpn > 0) snprintf(per, sizeof per, " (%d per QP number)", per_qpn);
  printf("mesh_forge %s: sent %lu datagrams%s in %.2f s, %lu failed\n", mode, f.sent, per, took, f.failed);
  return 0;
}
