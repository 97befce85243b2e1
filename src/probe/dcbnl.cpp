#include "probe/dcbnl.hpp"

#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "core/error.hpp"

namespace fabscope::probe {

namespace {

constexpr std::size_t align4(std::size_t n) { return (n + 3) & ~std::size_t{3}; }

std::uint16_t get_u16(const std::uint8_t* p) {
  std::uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
std::uint32_t get_u32(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Netlink attributes in [data, data+len): calls fn(type, payload) for each; false when an
// attribute's length runs past the buffer or is shorter than its header.
template <typename Fn>
bool each_attr(std::span<const std::uint8_t> buf, Fn&& fn) {
  std::size_t off = 0;
  while (off + sizeof(nlattr) <= buf.size()) {
    std::uint16_t len = get_u16(buf.data() + off);
    std::uint16_t type = get_u16(buf.data() + off + 2) & NLA_TYPE_MASK;
    if (len < sizeof(nlattr) || off + len > buf.size()) return false;
    fn(type, buf.subspan(off + sizeof(nlattr), len - sizeof(nlattr)));
    off += align4(len);
  }
  return true;
}

DcbReply malformed(std::string detail) {
  DcbReply r;
  r.status = DcbReply::Status::Malformed;
  r.detail = std::move(detail);
  return r;
}

DcbReply parse_ieee(std::span<const std::uint8_t> payload) {
  DcbReply r;
  r.status = DcbReply::Status::Ok;
  if (payload.size() < sizeof(dcbmsg)) return malformed("RTM_GETDCB message shorter than struct dcbmsg");
  const std::uint8_t cmd = payload[offsetof(dcbmsg, cmd)];
  if (cmd != DCB_CMD_IEEE_GET) return malformed("dcbmsg.cmd " + std::to_string(cmd) + " is not DCB_CMD_IEEE_GET");
  std::string bad;
  bool ok = each_attr(payload.subspan(sizeof(dcbmsg)), [&](std::uint16_t type, std::span<const std::uint8_t> v) {
    if (type == DCB_ATTR_IFNAME) {
      std::size_t n = 0;
      while (n < v.size() && n < IFNAMSIZ && v[n] != 0) ++n;
      r.ifname.assign(reinterpret_cast<const char*>(v.data()), n);
    } else if (type == DCB_ATTR_DCBX) {
      if (!v.empty()) r.dcbx = v[0];
    } else if (type == DCB_ATTR_IEEE) {
      bool nested_ok = each_attr(v, [&](std::uint16_t t, std::span<const std::uint8_t> iv) {
        if (t == DCB_ATTR_IEEE_PFC) {
          if (iv.size() < offsetof(ieee_pfc, pfc_en) + 1) {
            bad = "DCB_ATTR_IEEE_PFC of " + std::to_string(iv.size()) + " bytes";
            return;
          }
          r.pfc_cap = iv[offsetof(ieee_pfc, pfc_cap)];
          r.pfc_en = iv[offsetof(ieee_pfc, pfc_en)];
        } else if (t == DCB_ATTR_IEEE_APP_TABLE) {
          bool apps_ok = each_attr(iv, [&](std::uint16_t at, std::span<const std::uint8_t> av) {
            if (at != DCB_ATTR_IEEE_APP) return;
            if (av.size() < sizeof(dcb_app)) {
              bad = "DCB_ATTR_IEEE_APP of " + std::to_string(av.size()) + " bytes";
              return;
            }
            if (r.apps.size() >= 1024) return;
            DcbApp a;
            a.selector = av[offsetof(dcb_app, selector)];
            a.priority = av[offsetof(dcb_app, priority)];
            a.protocol = get_u16(av.data() + offsetof(dcb_app, protocol));
            if (a.priority > 7) {
              bad = "application priority " + std::to_string(a.priority) + " above 7";
              return;
            }
            r.apps.push_back(a);
          });
          if (!apps_ok) bad = "DCB_ATTR_IEEE_APP_TABLE attribute runs past its nest";
        }
      });
      if (!nested_ok) bad = "DCB_ATTR_IEEE attribute runs past its nest";
    }
  });
  if (!ok) return malformed("attribute runs past the message");
  if (!bad.empty()) return malformed(bad);
  return r;
}

}  // namespace

std::vector<std::uint8_t> build_ieee_get_request(std::string_view ifname, std::uint32_t seq) {
  if (ifname.empty() || ifname.size() >= IFNAMSIZ || ifname.find('\0') != std::string_view::npos)
    throw Error("DCB request: interface name '" + std::string(ifname) + "' is not a valid interface name");
  const std::size_t attr_len = sizeof(nlattr) + ifname.size() + 1;
  const std::size_t total = NLMSG_HDRLEN + align4(sizeof(dcbmsg)) + align4(attr_len);
  std::vector<std::uint8_t> buf(total, 0);
  nlmsghdr h{};
  h.nlmsg_len = static_cast<std::uint32_t>(total);
  h.nlmsg_type = RTM_GETDCB;
  h.nlmsg_flags = NLM_F_REQUEST;
  h.nlmsg_seq = seq;
  std::memcpy(buf.data(), &h, sizeof h);
  dcbmsg d{};
  d.dcb_family = AF_UNSPEC;
  d.cmd = DCB_CMD_IEEE_GET;
  std::memcpy(buf.data() + NLMSG_HDRLEN, &d, sizeof d);
  nlattr a{};
  a.nla_len = static_cast<std::uint16_t>(attr_len);
  a.nla_type = DCB_ATTR_IFNAME;
  std::uint8_t* p = buf.data() + NLMSG_HDRLEN + align4(sizeof(dcbmsg));
  std::memcpy(p, &a, sizeof a);
  std::memcpy(p + sizeof a, ifname.data(), ifname.size());
  return buf;
}

DcbReply parse_dcb_reply(std::span<const std::uint8_t> bytes) {
  std::size_t off = 0;
  while (off + sizeof(nlmsghdr) <= bytes.size()) {
    const std::uint32_t len = get_u32(bytes.data() + off);
    const std::uint16_t type = get_u16(bytes.data() + off + 4);
    if (len < sizeof(nlmsghdr) || len > bytes.size() - off)
      return malformed("netlink message length " + std::to_string(len) + " at offset " + std::to_string(off) +
                       " does not fit the " + std::to_string(bytes.size()) + "-byte reply");
    auto payload = bytes.subspan(off + NLMSG_HDRLEN < off + len ? off + NLMSG_HDRLEN : off + len,
                                 len > NLMSG_HDRLEN ? len - NLMSG_HDRLEN : 0);
    if (type == NLMSG_ERROR) {
      if (payload.size() < sizeof(int)) return malformed("NLMSG_ERROR shorter than its error code");
      int err;
      std::memcpy(&err, payload.data(), sizeof err);
      if (err == 0) {  // an ACK: the answer, if any, came before it
        off += align4(len);
        continue;
      }
      // The kernel sends a negative errno (-1 .. -4095); anything else (INT_MIN cannot even be
      // negated) is not an error code.
      if (err < -4095 || err > 4095) return malformed("NLMSG_ERROR code " + std::to_string(err) + " is no errno");
      DcbReply r;
      r.error = err < 0 ? -err : err;
      r.status = r.error == EOPNOTSUPP ? DcbReply::Status::Unsupported
                 : r.error == ENODEV   ? DcbReply::Status::NoDevice
                                       : DcbReply::Status::Error;
      return r;
    }
    if (type == RTM_GETDCB) return parse_ieee(payload);
    if (type == NLMSG_DONE) break;
    off += align4(len);
  }
  return malformed(bytes.empty() ? "empty reply" : "no RTM_GETDCB or error message in the reply");
}

DcbReply query_dcb_ieee(const std::string& ifname, int timeout_ms) {
  DcbReply fail;
  fail.status = DcbReply::Status::Error;
  std::vector<std::uint8_t> req;
  try {
    req = build_ieee_get_request(ifname, 1);
  } catch (const Error& e) {
    return malformed(e.what());
  }
  int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) {
    fail.error = errno;
    return fail;
  }
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd, req.data(), req.size(), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
    fail.error = errno;
    ::close(fd);
    return fail;
  }
  std::vector<std::uint8_t> buf(64 * 1024);
  ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
  int saved = errno;
  ::close(fd);
  if (n < 0) {
    fail.error = saved;
    return fail;
  }
  buf.resize(static_cast<std::size_t>(n));
  return parse_dcb_reply(buf);
}

std::string describe_failure(const DcbReply& r) {
  switch (r.status) {
    case DcbReply::Status::Ok: return "";
    case DcbReply::Status::Unsupported: return "the driver has no DCB support (dcbnl: EOPNOTSUPP)";
    case DcbReply::Status::NoDevice: return "not in this network namespace (dcbnl: ENODEV)";
    case DcbReply::Status::Error: return std::string("dcbnl query failed: ") + std::strerror(r.error);
    case DcbReply::Status::Malformed: return "dcbnl reply malformed: " + r.detail;
  }
  return "";
}

}  // namespace fabscope::probe
