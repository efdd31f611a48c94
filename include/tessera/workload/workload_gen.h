// A workload generator after MIG-serving's simulation workloads (section 8:
// normal-1, normal-2, lognormal-1, lognormal-2): many DNN services whose
// request rates are drawn from a normal or a lognormal distribution, all with
// one latency SLO (100 ms by default), sized so a cluster needs hundreds of
// GPUs. The paper gives neither its distributions' parameters nor its seeds;
// WorkloadPresets() are Tessera's stand-ins, sized against the parva planner.
//
// Thread-safety: free functions of their arguments; the presets are immutable
// static data.
#ifndef TESSERA_WORKLOAD_GEN_H_
#define TESSERA_WORKLOAD_GEN_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tessera/scenario.h"
#include "tessera/status.h"

namespace tessera {

// rate_rps ~ Normal(mean_rps, sd_rps^2).
struct NormalRates {
  double mean_rps = 0;  // finite, in (0, limits::kRateRps.max] = (0, 1e7]
  double sd_rps = 0;    // finite, in [0, 1e7]
};

// ln(rate_rps) ~ Normal(mu, sigma^2): the median rate is exp(mu) rps.
struct LognormalRates {
  double mu = 0;     // finite, in [-50, ln 1e7 = 16.118...]: the median within the rate limit
  double sigma = 0;  // finite, in [0, 10]
};

using RateDistribution = std::variant<NormalRates, LognormalRates>;

// Rates are rounded to whole requests per second and never fall below this
// (a normal draw can be negative, a lognormal one tiny, and a service needs a
// rate > 0) nor rise above limits::kRateRps.max (input_limits.h).
inline constexpr double kMinGeneratedRateRps = 1;

struct WorkloadGenOptions {
  std::string name;   // the scenario's name; may be empty
  int services = 24;  // in limits::kServices = [1, 100000]; MIG-serving generates 24 models' rates
  RateDistribution rates = NormalRates{100, 30};
  double slo_ms = 100;  // every service's latency SLO, in limits::kSloMs
  // The models, assigned in turn: service k (0-based) runs
  // models[k % models.size()], so each model gets an equal share (one more
  // for the first few) and changing the models leaves every rate unchanged.
  // A model listed twice gets a double share. Names go through
  // CanonicalModelName and need not have a builtin model card (plan such a
  // workload with profiles of your own); none may be empty, hold a
  // control character or be invalid UTF-8. Empty = every builtin model
  // card, in card order (the models of the embedded profiles).
  std::vector<std::string> models;
  std::string gpu = "a100-80gb";  // catalog name, any case; empty = not given
  std::uint64_t seed = 1;

  // An error whose message starts with the first bad field ("services: ",
  // "rates: ", "slo_ms: ", "models[2]: ", "gpu: "): InvalidArgument, or
  // NotFound for a gpu not in the catalog.
  Status Validate() const;
};

// The scenario of `options`: services named "<model>-NNN" (NNN = k + 1, three
// digits or more), each drawing one standard normal z in service order:
// rate = mean_rps + sd_rps z, or exp(mu + sigma z); then rounded to whole
// rps, at least kMinGeneratedRateRps and at most limits::kRateRps.max. The draws use Box-Muller on
// raw std::mt19937_64 output, not std::normal_distribution (whose algorithm each standard library
// picks), and the rounding absorbs last-bit differences of std::log / std::cos between math
// libraries (unless a draw lands within an ulp of a half): a seed gives the same scenario
// everywhere. The gpu is stored as the catalog spells it. Errors: Validate's.
Result<Scenario> GenerateWorkload(const WorkloadGenOptions& options);

// A named workload: `tessera gen --preset NAME`.
struct WorkloadPreset {
  std::string name;            // "normal-1", "normal-2", "lognormal-1", "lognormal-2"
  WorkloadGenOptions options;  // options.name == name
};

// MIG-serving's four simulation workloads, in the paper's order. Each needs a
// few hundred A100-80GB GPUs under the parva planner; each "-2" is bigger and
// more spread than its "-1".
std::span<const WorkloadPreset> WorkloadPresets();

}  // namespace tessera

#endif  // TESSERA_WORKLOAD_GEN_H_
