/* The tuner table reader (see table.h). Never trusts its input: bounded line length, checked
 * numbers, every field validated before a row is kept. */
#include "table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_abi.h"

static const char* const kColls[FST_COLL_COUNT] = {"broadcast", "reduce", "allgather",
                                                   "reducescatter", "allreduce"};
static const char* const kAlgos[FST_ALGO_COUNT] = {"tree", "ring", "collnet_direct",
                                                   "collnet_chain", "nvls", "nvls_tree", "pat"};
static const char* const kProtos[FST_PROTO_COUNT] = {"ll", "ll128", "simple"};

const char* fst_coll_name(int c) { return c >= 0 && c < FST_COLL_COUNT ? kColls[c] : "?"; }
const char* fst_algo_name(int a) { return a >= 0 && a < FST_ALGO_COUNT ? kAlgos[a] : "?"; }
const char* fst_proto_name(int p) { return p >= 0 && p < FST_PROTO_COUNT ? kProtos[p] : "?"; }

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

static int name_index(const char* const* names, int n, const char* s, size_t len) {
  for (int i = 0; i < n; ++i) {
    size_t k = strlen(names[i]);
    if (k != len) continue;
    size_t j = 0;
    while (j < len && lower((unsigned char)s[j]) == names[i][j]) ++j;
    if (j == len) return i;
  }
  return -1;
}

int fst_coll_from_name(const char* s, size_t len) { return name_index(kColls, FST_COLL_COUNT, s, len); }
int fst_algo_from_name(const char* s, size_t len) { return name_index(kAlgos, FST_ALGO_COUNT, s, len); }
int fst_proto_from_name(const char* s, size_t len) { return name_index(kProtos, FST_PROTO_COUNT, s, len); }

typedef struct {
  const char* p;
  size_t n;
} field;

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

static field trim(const char* p, size_t n) {
  while (n > 0 && is_space(p[0])) { ++p; --n; }
  while (n > 0 && is_space(p[n - 1])) --n;
  field f = {p, n};
  return f;
}

/* Unsigned decimal, no sign, no overflow. */
static int parse_u64(field f, uint64_t* out) {
  if (f.n == 0 || f.n > 20) return -1;
  uint64_t v = 0;
  for (size_t i = 0; i < f.n; ++i) {
    if (f.p[i] < '0' || f.p[i] > '9') return -1;
    uint64_t d = (uint64_t)(f.p[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

/* -1, or an integer in [lo, hi]. */
static int parse_int_or_any(field f, int lo, int hi, int* out) {
  if (f.n == 2 && f.p[0] == '-' && f.p[1] == '1') { *out = -1; return 0; }
  uint64_t v;
  if (parse_u64(f, &v) != 0 || v < (uint64_t)lo || v > (uint64_t)hi) return -1;
  *out = (int)v;
  return 0;
}

static void say(char* why, size_t why_len, const char* what, field f) {
  if (why == NULL || why_len == 0) return;
  int shown = f.n > 40 ? 40 : (int)f.n;
  snprintf(why, why_len, "%s '%.*s'%s", what, shown, f.p, f.n > 40 ? "..." : "");
}

int fst_parse_line(const char* line, size_t len, fst_row* row, char* why, size_t why_len) {
  if (why != NULL && why_len > 0) why[0] = '\0';
  field all = trim(line, len);
  if (all.n == 0 || all.p[0] == '#') return 0;
  if (len > FST_MAX_LINE) {
    if (why != NULL && why_len > 0) snprintf(why, why_len, "line longer than %d bytes", FST_MAX_LINE);
    return -1;
  }
  field f[11];
  size_t nf = 0, start = 0;
  for (size_t i = 0; i <= all.n; ++i) {
    if (i == all.n || all.p[i] == ',') {
      if (nf == 11) break;
      f[nf++] = trim(all.p + start, i - start);
      start = i + 1;
    }
  }
  if (nf == 11 || nf < 8) {
    if (why != NULL && why_len > 0)
      snprintf(why, why_len, "%s%zu fields, expected 8 to 10 (collective,min_bytes,max_bytes,"
               "algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]])",
               nf == 11 ? "more than " : "", nf == 11 ? (size_t)10 : nf);
    return -1;
  }
  fst_row r;
  r.coll = fst_coll_from_name(f[0].p, f[0].n);
  if (r.coll < 0) {
    static const char* const kHeaders[2] = {"collective", "collective_type"};
    if (name_index(kHeaders, 2, f[0].p, f[0].n) >= 0)
      return 0; /* a spreadsheet header */
    say(why, why_len, "unknown collective (broadcast, reduce, allgather, reducescatter, allreduce)", f[0]);
    return -1;
  }
  if (parse_u64(f[1], &r.min_bytes) != 0) { say(why, why_len, "min_bytes is not a byte count:", f[1]); return -1; }
  if (parse_u64(f[2], &r.max_bytes) != 0) { say(why, why_len, "max_bytes is not a byte count:", f[2]); return -1; }
  if (r.min_bytes > r.max_bytes) { say(why, why_len, "min_bytes is above max_bytes", f[1]); return -1; }
  r.algo = fst_algo_from_name(f[3].p, f[3].n);
  if (r.algo < 0) {
    say(why, why_len, "unknown algorithm (tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree, pat)", f[3]);
    return -1;
  }
  r.proto = fst_proto_from_name(f[4].p, f[4].n);
  if (r.proto < 0) { say(why, why_len, "unknown protocol (ll, ll128, simple)", f[4]); return -1; }
  if (parse_int_or_any(f[5], 1, FST_MAX_CHANNELS_FIELD, &r.channels) != 0) {
    say(why, why_len, "channels must be -1 or 1..1024, got", f[5]);
    return -1;
  }
  if (parse_int_or_any(f[6], 1, 1 << 24, &r.nnodes) != 0) { say(why, why_len, "nNodes must be -1 or positive, got", f[6]); return -1; }
  if (parse_int_or_any(f[7], 1, 1 << 24, &r.nranks) != 0) { say(why, why_len, "nRanks must be -1 or positive, got", f[7]); return -1; }
  r.pipe_ops = -1;
  r.reg_buff = -1;
  if (nf >= 9 && parse_int_or_any(f[8], 1, 1 << 24, &r.pipe_ops) != 0) {
    say(why, why_len, "numPipeOps must be -1 or positive, got", f[8]);
    return -1;
  }
  if (nf == 10 && parse_int_or_any(f[9], 0, 1, &r.reg_buff) != 0) {
    say(why, why_len, "regBuff must be -1, 0 or 1, got", f[9]);
    return -1;
  }
  *row = r;
  return 1;
}

int fst_parse_text(const char* text, size_t len, fst_table* out, fst_bad_line_fn bad, void* arg) {
  out->rows = NULL;
  out->count = 0;
  out->bad_lines = 0;
  size_t cap = 0, line_no = 0, pos = 0;
  int warned_full = 0;
  while (pos < len) {
    size_t end = pos;
    while (end < len && text[end] != '\n') ++end;
    ++line_no;
    fst_row r;
    char why[200];
    int rc = fst_parse_line(text + pos, end - pos, &r, why, sizeof why);
    if (rc < 0) {
      ++out->bad_lines;
      if (bad != NULL) bad(arg, line_no, why);
    } else if (rc > 0) {
      if (out->count == FST_MAX_ROWS) {
        ++out->bad_lines;
        if (bad != NULL && !warned_full) bad(arg, line_no, "more than 65536 rows; this and later rows skipped");
        warned_full = 1;
      } else {
        if (out->count == cap) {
          size_t ncap = cap == 0 ? 16 : cap * 2;
          fst_row* n = (fst_row*)realloc(out->rows, ncap * sizeof *n);
          if (n == NULL) return -1;
          out->rows = n;
          cap = ncap;
        }
        out->rows[out->count++] = r;
      }
    }
    pos = end + 1;
  }
  return 0;
}

void fst_table_free(fst_table* t) {
  free(t->rows);
  t->rows = NULL;
  t->count = 0;
}

long fst_match(const fst_table* t, size_t from, int coll, uint64_t bytes, int nnodes, int nranks,
               int pipe_ops, int reg_buff) {
  for (size_t i = from; i < t->count; ++i) {
    const fst_row* r = &t->rows[i];
    if (r->coll != coll || bytes < r->min_bytes || bytes > r->max_bytes) continue;
    if (r->nnodes != -1 && r->nnodes != nnodes) continue;
    if (r->nranks != -1 && r->nranks != nranks) continue;
    if (r->pipe_ops != -1 && pipe_ops >= 0 && r->pipe_ops != pipe_ops) continue;
    if (r->reg_buff != -1 && reg_buff >= 0 && r->reg_buff != reg_buff) continue;
    return (long)i;
  }
  return -1;
}
