// Simulate (simulator.h) with each service's requests also reported by the
// window of time their arrival falls in: what SimulateTransition reports
// phase by phase. Internal to src/simulate.
#ifndef TESSERA_SRC_SIMULATE_WINDOWED_SIMULATION_H_
#define TESSERA_SRC_SIMULATE_WINDOWED_SIMULATION_H_

#include <vector>

#include "tessera/simulator.h"
#include "tessera/status.h"

namespace tessera {

struct WindowedSimReport {
  SimReport overall;  // as Simulate reports the run
  // Per window, per service (model order): the requests arriving in it;
  // offered and achieved rates per second of the window, achieved counting
  // the requests served by the window's end.
  std::vector<std::vector<ServiceReport>> windows;
};

// Window w covers arrivals in [bounds[w], bounds[w + 1]), the last one its
// end too. Fewer than two bounds: no windows (Simulate). REQUIRES: `bounds`
// ascending. Errors as Simulate's.
Result<WindowedSimReport> SimulateWindows(const ServingModel& model, const SimOptions& options,
                                          const std::vector<double>& bounds);

}  // namespace tessera

#endif  // TESSERA_SRC_SIMULATE_WINDOWED_SIMULATION_H_
