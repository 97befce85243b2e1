#pragma once
// `capture --redact`: identities in the captured text replaced by stand-ins of the same form, the
// same value always by the same stand-in within one capture, so the tree still parses and the
// checks judge it alike:
//  - MAC addresses keep their first three bytes (the vendor, and the local/multicast bits);
//  - GUIDs keep their first three bytes; a GUID made from a MAC (EUI-64, ff:fe in the middle)
//    is rebuilt from the MAC's stand-in, so a RoCE GID stays the one its netdev's MAC gives;
//  - GIDs: the interface half as a GUID, an IPv4-mapped GID as its IPv4 address, a subnet
//    prefix other than fe80:: prefix-preserved;
//  - IPv4 addresses are mapped prefix-preserving (two addresses share a k-bit prefix exactly when
//    their stand-ins do, so subnets stay subnets), keeping the first octet (and 192.168/16,
//    172.16/12, 169.254/16, 100.64/10) and trailing zero bits (a network stays a network);
//    0/8, 127/8 and 224/3 (masks, loopback, multicast) are kept;
//  - host names given (the node's, LLDP neighbours'): each label by one of the same length;
//  - UUIDs (GPU UUIDs), the PCIe Device Serial Number in config space, and serial numbers in text
//    ("Serial Number: X", serial_number=X): letters by letters, digits by digits.
// The key is random per capture and never written: a stand-in cannot be tied back without it.
#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fabscope::capture {

class Redactor {
 public:
  explicit Redactor(std::string key);

  // A host name to replace wherever it stands as a whole token (and, for a FQDN, its first label).
  void add_host_name(const std::string& name);

  // Host names a kernel command line gives: hostname=NAME and dracut's ip=IP::GW:MASK:NAME:...
  void learn_cmdline(std::string_view cmdline);

  // Text with every identity replaced. Binary data (a NUL byte or broken UTF-8) is returned as is.
  // Each value found in any form (a MAC with ':', '-', '.' or none, upper or lower case; an IPv4
  // address after "ip:" or in /proc/net/route's hex; a host name inside another token such as
  // to-gpu7 or GPU7_eth0) is replaced in all of its forms in every text started after it was
  // found: run every text once to learn the values, then again to write them (capture does).
  std::string text(std::string_view in);
  // A file that holds a serial number alone (dmi product_serial): each token with a digit replaced.
  std::string serial_file(std::string_view in);
  // A PCI config space with its Device Serial Number (extended capability 0x0003) replaced.
  std::string pci_config(std::string_view in);

  std::string host_name(const std::string& name);  // stand-in for a host name (label by label)
  std::array<std::uint8_t, 6> mac(const std::array<std::uint8_t, 6>& m);
  std::array<std::uint8_t, 8> guid(const std::array<std::uint8_t, 8>& g);
  std::uint32_t ipv4(std::uint32_t a);  // host order
  std::array<std::uint8_t, 16> gid(const std::array<std::uint8_t, 16>& g);

  // How many distinct values of each kind were replaced ("mac", "guid", "ipv4", "host", "uuid",
  // "serial"), for the manifest.
  std::map<std::string, std::size_t> counts() const;

 private:
  std::string scan(std::string_view in);
  void refresh_forms();
  void build_forms();
  std::size_t form_at(std::string_view in, std::size_t i, std::string& out) const;
  static bool after_name(std::string_view in, std::size_t colon);
  std::size_t ipv4_at(std::string_view in, std::size_t i, std::string& out);
  std::size_t replace_mac(std::string_view in, std::size_t i, char sep, std::string& out);
  std::size_t colon_mac_at(std::string_view in, std::size_t i, std::string& out);
  std::size_t dashed_mac_at(std::string_view in, std::size_t i, std::string& out);
  std::size_t serial_at(std::string_view in, std::size_t i, std::string& out);
  std::vector<std::uint8_t> prf(std::string_view domain, std::string_view value, int attempt) const;
  std::string key_;
  std::vector<std::string> hosts_;  // longest first
  std::map<std::string, std::string> host_map_;
  std::map<std::string, std::string> mac_map_, guid_map_, uuid_map_;  // by bytes
  std::set<std::string> mac_used_, guid_used_, uuid_used_;
  std::map<std::uint32_t, std::uint32_t> ipv4_map_;
  std::size_t serials_ = 0;
  std::set<std::string> serial_seen_;
  // Every form of every value replaced so far, rebuilt when a text starts after a value was added.
  struct Form {
    std::string needle;       // lower case
    std::string replacement;  // lower case; upper-cased where the text is
    int kind;                 // 0 hex digits, 1 dotted quad, 2 host name
  };
  std::vector<Form> forms_;
  std::unordered_map<std::uint16_t, std::vector<std::size_t>> forms_index_;  // by first two characters
  std::size_t forms_generation_ = static_cast<std::size_t>(-1);
};

}  // namespace fabscope::capture
