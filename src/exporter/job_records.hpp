#pragma once
// The node's running jobs as the job analysis reads them (job/records.hpp): every communicator
// of every segment read becomes one rank record, with its ring of recent operations. What
// `fabscope exporter --jobs` serves on /jobs and what `fabscope job --dir` reads locally.
#include <cstdint>
#include <string>
#include <vector>

#include "exporter/job_families.hpp"
#include "job/records.hpp"

namespace fabscope::exporter {

// now_unix_ns: this node's clock when the segments were read (ages are measured against it).
job::Snapshot job_records(const std::vector<JobProcess>& processes, std::uint64_t now_unix_ns, std::string source);

}  // namespace fabscope::exporter
