#include "bench/environment.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <ctime>
#include <set>

#include "core/strings.hpp"
#include "probe/versions.hpp"

extern char** environ;

namespace fabscope::bench {

std::map<std::string, std::string> nccl_variables(const std::vector<std::string>& env) {
  std::map<std::string, std::string> out;
  for (const auto& kv : env) {
    if (kv.rfind("NCCL_", 0) != 0) continue;
    auto eq = kv.find('=');
    if (eq != std::string::npos) out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

Environment make_environment(const RunFacts& f) {
  Environment e;
  e.hostname = f.hostname;
  e.launcher = launcher_name(f.launcher);
  e.launch_evidence = f.launch_evidence;
  e.nranks = f.nranks;
  e.processes = f.launcher == Launcher::Local ? 1 : f.nranks;
  if (f.nccl_version_code) e.nccl_version = probe::nccl_version_string(*f.nccl_version_code);
  if (f.cuda_driver_code) e.cuda_driver = probe::cuda_version_string(*f.cuda_driver_code);
  if (f.cuda_runtime_code) e.cuda_runtime = probe::cuda_version_string(*f.cuda_runtime_code);
  e.fabscope_version = FABSCOPE_VERSION;
  e.date_utc = f.date_utc;
  e.nccl_env = nccl_variables(f.environ);
  return e;
}

std::vector<std::string> process_environment() {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) out.emplace_back(*e);
  return out;
}

namespace {
std::string format_now(const char* format, bool utc) {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  if (utc) gmtime_r(&now, &tm);
  else localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

// Copies text into a fixed field, NUL-padded; a text that fills the field stays unterminated.
template <std::size_t N>
void put(char (&field)[N], const std::string& text) {
  std::memset(field, 0, N);
  std::memcpy(field, text.data(), std::min(N, text.size()));
}

template <std::size_t N>
std::string get(const char (&field)[N]) {
  return std::string(field, strnlen(field, N));
}
}  // namespace

std::string local_time_now() { return format_now("%Y-%m-%d %H:%M:%S", false); }
std::string utc_now() { return format_now("%Y-%m-%dT%H:%M:%SZ", true); }

DeviceRecord make_device_record(const std::string& host, const std::string& pci_bus_id, const std::string& name,
                                int pid, int cuda_device, int rank) {
  DeviceRecord rec;
  std::memset(&rec, 0, sizeof rec);
  const std::string pci = core::lower(pci_bus_id);
  put(rec.host, host);
  put(rec.pci, pci);
  put(rec.name, name);
  rec.pid = pid;
  rec.device = cuda_device;
  rec.rank = rank;
  return rec;
}

DeviceInfo device_info(const DeviceRecord& rec) {
  return DeviceInfo{.rank = rec.rank, .host = get(rec.host), .pid = rec.pid, .cuda_device = rec.device,
                    .pci_bus_id = get(rec.pci), .name = get(rec.name)};
}

int count_nodes(const std::vector<DeviceInfo>& devices) {
  std::set<std::string> hosts;
  for (const auto& d : devices) hosts.insert(d.host);
  return std::max<int>(1, static_cast<int>(hosts.size()));
}

std::vector<std::string> pci_on_host(const std::vector<DeviceInfo>& devices, const std::string& host) {
  std::vector<std::string> out;
  for (const auto& d : devices)
    if (d.host == host) out.push_back(d.pci_bus_id);
  return out;
}

}  // namespace fabscope::bench
