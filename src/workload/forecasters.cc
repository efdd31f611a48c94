#include <algorithm>
#include <numeric>

#include "tessera/workload/forecaster.h"

namespace tessera {
namespace {

std::vector<double> Flat(double value, int ahead) {
  return std::vector<double>(static_cast<size_t>(std::max(ahead, 0)), std::max(value, 0.0));
}

class LastForecaster : public Forecaster {
 public:
  std::string_view Name() const override { return "last"; }
  std::vector<double> Forecast(std::span<const double> seen, std::span<const double>,
                               int ahead) const override {
    return Flat(seen.back(), ahead);
  }
};

class HoltForecaster : public Forecaster {
 public:
  std::string_view Name() const override { return "holt"; }
  std::vector<double> Forecast(std::span<const double> seen, std::span<const double>,
                               int ahead) const override {
    constexpr double kAlpha = 0.3;
    constexpr double kBeta = 0.1;
    constexpr size_t kWindow = 120;
    const size_t first = seen.size() > kWindow ? seen.size() - kWindow : 0;
    double level = seen[first];
    double trend = 0;
    for (size_t m = first + 1; m < seen.size(); ++m) {
      const double previous = level;
      level = kAlpha * seen[m] + (1 - kAlpha) * (level + trend);
      trend = kBeta * (level - previous) + (1 - kBeta) * trend;
    }
    std::vector<double> out;
    for (int k = 1; k <= ahead; ++k) out.push_back(std::max(level + k * trend, 0.0));
    return out;
  }
};

class SeasonalForecaster : public Forecaster {
 public:
  std::string_view Name() const override { return "seasonal"; }
  std::vector<double> Forecast(std::span<const double> seen, std::span<const double> season,
                               int ahead) const override {
    if (season.empty()) return Flat(seen.back(), ahead);
    constexpr size_t kLevelWindow = 15;
    const size_t n = season.size();
    const size_t now = seen.size();
    const size_t first = now > kLevelWindow ? now - kLevelWindow : 0;
    double recent = 0;
    double before = 0;
    for (size_t m = first; m < now; ++m) {
      recent += seen[m];
      before += season[m % n];
    }
    const double ratio = before > 0 ? recent / before : 1;
    std::vector<double> out;
    for (int k = 0; k < ahead; ++k) out.push_back(std::max(season[(now + k) % n] * ratio, 0.0));
    return out;
  }
};

ForecasterRegistry MakeBuiltins() {
  ForecasterRegistry r("forecaster");
  r.MustRegister("last", "the last minute seen, flat",
                 [] { return std::make_unique<LastForecaster>(); });
  r.MustRegister("holt", "Holt's linear trend over the last two hours, extrapolated",
                 [] { return std::make_unique<HoltForecaster>(); });
  r.MustRegister("seasonal",
                 "the previous day's same minutes, scaled by the last 15 minutes against the "
                 "same 15 of the previous day",
                 [] { return std::make_unique<SeasonalForecaster>(); });
  return r;
}

}  // namespace

const ForecasterRegistry& BuiltinForecasters() {
  static const ForecasterRegistry registry = MakeBuiltins();
  return registry;
}

}  // namespace tessera
