#include "cli/findings.hpp"

#if FABSCOPE_HAVE_CHECKS
#include "checks/checks.hpp"
#endif
#if FABSCOPE_HAVE_CLUSTER
#include "cluster/registry.hpp"
#endif
#if FABSCOPE_HAVE_JOB
#include "job/registry.hpp"
#endif
#if FABSCOPE_HAVE_NCCLENV
#include "ncclenv/lint.hpp"
#endif
#if FABSCOPE_HAVE_NCCLLOG
#include "nccllog/findings.hpp"
#endif
#if FABSCOPE_HAVE_RDMA
#include "rdma/findings.hpp"
#endif
#if FABSCOPE_HAVE_FABRIC
#include "fabric/judge.hpp"
#include "fabric/slurm_topology.hpp"
#endif

namespace fabscope::cli {

const FindingRegistry& findings() {
  static const FindingRegistry r = [] {
    FindingRegistry all;
#if FABSCOPE_HAVE_CHECKS
    all.add(checks::registry());
#endif
#if FABSCOPE_HAVE_FABRIC
    all.add(fabric::fabric_checks());
    all.add(fabric::topology_checks());
#endif
#if FABSCOPE_HAVE_CLUSTER
    all.add(cluster::registry());
#endif
#if FABSCOPE_HAVE_NCCLENV
    all.add(ncclenv::lint_rules());
#endif
#if FABSCOPE_HAVE_NCCLLOG
    all.add(nccllog::finding_infos());
#endif
#if FABSCOPE_HAVE_RDMA
    all.add(rdma::finding_infos());
#endif
#if FABSCOPE_HAVE_JOB
    all.add(job::registry());
#endif
    return all;
  }();
  return r;
}

}  // namespace fabscope::cli
