#pragma once
// Streaming parser for NCCL_DEBUG output. Two layers:
//  - LineReader cuts a byte stream into lines, bounded: a line longer than the cap is cut (the
//    rest dropped up to the next newline), so memory never depends on the input;
//  - parse_line() finds the NCCL marker and the "host:pid:tid [dev]" prefix before it;
//    classify() turns the message into one typed Event (most lines are Kind::None).
// Every string_view in Line and Event points into the caller's buffer and is valid only
// during the callback that receives it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace fabscope::nccllog {

struct Signature;

enum class Level { Info, Warn, Bare, Framework };

struct Line {
  std::string_view raw;      // the whole line, without the newline
  std::string_view host;     // empty when the line has no "host:pid:tid" prefix
  long pid = -1;
  long tid = -1;
  int cuda_dev = -1;
  Level level = Level::Info;
  std::string_view source;   // "misc/socket.cc:483" on WARN lines (NCCL's file:line)
  std::string_view message;  // the text after "NCCL INFO " / "NCCL WARN "
  std::size_t marker = std::string_view::npos;  // where "NCCL INFO"/"NCCL WARN" starts in raw
  bool prefix_read = false;                     // read_prefix has filled host..source
  // (scan_line resets every field by name: a new field must be reset there too)
};

// Lines of interest: "<prefix> NCCL INFO msg", "<prefix> file:line NCCL WARN msg", the bare
// "NCCL version X" line older NCCLs print without a prefix, and framework lines that mention
// an NCCL error ("... NCCL error ...: unhandled system error"). Anything else: false.
bool parse_line(std::string_view raw, Line& out);

// parse_line in two steps, so the prefix is read only for lines that matter: scan_line finds the
// marker and sets level and message (host, pid, tid, device and source stay unset); read_prefix
// then fills those from the text before the marker (a no-op when already read or absent).
bool scan_line(std::string_view raw, Line& out);
void read_prefix(Line& out);

// read_prefix that remembers the INFO prefixes it has read: a process prints the same
// "host:pid:tid [dev] " before every line, and a line whose text from the host token to the
// marker is byte for byte one remembered gets the same host, pid, tid and device without being
// parsed again. Whatever stands left of the host token (a timestamp, a launcher tag) may differ.
// Prefixes are filed by their last 16 bytes (pid, tid and device), in a few slots, so the lines
// of several processes interleaved in one file each find their own.
class PrefixMemo {
 public:
  void read(Line& out);

 private:
  struct Slot {
    std::string tail;          // from the host token to the marker
    std::size_t host_len = 0;  // the host starts at the tail's first byte
    long pid = -1, tid = -1;
    int dev = -1;
  };
  static constexpr std::size_t kSlots = 64;
  Slot slots_[kSlots];
};

// The time of day (seconds, plus whole days when a date is given) of a line that carries a
// timestamp before its host:pid:tid prefix ("2024-05-01 10:11:12.345 host:1:1 ..." or
// "[10:11:12] ..."); nullopt when none. Called for failure lines only, never on the hot path.
std::optional<double> line_time(const Line& line);

enum class EventKind {
  None,
  Version,          // name = "2.28.9+cuda13.0"
  CudaDriver,       // number = 13000
  Bootstrap,        // name = "eth0:192.0.2.2<0>" (first interface listed)
  NetIbUsing,       // name = " [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]" (the list, raw)
  NetSocketUsing,   // name = " [0]eth0:192.0.2.2<0>"
  IbNoDevice,       // "NET/IB : No device found."
  NetPluginFailed,  // name = plugin that failed to initialise ("IB")
  UsingNetwork,     // name = "IB", "Socket", "IBext_v8", ...
  EnvOverride,      // name = "NCCL_IB_HCA", value = "=mlx5_0:1"
  CommInfo,         // comm_ptr, rank, nranks, nnodes, local_ranks, local_rank
  InitStart,        // comm_ptr, rank, nranks, comm_id (may be empty)
  InitComplete,     // comm_ptr, rank, nranks, comm_id (may be empty)
  InitTimings,      // rank, nranks, seconds (total)
  Channel,          // channel, from, to, name = transport after "via " (trimmed)
  Nvls,             // "Connected NVLS tree" / nvls channels
  ErrorTrace,       // number = ncclResult_t returned ("init.cc:126 -> 5")
  SignatureHit,     // signature = the catalog entry matched
  UnknownWarn,      // a WARN that no signature matched (name = message)
  Decision,         // a feature NCCL turned on or off: name = feature ("GDR", "NVLS", "CollNet",
                    // "NCCL_PROTO"), number = 1 on / 0 off, value = where ("HCA 0 'mlx5_0'",
                    // "GPU 0 / HCA 1", "NET/OFI"), detail = why ("no module", "distance 8 > 5")
};

struct Event {
  EventKind kind = EventKind::None;
  std::string_view name;
  std::string_view value;
  std::string_view comm_id;
  std::string_view detail;
  std::uint64_t comm_ptr = 0;
  long number = 0;
  int rank = -1, nranks = -1, nnodes = -1, local_ranks = -1, local_rank = -1;
  int channel = -1, from = -1, to = -1;
  double seconds = -1;
  const Signature* signature = nullptr;
};

Event classify(const Line& line);

// Splits bytes into lines of at most max_line_bytes (a longer line is cut there; the cut is
// counted). "\r\n" endings are accepted. A final line without a newline is delivered by
// finish(), so a truncated file loses nothing.
class LineReader {
 public:
  using Callback = std::function<void(std::string_view)>;
  explicit LineReader(std::size_t max_line_bytes = 4096);

  // Reads a whole FILE* (file or stdin) in fixed chunks. Throws fabscope::Error naming
  // `name` when a read fails.
  void read(std::FILE* f, const std::string& name, const Callback& on_line);
  void feed(const char* data, std::size_t n, const Callback& on_line);
  void finish(const Callback& on_line);

  std::size_t max_line_bytes() const { return max_; }
  std::uint64_t lines() const { return lines_; }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t cut_lines() const { return cut_; }

 private:
  void emit(std::string_view line, const Callback& on_line);
  std::size_t max_;
  std::string carry_;     // a partial line across chunk boundaries (at most max_ bytes)
  bool skipping_ = false; // inside the dropped tail of an over-long line
  std::uint64_t lines_ = 0, bytes_ = 0, cut_ = 0;
};

}  // namespace fabscope::nccllog
