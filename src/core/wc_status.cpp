#include "core/wc_status.hpp"

namespace fabscope::core {

const char* wc_status_name(int code) {
  // enum ibv_wc_status, libibverbs <infiniband/verbs.h>.
  static const char* const kNames[] = {
      "IBV_WC_SUCCESS",          "IBV_WC_LOC_LEN_ERR",       "IBV_WC_LOC_QP_OP_ERR",
      "IBV_WC_LOC_EEC_OP_ERR",   "IBV_WC_LOC_PROT_ERR",      "IBV_WC_WR_FLUSH_ERR",
      "IBV_WC_MW_BIND_ERR",      "IBV_WC_BAD_RESP_ERR",      "IBV_WC_LOC_ACCESS_ERR",
      "IBV_WC_REM_INV_REQ_ERR",  "IBV_WC_REM_ACCESS_ERR",    "IBV_WC_REM_OP_ERR",
      "IBV_WC_RETRY_EXC_ERR",    "IBV_WC_RNR_RETRY_EXC_ERR", "IBV_WC_LOC_RDD_VIOL_ERR",
      "IBV_WC_REM_INV_RD_REQ_ERR", "IBV_WC_REM_ABORT_ERR",   "IBV_WC_INV_EECN_ERR",
      "IBV_WC_INV_EEC_STATE_ERR", "IBV_WC_FATAL_ERR",        "IBV_WC_RESP_TIMEOUT_ERR",
      "IBV_WC_GENERAL_ERR"};
  if (code < 0 || code >= static_cast<int>(sizeof kNames / sizeof kNames[0])) return "?";
  return kNames[code];
}

}  // namespace fabscope::core
