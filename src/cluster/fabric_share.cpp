#include "cluster/fabric_share.hpp"

#include <cstdlib>

#include "core/error.hpp"
#include "core/json.hpp"

namespace fabscope::cluster {

SharedFabric share_fabric(Exchange& ex, int from_rank, const std::function<fabric::Subnet()>& sweep,
                          std::size_t chunk_bytes) {
  SharedFabric out;
  const bool sweeper = ex.rank() == from_rank;
  std::string body;
  json header = json::object();
  if (sweeper) {
    try {
      const fabric::Subnet s = sweep();
      body = fabric::to_json(s).dump();
      if (body.size() > kMaxFabricBytes)
        header["error"] = "the sweep is " + std::to_string(body.size()) + " bytes of JSON, more than the " +
                          std::to_string(kMaxFabricBytes) + " sent";
      else
        header["chunks"] = (body.size() + chunk_bytes - 1) / chunk_bytes;
    } catch (const std::exception& e) {
      header["error"] = e.what();
    }
  }
  const auto headers = ex.gather(sweeper ? header.dump() : std::string());
  std::size_t chunks = 0;
  if (ex.rank() == 0) {
    if (from_rank < 0 || from_rank >= static_cast<int>(headers.size())) {
      out.error = "--fabric-from " + std::to_string(from_rank) + ": no such rank (world " +
                  std::to_string(headers.size()) + ")";
    } else if (!headers[static_cast<std::size_t>(from_rank)]) {
      out.error = "--fabric-from " + std::to_string(from_rank) + ": that rank is gone";
    } else {
      const json h = json::parse(*headers[static_cast<std::size_t>(from_rank)], nullptr, false);
      if (h.is_object() && h.contains("error") && h["error"].is_string())
        out.error = "--fabric-from " + std::to_string(from_rank) + ": " + h["error"].get<std::string>();
      else if (h.is_object() && h.contains("chunks") && h["chunks"].is_number_unsigned() &&
               h["chunks"].get<std::size_t>() <= kMaxFabricBytes / chunk_bytes + 1)
        chunks = h["chunks"].get<std::size_t>();
      else
        out.error = "--fabric-from " + std::to_string(from_rank) + ": a malformed header from that rank";
    }
  }
  // Every rank learns how many gathers follow.
  const std::string n = ex.broadcast(std::to_string(chunks));
  chunks = static_cast<std::size_t>(std::strtoull(n.c_str(), nullptr, 10));
  std::string received;
  for (std::size_t k = 0; k < chunks; ++k) {
    std::string mine;
    if (sweeper && k * chunk_bytes < body.size()) mine = body.substr(k * chunk_bytes, chunk_bytes);
    const auto parts = ex.gather(mine);
    if (ex.rank() == 0) {
      const auto& part = parts[static_cast<std::size_t>(from_rank)];
      if (!part) {
        if (out.error.empty()) out.error = "--fabric-from " + std::to_string(from_rank) + ": lost while sending";
      } else {
        received += *part;
      }
    }
  }
  if (ex.rank() != 0 || !out.error.empty()) return out;
  try {
    const json j = json::parse(received, nullptr, false);
    if (j.is_discarded()) throw Error("what arrived is not JSON (" + std::to_string(received.size()) + " bytes)");
    out.fabric = std::make_shared<const fabric::Subnet>(fabric::subnet_from_json(j));
  } catch (const std::exception& e) {
    out.error = "--fabric-from " + std::to_string(from_rank) + ": " + e.what();
  }
  return out;
}

}  // namespace fabscope::cluster
