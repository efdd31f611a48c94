// Fitting the iGniter model's coefficients (igniter_model.h) from profiling
// samples, so that users can plan on GPUs they profiled themselves.
//
// Samples are a long-form CSV, one measurement per row, header exactly
//   model,quantity,batch,resource_pct,value
// Blank lines and lines starting with '#' are skipped; LF or CRLF line ends;
// no quoting (every ',' separates); fields are trimmed of spaces and tabs.
// Per-model curve samples (batch a whole number >= 1, 0 < resource_pct <= 100):
//   active_ms   solo active GPU time of one batch at full clock, ms (> 0)
//   power_w     GPU power above idle while running alone, W
//   l2_pct      L2 utilisation while running alone, %
// Per-model constants (batch and resource_pct empty, each at most once):
//   kernels (n_k, a whole number > 0), sched_ms (k_sch, >= 0),
//   load_bytes (d_load, >= 0), feedback_bytes (d_feedback, >= 0), alpha_cache
// Hardware constants (model column `hardware`, batch and resource_pct empty,
// each at most once): F (> 0), P (> 0), p_idle (>= 0), unit (> 0),
// B_pcie (> 0), alpha_f, alpha_sch, beta_sch.
// Example:
//   model,quantity,batch,resource_pct,value
//   resnet50,active_ms,1,10,7.5401
//   resnet50,power_w,1,10,26.1
//   resnet50,kernels,,,80
//   hardware,F,,,1530
// Model names go through CanonicalModelName; a curve sample may be repeated
// (every repetition counts in the fit).
//
// The fit, per model with active_ms samples: k1..k5 of
//   t_act(b, r) = (k1 b^2 + k2 b + k3) / (r + k4) + k5
// minimising the sum of squared RELATIVE residuals (t_act - t) / t: the times
// span two orders of magnitude and profiling noise is multiplicative, so
// plain residuals would let the largest batches decide the fit alone. For a
// fixed k4 the model is linear in k1, k2, k3, k5 (solved by Householder QR);
// k4 is searched in (-min r, 1000] by a log grid and golden-section
// refinement. It needs at least 6 active_ms samples, 3 distinct batches and 3
// distinct resources (fewer cannot pin down the b^2 term and k4). Then
// power_coef = [slope, intercept] of power_w against the ability
// x = 1000 b / t_act(b, r) of the fitted curve, cache_coef the same with
// l2_pct, each by linear least squares (at least 2 samples with distinct x).
//
// Thread-safety: values and pure functions.
#ifndef TESSERA_IGNITER_FIT_H_
#define TESSERA_IGNITER_FIT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/profile/igniter_model.h"
#include "tessera/status.h"

namespace tessera {

// One curve measurement: `value` at (batch, resource_pct), from CSV `line`.
struct CurveSample {
  int batch = 1;
  double resource_pct = 0;
  double value = 0;
  int line = 0;
};

// Everything the CSV says about one model. An empty optional or vector means
// the CSV did not give it.
struct ModelSamples {
  std::string model;  // canonical name
  std::vector<CurveSample> active_ms;
  std::vector<CurveSample> power_w;
  std::vector<CurveSample> l2_pct;
  std::optional<double> kernels;  // a whole number > 0 when given
  std::optional<double> sched_ms;
  std::optional<double> load_bytes;
  std::optional<double> feedback_bytes;
  std::optional<double> alpha_cache;

  // Number of curve samples of all three quantities.
  size_t CurveSampleCount() const { return active_ms.size() + power_w.size() + l2_pct.size(); }
};

// The hardware constants the CSV gives (MpsHardware's fields, named as in
// the CSV).
struct HardwareSamples {
  std::optional<double> max_frequency_mhz;  // F
  std::optional<double> power_cap_w;        // P
  std::optional<double> idle_power_w;       // p_idle
  std::optional<double> unit_pct;           // unit
  std::optional<double> pcie_bytes_per_ms;  // B_pcie
  std::optional<double> alpha_f;
  std::optional<double> alpha_sch;
  std::optional<double> beta_sch;
};

struct FitSamples {
  std::string source;                // names the CSV in fit errors
  std::vector<ModelSamples> models;  // in order of first appearance
  HardwareSamples hardware;

  // The samples of `model` (canonical name), or nullptr.
  const ModelSamples* Find(std::string_view model) const;
};

// Parses a samples CSV (format above); `source` names it in messages. Every
// error is InvalidArgument "<source>:<line>: field '<field>': <what>": a
// missing or wrong header, a row without 5 fields, an empty or reserved model
// name ('_' first: the coefficients JSON reads such keys as comments), an
// unknown quantity, a value that is not a finite number or out of its range,
// batch or resource_pct given for a constant or missing / out of range for a
// curve sample, a constant given twice, or no data row at all. Never crashes,
// whatever the bytes.
Result<FitSamples> ParseFitSamplesCsv(std::string_view text, std::string_view source);

// Fits the coefficients of every model of `samples` (the fit above) and
// merges them with `base` (may be null): the result keeps base's models in
// their order, replaces those the samples fit and appends new ones in sample
// order. A model's constants come from the samples, else from base's model;
// its k, power_coef and cache_coef are fitted when it has active_ms,
// power_w, l2_pct samples, else kept from base's model. The hardware is
// base's with every field the samples give replaced (gpu kept). Errors
// (InvalidArgument, prefixed "<source>: "): a model or hardware field in
// neither the samples nor base (the message lists them all and says to give
// them as CSV rows or in --base), too few or degenerate samples for a fit
// (naming the model), a fitted curve that is not positive where power or L2
// was sampled, no model at all, or a coefficient (given or fitted) outside
// its range of input_limits.h (ValidateMpsCoefficients: what is written
// reads back).
Result<MpsCoefficients> FitMpsCoefficients(const FitSamples& samples, const MpsCoefficients* base);

// Root-mean-square of (ActiveMs(b, r) - t) / t over `samples.active_ms`, as
// a fraction (0.01 = 1%); nullopt when there is no active_ms sample.
std::optional<double> ActiveFitRmsRelativeError(const ModelSamples& samples,
                                                const WorkloadCoefficients& coefficients);

}  // namespace tessera

#endif  // TESSERA_IGNITER_FIT_H_
