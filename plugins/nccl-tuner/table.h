/* The tuner table: the CSV of NCCL's example tuner plugin (ext-tuner/example), one row per line
 *   collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]]
 * '#' starts a comment line; blank lines and a header line (first field "collective" or
 * "collective_type") are skipped. -1 means "any" for nNodes, nRanks, numPipeOps, regBuff and
 * "NCCL's choice" for channels. Names are case-insensitive; spaces around fields are ignored.
 *
 * Plain C over bytes: the plugin runs inside NCCL's process and links libc only; the fabscope
 * side (src/tune/table.cpp) reads tables with the same code, so both agree on the format. */
#ifndef FABSCOPE_TUNER_TABLE_H
#define FABSCOPE_TUNER_TABLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FST_MAX_LINE 1024       /* longer lines are bad lines */
#define FST_MAX_ROWS 65536      /* rows past this are skipped with one warning */
#define FST_MAX_CHANNELS_FIELD 1024

typedef struct {
  int coll;            /* FST_COLL_* */
  uint64_t min_bytes;  /* inclusive */
  uint64_t max_bytes;  /* inclusive */
  int algo;            /* FST_ALGO_* */
  int proto;           /* FST_PROTO_* */
  int channels;        /* -1 = NCCL's choice, else 1..FST_MAX_CHANNELS_FIELD */
  int nnodes;          /* -1 = any */
  int nranks;          /* -1 = any */
  int pipe_ops;        /* -1 = any */
  int reg_buff;        /* -1 = any, 0, 1 */
} fst_row;

/* Parses one line (without its newline; len bytes, need not be NUL-terminated).
 * Returns 1 and fills *row for a row, 0 for a line to skip (blank, comment, header), -1 for a bad
 * line with a reason in why (NUL-terminated, at most why_len bytes). */
int fst_parse_line(const char* line, size_t len, fst_row* row, char* why, size_t why_len);

typedef struct {
  fst_row* rows;
  size_t count;
  size_t bad_lines;
} fst_table;

/* Called once per bad line: line_no counts from 1. */
typedef void (*fst_bad_line_fn)(void* arg, size_t line_no, const char* why);

/* Parses a whole text (any mix of \n and \r\n). Returns 0, or -1 when out of memory (the table
 * then holds what was read). Free with fst_table_free. */
int fst_parse_text(const char* text, size_t len, fst_table* out, fst_bad_line_fn bad, void* arg);
void fst_table_free(fst_table* t);

/* First row, in file order, matching the call. pipe_ops/reg_buff < 0 = unknown (matches any).
 * Returns the index or -1. Start the search at index from (0 for the first). */
long fst_match(const fst_table* t, size_t from, int coll, uint64_t bytes, int nnodes, int nranks,
               int pipe_ops, int reg_buff);

/* Names as the CSV spells them; "?" for an out-of-range value. */
const char* fst_coll_name(int coll);
const char* fst_algo_name(int algo);
const char* fst_proto_name(int proto);
int fst_coll_from_name(const char* s, size_t len);   /* -1 when unknown */
int fst_algo_from_name(const char* s, size_t len);
int fst_proto_from_name(const char* s, size_t len);

#ifdef __cplusplus
}
#endif
#endif
