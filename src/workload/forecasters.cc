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

// Holt's linear trend (double exponential smoothing) over the last two
// hours seen: `alpha` weighs the last minute into the level, `beta` the last
// change of level into the trend.
class HoltForecaster : public Forecaster {
 public:
  HoltForecaster(std::string_view name, double alpha, double beta)
      : name_(name), alpha_(alpha), beta_(beta) {}
  std::string_view Name() const override { return name_; }
  std::vector<double> Forecast(std::span<const double> seen, std::span<const double>,
                               int ahead) const override {
    constexpr size_t kWindow = 120;
    const size_t first = seen.size() > kWindow ? seen.size() - kWindow : 0;
    double level = seen[first];
    double trend = 0;
    for (size_t m = first + 1; m < seen.size(); ++m) {
      const double previous = level;
      level = alpha_ * seen[m] + (1 - alpha_) * (level + trend);
      trend = beta_ * (level - previous) + (1 - beta_) * trend;
    }
    std::vector<double> out;
    for (int k = 1; k <= ahead; ++k) out.push_back(std::max(level + k * trend, 0.0));
    return out;
  }

 private:
  std::string_view name_;
  double alpha_;
  double beta_;
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
                 [] { return std::make_unique<HoltForecaster>("holt", 0.3, 0.1); });
  r.MustRegister("holt-fast",
                 "holt weighing the last minutes more (level 0.5, trend 0.5): turns with the "
                 "load sooner and follows its noise more",
                 [] { return std::make_unique<HoltForecaster>("holt-fast", 0.5, 0.5); });
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
