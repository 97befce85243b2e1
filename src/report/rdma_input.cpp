// fabscope.rdma (docs/formats.md): read by the rdma module's one reader (rdma::result_from_json),
// whose errors name the file and the field; the report renders its rdma::Result as read.
#include "rdma/types.hpp"
#include "report/load.hpp"

namespace fabscope::report {

rdma::Result rdma_from_json(const std::string& file, const json& doc) { return rdma::result_from_json(file, doc); }

}  // namespace fabscope::report
