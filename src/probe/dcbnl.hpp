#pragma once
// The kernel's DCB netlink interface (net/dcb/dcbnl.c, include/uapi/linux/dcbnl.h): what
// `dcb pfc show`, `dcb app show` and mlnx_qos read. One DCB_CMD_IEEE_GET request per netdev;
// the reply carries the PFC enable bitmap (struct ieee_pfc) and the application-priority table.
// The parser takes the raw bytes of a reply, so it is tested on recorded replies and fuzzed.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/node_network.hpp"

namespace fabscope::probe {

struct DcbReply {
  enum class Status {
    Ok,           // an RTM_GETDCB / DCB_CMD_IEEE_GET reply
    Unsupported,  // EOPNOTSUPP: the driver has no dcbnl_ops (virtio, veth, rxe's netdev, ...)
    NoDevice,     // ENODEV: no such interface in this network namespace
    Error,        // another netlink error (errno in error)
    Malformed,    // bytes that are not a well-formed reply (detail says where)
  };
  Status status = Status::Malformed;
  int error = 0;       // positive errno for Error/Unsupported/NoDevice
  std::string detail;  // for Malformed: what was wrong
  std::string ifname;  // DCB_ATTR_IFNAME
  std::optional<int> pfc_cap;            // ieee_pfc.pfc_cap: traffic classes that can do PFC
  std::optional<std::uint8_t> pfc_en;    // ieee_pfc.pfc_en: bit p = PFC on priority p
  std::vector<DcbApp> apps;              // DCB_ATTR_IEEE_APP_TABLE entries
  std::optional<int> dcbx;               // DCB_ATTR_DCBX: DCB_CAP_DCBX_* bits
};

// The request `dcb` sends: RTM_GETDCB, NLM_F_REQUEST, dcbmsg{AF_UNSPEC, DCB_CMD_IEEE_GET},
// DCB_ATTR_IFNAME. Throws fabscope::Error for a name longer than IFNAMSIZ-1.
std::vector<std::uint8_t> build_ieee_get_request(std::string_view ifname, std::uint32_t seq);

// One reply (possibly several netlink messages; the first RTM_GETDCB or error counts). Never
// throws; every length is checked against the buffer.
DcbReply parse_dcb_reply(std::span<const std::uint8_t> bytes);

// Live: send the request on a NETLINK_ROUTE socket and parse the answer (timeout_ms per receive).
// Socket errors come back as Status::Error with the errno.
DcbReply query_dcb_ieee(const std::string& ifname, int timeout_ms = 1000);

// "PFC unsupported by the driver (EOPNOTSUPP)" etc.: why a reply gives no DCB values.
std::string describe_failure(const DcbReply& r);

}  // namespace fabscope::probe
