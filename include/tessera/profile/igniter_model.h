// The iGniter performance model: how fast DNN inference workloads run when
// they share one whole GPU through MPS, each limited to a share of the SMs
// (its "resource", MPS active-thread percentage), and how much they slow each
// other down (Xu et al., "iGniter", IEEE TPDS 34(3), 2023, section 3.1).
//
// For n workloads co-located on a GPU, workload i running batch b_i at
// resource r_i (%):
//   t_act_i  = (k1 b^2 + k2 b + k3) / (r + k4) + k5        solo active time, ms
//   x_i      = 1000 b_i / t_act_i                          solo "ability"
//   power    = p_idle + sum_i (power_coef . [x_i, 1])      W
//   l2_i     = cache_coef . [x_i, 1]                       L2 utilisation
//   f        = F, or alpha_f (power - P) + F when power > P (clock drop, MHz)
//   idle_i   = n_k (alpha_sch n + beta_sch) + k_sch         (the first term only for n >= 2)
//   gpu_i    = (idle_i + t_act_i (1 + alpha_cache sum_{j != i} l2_j)) / (f / F)
//   latency  = gpu_i + b_i (d_load + d_feedback) / B_pcie  ms
//   throughput = 1000 b_i / (gpu_i + b_i d_feedback / B_pcie)  requests/s
// This is the public artifact's predict() (icloud-ecnu/igniter), which
// differs from the paper where docs/igniter-planner.md says so: power and L2
// come from the solo ability x_i, and throughput overlaps the input copy.
//
// Coefficients are JSON (the form of shared/data/igniter/derived/
// fitted_coefficients_v100.json): one object per model with n_k, k_sch_ms,
// d_load, d_feedback (bytes per request), k (5 numbers), alpha_cache,
// power_coef and cache_coef ([slope, intercept]); and "hardware" with F, P,
// p_idle, unit, B_pcie (bytes per ms), alpha_f, alpha_sch, beta_sch and an
// optional "gpu" (the catalog name of the GPU profiled).
//
// Thread-safety: values and pure functions.
#ifndef TESSERA_IGNITER_MODEL_H_
#define TESSERA_IGNITER_MODEL_H_

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/status.h"

namespace tessera {

struct MpsHardware {
  std::string gpu;               // catalog name of the GPU profiled; may be empty
  double max_frequency_mhz = 0;  // F
  double power_cap_w = 0;        // P
  double idle_power_w = 0;       // p_idle
  double unit_pct = 2.5;         // resource step (%), 100 / (SMs / 2)
  double pcie_bytes_per_ms = 0;  // B_pcie
  double alpha_f = 0;            // MHz per W above the cap (negative)
  double alpha_sch = 0;          // extra idle per kernel, per co-located workload, ms
  double beta_sch = 0;           // its intercept, ms
};

struct WorkloadCoefficients {
  std::string model;              // canonical model name
  int kernels = 0;                // n_k, kernels per inference
  double sched_ms = 0;            // k_sch: solo idle (scheduling) time per batch
  double load_bytes = 0;          // d_load, input bytes per request
  double feedback_bytes = 0;      // d_feedback, output bytes per request
  std::array<double, 5> k{};      // active-time coefficients k1..k5
  double alpha_cache = 0;         // slowdown per unit of co-runners' L2 utilisation
  std::array<double, 2> power{};  // [slope, intercept] of power above idle vs ability
  std::array<double, 2> cache{};  // [slope, intercept] of L2 utilisation vs ability

  // Solo active time (ms) of a batch at `resource_pct`.
  double ActiveMs(int batch, double resource_pct) const;
};

struct MpsCoefficients {
  MpsHardware hardware;
  std::vector<WorkloadCoefficients> workloads;  // file order

  // The coefficients of `model` (canonical name), or nullptr.
  const WorkloadCoefficients* Find(std::string_view model) const;
};

// Parses coefficients JSON; `source` names the file in messages. Errors
// (InvalidArgument "<source>: field '<model>.<field>': <what>", or
// "<source>:<line>:<column>: JSON syntax error: ..."): not an object, no
// "hardware" or no model, a missing or non-numeric field, k not 5 numbers,
// coefficient pairs not 2, a number outside its range of input_limits.h
// (F in kFrequencyMhz, P in kPowerW, p_idle in kIdlePowerW, unit in kUnitPct,
// B_pcie in kPcieBytesPerMs, n_k in kKernels, k_sch_ms in kSchedMs, byte
// counts in kRequestBytes, every other coefficient in kCoefficient). Model
// keys go through CanonicalModelName.
Result<MpsCoefficients> ParseMpsCoefficientsJson(std::string_view text, std::string_view source);
// Ok iff every number of `coefficients` lies in its range of input_limits.h
// (as ParseMpsCoefficientsJson requires); otherwise InvalidArgument
// "field '<model>.<field>': <what>" (e.g. for coefficients fitted or built
// in code, so that what is written reads back).
Status ValidateMpsCoefficients(const MpsCoefficients& coefficients);
// Reads and parses a coefficients file (NotFound / IoError when unreadable).
Result<MpsCoefficients> LoadMpsCoefficients(const std::string& path);
// The coefficients as JSON in the form above, numbers written so that they
// read back exactly.
std::string FormatMpsCoefficientsJson(const MpsCoefficients& coefficients);

// One workload of a GPU, as the model sees it.
struct Colocated {
  const WorkloadCoefficients* workload = nullptr;
  int batch = 1;
  double resource_pct = 0;
};

// Where the coefficients predict a time <= 0 or not finite (outside the
// batches and resources they were fitted on), the workload cannot run so:
// gpu_ms and latency_ms are +infinity and throughput_rps is 0.
struct Prediction {
  double gpu_ms = 0;          // GPU time of a batch, interference and clock included
  double latency_ms = 0;      // gpu_ms plus the batch's PCIe transfers
  double throughput_rps = 0;  // requests per second the process sustains
};

// The prediction for every workload of one GPU, in `gpu`'s order.
// REQUIRES: every workload non-null, batch >= 1, resource_pct > 0.
std::vector<Prediction> PredictColocated(const MpsHardware& hardware,
                                         std::span<const Colocated> gpu);

// The prediction for `workload` alone on its GPU (no neighbours).
Prediction PredictAlone(const MpsHardware& hardware, const WorkloadCoefficients& workload,
                        int batch, double resource_pct);

// Theorem 1: the batch that just keeps up with `rate_rps` within
// `budget_ms`, and the least resource (a multiple of the unit) meeting the
// budget at that batch when running alone, ignoring interference. A batch
// above limits::kBatch does not fit one GPU (batch = kBatch.max, fits false).
struct ResourceLowerBound {
  int batch = 1;
  double resource_pct = 0;
  // False when no resource up to 100% meets the budget at that batch (the
  // workload needs more than one GPU, or cannot meet its SLO at all).
  bool fits = true;
};
ResourceLowerBound LowerBoundOf(const MpsHardware& hardware, const WorkloadCoefficients& workload,
                                double budget_ms, double rate_rps);

// The largest batch whose solo latency on the whole GPU meets `budget_ms`
// (searched up to `max_batch`), or nullopt when batch 1 misses it.
std::optional<int> LargestSoloBatch(const MpsHardware& hardware,
                                    const WorkloadCoefficients& workload, double budget_ms,
                                    int max_batch = 1024);

}  // namespace tessera

#endif  // TESSERA_IGNITER_MODEL_H_
