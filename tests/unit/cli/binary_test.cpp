// What the fabscope binary needs at start: the C++ runtime only. NCCL, CUDA, NVML, libibverbs,
// librdmacm and the InfiniBand management libraries (libibumad, libibmad, libibnetdisc) are
// opened at run time when present, MPI through the fabscope-mpi.so plugin, so
// doctor, probe and the exporter start on any node and load nothing they do not use.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace {

std::string needed_libraries() {
  std::string out;
  FILE* p = popen("readelf -d '" FABSCOPE_BINARY "' 2>/dev/null", "r");
  if (!p) return out;
  char buf[512];
  while (fgets(buf, sizeof buf, p))
    if (std::string line = buf; line.find("(NEEDED)") != std::string::npos) out += line;
  pclose(p);
  return out;
}

TEST(Binary, NeedsNoGpuMpiOrVerbsLibraryAtStart) {
  auto needed = needed_libraries();
  ASSERT_NE(needed.find("libc.so"), std::string::npos) << "readelf -d gave no NEEDED list:\n" << needed;
  for (const char* lib : {"libmpi", "libnccl", "libcudart", "libcuda.", "libnvidia-ml", "libibverbs", "librdmacm",
                          "libibumad", "libibmad", "libibnetdisc"})
    EXPECT_EQ(needed.find(lib), std::string::npos) << lib << " is a NEEDED entry:\n" << needed;
}

}  // namespace
