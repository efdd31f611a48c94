// Typed, strict access to a parsed JSON document, shared by Tessera's JSON
// parsers (deployment JSON, transition JSON): every error is InvalidArgument
// "<source>: <path>: <what>", e.g. "t.json: phases[1].steps[0].batch:
// expected an integer, got 4.5". Keys() rejects unknown keys (typos are never
// ignored) and reports missing ones; the value readers check the type, then
// the range (input_limits.h). Parse the text with CheckJsonStructure first
// (util/json_structure.h): DescribeJson and the readers recurse.
//
// Thread-safety: a JsonReader is immutable after construction.
#ifndef TESSERA_UTIL_JSON_READER_H_
#define TESSERA_UTIL_JSON_READER_H_

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

#include "tessera/status.h"
#include "tessera/util/input_limits.h"

namespace tessera {

// `value` as JSON text for a message, shortened to 60 bytes plus "...".
std::string DescribeJson(const nlohmann::json& value);

// "path.key", or "key" at the root (path "").
std::string JoinJsonPath(const std::string& path, std::string_view key);

class JsonReader {
 public:
  using Json = nlohmann::json;

  // `source` names the document in errors; it must outlive the reader.
  explicit JsonReader(std::string_view source) : source_(source) {}

  // InvalidArgument "<source>: <path or (root)>: <what>".
  Status Error(const std::string& path, std::string_view what) const;

  // `j` is an object holding every key of `required`, and no key outside
  // `required` and `optional`.
  Status Keys(const Json& j, const std::string& path, std::span<const std::string_view> required,
              std::span<const std::string_view> optional = {}) const;

  // The readers below take `j[key]`. REQUIRES: `j` is an object (Keys()).
  Result<std::string> String(const Json& j, const std::string& path, std::string_view key,
                             bool non_empty) const;
  // An integer in [min, INT_MAX].
  Result<int> Int(const Json& j, const std::string& path, std::string_view key, int min) const;
  // A finite number; >= 0 unless `any_sign`.
  Result<double> Number(const Json& j, const std::string& path, std::string_view key,
                        bool any_sign = false) const;
  // A number in `range`.
  Result<double> In(const Json& j, const std::string& path, std::string_view key,
                    const InputRange& range) const;
  // An integer in `range`.
  Result<int> IntIn(const Json& j, const std::string& path, std::string_view key,
                    const InputRange& range) const;
  Status Array(const Json& j, const std::string& path, std::string_view key) const;
  Result<bool> Bool(const Json& j, const std::string& path, std::string_view key) const;

 private:
  std::string_view source_;
};

}  // namespace tessera

#endif  // TESSERA_UTIL_JSON_READER_H_
