#pragma once
// Where a job's slow connections meet in an InfiniBand fabric: the ranks' hosts placed at their
// HCA ports of a saved sweep (`fabscope fabric --routes --save`), each sending connection's route
// traced through the forwarding tables, and the cables and switches the slow connections share,
// by the cluster localiser (cluster/localize.hpp). Pure: the caller reads the file.
//
// A connection is one observation: sender rank -> peer rank, its rate while on the network
// (bytes over the time its steps spent there, analysis.hpp), slow when its time per step is
// slow_link_factor times the communicator's median or more. Connections between two ranks of one
// host never cross the fabric and are left out.
//
// Placing a rank: the records carry a host name, no HCA. A host is found by the fabric's
// NodeDescriptions, whose first word rdma-core sets from the host name ("gpu-07 mlx5_0"),
// compared by its first label, case-insensitively. A host with one HCA port in the fabric (the
// ACTIVE one with a LID) is placed; a host with several (a multi-rail node) is placed only where
// `rails` names the HCA per GPU; otherwise its ranks stay unplaced, named in a note.
#include <map>
#include <string>
#include <vector>

#include "cluster/localize.hpp"
#include "core/finding.hpp"
#include "core/json.hpp"
#include "job/analysis.hpp"
#include "fabric/model.hpp"

namespace fabscope::job {

// A rank's GPU -> the HCA it uses, for hosts with several: "0=mlx5_0,1=mlx5_1,...", the same on
// every host (a rail-optimised cluster's rule). Throws fabscope::Error naming the bad entry.
std::map<int, std::string> parse_rails(const std::string& text);

struct LocatedComm {
  std::string job_id, comm, comm_name;
  cluster::Localization localization;
  std::vector<std::string> names;  // by rank: "rank 3 (gpu-07, GPU 3)"
};

// One per communicator with a slow connection (CommView::slow_from >= 0).
std::vector<LocatedComm> locate(const fabric::Subnet& fabric, const Analysis& analysis,
                                const std::map<int, std::string>& rails, const Options& options);

// job.slow_path: the component the slow connections share, per suspect.
std::vector<Finding> located_findings(const std::vector<LocatedComm>& located);

json located_json(const std::vector<LocatedComm>& located);

}  // namespace fabscope::job
