// InputRange (input_limits.h): the predicate and the words of a range.
#include "tessera/util/input_limits.h"

#include <fmt/format.h>

#include <cmath>

namespace tessera {

bool InputRange::Contains(double value) const {
  if (!std::isfinite(value) || value > max) return false;
  if (min_open ? !(value > min) : !(value >= min)) return false;
  return !integer || value == std::floor(value);
}

std::string InputRange::Describe() const {
  return fmt::format("{} in {}{:g}, {:g}]", integer ? "an integer" : "a finite number",
                     min_open ? "(" : "[", min, max);
}

std::string OutOfRange(const InputRange& range, std::string_view got) {
  return fmt::format("must be {}, got {}", range.Describe(), got);
}

std::string OutOfRange(const InputRange& range, double got) {
  return OutOfRange(range, fmt::format("{:g}", got));
}

}  // namespace tessera
