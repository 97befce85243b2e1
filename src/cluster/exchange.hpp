#pragma once
// How the nodes of one `fabscope cluster` run talk: gather every rank's bytes on rank 0 and
// broadcast rank 0's bytes to everyone. Two transports:
//   MpiExchange  mpirun / srun: the MPI plugin (fabscope-mpi.so), MPI_Gatherv and MPI_Bcast
//   TcpExchange  the torchrun / Kubernetes env contract (RANK, WORLD_SIZE, MASTER_ADDR,
//                MASTER_PORT): a star over TCP around rank 0, authenticated by a shared token,
//                every message bounded (message.hpp), every wait bounded by a deadline.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fabscope::cluster {

class Exchange {
 public:
  virtual ~Exchange() = default;
  virtual int rank() const = 0;
  virtual int world() const = 0;
  virtual std::string launcher() const = 0;  // "mpi" | "env"
  // Rank 0 gets one entry per rank (its own included); nullopt for a rank that never joined or
  // was lost. Other ranks get an empty vector.
  virtual std::vector<std::optional<std::string>> gather(const std::string& mine) = 0;
  // Rank 0's bytes on every rank (rank 0 passes them, the others pass anything).
  virtual std::string broadcast(const std::string& from_root) = 0;
  // Names of the ranks rank 0 knows (hello or summary), "" unknown; and why a rank is missing.
  virtual std::string why_missing(int rank) const = 0;
  // This node's address as its peers reach it ("" when unknown).
  virtual std::string local_address() const = 0;
};

struct TcpOptions {
  int rank = 0;
  int world = 1;
  std::string master_addr;
  int master_port = 0;
  std::string token;
  std::string name;  // this node's hostname
  std::chrono::milliseconds join_timeout{60000};  // rank 0 waits this long for everyone to join
  std::chrono::milliseconds step_timeout{120000}; // each gather/broadcast after the join
};

// Rank 0 listens on master_port and waits for the others; the others connect (retrying until
// join_timeout, rank 0 may start later). Throws fabscope::Error on a non-zero rank that cannot
// join (naming MASTER_ADDR:MASTER_PORT and the cause) and on a rank 0 that cannot listen.
std::unique_ptr<Exchange> make_tcp_exchange(const TcpOptions& opts);

// MPI through the plugin; throws Error when the plugin cannot be loaded (naming why).
std::unique_ptr<Exchange> make_mpi_exchange();

}  // namespace fabscope::cluster
