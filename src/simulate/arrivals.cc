#include "tessera/simulate/arrivals.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace tessera {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

// An exponential gap with mean 1 / rate.
double Exponential(std::mt19937_64& rng, double rate) {
  return std::exponential_distribution<double>(rate)(rng);
}

}  // namespace

Status BurstShape::Validate() const {
  if (!(on_share > 0 && on_share <= 1)) {
    return Status::InvalidArgument(
        fmt::format("burst on-share must be in (0, 1], got {:g}", on_share));
  }
  if (!(on_s > 0 && std::isfinite(on_s))) {
    return Status::InvalidArgument(fmt::format("burst on-period must be > 0 s, got {:g}", on_s));
  }
  return Status::Ok();
}

ArrivalStream::ArrivalStream(ArrivalKind kind, double rate_rps, const BurstShape& burst,
                             std::uint64_t seed)
    : kind_(kind), rate_(rate_rps), burst_(burst), rng_(seed) {
  if (kind_ == ArrivalKind::kBursty) phase_end_ = Exponential(rng_, 1 / burst_.on_s);
}

ArrivalStream::ArrivalStream(std::vector<double> times_s)
    : kind_(ArrivalKind::kTrace), trace_(std::move(times_s)) {}

double ArrivalStream::Next() {
  switch (kind_) {
    case ArrivalKind::kPoisson:
      now_ += Exponential(rng_, rate_);
      return now_;
    case ArrivalKind::kConstant:
      // Counted, not summed, so that rounding does not drift.
      return (static_cast<double>(next_++) + 0.5) / rate_;
    case ArrivalKind::kBursty:
      return NextBursty();
    case ArrivalKind::kTrace:
      return next_ < trace_.size() ? trace_[next_++] : kNever;
  }
  return kNever;
}

// Poisson at rate / on_share while on; the exponential periods are
// memoryless, so a gap cut by a period's end simply restarts after it.
double ArrivalStream::NextBursty() {
  const double peak = rate_ / burst_.on_share;
  const double off_mean = burst_.on_s * (1 - burst_.on_share) / burst_.on_share;
  for (;;) {
    if (on_) {
      const double candidate = now_ + Exponential(rng_, peak);
      if (candidate < phase_end_) return now_ = candidate;
      now_ = phase_end_;
      if (off_mean > 0) {
        on_ = false;
        phase_end_ = now_ + Exponential(rng_, 1 / off_mean);
      } else {
        phase_end_ = now_ + Exponential(rng_, 1 / burst_.on_s);
      }
    } else {
      now_ = phase_end_;
      on_ = true;
      phase_end_ = now_ + Exponential(rng_, 1 / burst_.on_s);
    }
  }
}

}  // namespace tessera
