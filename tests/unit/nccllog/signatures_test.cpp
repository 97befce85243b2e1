#include "nccllog/signatures.hpp"

#include "nccllog/findings.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

using namespace fabscope::nccllog;

namespace {
std::string id_of(MatchOn on, std::string_view msg) {
  const Signature* s = match_signature(on, msg);
  return s ? s->id : "";
}
}  // namespace

TEST(Signatures, IdsAreUnique) {
  std::set<std::string> ids;
  for (const auto& s : signatures()) EXPECT_TRUE(ids.insert(s.id).second) << s.id;
}

TEST(Signatures, EveryEntryHasTitleCauseAndRemedy) {
  for (const auto& s : signatures()) {
    EXPECT_GT(std::string(s.title).size(), 10u) << s.id;
    EXPECT_GT(std::string(s.cause).size(), 20u) << s.id;
    EXPECT_GT(std::string(s.remedy).size(), 20u) << s.id;
  }
}

TEST(Signatures, InfoEntriesHaveAPrefixSoInfoLinesStayCheap) {
  for (const auto& s : signatures()) {
    if (s.on == MatchOn::Info) {
      EXPECT_NE(std::string(s.prefix), "") << s.id;
    }
  }
}

// Registered, every id is tested against docs/nccllog.md with every other finding id
// (tests/unit/cli/findings_docs_test.cpp).
TEST(Signatures, EveryIdIsRegisteredWithItsSeverityAndTitle) {
  for (const auto& s : signatures()) {
    const fabscope::FindingInfo* info = fabscope::find_finding(finding_infos(), "nccllog." + std::string(s.id));
    ASSERT_NE(info, nullptr) << "nccllog." << s.id << " is not in nccllog::finding_infos()";
    EXPECT_EQ(info->severity, s.severity) << s.id;
    EXPECT_EQ(info->title, s.title) << s.id;
    EXPECT_EQ(info->docs, "docs/nccllog.md") << s.id;
  }
}

TEST(CompletionStatus, ReadsEveryFormatNcclUsed) {
  EXPECT_EQ(completion_status("NET/IB : Got completion with error 12, opcode 1, len 0, vendor err 129"), 12);
  EXPECT_EQ(completion_status("NET/IB : Got completion from peer 10.0.0.1<5> with status=12 opcode=0 len=0"), 12);
  EXPECT_EQ(completion_status("NET/IB: Got completion from peer 1.2.3.4<5> with status=local protection error(4) "
                              "opcode=RDMA_WRITE(0)"),
            4);
  EXPECT_FALSE(completion_status("NET/IB : Got completion from peer with status=").has_value());
  EXPECT_FALSE(completion_status("no completion here").has_value());
}

TEST(MatchSignature, CompletionStatusPicksTheCodeSpecificEntry) {
  EXPECT_EQ(id_of(MatchOn::Warn, "NET/IB : Got completion from peer x with status=12 opcode=1"), "ib_wc_retry_exceeded");
  EXPECT_EQ(id_of(MatchOn::Warn, "NET/IB : Got completion with error 4, opcode 0"), "ib_wc_local_protection");
  EXPECT_EQ(id_of(MatchOn::Warn, "NET/IB : Got completion with error 9, opcode 0"), "ib_wc_remote_invalid_request");
  // a status without an entry of its own: the generic one
  EXPECT_EQ(id_of(MatchOn::Warn, "NET/IB : Got completion with error 7, opcode 0"), "ib_completion_error");
}

TEST(MatchSignature, ModifyQpUnreachableIsRoceRoutingNotSocket) {
  EXPECT_EQ(id_of(MatchOn::Warn, "Call to ibv_modify_qp failed with error Network is unreachable"),
            "ib_modify_qp_unreachable");
  EXPECT_EQ(id_of(MatchOn::Warn, "Connect to 10.0.0.2<1> failed : Network is unreachable"),
            "socket_network_unreachable");
}

TEST(MatchSignature, LevelsDoNotCrossMatch) {
  EXPECT_EQ(id_of(MatchOn::Info, "Call to connect returned Connection refused, retrying"), "socket_connect_retry");
  EXPECT_EQ(id_of(MatchOn::Warn, "Connect to 10.38.10.112<21724> failed : Connection refused"),
            "socket_connection_refused");
  EXPECT_EQ(id_of(MatchOn::Info, "something with Connection refused in it"), "");
}

TEST(MatchSignature, VersionMismatchWarnIsCataloged) {
  EXPECT_EQ(id_of(MatchOn::Warn, "Mismatched NCCL version detected : rank 0 version 22809 rank 1 version 22703"),
            "version_mismatch");
}

TEST(Names, ResultCodes) {
  EXPECT_STREQ(nccl_result_name(2), "ncclSystemError");
  EXPECT_STREQ(nccl_result_name(-1), "?");
}

TEST(MatchSignature, ErrnoOfModifyQpAndRegMrPicksTheEntry) {
  // The formats of nccl#799 / nccl#2013 (tests/fixtures/nccl-logs/issues) and of ibvwrap's reg_mr.
  EXPECT_EQ(id_of(MatchOn::Warn, "Call to ibv_modify_qp failed with error No such device"), "ib_modify_qp_no_device");
  EXPECT_EQ(id_of(MatchOn::Warn, "Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx_x:1, curr "
                                 "state INIT, next state RTR"),
            "ib_modify_qp_timeout");
  EXPECT_EQ(id_of(MatchOn::Warn, "Call to ibv_modify_qp failed with 22 Invalid argument, curr state INIT"),
            "ib_modify_qp_invalid");
  EXPECT_EQ(id_of(MatchOn::Warn, "Call to ibv_reg_mr failed with error Cannot allocate memory"), "ib_reg_mr_memlock");
  EXPECT_EQ(id_of(MatchOn::Warn, "Call to ibv_reg_mr failed with error Bad address"), "ib_reg_mr_bad_address");
  EXPECT_EQ(id_of(MatchOn::Warn, "Call to ibv_reg_mr failed with error Operation not permitted"), "ib_reg_mr_failed");
  EXPECT_EQ(id_of(MatchOn::Warn, "Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000"), "gpu_duplicate");
  EXPECT_EQ(id_of(MatchOn::Warn, "Call to posix_fallocate failed : No space left on device"), "shm_fallocate_failed");
}

TEST(MatchSignature, CollectiveMismatchesAreCataloged) {
  // nccl#969 and nccl#296 (tests/fixtures/nccl-logs/issues).
  EXPECT_EQ(id_of(MatchOn::Warn, "NET/IB : req 0/1 tag 0 peer 10.10.23.6<58683> collective mismatch error, local size "
                                 "496640 remote size 65536"),
            "ib_collective_mismatch");
  EXPECT_EQ(id_of(MatchOn::Warn, "Mismatched collective detected, please check your collective calls at and around "
                                 "rank 39."),
            "collective_mismatch");
}

TEST(MatchSignature, NvlsBindFailureIsCataloged) {
  // NVIDIA/DCGM#304 (tests/fixtures/nccl-logs/issues): the 2.27+ message, with its function name.
  const Signature* sig =
      match_signature(MatchOn::Warn, "Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA "
                                     "error 401 'the operation cannot be performed in the present state'.");
  ASSERT_NE(sig, nullptr);
  EXPECT_STREQ(sig->id, "nvls_bind_failed");
  EXPECT_EQ(sig->severity, fabscope::Severity::Fail);
}

TEST(MatchSignature, CollnetFallbacksAreNotes) {
  // nccl#1050 and nccl-tests#133 (tests/fixtures/nccl-logs/issues): NCCL runs on without CollNet.
  for (const auto& [msg, id] : std::vector<std::pair<std::string, std::string>>{
           {"Cannot initialize CollNet, using point-to-point network instead", "collnet_fallback"},
           {"CollNet is not supported or fails to initialize, ignoring NCCL_ALGO=COLLNET", "collnet_algo_ignored"},
           {"NET/IB : SHARP coll init error: Cannot create SHARP job(-11)", "sharp_init_failed"}}) {
    const Signature* sig = match_signature(MatchOn::Warn, msg);
    ASSERT_NE(sig, nullptr) << msg;
    EXPECT_EQ(sig->id, id);
    EXPECT_EQ(sig->severity, fabscope::Severity::Info) << id;
  }
}

TEST(MatchSignature, RankOutsideTheCommunicatorIsCataloged) {
  // HybrIK#47 (tests/fixtures/nccl-logs/issues).
  EXPECT_EQ(id_of(MatchOn::Warn, "Invalid rank requested : 7/4"), "rank_out_of_range");
}
