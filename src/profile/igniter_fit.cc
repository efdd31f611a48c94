#include "tessera/profile/igniter_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <span>

#include "tessera/profile_table.h"
#include "tessera/util/text_io.h"
#include "util/least_squares.h"

namespace tessera {
namespace {

// ---- The CSV vocabulary -------------------------------------------------------

constexpr std::array<std::string_view, 5> kColumns = {"model", "quantity", "batch", "resource_pct",
                                                      "value"};
constexpr std::string_view kHardwareModel = "hardware";
constexpr double kMaxBatch = 1e6;
constexpr double kMaxKernels = 1e9;

// The range a value must lie in (besides being finite).
enum class Bound { kAny, kNonNegative, kPositive, kWholePositive };

struct CurveQuantity {
  std::string_view name;
  Bound bound;
  std::vector<CurveSample> ModelSamples::*samples;
};

constexpr CurveQuantity kCurves[] = {
    {"active_ms", Bound::kPositive, &ModelSamples::active_ms},
    {"power_w", Bound::kAny, &ModelSamples::power_w},
    {"l2_pct", Bound::kAny, &ModelSamples::l2_pct},
};

struct ModelConstant {
  std::string_view name;
  Bound bound;
  std::optional<double> ModelSamples::*sample;
  void (*apply)(WorkloadCoefficients&, double);
};

// The bounds are those ParseMpsCoefficientsJson checks, so every fitted file
// reads back.
constexpr ModelConstant kModelConstants[] = {
    {"kernels", Bound::kWholePositive, &ModelSamples::kernels,
     [](WorkloadCoefficients& w, double v) { w.kernels = static_cast<int>(v); }},
    {"sched_ms", Bound::kNonNegative, &ModelSamples::sched_ms,
     [](WorkloadCoefficients& w, double v) { w.sched_ms = v; }},
    {"load_bytes", Bound::kNonNegative, &ModelSamples::load_bytes,
     [](WorkloadCoefficients& w, double v) { w.load_bytes = v; }},
    {"feedback_bytes", Bound::kNonNegative, &ModelSamples::feedback_bytes,
     [](WorkloadCoefficients& w, double v) { w.feedback_bytes = v; }},
    {"alpha_cache", Bound::kAny, &ModelSamples::alpha_cache,
     [](WorkloadCoefficients& w, double v) { w.alpha_cache = v; }},
};

struct HardwareConstant {
  std::string_view name;
  Bound bound;
  std::optional<double> HardwareSamples::*sample;
  double MpsHardware::*field;
};

constexpr HardwareConstant kHardwareConstants[] = {
    {"F", Bound::kPositive, &HardwareSamples::max_frequency_mhz, &MpsHardware::max_frequency_mhz},
    {"P", Bound::kPositive, &HardwareSamples::power_cap_w, &MpsHardware::power_cap_w},
    {"p_idle", Bound::kNonNegative, &HardwareSamples::idle_power_w, &MpsHardware::idle_power_w},
    {"unit", Bound::kPositive, &HardwareSamples::unit_pct, &MpsHardware::unit_pct},
    {"B_pcie", Bound::kPositive, &HardwareSamples::pcie_bytes_per_ms,
     &MpsHardware::pcie_bytes_per_ms},
    {"alpha_f", Bound::kAny, &HardwareSamples::alpha_f, &MpsHardware::alpha_f},
    {"alpha_sch", Bound::kAny, &HardwareSamples::alpha_sch, &MpsHardware::alpha_sch},
    {"beta_sch", Bound::kAny, &HardwareSamples::beta_sch, &MpsHardware::beta_sch},
};

std::string KnownQuantities() {
  std::string curves, constants, hardware;
  for (const CurveQuantity& c : kCurves)
    curves += (curves.empty() ? "" : ", ") + std::string(c.name);
  for (const ModelConstant& c : kModelConstants) {
    constants += (constants.empty() ? "" : ", ") + std::string(c.name);
  }
  for (const HardwareConstant& c : kHardwareConstants) {
    hardware += (hardware.empty() ? "" : ", ") + std::string(c.name);
  }
  return fmt::format("curves {}; constants {}; on 'hardware' rows {}", curves, constants, hardware);
}

// ---- Parsing ------------------------------------------------------------------

struct ParseState {
  std::string_view source;
  FitSamples out;
  std::map<std::string, int> constant_lines;  // "<model>,<quantity>" -> line first given
};

ModelSamples& SamplesOf(FitSamples& samples, const std::string& model) {
  for (ModelSamples& m : samples.models) {
    if (m.model == model) return m;
  }
  samples.models.emplace_back();
  samples.models.back().model = model;
  return samples.models.back();
}

Status CheckBound(std::string_view source, int line, std::string_view field, std::string_view text,
                  double v, Bound bound) {
  const std::string got = ", got " + QuoteForMessage(text);
  switch (bound) {
    case Bound::kAny:
      return Status::Ok();
    case Bound::kNonNegative:
      return v >= 0 ? Status::Ok() : FieldError(source, line, field, "must be >= 0" + got);
    case Bound::kPositive:
      return v > 0 ? Status::Ok() : FieldError(source, line, field, "must be > 0" + got);
    case Bound::kWholePositive:
      if (v >= 1 && v <= kMaxKernels && v == std::floor(v)) return Status::Ok();
      return FieldError(source, line, field, "must be a whole number > 0" + got);
  }
  return Status::Ok();
}

Result<double> ParseValue(std::string_view source, int line, std::string_view text, Bound bound) {
  const std::optional<double> v = ToDouble(text);
  if (text.empty()) return FieldError(source, line, "value", "missing");
  if (!v)
    return FieldError(source, line, "value", "expected a number, got " + QuoteForMessage(text));
  if (!std::isfinite(*v)) {
    return FieldError(source, line, "value",
                      "must be a finite number, got " + QuoteForMessage(text));
  }
  TESSERA_RETURN_IF_ERROR(CheckBound(source, line, "value", text, *v, bound));
  return *v;
}

// The canonical model name of the first field. Only printable ASCII: the
// name becomes a JSON key and a word in messages.
Result<std::string> ParseModelName(std::string_view source, int line, std::string_view text) {
  if (text.empty()) return FieldError(source, line, "model", "missing");
  for (char c : text) {
    if (c < 0x20 || c > 0x7e) {
      return FieldError(source, line, "model",
                        "must be printable ASCII, got " + QuoteForMessage(text));
    }
  }
  if (text.front() == '_') {
    return FieldError(source, line, "model",
                      "must not start with '_' (the coefficients JSON reads such keys as "
                      "comments), got " +
                          QuoteForMessage(text));
  }
  return CanonicalModelName(text);
}

// A constant's batch and resource_pct must be empty, and it is given once.
Status CheckConstantRow(ParseState& st, int line, std::string_view model,
                        std::span<const std::string_view> fields) {
  for (size_t i : {size_t{2}, size_t{3}}) {
    if (!fields[i].empty()) {
      return FieldError(st.source, line, kColumns[i],
                        fmt::format("must be empty for the constant {}, got {}",
                                    QuoteForMessage(fields[1]), QuoteForMessage(fields[i])));
    }
  }
  const std::string key = fmt::format("{},{}", model, fields[1]);
  const auto [it, inserted] = st.constant_lines.emplace(key, line);
  if (!inserted) {
    return FieldError(st.source, line, "quantity",
                      fmt::format("{} of {} given twice (first on line {})",
                                  QuoteForMessage(fields[1]), QuoteForMessage(model), it->second));
  }
  return Status::Ok();
}

Result<int> ParseBatch(std::string_view source, int line, std::string_view text) {
  if (text.empty()) return FieldError(source, line, "batch", "missing (a curve sample needs one)");
  const std::optional<double> b = ToDouble(text);
  if (!b || !(*b >= 1 && *b <= kMaxBatch) || *b != std::floor(*b)) {
    return FieldError(source, line, "batch",
                      fmt::format("must be a whole number in 1..{}, got {}",
                                  static_cast<long long>(kMaxBatch), QuoteForMessage(text)));
  }
  return static_cast<int>(*b);
}

Result<double> ParseResource(std::string_view source, int line, std::string_view text) {
  if (text.empty()) {
    return FieldError(source, line, "resource_pct", "missing (a curve sample needs one)");
  }
  const std::optional<double> r = ToDouble(text);
  if (!r || !(*r > 0 && *r <= 100)) {
    return FieldError(source, line, "resource_pct",
                      "must be a number in (0, 100], got " + QuoteForMessage(text));
  }
  return *r;
}

Status ParseCurveRow(ParseState& st, int line, const CurveQuantity& curve, ModelSamples& m,
                     std::span<const std::string_view> fields) {
  TESSERA_ASSIGN_OR_RETURN(const int batch, ParseBatch(st.source, line, fields[2]));
  TESSERA_ASSIGN_OR_RETURN(const double resource, ParseResource(st.source, line, fields[3]));
  TESSERA_ASSIGN_OR_RETURN(const double value, ParseValue(st.source, line, fields[4], curve.bound));
  (m.*curve.samples).push_back({batch, resource, value, line});
  return Status::Ok();
}

Status ParseHardwareRow(ParseState& st, int line, std::span<const std::string_view> fields) {
  for (const HardwareConstant& c : kHardwareConstants) {
    if (fields[1] != c.name) continue;
    TESSERA_RETURN_IF_ERROR(CheckConstantRow(st, line, kHardwareModel, fields));
    TESSERA_ASSIGN_OR_RETURN(st.out.hardware.*c.sample,
                             ParseValue(st.source, line, fields[4], c.bound));
    return Status::Ok();
  }
  return FieldError(st.source, line, "quantity",
                    fmt::format("unknown quantity {} (known: {})", QuoteForMessage(fields[1]),
                                KnownQuantities()));
}

Status ParseModelRow(ParseState& st, int line, const std::string& model,
                     std::span<const std::string_view> fields) {
  for (const CurveQuantity& curve : kCurves) {
    if (fields[1] == curve.name) {
      return ParseCurveRow(st, line, curve, SamplesOf(st.out, model), fields);
    }
  }
  for (const ModelConstant& c : kModelConstants) {
    if (fields[1] != c.name) continue;
    TESSERA_RETURN_IF_ERROR(CheckConstantRow(st, line, model, fields));
    TESSERA_ASSIGN_OR_RETURN(SamplesOf(st.out, model).*c.sample,
                             ParseValue(st.source, line, fields[4], c.bound));
    return Status::Ok();
  }
  const std::string what =
      fields[1].empty() ? std::string("missing") : "unknown quantity " + QuoteForMessage(fields[1]);
  return FieldError(st.source, line, "quantity",
                    fmt::format("{} (known: {})", what, KnownQuantities()));
}

Status ParseRow(ParseState& st, const TextLine& line) {
  const std::vector<std::string_view> fields = SplitCsvFields(line.text);
  if (fields.size() < kColumns.size()) {
    return FieldError(st.source, line.number, kColumns[fields.size()],
                      "missing (a row has 5 fields: model,quantity,batch,resource_pct,value)");
  }
  if (fields.size() > kColumns.size()) {
    return FieldError(
        st.source, line.number, "value",
        fmt::format("expected 5 fields, got {} (no quoting: every ',' separates)", fields.size()));
  }
  TESSERA_ASSIGN_OR_RETURN(const std::string model,
                           ParseModelName(st.source, line.number, fields[0]));
  if (model == kHardwareModel) return ParseHardwareRow(st, line.number, fields);
  return ParseModelRow(st, line.number, model, fields);
}

bool Skipped(std::string_view line) { return IsBlank(line) || Trim(line).starts_with('#'); }

Status CheckHeader(std::string_view source, const TextLine& line) {
  const std::vector<std::string_view> fields = SplitCsvFields(line.text);
  if (std::equal(fields.begin(), fields.end(), kColumns.begin(), kColumns.end())) {
    return Status::Ok();
  }
  return FieldError(
      source, line.number, "header",
      "expected 'model,quantity,batch,resource_pct,value', got " + QuoteForMessage(line.text));
}

// ---- The active-time curve ----------------------------------------------------------

// For a fixed shift s = k4 + min_r > 0, the linear least squares of
// (k1, k2, k3, k5) on relative residuals: row i is divided by t_i.
LeastSquaresSolution<4> LinearFitAt(std::span<const CurveSample> samples, double min_r, double s) {
  std::vector<std::array<double, 4>> a;
  std::vector<double> y;
  a.reserve(samples.size());
  for (const CurveSample& c : samples) {
    const double w = 1 / c.value;
    // (r - min_r) + s rather than r + k4: exact for the sample at min_r.
    const double u = 1 / ((c.resource_pct - min_r) + s);
    const double b = c.batch;
    a.push_back({b * b * u * w, b * u * w, u * w, w});
  }
  y.assign(samples.size(), 1.0);
  return SolveLeastSquares<4>(std::move(a), std::move(y));
}

double ResidualAt(std::span<const CurveSample> samples, double min_r, double s) {
  const LeastSquaresSolution<4> fit = LinearFitAt(samples, min_r, s);
  return fit.full_rank ? fit.residual : std::numeric_limits<double>::infinity();
}

// The minimum of `f` in [lo, hi] by golden-section search, to ~1e-13
// relative: the residual is unimodal within one step of the grid around its
// least value.
template <typename F>
double GoldenSectionMinimum(const F& f, double lo, double hi) {
  const double inv_phi = (std::sqrt(5.0) - 1) / 2;
  double c = hi - inv_phi * (hi - lo), d = lo + inv_phi * (hi - lo);
  double fc = f(c), fd = f(d);
  for (int i = 0; i < 300 && hi - lo > 1e-13 * (lo + hi) / 2; ++i) {
    if (fc <= fd) {
      hi = d, d = c, fd = fc;
      c = hi - inv_phi * (hi - lo), fc = f(c);
    } else {
      lo = c, c = d, fc = fd;
      d = lo + inv_phi * (hi - lo), fd = f(d);
    }
  }
  return fc <= fd ? c : d;
}

// The shift s = k4 + min_r of least residual: a log grid over
// [1e-6 min_r, min_r + 1000] (k4 from just above -min_r to 1000), then
// golden-section refinement between the best point's neighbours.
double BestShift(std::span<const CurveSample> samples, double min_r) {
  constexpr int kGrid = 400;
  const double lo = 1e-6 * min_r, hi = min_r + 1000;
  auto grid = [&](int i) { return lo * std::pow(hi / lo, static_cast<double>(i) / (kGrid - 1)); };
  int best = 0;
  double best_residual = std::numeric_limits<double>::infinity();
  for (int i = 0; i < kGrid; ++i) {
    const double r = ResidualAt(samples, min_r, grid(i));
    if (r < best_residual) best = i, best_residual = r;
  }
  const auto f = [&](double s) { return ResidualAt(samples, min_r, s); };
  const double s =
      GoldenSectionMinimum(f, grid(std::max(best - 1, 0)), grid(std::min(best + 1, kGrid - 1)));
  return f(s) <= best_residual ? s : grid(best);
}

template <typename Key>
size_t CountDistinct(std::span<const CurveSample> samples, Key key) {
  std::set<double> seen;
  for (const CurveSample& c : samples) seen.insert(key(c));
  return seen.size();
}

Result<std::array<double, 5>> FitActiveCurve(std::string_view source, const ModelSamples& m) {
  const std::span<const CurveSample> s(m.active_ms);
  const size_t batches = CountDistinct(s, [](const CurveSample& c) { return c.batch; });
  const size_t resources = CountDistinct(s, [](const CurveSample& c) { return c.resource_pct; });
  if (s.size() < 6 || batches < 3 || resources < 3) {
    return Status::InvalidArgument(fmt::format(
        "{}: model {}: fitting k1..k5 needs at least 6 active_ms samples over 3 distinct "
        "batches and 3 distinct resources, got {} samples, {} batches, {} resources",
        source, QuoteForMessage(m.model), s.size(), batches, resources));
  }
  double min_r = 100;
  for (const CurveSample& c : s) min_r = std::min(min_r, c.resource_pct);
  const double shift = BestShift(s, min_r);
  const LeastSquaresSolution<4> fit = LinearFitAt(s, min_r, shift);
  if (!fit.full_rank) {
    return Status::InvalidArgument(fmt::format(
        "{}: model {}: the active_ms samples do not pin down k1..k5 (degenerate or extreme "
        "values); sample more batches and resources",
        source, QuoteForMessage(m.model)));
  }
  return std::array<double, 5>{fit.x[0], fit.x[1], fit.x[2], shift - min_r, fit.x[3]};
}

// [slope, intercept] of `samples`' values against the ability
// 1000 b / t_act(b, r) of `w`'s active-time curve.
Result<std::array<double, 2>> FitAgainstAbility(std::string_view source, std::string_view quantity,
                                                const std::vector<CurveSample>& samples,
                                                const WorkloadCoefficients& w) {
  std::vector<double> xs;
  for (const CurveSample& c : samples) {
    const double t = w.ActiveMs(c.batch, c.resource_pct);
    if (!(t > 0) || !std::isfinite(t)) {
      return Status::InvalidArgument(fmt::format(
          "{}: model {}: the active-time curve is not positive at batch {}, resource {}% (line "
          "{}), so {} cannot be fitted there; measure active_ms over the range of the {} samples",
          source, QuoteForMessage(w.model), c.batch, c.resource_pct, c.line, quantity, quantity));
    }
    xs.push_back(1000.0 * c.batch / t);
  }
  const auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
  if (xs.size() < 2 || !(*hi - *lo > 1e-9 * std::max(std::abs(*lo), std::abs(*hi)))) {
    return Status::InvalidArgument(
        fmt::format("{}: model {}: fitting {} needs at least 2 samples of different ability "
                    "(batch / active time), got {}",
                    source, QuoteForMessage(w.model), quantity, xs.size()));
  }
  // Centred sums: the abilities are large (hundreds to thousands) and close.
  double mx = 0, my = 0;
  for (size_t i = 0; i < xs.size(); ++i) mx += xs[i], my += samples[i].value;
  mx /= xs.size(), my /= xs.size();
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    sxx += (xs[i] - mx) * (xs[i] - mx);
    sxy += (xs[i] - mx) * (samples[i].value - my);
  }
  const double slope = sxy / sxx;
  return std::array<double, 2>{slope, my - slope * mx};
}

// ---- Merging -------------------------------------------------------------------------

std::string Joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Lists what the samples lack and `prior` cannot supply.
std::vector<std::string> MissingOf(const ModelSamples& m, const WorkloadCoefficients* prior) {
  std::vector<std::string> missing;
  if (prior != nullptr) return missing;
  for (const ModelConstant& c : kModelConstants) {
    if (!(m.*c.sample)) missing.emplace_back(c.name);
  }
  for (const CurveQuantity& c : kCurves) {
    if ((m.*c.samples).empty()) missing.push_back(std::string(c.name) + " samples");
  }
  return missing;
}

Status MissingError(std::string_view source, std::string_view what,
                    const std::vector<std::string>& missing, std::string_view example) {
  return Status::InvalidArgument(
      fmt::format("{}: {}: missing {}; give each as a CSV row (e.g. '{}') or in the base "
                  "coefficients (--base)",
                  source, what, Joined(missing), example));
}

bool AllFinite(const WorkloadCoefficients& w) {
  auto finite = [](double v) { return std::isfinite(v); };
  return std::all_of(w.k.begin(), w.k.end(), finite) &&
         std::all_of(w.power.begin(), w.power.end(), finite) &&
         std::all_of(w.cache.begin(), w.cache.end(), finite);
}

Result<WorkloadCoefficients> FitWorkload(std::string_view source, const ModelSamples& m,
                                         const WorkloadCoefficients* prior) {
  const std::vector<std::string> missing = MissingOf(m, prior);
  if (!missing.empty()) {
    const bool curve = missing.front().ends_with(" samples");
    const std::string name = missing.front().substr(0, missing.front().find(' '));
    const std::string example = curve ? fmt::format("{},{},BATCH,RESOURCE_PCT,VALUE", m.model, name)
                                      : fmt::format("{},{},,,VALUE", m.model, name);
    return MissingError(source, "model " + QuoteForMessage(m.model), missing,
                        EscapeForMessage(example));
  }
  WorkloadCoefficients w = prior != nullptr ? *prior : WorkloadCoefficients{};
  w.model = m.model;
  for (const ModelConstant& c : kModelConstants) {
    if (m.*c.sample) c.apply(w, *(m.*c.sample));
  }
  if (!m.active_ms.empty()) {
    TESSERA_ASSIGN_OR_RETURN(w.k, FitActiveCurve(source, m));
  }
  if (!m.power_w.empty()) {
    TESSERA_ASSIGN_OR_RETURN(w.power, FitAgainstAbility(source, "power_w", m.power_w, w));
  }
  if (!m.l2_pct.empty()) {
    TESSERA_ASSIGN_OR_RETURN(w.cache, FitAgainstAbility(source, "l2_pct", m.l2_pct, w));
  }
  if (!AllFinite(w)) {
    return Status::InvalidArgument(
        fmt::format("{}: model {}: the fit gave non-finite coefficients (extreme values?)", source,
                    QuoteForMessage(m.model)));
  }
  return w;
}

Result<MpsHardware> MergeHardware(const FitSamples& samples, const MpsCoefficients* base) {
  MpsHardware hw = base != nullptr ? base->hardware : MpsHardware{};
  std::vector<std::string> missing;
  for (const HardwareConstant& c : kHardwareConstants) {
    if (samples.hardware.*c.sample) {
      hw.*c.field = *(samples.hardware.*c.sample);
    } else if (base == nullptr) {
      missing.emplace_back(c.name);
    }
  }
  if (missing.empty()) return hw;
  return MissingError(samples.source, "hardware", missing,
                      fmt::format("hardware,{},,,VALUE", missing.front()));
}

}  // namespace

const ModelSamples* FitSamples::Find(std::string_view model) const {
  for (const ModelSamples& m : models) {
    if (m.model == model) return &m;
  }
  return nullptr;
}

Result<FitSamples> ParseFitSamplesCsv(std::string_view text, std::string_view source) {
  ParseState st{.source = source, .out = {}, .constant_lines = {}};
  st.out.source = std::string(source);
  int header_line = 0;
  bool any_row = false;
  for (const TextLine& line : SplitLines(text, ByteOrderMark::kStrip)) {
    if (Skipped(line.text)) continue;
    if (header_line == 0) {
      TESSERA_RETURN_IF_ERROR(CheckHeader(source, line));
      header_line = line.number;
      continue;
    }
    TESSERA_RETURN_IF_ERROR(ParseRow(st, line));
    any_row = true;
  }
  if (header_line == 0) {
    return FieldError(source, 1, "header",
                      "missing: expected 'model,quantity,batch,resource_pct,value' first");
  }
  if (!any_row) return FieldError(source, header_line, "model", "no data row after the header");
  return std::move(st.out);
}

Result<MpsCoefficients> FitMpsCoefficients(const FitSamples& samples, const MpsCoefficients* base) {
  MpsCoefficients out = base != nullptr ? *base : MpsCoefficients{};
  TESSERA_ASSIGN_OR_RETURN(out.hardware, MergeHardware(samples, base));
  for (const ModelSamples& m : samples.models) {
    const WorkloadCoefficients* prior = base != nullptr ? base->Find(m.model) : nullptr;
    TESSERA_ASSIGN_OR_RETURN(WorkloadCoefficients w, FitWorkload(samples.source, m, prior));
    auto same = [&](const WorkloadCoefficients& o) { return o.model == w.model; };
    auto it = std::find_if(out.workloads.begin(), out.workloads.end(), same);
    if (it != out.workloads.end()) {
      *it = std::move(w);
    } else {
      out.workloads.push_back(std::move(w));
    }
  }
  if (out.workloads.empty()) {
    return Status::InvalidArgument(fmt::format(
        "{}: no model: give samples of at least one model, or base coefficients (--base)",
        samples.source));
  }
  // What is written must read back: the coefficients file has its limits.
  if (Status valid = ValidateMpsCoefficients(out); !valid.ok()) {
    return Status::InvalidArgument(
        fmt::format("{}: the fit gives {} (extreme samples?)", samples.source, valid.message()));
  }
  return out;
}

std::optional<double> ActiveFitRmsRelativeError(const ModelSamples& samples,
                                                const WorkloadCoefficients& coefficients) {
  if (samples.active_ms.empty()) return std::nullopt;
  double sum = 0;
  for (const CurveSample& c : samples.active_ms) {
    const double e = (coefficients.ActiveMs(c.batch, c.resource_pct) - c.value) / c.value;
    sum += e * e;
  }
  return std::sqrt(sum / samples.active_ms.size());
}

}  // namespace tessera
