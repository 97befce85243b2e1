// Versions: the NVIDIA driver from sysfs/procfs, and the version-code formats of NCCL and CUDA.
#include "probe/versions.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "support/fixtures.hpp"
#include "test_util.hpp"

using namespace fabscope;
using fabscope::testing::fixture;
using fabscope::testing::has_note_containing;
using fabscope::testing::TempDir;
using fabscope::testing::write_file;

TEST(NvrmVersion, ParsedFromTheOpenKernelModuleLine) {
  auto text = core::Root(fixture("h200x2-node")).read("proc/driver/nvidia/version").value();
  EXPECT_EQ(probe::parse_nvrm_version(text), "580.159.04");
}

TEST(NvrmVersion, ParsedFromTheProprietaryModuleLine) {
  EXPECT_EQ(probe::parse_nvrm_version(
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024\n"),
            "535.183.01");
}

TEST(NvrmVersion, EmptyWhenNoVersionFollows) {
  EXPECT_EQ(probe::parse_nvrm_version("NVRM version: garbage\n"), "");
  EXPECT_EQ(probe::parse_nvrm_version(""), "");
}

TEST(NcclVersion, DecodesBothCodeFormats) {
  EXPECT_EQ(probe::nccl_version_string(22703), "2.27.3");
  EXPECT_EQ(probe::nccl_version_string(2804), "2.8.4");  // before 2.9: 1000*major + 100*minor + patch
  EXPECT_EQ(probe::nccl_version_string(0), "");
}

TEST(CudaVersion, DecodesDriverCode) {
  EXPECT_EQ(probe::cuda_version_string(13000), "13.0");
  EXPECT_EQ(probe::cuda_version_string(12040), "12.4");
  EXPECT_EQ(probe::cuda_version_string(-1), "");
}

TEST(CollectVersions, DriverFromTheH200Node) {
  std::vector<std::string> notes;
  auto v = probe::collect_versions(core::Root(fixture("h200x2-node")), false, notes);
  EXPECT_EQ(v.nvidia_driver, "580.159.04");
  EXPECT_EQ(v.nccl, "");  // live-only sources are not queried on a fixture
  EXPECT_FALSE(v.nccl_code);
}

TEST(CollectVersions, FallsBackToProcWhenSysModuleIsAbsent) {
  TempDir t;
  fabscope::testing::copy_tree(fixture("h200x2-node"), t.path());
  std::filesystem::remove(t.path() / "sys/module/nvidia/version");
  std::vector<std::string> notes;
  EXPECT_EQ(probe::collect_versions(core::Root(t.path()), false, notes).nvidia_driver, "580.159.04");
}

TEST(CollectVersions, GarbageDriverVersionIsUnknownWithNote) {
  TempDir t;
  write_file(t.path(), "sys/module/nvidia/version", "\x01\x02\n");
  write_file(t.path(), "proc/driver/nvidia/version", "NVRM version: ???\n");
  std::vector<std::string> notes;
  EXPECT_EQ(probe::collect_versions(core::Root(t.path()), false, notes).nvidia_driver, "");
  EXPECT_TRUE(has_note_containing(notes, "proc/driver/nvidia/version"));
}
