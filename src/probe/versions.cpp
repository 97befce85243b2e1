#include "probe/versions.hpp"

#include <dlfcn.h>

#include <cctype>

#include "probe/read_util.hpp"

namespace fabscope::probe {

std::string parse_nvrm_version(std::string_view text) {
  auto line = text.substr(0, text.find('\n'));
  auto at = line.find("Kernel Module");
  if (at == std::string_view::npos) return "";
  for (const auto& word : core::split_ws(line.substr(at))) {
    bool dotted = !word.empty() && std::isdigit(static_cast<unsigned char>(word[0])) &&
                  word.find('.') != std::string::npos && word.size() <= 32 &&
                  word.find_first_not_of("0123456789.") == std::string::npos;
    if (dotted) return word;
  }
  return "";
}

std::string nccl_version_string(int code) {
  if (code <= 0) return "";
  int major, minor, patch;
  if (code >= 10000) {  // NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z since 2.9
    major = code / 10000;
    minor = (code % 10000) / 100;
    patch = code % 100;
  } else {
    major = code / 1000;
    minor = (code % 1000) / 100;
    patch = code % 100;
  }
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::string cuda_version_string(int code) {
  if (code <= 0) return "";
  return std::to_string(code / 1000) + "." + std::to_string((code % 1000) / 10);
}

namespace {
// Calls int fn(int*) from a library loaded for the call only. nullopt when the library or the
// symbol is absent or the call fails.
std::optional<int> call_version(const char* lib, const char* symbol) {
  void* h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!h) return std::nullopt;
  std::optional<int> out;
  using Fn = int (*)(int*);
  if (auto fn = reinterpret_cast<Fn>(dlsym(h, symbol))) {
    int v = 0;
    if (fn(&v) == 0 && v > 0) out = v;
  }
  // libcuda and libnccl keep state past dlclose on some versions; closing is still correct.
  dlclose(h);
  return out;
}
}  // namespace

Versions collect_versions(const core::Root& root, bool live, std::vector<std::string>& notes) {
  Versions v;
  if (auto mod = root.read_line("sys/module/nvidia/version")) {
    if (mod->find_first_not_of("0123456789.") == std::string::npos) v.nvidia_driver = *mod;
  }
  if (v.nvidia_driver.empty()) {
    if (auto text = root.read("proc/driver/nvidia/version", 4096)) {
      v.nvidia_driver = parse_nvrm_version(*text);
      if (v.nvidia_driver.empty())
        notes.push_back("proc/driver/nvidia/version: no driver version in " + quote(*text));
    }
  }
  if (!live) return v;
  // ncclGetVersion(int*) returns ncclSuccess (0); cuDriverGetVersion(int*) CUDA_SUCCESS (0).
  if (auto code = call_version("libnccl.so.2", "ncclGetVersion")) {
    v.nccl_code = *code;
    v.nccl = nccl_version_string(*code);
  }
  if (auto code = call_version("libcuda.so.1", "cuDriverGetVersion")) v.cuda_driver = cuda_version_string(*code);
  for (const char* lib : {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"}) {
    if (auto code = call_version(lib, "cudaRuntimeGetVersion")) {
      v.cuda_runtime = cuda_version_string(*code);
      break;
    }
  }
  return v;
}

}  // namespace fabscope::probe
