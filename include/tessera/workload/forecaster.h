// Forecaster: a service's request rate over the next minutes, from the
// minutes seen so far (docs/autoscale.md). The autoscaler plans for the
// highest forecast over its lead window.
//
// Built in (BuiltinForecasters(), by name):
//  * last: the last minute seen, flat;
//  * holt: Holt's linear trend (double exponential smoothing, level alpha 0.3,
//    trend beta 0.1, over the last two hours seen), extrapolated;
//  * holt-fast: the same with level alpha 0.5 and trend beta 0.5: a turn of
//    the load (a falling rate rising again) moves its forecast within a few
//    minutes, and so does noise;
//  * seasonal: seasonal naive with the level corrected: the same minute of
//    the previous day, times the ratio of the last 15 minutes seen to the
//    same 15 minutes of the previous day (the caller gives that day: `tessera
//    autoscale --season`, or the day itself when it repeats).
// Forecasts are at least 0.
//
// Thread-safety: a Forecaster is immutable after creation; Forecast is const.
#ifndef TESSERA_WORKLOAD_FORECASTER_H_
#define TESSERA_WORKLOAD_FORECASTER_H_

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "tessera/registry.h"

namespace tessera {

class Forecaster {
 public:
  virtual ~Forecaster() = default;
  virtual std::string_view Name() const = 0;
  // The rates of minutes seen.size() .. seen.size() + ahead - 1, given the
  // rates of minutes 0 .. seen.size() - 1 (`seen`, at least one) and the
  // previous day's rates (`season`, minute by minute from the same origin;
  // may be empty: then a seasonal forecaster falls back to `last`).
  virtual std::vector<double> Forecast(std::span<const double> seen, std::span<const double> season,
                                       int ahead) const = 0;
};

using ForecasterRegistry = NamedRegistry<Forecaster>;
const ForecasterRegistry& BuiltinForecasters();

}  // namespace tessera

#endif  // TESSERA_WORKLOAD_FORECASTER_H_
