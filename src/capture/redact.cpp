#include "capture/redact.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

#include "core/sha256.hpp"
#include "core/strings.hpp"

namespace fabscope::capture {

namespace {

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }
bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  return std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
}
char hex_digit(int v, bool upper) { return (upper ? "0123456789ABCDEF" : "0123456789abcdef")[v & 15]; }

template <std::size_t N>
std::string bytes_key(const std::array<std::uint8_t, N>& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), N);
}

// Text without NUL bytes and well-formed UTF-8 (what sysfs, procfs and the tools write as text).
bool is_text(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == 0) return false;
    int extra = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
    if (extra < 0 || i + extra >= s.size() + (extra == 0 ? 1 : 0)) return false;
    for (int k = 1; k <= extra; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    i += 1 + extra;
  }
  return true;
}

// Bits of a big-endian byte string, mapped so that two inputs sharing their first k bits map to
// outputs sharing exactly their first k bits: bit i flips by a keyed function of bits 0..i-1.
// The first `keep` bits stay; so do the bits after the last set bit (a network address stays one).
template <std::size_t N, typename Prf>
std::array<std::uint8_t, N> prefix_preserving(const std::array<std::uint8_t, N>& in, std::size_t keep, Prf prf) {
  std::size_t last_set = 0;
  bool any = false;
  for (std::size_t i = 0; i < N * 8; ++i)
    if (in[i / 8] >> (7 - i % 8) & 1) last_set = i, any = true;
  if (!any) return in;
  std::array<std::uint8_t, N> out = in;
  std::array<std::uint8_t, N> prefix{};
  for (std::size_t i = 0; i < N * 8; ++i) {
    const int bit = in[i / 8] >> (7 - i % 8) & 1;
    if (i >= keep) {
      int flip = prf(prefix, i) & 1;
      int ob = i > last_set ? 0 : bit ^ flip;
      out[i / 8] = static_cast<std::uint8_t>((out[i / 8] & ~(1 << (7 - i % 8))) | (ob << (7 - i % 8)));
    }
    if (bit) prefix[i / 8] |= static_cast<std::uint8_t>(1 << (7 - i % 8));
  }
  return out;
}

}  // namespace

namespace {

// A dotted quad at i (no more digits, dots or letters after it): its address and length.
std::size_t parse_ipv4(std::string_view in, std::size_t i, std::uint32_t& a) {
  std::size_t p = i;
  a = 0;
  for (int parts = 0; parts < 4; ++parts) {
    std::size_t s = p;
    unsigned v = 0;
    while (p < in.size() && std::isdigit(static_cast<unsigned char>(in[p])) && p - s < 3) v = v * 10 + (in[p++] - '0');
    if (p == s || v > 255) return 0;
    a = a << 8 | v;
    if (parts < 3) {
      if (p < in.size() && in[p] == '.') ++p;
      else return 0;
    }
  }
  if (p < in.size() && (is_alnum(in[p]) || in[p] == '.' || in[p] == '-')) return 0;
  return p - i;
}

// n groups of two hex digits joined by sep at i, with no hex group, letter or sep after them.
bool hex_pairs_at(std::string_view in, std::size_t i, int n, char sep) {
  const std::size_t len = static_cast<std::size_t>(3 * n - 1);
  if (i + len > in.size()) return false;
  for (std::size_t k = 0; k < len; ++k)
    if (k % 3 == 2 ? in[i + k] != sep : !is_hex(in[i + k])) return false;
  const std::size_t e = i + len;
  return !(e < in.size() && (is_alnum(in[e]) || (in[e] == sep && e + 1 < in.size() && is_hex(in[e + 1]))));
}

std::array<std::uint8_t, 6> mac_bytes(std::string_view in, std::size_t i) {
  std::array<std::uint8_t, 6> m{};
  for (int b = 0; b < 6; ++b) m[b] = static_cast<std::uint8_t>(hex_value(in[i + 3 * b]) << 4 | hex_value(in[i + 3 * b + 1]));
  return m;
}

bool any_upper(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; });
}

// The sysctl trees (proc/sys/<name>): a host name equal to one of them is not replaced where it
// starts a sysctl key (vm.swappiness on a host called "vm").
bool is_sysctl_tree(std::string_view label) {
  static const char* const kTrees[] = {"abi", "crypto", "debug", "dev", "fs", "kernel", "net", "sunrpc", "user", "vm"};
  for (const char* t : kTrees)
    if (label.size() == std::strlen(t) && std::equal(label.begin(), label.end(), t, [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == b;
        }))
      return true;
  return false;
}

}  // namespace

// Whether the ':' at colon ends a name (eth0, ip, addr) rather than a hex group of an address.
bool Redactor::after_name(std::string_view in, std::size_t colon) {
  std::size_t b = colon;
  bool letter = false;
  while (b > 0 && (is_alnum(in[b - 1]) || in[b - 1] == '_' || in[b - 1] == '-')) {
    if (!is_hex(in[b - 1])) letter = true;
    --b;
  }
  return letter && (b == 0 || in[b - 1] != ':');
}

std::size_t Redactor::ipv4_at(std::string_view in, std::size_t i, std::string& out) {
  std::uint32_t a = 0;
  const std::size_t n = parse_ipv4(in, i, a);
  if (n == 0) return 0;
  const std::uint32_t r = ipv4(a);
  char buf[16];
  std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", r >> 24, r >> 16 & 255, r >> 8 & 255, r & 255);
  out += buf;
  return n;
}

std::size_t Redactor::replace_mac(std::string_view in, std::size_t i, char sep, std::string& out) {
  const auto r = mac(mac_bytes(in, i));
  const bool upper = any_upper(in.substr(i, 17));
  for (int b = 0; b < 6; ++b) {
    if (b) out += sep;
    out += {hex_digit(r[b] >> 4, upper), hex_digit(r[b], upper)};
  }
  return 17;
}

std::size_t Redactor::colon_mac_at(std::string_view in, std::size_t i, std::string& out) {
  return hex_pairs_at(in, i, 6, ':') ? replace_mac(in, i, ':', out) : 0;
}

std::size_t Redactor::dashed_mac_at(std::string_view in, std::size_t i, std::string& out) {
  return hex_pairs_at(in, i, 6, '-') ? replace_mac(in, i, '-', out) : 0;
}

// "serial" (any case; "Serial Number", "serial_number", "SerialNumber", "serial no.") then ':',
// '=' or blanks, then a token of letters and digits with a digit in it: the token is replaced by
// one of the same form (letters by letters, digits by digits, case kept).
std::size_t Redactor::serial_at(std::string_view in, std::size_t i, std::string& out) {
  auto lower_at = [&](std::size_t p, std::string_view w) {
    if (p + w.size() > in.size()) return false;
    for (std::size_t k = 0; k < w.size(); ++k)
      if (std::tolower(static_cast<unsigned char>(in[p + k])) != w[k]) return false;
    return true;
  };
  if (!lower_at(i, "serial")) return 0;
  std::size_t p = i + 6;
  auto skip_sep = [&] {
    while (p < in.size() && (in[p] == ' ' || in[p] == '_' || in[p] == '\t')) ++p;
  };
  skip_sep();
  if (lower_at(p, "number")) p += 6;
  else if (lower_at(p, "no.")) p += 3;
  else if (lower_at(p, "no")) p += 2;
  else if (lower_at(p, "num")) p += 3;
  if (p < in.size() && in[p] == '"') ++p;  // JSON: "serial_number": "X"
  while (p < in.size() && (in[p] == ' ' || in[p] == '\t')) ++p;
  if (p >= in.size() || (in[p] != ':' && in[p] != '=' && in[p] != '#')) return 0;
  ++p;
  while (p < in.size() && (in[p] == ' ' || in[p] == '\t' || in[p] == '"')) ++p;
  std::size_t e = p;
  bool digit = false;
  while (e < in.size() && e - p < 64 && (is_alnum(in[e]) || in[e] == '-')) digit |= std::isdigit(static_cast<unsigned char>(in[e++])) != 0;
  if (e - p < 4 || !digit || (e < in.size() && is_alnum(in[e]))) return 0;
  out.append(in.substr(i, p - i));
  const std::string v(in.substr(p, e - p));
  auto d = prf("serial", v, 0);
  for (std::size_t k = 0; k < v.size(); ++k) {
    const auto byte = d[k % d.size()];
    const char c = v[k];
    if (std::isdigit(static_cast<unsigned char>(c))) out += static_cast<char>('0' + byte % 10);
    else if (std::isupper(static_cast<unsigned char>(c))) out += static_cast<char>('A' + byte % 26);
    else if (std::islower(static_cast<unsigned char>(c))) out += static_cast<char>('a' + byte % 26);
    else out += c;
  }
  if (serial_seen_.insert(v).second) ++serials_;
  return e - i;
}

std::string Redactor::serial_file(std::string_view in) {
  if (!is_text(in)) return std::string(in);
  std::string out;
  std::size_t i = 0;
  while (i < in.size()) {
    std::size_t e = i;
    while (e < in.size() && !std::isspace(static_cast<unsigned char>(in[e]))) ++e;
    if (e > i) {
      const std::string token = "serial: " + std::string(in.substr(i, e - i));
      std::string r;
      if (serial_at(token, 0, r) == token.size()) out += r.substr(8);
      else out.append(in.substr(i, e - i));
    }
    while (e < in.size() && std::isspace(static_cast<unsigned char>(in[e]))) out += in[e++];
    i = e;
  }
  return out;
}

void Redactor::learn_cmdline(std::string_view cmdline) {
  std::size_t p = 0;
  while (p < cmdline.size()) {
    while (p < cmdline.size() && std::isspace(static_cast<unsigned char>(cmdline[p]))) ++p;
    std::size_t e = p;
    while (e < cmdline.size() && !std::isspace(static_cast<unsigned char>(cmdline[e]))) ++e;
    const std::string_view arg = cmdline.substr(p, e - p);
    p = e;
    if (arg.rfind("hostname=", 0) == 0) {
      add_host_name(std::string(arg.substr(9)));
    } else if (arg.rfind("ip=", 0) == 0) {
      // dracut: ip=<client-IP>:[<peer>]:<gateway-IP>:<netmask>:<client_hostname>:<interface>:...
      // (an IPv6 address in brackets holds ':' of its own).
      std::vector<std::string> fields;
      std::string f;
      int bracket = 0;
      for (char c : arg.substr(3)) {
        if (c == '[') ++bracket;
        if (c == ']') --bracket;
        if (c == ':' && bracket == 0) {
          fields.push_back(f);
          f.clear();
        } else {
          f += c;
        }
      }
      fields.push_back(f);
      if (fields.size() >= 5 && !fields[4].empty()) add_host_name(fields[4]);
    }
  }
}

void Redactor::build_forms() {
  std::vector<Form>& forms = forms_;
  forms.clear();
  forms_index_.clear();
  auto hex = [](const std::uint8_t* b, std::size_t n, std::size_t group, char sep) {
    std::string s;
    for (std::size_t k = 0; k < n; ++k) {
      if (k && group && k % group == 0) s += sep;
      s += {hex_digit(b[k] >> 4, false), hex_digit(b[k], false)};
    }
    return s;
  };
  for (const auto& [orig, standin] : mac_map_) {
    auto o = reinterpret_cast<const std::uint8_t*>(orig.data());
    auto r = reinterpret_cast<const std::uint8_t*>(standin.data());
    for (auto [group, sep] : {std::pair<std::size_t, char>{1, ':'}, {1, '-'}, {2, '.'}, {0, ' '}})
      forms.push_back({hex(o, 6, group, sep), hex(r, 6, group, sep), 0});
  }
  for (const auto& [orig, standin] : guid_map_) {
    auto o = reinterpret_cast<const std::uint8_t*>(orig.data());
    auto r = reinterpret_cast<const std::uint8_t*>(standin.data());
    for (auto [group, sep] : {std::pair<std::size_t, char>{1, ':'}, {2, ':'}, {1, '-'}, {0, ' '}})
      forms.push_back({hex(o, 8, group, sep), hex(r, 8, group, sep), 0});
  }
  for (const auto& [a, r] : ipv4_map_) {
    if (a == r) continue;
    char o[16], n[16];
    std::snprintf(o, sizeof o, "%u.%u.%u.%u", a >> 24, a >> 16 & 255, a >> 8 & 255, a & 255);
    std::snprintf(n, sizeof n, "%u.%u.%u.%u", r >> 24, r >> 16 & 255, r >> 8 & 255, r & 255);
    forms.push_back({o, n, 1});
    const std::uint8_t le_o[4] = {std::uint8_t(a), std::uint8_t(a >> 8), std::uint8_t(a >> 16), std::uint8_t(a >> 24)};
    const std::uint8_t le_r[4] = {std::uint8_t(r), std::uint8_t(r >> 8), std::uint8_t(r >> 16), std::uint8_t(r >> 24)};
    forms.push_back({hex(le_o, 4, 0, ' '), hex(le_r, 4, 0, ' '), 0});
  }
  for (const auto& h : hosts_) {
    forms.push_back({core::lower(h), host_name(h), 2});
  }
  // By first two characters (lower case), longest first.
  std::sort(forms.begin(), forms.end(), [](const Form& a, const Form& b) { return a.needle.size() > b.needle.size(); });
  for (std::size_t k = 0; k < forms.size(); ++k)
    if (forms[k].needle.size() >= 2)
      forms_index_[static_cast<std::uint16_t>(static_cast<unsigned char>(forms[k].needle[0]) << 8 |
                                              static_cast<unsigned char>(forms[k].needle[1]))]
          .push_back(k);
}

void Redactor::refresh_forms() {
  const std::size_t generation = mac_map_.size() + guid_map_.size() + ipv4_map_.size() + hosts_.size() * 1000003;
  if (generation != forms_generation_) build_forms(), forms_generation_ = generation;
}

// A known value in one of its forms starting at i (not inside a longer word or address): its
// stand-in appended to out, and the length read; 0 when none starts here.
std::size_t Redactor::form_at(std::string_view in, std::size_t i, std::string& out) const {
  if (forms_.empty() || i + 1 >= in.size() || (i > 0 && is_alnum(in[i - 1]))) return 0;
  auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  auto it = forms_index_.find(static_cast<std::uint16_t>(static_cast<unsigned char>(lower(in[i])) << 8 |
                                                         static_cast<unsigned char>(lower(in[i + 1]))));
  if (it == forms_index_.end()) return 0;
  for (std::size_t fk : it->second) {
    const Form& f = forms_[fk];
    const std::size_t n = f.needle.size(), e = i + n;
    if (e > in.size()) continue;
    bool same = true;
    for (std::size_t k = 0; k < n && same; ++k) same = lower(in[i + k]) == f.needle[k];
    if (!same || (e < in.size() && is_alnum(in[e]))) continue;
    if (f.kind == 0) {  // not a part of a longer run of hex groups (a GID, an IPoIB address)
      if (i > 1 && in[i - 1] == ':' && is_hex(in[i - 2])) continue;
      if (e + 1 < in.size() && (in[e] == ':' || in[e] == '-') && is_hex(in[e + 1])) continue;
    } else if (f.kind == 1) {  // not inside a longer dotted number
      if ((i > 0 && in[i - 1] == '.') || (e + 1 < in.size() && in[e] == '.' && is_alnum(in[e + 1]))) continue;
    } else if (f.kind == 2) {
      // Not a later label of another name (lists.debian.org), not a sysctl key (vm.swappiness).
      if (i > 1 && in[i - 1] == '.' && is_alnum(in[i - 2])) continue;
      if (e + 1 < in.size() && in[e] == '.' && is_alnum(in[e + 1]) && is_sysctl_tree(f.needle)) continue;
      // A host name of hex digits only between ':' is a group of an address.
      if (std::all_of(f.needle.begin(), f.needle.end(), is_hex) &&
          ((i > 0 && in[i - 1] == ':') || (e < in.size() && in[e] == ':')))
        continue;
    }
    // Case as the text writes it: all upper when it has no lower-case letter (B8-CE-..., GPU7,
    // 0302010A), else letter by letter (Gpu7 -> Adbd).
    const std::string_view matched = in.substr(i, n);
    const bool has_lower = std::any_of(matched.begin(), matched.end(), [](char c) { return std::islower(static_cast<unsigned char>(c)) != 0; });
    const bool all_upper = !has_lower && any_upper(matched);
    for (std::size_t k = 0; k < f.replacement.size(); ++k) {
      const char r = f.replacement[k];
      const bool upper = all_upper || (k < n && std::isupper(static_cast<unsigned char>(in[i + k])));
      out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(r))) : r;
    }
    return n;
  }
  return 0;
}

Redactor::Redactor(std::string key) : key_(std::move(key)) {}

std::vector<std::uint8_t> Redactor::prf(std::string_view domain, std::string_view value, int attempt) const {
  core::Sha256 h;
  h.update(key_).update(std::string_view("\0", 1)).update(domain).update(std::string_view("\0", 1)).update(value);
  h.update(std::to_string(attempt));
  auto d = h.digest();
  return {d.begin(), d.end()};
}

void Redactor::add_host_name(const std::string& name) {
  auto add = [&](const std::string& n) {
    if (n.empty() || n == "localhost" || n == "(none)") return;
    if (std::find(hosts_.begin(), hosts_.end(), n) == hosts_.end()) hosts_.push_back(n);
  };
  add(name);
  if (auto dot = name.find('.'); dot != std::string::npos) add(name.substr(0, dot));
  std::sort(hosts_.begin(), hosts_.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
}

std::string Redactor::host_name(const std::string& name) {
  if (auto it = host_map_.find(name); it != host_map_.end()) return it->second;
  std::string out;
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t end = name.find('.', start);
    if (end == std::string::npos) end = name.size();
    const std::string label = name.substr(start, end - start);
    auto d = prf("host", label, 0);
    for (std::size_t i = 0; i < label.size(); ++i) {
      const char* alphabet = i == 0 ? "abcdefghijklmnopqrstuvwxyz" : "abcdefghijklmnopqrstuvwxyz0123456789";
      out += label[i] == '-' && i > 0 && i + 1 < label.size() ? '-' : alphabet[d[i % d.size()] % (i == 0 ? 26 : 36)];
    }
    if (end == name.size()) break;
    out += '.';
    start = end + 1;
  }
  host_map_[name] = out;
  return out;
}

std::array<std::uint8_t, 6> Redactor::mac(const std::array<std::uint8_t, 6>& m) {
  const bool zero = std::all_of(m.begin(), m.end(), [](auto b) { return b == 0; });
  const bool ones = std::all_of(m.begin(), m.end(), [](auto b) { return b == 0xff; });
  if (zero || ones || (m[0] & 1)) return m;  // unset, broadcast, multicast: not an identity
  const std::string k = bytes_key(m);
  if (auto it = mac_map_.find(k); it != mac_map_.end()) {
    std::array<std::uint8_t, 6> r{};
    std::copy(it->second.begin(), it->second.end(), r.begin());
    return r;
  }
  for (int attempt = 0;; ++attempt) {
    auto d = prf("mac", k, attempt);
    std::array<std::uint8_t, 6> r = {m[0], m[1], m[2], d[0], d[1], d[2]};
    const std::string rk = bytes_key(r);
    if (r == m || mac_used_.count(rk)) continue;
    mac_used_.insert(rk);
    mac_map_[k] = rk;
    return r;
  }
}

std::array<std::uint8_t, 8> Redactor::guid(const std::array<std::uint8_t, 8>& g) {
  const bool zero = std::all_of(g.begin(), g.end(), [](auto b) { return b == 0; });
  const bool ones = std::all_of(g.begin(), g.end(), [](auto b) { return b == 0xff; });
  if (zero || ones) return g;
  if (g[3] == 0xff && g[4] == 0xfe) {  // EUI-64 of a MAC (RFC 4291 appendix A): via the MAC
    auto m = mac({static_cast<std::uint8_t>(g[0] ^ 2), g[1], g[2], g[5], g[6], g[7]});
    return {static_cast<std::uint8_t>(m[0] ^ 2), m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]};
  }
  const std::string k = bytes_key(g);
  if (auto it = guid_map_.find(k); it != guid_map_.end()) {
    std::array<std::uint8_t, 8> r{};
    std::copy(it->second.begin(), it->second.end(), r.begin());
    return r;
  }
  for (int attempt = 0;; ++attempt) {
    auto d = prf("guid", k, attempt);
    std::array<std::uint8_t, 8> r = {g[0], g[1], g[2], d[0], d[1], d[2], d[3], d[4]};
    const std::string rk = bytes_key(r);
    if (r == g || (r[3] == 0xff && r[4] == 0xfe) || guid_used_.count(rk)) continue;
    guid_used_.insert(rk);
    guid_map_[k] = rk;
    return r;
  }
}

std::uint32_t Redactor::ipv4(std::uint32_t a) {
  const unsigned first = a >> 24;
  if (first == 0 || first == 127 || first >= 224) return a;
  if (auto it = ipv4_map_.find(a); it != ipv4_map_.end()) return it->second;
  std::size_t keep = 8;
  if ((a >> 16) == 0xc0a8 || (a >> 16) == 0xa9fe) keep = 16;  // 192.168/16, 169.254/16
  else if ((a >> 20) == 0xac1) keep = 12;                      // 172.16/12
  else if ((a >> 22) == (0x6440u >> 6)) keep = 10;             // 100.64/10
  std::array<std::uint8_t, 4> in = {static_cast<std::uint8_t>(a >> 24), static_cast<std::uint8_t>(a >> 16),
                                    static_cast<std::uint8_t>(a >> 8), static_cast<std::uint8_t>(a)};
  auto out = prefix_preserving(in, keep, [&](const std::array<std::uint8_t, 4>& prefix, std::size_t i) {
    return prf("ipv4", bytes_key(prefix) + static_cast<char>(i), 0)[0];
  });
  std::uint32_t r = std::uint32_t(out[0]) << 24 | std::uint32_t(out[1]) << 16 | std::uint32_t(out[2]) << 8 | out[3];
  ipv4_map_[a] = r;
  return r;
}

std::array<std::uint8_t, 16> Redactor::gid(const std::array<std::uint8_t, 16>& g) {
  std::array<std::uint8_t, 16> r = g;
  const bool upper_zero = std::all_of(g.begin(), g.begin() + 10, [](auto b) { return b == 0; });
  if (upper_zero && g[10] == 0xff && g[11] == 0xff) {  // ::ffff:a.b.c.d (RoCE v2 over IPv4)
    std::uint32_t a = ipv4(std::uint32_t(g[12]) << 24 | std::uint32_t(g[13]) << 16 | std::uint32_t(g[14]) << 8 | g[15]);
    for (int i = 0; i < 4; ++i) r[12 + i] = static_cast<std::uint8_t>(a >> (24 - 8 * i));
    return r;
  }
  if (upper_zero && g[10] == 0 && g[11] == 0) return r;  // ::, ::1 and the like
  std::array<std::uint8_t, 8> prefix{}, iface{};
  std::copy(g.begin(), g.begin() + 8, prefix.begin());
  std::copy(g.begin() + 8, g.end(), iface.begin());
  const bool link_local = prefix[0] == 0xfe && (prefix[1] & 0xc0) == 0x80 &&
                          std::all_of(prefix.begin() + 2, prefix.end(), [](auto b) { return b == 0; });
  if (!link_local) {
    prefix = prefix_preserving(prefix, 16, [&](const std::array<std::uint8_t, 8>& p, std::size_t i) {
      return prf("prefix64", bytes_key(p) + static_cast<char>(i), 0)[0];
    });
  }
  iface = guid(iface);
  std::copy(prefix.begin(), prefix.end(), r.begin());
  std::copy(iface.begin(), iface.end(), r.begin() + 8);
  return r;
}

std::map<std::string, std::size_t> Redactor::counts() const {
  return {{"host", host_map_.size()}, {"mac", mac_map_.size()}, {"guid", guid_map_.size()},
          {"ipv4", ipv4_map_.size()}, {"uuid", uuid_map_.size()},    {"serial", serials_}};
}

std::string Redactor::text(std::string_view in) {
  if (!is_text(in)) return std::string(in);
  // Every form of every value known when this text starts (found anywhere: a MAC with '-' or '.'
  // or no separator, an address as route hex, a host name inside a joined token or in another
  // case), then the scan for values seen here first. Each character is read once, so a stand-in
  // is never taken for another value.
  refresh_forms();
  return scan(in);
}

std::string Redactor::scan(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  std::size_t i = 0;
  while (i < in.size()) {
    if (std::size_t n = form_at(in, i, out); n > 0) {
      i += n;
      continue;
    }
    const char prev = i == 0 ? ' ' : in[i - 1];
    const bool boundary = !(is_alnum(prev) || prev == ':' || prev == '.');
    if (!boundary) {
      // After "NAME:" (ifname=eth0:MAC): a MAC starts here, unless the ':' joins hex groups (a
      // longer address, a time).
      if (prev == ':' && after_name(in, i - 1)) {
        if (std::size_t n = colon_mac_at(in, i, out); n > 0) {
          i += n;
          continue;
        }
      }
      // A dotted quad after any ':' (ip:ADDR, dracut's ip=IP::GW:MASK, ::ffff:ADDR).
      if (prev == ':' && i >= 2 && !std::isdigit(static_cast<unsigned char>(in[i - 2]))) {
        if (std::size_t n = ipv4_at(in, i, out); n > 0) {
          i += n;
          continue;
        }
      }
      out += in[i++];
      continue;
    }
    if (std::size_t n = serial_at(in, i, out); n > 0) {  // "Serial Number: MT2048X12345"
      i += n;
      continue;
    }
    if (std::size_t n = dashed_mac_at(in, i, out); n > 0) {  // aa-bb-cc-dd-ee-ff (BOOTIF=01-aa-...)
      i += n;
      continue;
    }
    // "0x" and 16 hex digits: a GUID as libibverbs' tools print it.
    if (in.compare(i, 2, "0x") == 0 && i + 18 <= in.size() &&
        std::all_of(in.begin() + i + 2, in.begin() + i + 18, is_hex) && !(i + 18 < in.size() && is_alnum(in[i + 18]))) {
      std::array<std::uint8_t, 8> g{};
      for (int b = 0; b < 8; ++b) g[b] = static_cast<std::uint8_t>(hex_value(in[i + 2 + 2 * b]) << 4 | hex_value(in[i + 3 + 2 * b]));
      auto r = guid(g);
      const bool upper = std::any_of(in.begin() + i + 2, in.begin() + i + 18, [](char c) { return std::isupper(static_cast<unsigned char>(c)); });
      out += "0x";
      for (auto b : r) out += {hex_digit(b >> 4, upper), hex_digit(b, upper)};
      i += 18;
      continue;
    }
    // UUID: 8-4-4-4-12 hex digits.
    if (i + 36 <= in.size() && !(i + 36 < in.size() && is_alnum(in[i + 36]))) {
      bool uuid = true;
      for (std::size_t k = 0; k < 36 && uuid; ++k) {
        const bool dash = k == 8 || k == 13 || k == 18 || k == 23;
        uuid = dash ? in[i + k] == '-' : is_hex(in[i + k]);
      }
      if (uuid) {
        const std::string v(in.substr(i, 36));
        auto it = uuid_map_.find(v);
        if (it == uuid_map_.end()) {
          for (int attempt = 0;; ++attempt) {
            auto d = prf("uuid", v, attempt);
            std::string r = v;
            std::size_t n = 0;
            for (auto& c : r) {
              if (c == '-') continue;
              const std::uint8_t byte = d[(n / 2) % d.size()];
              c = hex_digit(n % 2 ? byte : byte >> 4, std::isupper(static_cast<unsigned char>(c)) != 0);
              ++n;
            }
            if (r == v || uuid_used_.count(r)) continue;
            uuid_used_.insert(r);
            it = uuid_map_.emplace(v, r).first;
            break;
          }
        }
        out += it->second;
        i += 36;
        continue;
      }
    }
    // Runs of hex groups joined by ':' (MAC, GUID, GID, IPoIB hardware address).
    std::size_t hex_end = i;
    while (hex_end < in.size() && is_hex(in[hex_end]) && hex_end - i < 5) ++hex_end;
    if (hex_end > i && hex_end < in.size() && in[hex_end] == ':') {
      std::vector<std::pair<std::size_t, std::size_t>> groups;  // start, length
      std::size_t p = i;
      while (true) {
        std::size_t s = p;
        while (p < in.size() && is_hex(in[p]) && p - s < 5) ++p;
        groups.emplace_back(s, p - s);
        if (p + 1 < in.size() && in[p] == ':' && is_hex(in[p + 1])) {
          ++p;
          continue;
        }
        break;
      }
      const bool end_ok = p >= in.size() || !(is_alnum(in[p]) || in[p] == ':' || in[p] == '.');
      auto all_len = [&](std::size_t n) {
        return std::all_of(groups.begin(), groups.end(), [&](const auto& g) { return g.second == n; });
      };
      const std::size_t n = groups.size();
      std::vector<std::uint8_t> bytes;
      if (n >= 2 && (all_len(2) || all_len(4)))
        for (const auto& [s, len] : groups)
          for (std::size_t k = 0; k < len; k += 2)
            bytes.push_back(static_cast<std::uint8_t>(hex_value(in[s + k]) << 4 | hex_value(in[s + k + 1])));
      std::vector<std::uint8_t> mapped;
      if (end_ok && n == 6 && all_len(2)) {
        std::array<std::uint8_t, 6> m{};
        std::copy(bytes.begin(), bytes.end(), m.begin());
        auto r = mac(m);
        mapped.assign(r.begin(), r.end());
      } else if (end_ok && ((n == 4 && all_len(4)) || (n == 8 && all_len(2)))) {
        std::array<std::uint8_t, 8> g{};
        std::copy(bytes.begin(), bytes.end(), g.begin());
        auto r = guid(g);
        mapped.assign(r.begin(), r.end());
      } else if (end_ok && n == 8 && all_len(4)) {
        std::array<std::uint8_t, 16> g{};
        std::copy(bytes.begin(), bytes.end(), g.begin());
        auto r = gid(g);
        mapped.assign(r.begin(), r.end());
      } else if (end_ok && n == 20 && all_len(2)) {  // IPoIB: flags and QPN, then the port GID
        std::array<std::uint8_t, 16> g{};
        std::copy(bytes.begin() + 4, bytes.end(), g.begin());
        auto r = gid(g);
        mapped.assign(bytes.begin(), bytes.begin() + 4);
        mapped.insert(mapped.end(), r.begin(), r.end());
      }
      if (mapped.empty() && n >= 2) {
        out.append(in.substr(i, p - i));
        i = p;
        continue;
      }
      if (!mapped.empty()) {
        // Same layout as the input: digits replaced in place, case kept.
        std::size_t nibble = 0;
        for (std::size_t k = i; k < p; ++k) {
          if (in[k] == ':') {
            out += ':';
            continue;
          }
          const bool upper = std::isupper(static_cast<unsigned char>(in[k])) != 0;
          out += hex_digit(nibble % 2 ? mapped[nibble / 2] : mapped[nibble / 2] >> 4, upper);
          ++nibble;
        }
        i = p;
        continue;
      }
    }
    // IPv4 dotted quad; not after '-' or a letter (a version such as 5.8-1.0.1.1).
    if (std::isdigit(static_cast<unsigned char>(in[i])) && prev != '-' && prev != '_') {
      if (std::size_t n = ipv4_at(in, i, out); n > 0) {
        i += n;
        continue;
      }
      // Not an address: copy the digits (and dots) read so they are not scanned again mid-number.
      std::size_t q = i;
      while (q < in.size() && (std::isdigit(static_cast<unsigned char>(in[q])) || in[q] == '.')) ++q;
      out.append(in.substr(i, q - i));
      i = q;
      continue;
    }
    out += in[i++];
  }
  return out;
}

std::string Redactor::pci_config(std::string_view in) {
  std::string out(in);
  auto u32 = [&](std::size_t off) {
    return std::uint32_t(static_cast<unsigned char>(out[off])) | std::uint32_t(static_cast<unsigned char>(out[off + 1])) << 8 |
           std::uint32_t(static_cast<unsigned char>(out[off + 2])) << 16 |
           std::uint32_t(static_cast<unsigned char>(out[off + 3])) << 24;
  };
  std::size_t off = 0x100;
  for (int guard = 0; guard < 64 && off + 4 <= out.size(); ++guard) {
    const std::uint32_t h = u32(off);
    if (h == 0 || h == 0xffffffff) break;
    if ((h & 0xffff) == 0x0003 && off + 12 <= out.size()) {  // Device Serial Number (PCIe 7.9.3)
      const std::uint64_t serial = std::uint64_t(u32(off + 8)) << 32 | u32(off + 4);
      std::array<std::uint8_t, 8> g{};
      for (int b = 0; b < 8; ++b) g[b] = static_cast<std::uint8_t>(serial >> (56 - 8 * b));
      auto r = guid(g);
      std::uint64_t v = 0;
      for (auto b : r) v = v << 8 | b;
      for (int b = 0; b < 8; ++b) out[off + 4 + b] = static_cast<char>(v >> (8 * b));
      if (serial_seen_.insert("pci config " + std::to_string(serial)).second) ++serials_;
    }
    const std::size_t next = (h >> 20) & 0xffc;
    if (next < 0x100 || next <= off) break;
    off = next;
  }
  return out;
}

}  // namespace fabscope::capture
