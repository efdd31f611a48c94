#include "util/json_reader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>

#include "tessera/util/text_io.h"

namespace tessera {

std::string DescribeJson(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 60) text = text.substr(0, 60) + "...";
  return text;
}

std::string JoinJsonPath(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

Status JsonReader::Error(const std::string& path, std::string_view what) const {
  return Status::InvalidArgument(
      fmt::format("{}: {}: {}", source_, path.empty() ? "(root)" : EscapeForMessage(path), what));
}

Status JsonReader::Keys(const Json& j, const std::string& path,
                        std::span<const std::string_view> required,
                        std::span<const std::string_view> optional) const {
  if (!j.is_object()) return Error(path, "expected an object, got " + DescribeJson(j));
  for (const auto& [key, value] : j.items()) {
    if (std::find(required.begin(), required.end(), key) == required.end() &&
        std::find(optional.begin(), optional.end(), key) == optional.end()) {
      const std::string known =
          fmt::format("{}", fmt::join(required, ", ")) +
          (optional.empty() ? "" : fmt::format(", {}", fmt::join(optional, ", ")));
      return Error(JoinJsonPath(path, key), fmt::format("unknown key (expected: {})", known));
    }
  }
  for (std::string_view key : required) {
    if (!j.contains(key)) return Error(JoinJsonPath(path, key), "missing");
  }
  return Status::Ok();
}

Result<std::string> JsonReader::String(const Json& j, const std::string& path, std::string_view key,
                                       bool non_empty) const {
  const Json& v = j[key];
  if (!v.is_string()) {
    return Error(JoinJsonPath(path, key), "expected a string, got " + DescribeJson(v));
  }
  if (non_empty && v.get_ref<const std::string&>().empty()) {
    return Error(JoinJsonPath(path, key), "must not be empty");
  }
  return v.get<std::string>();
}

Result<int> JsonReader::Int(const Json& j, const std::string& path, std::string_view key,
                            int min) const {
  const Json& v = j[key];
  if (!v.is_number_integer()) {
    return Error(JoinJsonPath(path, key), "expected an integer, got " + DescribeJson(v));
  }
  // Non-negative integers are stored unsigned; clamp before comparing.
  const int64_t x = v.is_number_unsigned()
                        ? static_cast<int64_t>(std::min<uint64_t>(v.get<uint64_t>(), INT64_MAX))
                        : v.get<int64_t>();
  if (x < min || x > INT_MAX) {
    return Error(JoinJsonPath(path, key), fmt::format("must be an integer in [{}, {}], got {}", min,
                                                      INT_MAX, DescribeJson(v)));
  }
  return static_cast<int>(x);
}

Result<double> JsonReader::Number(const Json& j, const std::string& path, std::string_view key,
                                  bool any_sign) const {
  const Json& v = j[key];
  if (!v.is_number()) {
    return Error(JoinJsonPath(path, key), "expected a number, got " + DescribeJson(v));
  }
  const double d = v.get<double>();
  if (!std::isfinite(d) || (!any_sign && d < 0)) {
    return Error(JoinJsonPath(path, key), fmt::format("must be a finite number{}, got {}",
                                                      any_sign ? "" : " >= 0", DescribeJson(v)));
  }
  return d;
}

Result<double> JsonReader::In(const Json& j, const std::string& path, std::string_view key,
                              const InputRange& range) const {
  const Json& v = j[key];
  if (!v.is_number()) {
    return Error(JoinJsonPath(path, key), "expected a number, got " + DescribeJson(v));
  }
  const double d = v.get<double>();
  if (!range.Contains(d)) return Error(JoinJsonPath(path, key), OutOfRange(range, DescribeJson(v)));
  return d;
}

Result<int> JsonReader::IntIn(const Json& j, const std::string& path, std::string_view key,
                              const InputRange& range) const {
  if (!j[key].is_number_integer()) {
    return Error(JoinJsonPath(path, key), "expected an integer, got " + DescribeJson(j[key]));
  }
  TESSERA_ASSIGN_OR_RETURN(const double d, In(j, path, key, range));
  return static_cast<int>(d);
}

Status JsonReader::Array(const Json& j, const std::string& path, std::string_view key) const {
  if (!j[key].is_array()) {
    return Error(JoinJsonPath(path, key), "expected an array, got " + DescribeJson(j[key]));
  }
  return Status::Ok();
}

Result<bool> JsonReader::Bool(const Json& j, const std::string& path, std::string_view key) const {
  const Json& v = j[key];
  if (!v.is_boolean()) {
    return Error(JoinJsonPath(path, key), "expected true or false, got " + DescribeJson(v));
  }
  return v.get<bool>();
}

}  // namespace tessera
