// Arrivals: when each service's requests reach the router, in simulated
// seconds. One ArrivalStream per service, each drawing from its own seeded
// random generator, so a run is reproducible and services are independent.
//
// Processes (for a mean rate R):
//  * poisson: exponential gaps with mean 1/R;
//  * constant: one request every 1/R s, the first at 1/(2R);
//  * bursty: a two-state Markov-modulated Poisson process (on/off): Poisson
//    at R / on_share while "on", silent while "off"; exponential on and off
//    periods with means on_s and on_s x (1 - on_share) / on_share, so the
//    long-run mean stays R;
//  * trace: the given timestamps (seconds, ascending).
//
// Thread-safety: an ArrivalStream is used by one thread.
#ifndef TESSERA_ARRIVALS_H_
#define TESSERA_ARRIVALS_H_

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tessera/status.h"

namespace tessera {

enum class ArrivalKind { kPoisson, kConstant, kBursty, kTrace };

struct BurstShape {
  double on_share = 0.5;  // long-run share of time "on", in (0, 1]
  double on_s = 1.0;      // mean length of an "on" period, > 0

  // InvalidArgument unless 0 < on_share <= 1 and on_s > 0.
  Status Validate() const;
};

class ArrivalStream {
 public:
  // A stream of `kind` (not kTrace) at `rate_rps` > 0, seeded by `seed`.
  ArrivalStream(ArrivalKind kind, double rate_rps, const BurstShape& burst, std::uint64_t seed);
  // A stream replaying `times_s` (ascending, >= 0).
  explicit ArrivalStream(std::vector<double> times_s);

  // The next arrival time (s), strictly after the previous one for random
  // kinds; +infinity once a trace is exhausted.
  double Next();

 private:
  double NextBursty();

  ArrivalKind kind_;
  double rate_ = 0;
  BurstShape burst_;
  std::mt19937_64 rng_;
  double now_ = 0;
  bool on_ = true;
  double phase_end_ = 0;  // bursty: when the current on/off period ends
  std::vector<double> trace_;
  size_t next_ = 0;
};

// Reads a trace CSV with header `service,time_s` (one request per row, any
// order); returns each service's times sorted. Errors name file, line and
// field: a missing header, a time that is not a finite number >= 0, an empty
// service name, an empty file.
Result<std::map<std::string, std::vector<double>>> LoadArrivalTrace(const std::string& path);

}  // namespace tessera

#endif  // TESSERA_ARRIVALS_H_
