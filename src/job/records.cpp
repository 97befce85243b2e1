#include "job/records.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace fabscope::job {

std::uint64_t OpRecord::duration_ns() const {
  if (gpu_start_ns && gpu_stop_ns > gpu_start_ns) return gpu_stop_ns - gpu_start_ns;
  if (done_unix_ns && cpu_start_unix_ns && done_unix_ns > cpu_start_unix_ns) return done_unix_ns - cpu_start_unix_ns;
  return 0;
}

std::uint64_t RankRecord::oldest_in_flight_start() const {
  std::uint64_t oldest = 0;
  for (const auto& o : ops)
    if (o.in_flight() && o.cpu_start_unix_ns && (!oldest || o.cpu_start_unix_ns < oldest)) oldest = o.cpu_start_unix_ns;
  if (ops.empty()) return oldest_in_flight_unix_ns;
  return oldest;
}

void to_json(json& j, const RankRecord& r) {
  json ops = json::array();
  for (const auto& o : r.ops)
    ops.push_back(json::array({o.seq, o.op, o.bytes, o.cpu_start_unix_ns, o.gpu_start_ns, o.gpu_stop_ns, o.done_unix_ns}));
  json peers = json::array();
  for (const auto& p : r.peers)
    peers.push_back({{"peer", p.peer}, {"direction", p.send ? "send" : "recv"}, {"steps", p.steps}, {"bytes", p.bytes},
                     {"step_ns", p.step_ns_sum}, {"wait_ns", p.wait_ns_sum}});
  j = {{"job_id", r.job_id}, {"host", r.host}, {"pid", r.pid}, {"alive", r.alive}, {"now_unix_ns", r.now_unix_ns},
       {"comm", r.comm}, {"comm_name", r.comm_name}, {"rank", r.rank}, {"nranks", r.nranks}, {"gpu", r.gpu},
       {"bus_id", r.bus_id}, {"started", r.started}, {"completed", r.completed},
       {"last_start_unix_ns", r.last_start_unix_ns}, {"last_done_unix_ns", r.last_done_unix_ns},
       {"ops", std::move(ops)}, {"peers", std::move(peers)}};
  if (!r.process_state.empty()) j["process_state"] = r.process_state;
  if (r.busy_fraction >= 0) j["busy_fraction"] = r.busy_fraction;
  if (r.ops.empty() && r.oldest_in_flight_unix_ns) j["oldest_in_flight_unix_ns"] = r.oldest_in_flight_unix_ns;
}

json snapshot_to_json(const Snapshot& s) {
  json ranks = json::array();
  for (const auto& r : s.ranks) ranks.push_back(r);
  return {{"schema", kRecordsSchema}, {"schema_version", kRecordsSchemaVersion}, {"source", s.source},
          {"ranks", std::move(ranks)}, {"errors", s.errors}};
}

namespace {

std::string str_at(const json& j, const char* key, std::size_t max_len = 256) {
  const auto& v = j.at(key);
  if (!v.is_string()) throw Error(std::string("'") + key + "': expected a string, got " + v.dump().substr(0, 40));
  auto s = v.get<std::string>();
  if (s.size() > max_len) throw Error(std::string("'") + key + "': longer than " + std::to_string(max_len) + " bytes");
  return s;
}

std::string str_or(const json& j, const char* key, std::size_t max_len = 256) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  return str_at(j, key, max_len);
}

OpRecord op_from_json(const json& a) {
  if (!a.is_array() || a.size() != 7) throw Error("an operation: expected [seq, op, bytes, cpu_start, gpu_start, gpu_stop, done]");
  OpRecord o;
  o.seq = int_value<std::uint64_t>(a[0], "seq");
  if (!a[1].is_string() || a[1].get_ref<const std::string&>().size() > 32) throw Error("'op': expected a short string");
  o.op = a[1].get<std::string>();
  o.bytes = int_value<std::uint64_t>(a[2], "bytes");
  o.cpu_start_unix_ns = int_value<std::uint64_t>(a[3], "cpu_start");
  o.gpu_start_ns = int_value<std::uint64_t>(a[4], "gpu_start");
  o.gpu_stop_ns = int_value<std::uint64_t>(a[5], "gpu_stop");
  o.done_unix_ns = int_value<std::uint64_t>(a[6], "done");
  return o;
}

RankRecord rank_from_json(const json& j) {
  if (!j.is_object()) throw Error("expected an object");
  RankRecord r;
  r.job_id = str_at(j, "job_id");
  r.host = str_at(j, "host");
  r.pid = int_at<int>(j, "pid");
  if (!j.at("alive").is_boolean()) throw Error("'alive': expected true or false");
  r.alive = j.at("alive").get<bool>();
  r.process_state = str_or(j, "process_state", 32);
  if (!r.process_state.empty() && r.process_state != "running" && r.process_state != "stopped" &&
      r.process_state != "traced" && r.process_state != "uninterruptible" && r.process_state != "zombie")
    throw Error("'process_state': expected running, stopped, traced, uninterruptible or zombie, got '" +
                core::printable(r.process_state) + "'");
  r.now_unix_ns = int_at<std::uint64_t>(j, "now_unix_ns");
  r.comm = str_at(j, "comm", 64);
  r.comm_name = str_or(j, "comm_name");
  r.rank = int_at<int>(j, "rank");
  r.nranks = int_at<int>(j, "nranks");
  if (r.nranks < 1 || r.rank < 0 || r.rank >= r.nranks)
    throw Error("'rank' " + std::to_string(r.rank) + " of 'nranks' " + std::to_string(r.nranks) + ": out of range");
  r.gpu = int_or<int>(j, "gpu", -1);
  r.bus_id = str_or(j, "bus_id", 64);
  r.started = int_or<std::uint64_t>(j, "started", 0);
  r.completed = int_or<std::uint64_t>(j, "completed", 0);
  r.last_start_unix_ns = int_or<std::uint64_t>(j, "last_start_unix_ns", 0);
  r.last_done_unix_ns = int_or<std::uint64_t>(j, "last_done_unix_ns", 0);
  if (auto it = j.find("ops"); it != j.end()) {
    if (!it->is_array() || it->size() > 4096) throw Error("'ops': expected an array of at most 4096 operations");
    for (std::size_t i = 0; i < it->size(); i++) {
      try {
        r.ops.push_back(op_from_json((*it)[i]));
      } catch (const Error& e) {
        throw Error("ops[" + std::to_string(i) + "]: " + e.what());
      }
    }
  }
  if (auto it = j.find("peers"); it != j.end()) {
    if (!it->is_array() || it->size() > 65536) throw Error("'peers': expected an array of at most 65536 entries");
    for (std::size_t i = 0; i < it->size(); i++) {
      const auto& p = (*it)[i];
      try {
        if (!p.is_object()) throw Error("expected an object");
        PeerRecord pr;
        pr.peer = int_at<int>(p, "peer");
        auto dir = str_at(p, "direction", 8);
        if (dir != "send" && dir != "recv") throw Error("'direction': expected send or recv, got '" + dir + "'");
        pr.send = dir == "send";
        pr.steps = int_at<std::uint64_t>(p, "steps");
        pr.bytes = int_or<std::uint64_t>(p, "bytes", 0);
        pr.step_ns_sum = int_or<std::uint64_t>(p, "step_ns", 0);
        pr.wait_ns_sum = int_or<std::uint64_t>(p, "wait_ns", 0);
        r.peers.push_back(pr);
      } catch (const Error& e) {
        throw Error("peers[" + std::to_string(i) + "]: " + e.what());
      }
    }
  }
  if (auto it = j.find("busy_fraction"); it != j.end() && !it->is_null()) {
    if (!it->is_number() || !(it->get<double>() >= 0 && it->get<double>() <= 1.5))
      throw Error("'busy_fraction': expected a number from 0 to 1.5");
    r.busy_fraction = it->get<double>();
  }
  r.oldest_in_flight_unix_ns = int_or<std::uint64_t>(j, "oldest_in_flight_unix_ns", 0);
  return r;
}

}  // namespace

Snapshot snapshot_from_json(const json& j, std::string_view source) {
  const std::string src(source);
  if (!j.is_object()) throw Error(src + ": expected a JSON object of schema " + kRecordsSchema);
  auto schema = j.find("schema");
  if (schema == j.end() || !schema->is_string() || schema->get<std::string>() != kRecordsSchema)
    throw Error(src + ": 'schema': expected \"" + kRecordsSchema + "\", got " +
                (schema == j.end() ? std::string("nothing") : schema->dump().substr(0, 60)));
  int version = 0;
  try {
    version = int_at<int>(j, "schema_version");
  } catch (const std::exception& e) {
    throw Error(src + ": " + e.what());
  }
  if (version < 1 || version > kRecordsSchemaVersion)
    throw Error(src + ": 'schema_version' " + std::to_string(version) + ": this fabscope reads 1 to " +
                std::to_string(kRecordsSchemaVersion));
  Snapshot s;
  s.source = src;
  if (auto it = j.find("source"); it != j.end() && it->is_string()) s.source = it->get<std::string>().substr(0, 256);
  const auto ranks = j.find("ranks");
  if (ranks == j.end() || !ranks->is_array()) throw Error(src + ": 'ranks': expected an array");
  s.ranks.reserve(ranks->size());
  for (std::size_t i = 0; i < ranks->size(); i++) {
    try {
      s.ranks.push_back(rank_from_json((*ranks)[i]));
    } catch (const std::exception& e) {
      throw Error(src + ": ranks[" + std::to_string(i) + "]: " + e.what());
    }
  }
  if (auto it = j.find("errors"); it != j.end() && it->is_array())
    for (const auto& e : *it)
      if (e.is_string()) s.errors.push_back(e.get<std::string>().substr(0, 512));
  return s;
}

Snapshot parse_snapshot(std::string_view text, std::string_view source) {
  json j;
  try {
    j = parse_input_json(text);
  } catch (const json::exception& e) {
    throw Error(std::string(source) + ": not JSON: " + e.what());
  } catch (const Error& e) {
    throw Error(std::string(source) + ": " + e.what());
  }
  return snapshot_from_json(j, source);
}

void merge(Snapshot& into, Snapshot&& from) {
  if (into.source.empty()) into.source = from.source;
  for (auto& r : from.ranks) into.ranks.push_back(std::move(r));
  for (auto& e : from.errors) into.errors.push_back(std::move(e));
}

}  // namespace fabscope::job
