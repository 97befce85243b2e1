// libFuzzer target for the tuner table reader that runs inside NCCL's process
// (plugins/nccl-tuner/table.c): whole texts, single lines, and matching on what was read.
// Build: cmake -DFABSCOPE_FUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ ...; run:
//   build/tests/fuzz/fabscope_tuner_table_fuzz tests/fuzz/corpus/tuner_table
#include <cstddef>
#include <cstdint>

#include "table.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const char* text = reinterpret_cast<const char*>(data);
  fst_table t;
  if (fst_parse_text(text, size, &t, [](void*, size_t, const char*) {}, nullptr) == 0) {
    for (size_t i = 0; i < t.count; ++i) {
      const fst_row& r = t.rows[i];
      if (r.min_bytes > r.max_bytes || r.channels == 0 || r.coll < 0 || r.coll > 4) __builtin_trap();
      if (fst_match(&t, 0, r.coll, r.min_bytes, r.nnodes, r.nranks, r.pipe_ops, r.reg_buff) < 0)
        __builtin_trap();  // every row read must match its own lower bound
    }
  }
  fst_table_free(&t);
  fst_row row;
  char why[64];
  (void)fst_parse_line(text, size, &row, why, sizeof why);
  return 0;
}
