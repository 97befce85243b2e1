#pragma once
// libibverbs' names of work-completion statuses (enum ibv_wc_status), without its headers: the
// log reader names the status in an NCCL completion error, the RDMA engine and the mesh name the
// status of a failed work request.

namespace fabscope::core {

// libibverbs' name of an ibv_wc_status code ("IBV_WC_RETRY_EXC_ERR"), "?" when unknown.
const char* wc_status_name(int code);

}  // namespace fabscope::core
