#include "core/fields.hpp"

#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace fabscope::core {

std::string describe(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return std::string("boolean ") + (v.get<bool>() ? "true" : "false");
    case json::value_t::string: {
      std::string s = v.get<std::string>();
      if (s.size() > 40) s = s.substr(0, 40) + "...";
      return "string \"" + s + "\"";
    }
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return "number " + v.dump();
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    default: return "an unexpected value";
  }
}

Fields::Fields(const std::string& file, const json& j, std::string path)
    : file_(&file), j_(&j), path_(std::move(path)) {}

std::string Fields::where(const std::string& key) const {
  if (key.empty()) return path_;
  if (path_.empty()) return key;
  if (key[0] == '[') return path_ + key;
  return path_ + "." + key;
}

void Fields::fail(const std::string& key, const std::string& what) const {
  const std::string field = "field '" + where(key) + "': " + what;
  throw Error(file_->empty() ? field : *file_ + ": " + field);
}

const json* Fields::at(const std::string& key) const {
  if (!j_->is_object()) return nullptr;
  auto it = j_->find(key);
  return it == j_->end() ? nullptr : &*it;
}

bool Fields::has(const std::string& key) const {
  const json* v = at(key);
  return v && !v->is_null();
}

Fields Fields::object(const std::string& key) const {
  const json* v = at(key);
  if (!v) fail(key, "missing");
  if (!v->is_object()) fail(key, "expected an object, got " + describe(*v));
  return Fields(*file_, *v, where(key));
}

std::optional<Fields> Fields::optional_object(const std::string& key) const {
  const json* v = at(key);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_object()) fail(key, "expected an object or null, got " + describe(*v));
  return Fields(*file_, *v, where(key));
}

std::vector<Fields> Fields::array(const std::string& key) const {
  const json* v = at(key);
  if (!v) fail(key, "missing");
  if (!v->is_array()) fail(key, "expected an array, got " + describe(*v));
  return Fields(*file_, *v, where(key)).elements();
}

std::vector<Fields> Fields::elements() const {
  if (!j_->is_array()) fail("", "expected an array, got " + describe(*j_));
  std::vector<Fields> out;
  out.reserve(j_->size());
  for (std::size_t i = 0; i < j_->size(); ++i) out.emplace_back(*file_, (*j_)[i], path_ + "[" + std::to_string(i) + "]");
  return out;
}

std::string Fields::str(const std::string& key) const {
  const json* v = at(key);
  if (!v) fail(key, "missing");
  if (!v->is_string()) fail(key, "expected a string, got " + describe(*v));
  return v->get<std::string>();
}

std::string Fields::str_or(const std::string& key, const std::string& def) const {
  const json* v = at(key);
  if (!v || v->is_null()) return def;
  if (!v->is_string()) fail(key, "expected a string, got " + describe(*v));
  return v->get<std::string>();
}

double Fields::num(const std::string& key) const {
  auto v = opt_num(key);
  if (!v) fail(key, at(key) ? "expected a number, got null" : "missing");
  return *v;
}

std::optional<double> Fields::opt_num(const std::string& key) const {
  const json* v = at(key);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_number()) fail(key, "expected a number, got " + describe(*v));
  double d = v->get<double>();
  if (!std::isfinite(d)) fail(key, "not a finite number");
  return d;
}

std::optional<std::int64_t> Fields::opt_int(const std::string& key) const {
  const json* v = at(key);
  if (!v || v->is_null()) return std::nullopt;
  if (v->is_number_unsigned()) {
    auto u = v->get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) fail(key, "out of range");
    return static_cast<std::int64_t>(u);
  }
  if (!v->is_number_integer()) fail(key, "expected an integer, got " + describe(*v));
  return v->get<std::int64_t>();
}

std::int64_t Fields::integer(const std::string& key) const {
  auto v = opt_int(key);
  if (!v) fail(key, at(key) ? "expected an integer, got null" : "missing");
  return *v;
}

std::uint64_t Fields::uint(const std::string& key) const {
  std::int64_t v = integer(key);
  if (v < 0) fail(key, "expected a non-negative integer, got " + std::to_string(v));
  return static_cast<std::uint64_t>(v);
}

std::vector<double> Fields::numbers(const std::string& key) const {
  const json* v = at(key);
  if (!v) fail(key, "missing");
  if (!v->is_array()) fail(key, "expected an array of numbers, got " + describe(*v));
  std::vector<double> out;
  out.reserve(v->size());
  for (std::size_t i = 0; i < v->size(); ++i) {
    const json& x = (*v)[i];
    if (!x.is_number()) fail(key + "[" + std::to_string(i) + "]", "expected a number, got " + describe(x));
    const double d = x.get<double>();
    if (!std::isfinite(d)) fail(key + "[" + std::to_string(i) + "]", "not a finite number");
    out.push_back(d);
  }
  return out;
}

bool Fields::boolean(const std::string& key) const {
  const json* v = at(key);
  if (!v) fail(key, "missing");
  if (!v->is_boolean()) fail(key, "expected true or false, got " + describe(*v));
  return v->get<bool>();
}

bool Fields::boolean_or(const std::string& key, bool def) const {
  return has(key) ? boolean(key) : def;
}

std::vector<std::string> Fields::strings(const std::string& key) const {
  const json* v = at(key);
  std::vector<std::string> out;
  if (!v || v->is_null()) return out;
  if (!v->is_array()) fail(key, "expected an array of strings, got " + describe(*v));
  for (std::size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_string())
      fail(key + "[" + std::to_string(i) + "]", "expected a string, got " + describe((*v)[i]));
    out.push_back((*v)[i].get<std::string>());
  }
  return out;
}

std::vector<Finding> findings_from(const Fields& parent, const std::string& key) {
  std::vector<Finding> out;
  for (const auto& f : parent.array(key)) {
    Finding x;
    x.id = f.str("id");
    const std::string sev = f.str("severity");
    try {
      x.severity = severity_from_string(sev);
    } catch (const Error&) {
      f.fail("severity", "expected ok, info, warn or fail, got \"" + sev + "\"");
    }
    x.subject = f.str_or("subject", "");
    x.message = f.str_or("message", "");
    x.evidence = f.str_or("evidence", "");
    x.remedy = f.str_or("remedy", "");
    x.docs = f.str_or("docs", "");
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace fabscope::core
