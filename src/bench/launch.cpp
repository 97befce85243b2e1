#include "bench/launch.hpp"

#include <cstdlib>
#include <vector>

#include "core/error.hpp"

namespace fabscope::bench {

std::string launcher_name(Launcher l) {
  switch (l) {
    case Launcher::Auto: return "auto";
    case Launcher::Local: return "local";
    case Launcher::Mpi: return "mpi";
    case Launcher::Torchrun: return "torchrun";
  }
  return "auto";
}

std::optional<Launcher> parse_launcher(const std::string& text) {
  for (auto l : {Launcher::Auto, Launcher::Local, Launcher::Mpi, Launcher::Torchrun})
    if (text == launcher_name(l)) return l;
  return std::nullopt;
}

EnvFn process_env() {
  return [](const char* name) -> const char* { return std::getenv(name); };
}

namespace {
bool set(const EnvFn& env, const char* name) {
  const char* v = env(name);
  return v && *v;
}

std::optional<long long> env_int(const EnvFn& env, const char* name) {
  const char* v = env(name);
  if (!v || !*v) return std::nullopt;
  char* end = nullptr;
  long long x = std::strtoll(v, &end, 10);
  if (*end != '\0') throw UsageError(std::string("bench: ") + name + "='" + v + "' is not an integer");
  return x;
}

// Variables that MPI launchers set in every rank: Open MPI, PMI-1/2 (MPICH, Slurm's srun
// --mpi=pmi2), PMIx, MVAPICH.
const char* const kMpiSizeVars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE"};
const char* const kMpiRankVars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "MV2_COMM_WORLD_RANK"};

bool mpi_signs(const EnvFn& env, std::string& evidence) {
  for (const char* v : kMpiSizeVars)
    if (set(env, v)) {
      evidence = std::string(v) + "=" + env(v);
      return true;
    }
  for (const char* v : kMpiRankVars)
    if (set(env, v)) {
      evidence = std::string(v) + "=" + env(v);
      return true;
    }
  return false;
}

bool torchrun_signs(const EnvFn& env) {
  return set(env, "TORCHELASTIC_RUN_ID") ||
         (set(env, "RANK") && set(env, "WORLD_SIZE") && set(env, "MASTER_ADDR"));
}

LaunchInfo from_torchrun(const EnvFn& env, int nccl_port) {
  std::vector<std::string> missing;
  for (const char* v : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"})
    if (!set(env, v)) missing.push_back(v);
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    throw UsageError("bench: torchrun launch, but " + list +
                     " not set (start with: torchrun --nproc_per_node=N --no-python fabscope bench ...)");
  }
  LaunchInfo l;
  l.kind = Launcher::Torchrun;
  l.rank = static_cast<int>(*env_int(env, "RANK"));
  l.world = static_cast<int>(*env_int(env, "WORLD_SIZE"));
  l.local_rank = static_cast<int>(*env_int(env, "LOCAL_RANK"));
  l.local_world = static_cast<int>(env_int(env, "LOCAL_WORLD_SIZE").value_or(0));
  if (l.world < 1) throw UsageError("bench: WORLD_SIZE=" + std::to_string(l.world) + " must be at least 1");
  if (l.rank < 0 || l.rank >= l.world)
    throw UsageError("bench: RANK=" + std::to_string(l.rank) + " is outside WORLD_SIZE=" +
                     std::to_string(l.world) + " (ranks 0.." + std::to_string(l.world - 1) + ")");
  if (l.local_rank < 0) throw UsageError("bench: LOCAL_RANK=" + std::to_string(l.local_rank) + " is negative");
  if (l.local_world > 0 && l.local_rank >= l.local_world)
    throw UsageError("bench: LOCAL_RANK=" + std::to_string(l.local_rank) +
                     " is outside LOCAL_WORLD_SIZE=" + std::to_string(l.local_world));
  if (l.local_world > l.world)
    throw UsageError("bench: LOCAL_WORLD_SIZE=" + std::to_string(l.local_world) +
                     " is larger than WORLD_SIZE=" + std::to_string(l.world));
  l.master_addr = env("MASTER_ADDR");
  long long port = *env_int(env, "MASTER_PORT");
  if (port < 1 || port > 65535) throw UsageError("bench: MASTER_PORT=" + std::to_string(port) + " is not a TCP port");
  l.master_port = static_cast<int>(port);
  if (set(env, "NCCL_COMM_ID")) {
    l.nccl_comm_id = env("NCCL_COMM_ID");
    l.comm_id_from_user = true;
  } else {
    int p = nccl_port > 0 ? nccl_port : l.master_port + 1;
    if (p > 65535) throw UsageError("bench: MASTER_PORT+1 is past 65535; pass --nccl-port");
    bool v6 = l.master_addr.find(':') != std::string::npos && l.master_addr.front() != '[';
    l.nccl_comm_id = (v6 ? "[" + l.master_addr + "]" : l.master_addr) + ":" + std::to_string(p);
  }
  l.evidence = "RANK=" + std::to_string(l.rank) + " WORLD_SIZE=" + std::to_string(l.world) +
               " LOCAL_RANK=" + std::to_string(l.local_rank);
  return l;
}

LaunchInfo from_mpi(const EnvFn& env, const std::string& evidence) {
  LaunchInfo l;
  l.kind = Launcher::Mpi;
  l.evidence = evidence;
  for (const char* v : kMpiSizeVars)
    if (auto x = env_int(env, v)) {
      l.world = static_cast<int>(*x);
      break;
    }
  for (const char* v : kMpiRankVars)
    if (auto x = env_int(env, v)) {
      l.rank = static_cast<int>(*x);
      break;
    }
  if (auto x = env_int(env, "OMPI_COMM_WORLD_LOCAL_RANK")) l.local_rank = static_cast<int>(*x);
  else if (auto y = env_int(env, "MPI_LOCALRANKID")) l.local_rank = static_cast<int>(*y);
  if (auto x = env_int(env, "OMPI_COMM_WORLD_LOCAL_SIZE")) l.local_world = static_cast<int>(*x);
  else if (auto y = env_int(env, "MPI_LOCALNRANKS")) l.local_world = static_cast<int>(*y);
  if (l.world < 1) throw UsageError("bench: " + evidence + ": MPI world size must be at least 1");
  if (l.rank < 0 || l.rank >= l.world)
    throw UsageError("bench: MPI rank " + std::to_string(l.rank) + " is outside the world size " +
                     std::to_string(l.world));
  return l;
}
}  // namespace

LaunchInfo detect_launch(Launcher requested, const EnvFn& env, int nccl_port) {
  std::string mpi_evidence;
  bool mpi = mpi_signs(env, mpi_evidence);
  bool torch = torchrun_signs(env);
  switch (requested) {
    case Launcher::Local: {
      LaunchInfo l;
      l.evidence = "--launcher local";
      return l;
    }
    case Launcher::Mpi:
      if (!mpi) mpi_evidence = "--launcher mpi";
      return from_mpi(env, mpi_evidence);
    case Launcher::Torchrun: return from_torchrun(env, nccl_port);
    case Launcher::Auto: break;
  }
  if (torch && mpi)
    throw UsageError("bench: both torchrun (RANK, WORLD_SIZE, MASTER_ADDR) and MPI (" + mpi_evidence +
                     ") variables are set; pass --launcher torchrun or --launcher mpi");
  if (torch) return from_torchrun(env, nccl_port);
  if (mpi) return from_mpi(env, mpi_evidence);
  LaunchInfo l;
  l.evidence = "no MPI or torchrun variables";
  return l;
}

}  // namespace fabscope::bench
