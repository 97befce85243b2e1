#pragma once
// The human output of fabscope rdma (100 columns): the choices with their reasons, the peer,
// one table row per size (perftest's columns: bytes, iterations, bandwidth, message rate; or
// the latency percentiles), the verdict and the findings.
#include <string>

#include "rdma/types.hpp"

namespace fabscope::rdma {

std::string render_text(const Result& r, std::size_t width = 100);
// One line for the server's "listening" banner.
std::string listening_line(const std::string& address, int port);

}  // namespace fabscope::rdma
