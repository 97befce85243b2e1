#pragma once
// The environment block of a report and the per-rank device list, assembled from plain values
// the GPU side collects (versions, the process environment, one record per rank), so the
// assembly is tested without a GPU.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/launch.hpp"
#include "bench/results.hpp"

namespace fabscope::bench {

// What the session knows about the run when it starts a report.
struct RunFacts {
  std::string hostname;
  Launcher launcher = Launcher::Local;
  std::string launch_evidence;
  int nranks = 0;
  std::optional<int> nccl_version_code;   // ncclGetVersion: 22803 for 2.28.3
  std::optional<int> cuda_driver_code;    // cudaDriverGetVersion: 13000 for 13.0
  std::optional<int> cuda_runtime_code;   // cudaRuntimeGetVersion
  std::vector<std::string> environ;       // the process environment, "NAME=value"
  std::string date_utc;                   // utc_now()
};

// Launcher name, process count (one process drives every GPU under the local launcher),
// versions as text, the NCCL_* variables of the environment, fabscope's version.
Environment make_environment(const RunFacts& f);

// The NCCL_* entries of an environment, by name ("NAME=value"; entries without '=' are skipped).
std::map<std::string, std::string> nccl_variables(const std::vector<std::string>& environ);

// The environment of this process, "NAME=value" per entry.
std::vector<std::string> process_environment();

// nccl-tests' time stamps: local time "%Y-%m-%d %H:%M:%S"; and ISO 8601 UTC for the report.
std::string local_time_now();
std::string utc_now();

// One rank's device as it travels between ranks (an ncclAllGather of bytes): fixed size, every
// text field NUL-padded and possibly unterminated when full.
struct DeviceRecord {
  char host[96];
  char pci[32];
  char name[96];
  std::int32_t pid;
  std::int32_t device;
  std::int32_t rank;
  std::int32_t pad;
};
static_assert(sizeof(DeviceRecord) == 240, "the record's layout is the same in every process of a job");

// A record from its values: texts cut to their field, the PCI address in lower case (CUDA
// prints it in upper case, sysfs and nvidia-smi in lower).
DeviceRecord make_device_record(const std::string& host, const std::string& pci_bus_id, const std::string& name,
                                int pid, int cuda_device, int rank);
DeviceInfo device_info(const DeviceRecord& rec);
// Distinct hosts among the devices (at least 1).
int count_nodes(const std::vector<DeviceInfo>& devices);
// PCI addresses of the devices on `host`, in rank order.
std::vector<std::string> pci_on_host(const std::vector<DeviceInfo>& devices, const std::string& host);

}  // namespace fabscope::bench
