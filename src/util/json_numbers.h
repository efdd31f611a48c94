// How Tessera writes numbers in JSON, shared by every JSON it emits so that
// all of them read alike.
#ifndef TESSERA_UTIL_JSON_NUMBERS_H_
#define TESSERA_UTIL_JSON_NUMBERS_H_

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>

namespace tessera {

// A double as JSON: integral values as integers (829, not 829.0), so that
// hand-written and generated files read alike. JSON has no NaN or infinity:
// those become null.
inline nlohmann::ordered_json JsonNumber(double v) {
  constexpr double kExactInt = 9007199254740992.0;  // 2^53
  if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < kExactInt) {
    return static_cast<int64_t>(v);
  }
  return v;
}

// A measurement, rounded to 4 decimal places so that float noise does not
// reach diffs (1288.8999999999 prints as 1288.9); no "-0".
inline nlohmann::ordered_json JsonMeasurement(double v) {
  if (std::isfinite(v) && std::fabs(v) < 1e15) v = std::round(v * 1e4) / 1e4;
  return JsonNumber(v == 0 ? 0.0 : v);
}

}  // namespace tessera

#endif  // TESSERA_UTIL_JSON_NUMBERS_H_
