// Where fabscope tune finds the tuner plugin it loads into NCCL.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "tune/gpu_measurer.hpp"

namespace fabscope::tune {
namespace {

TEST(TunerPluginPath, GivenPathIsMadeAbsolute) {
  char tmpl[] = "/tmp/fabscope-plugin-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::filesystem::path dir = tmpl;
  std::ofstream(dir / "libnccl-tuner-fabscope.so") << "x";
  const auto old = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  EXPECT_EQ(find_tuner_plugin("libnccl-tuner-fabscope.so"), (dir / "libnccl-tuner-fabscope.so").string());
  std::filesystem::current_path(old);
  std::filesystem::remove_all(dir);
}

TEST(TunerPluginPath, MissingGivenPathIsAnErrorNamingIt) {
  try {
    find_tuner_plugin("/nonexistent/libnccl-tuner-fabscope.so");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'/nonexistent/libnccl-tuner-fabscope.so' does not exist"), std::string::npos);
  }
}

TEST(TunerPluginPath, EnvironmentVariableWhenNoFlag) {
  setenv("FABSCOPE_TUNER_PLUGIN", "/nonexistent/from-env.so", 1);
  try {
    find_tuner_plugin("");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("from-env.so"), std::string::npos) << e.what();
  }
  unsetenv("FABSCOPE_TUNER_PLUGIN");
}

}  // namespace
}  // namespace fabscope::tune
