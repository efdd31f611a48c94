// Clock: the time source Tessera's timing and time limits read, injected so
// tests and simulations control time (DESIGN: inject the clock).
//
// Thread-safety: SystemClock is safe from any thread; a FakeClock is not
// synchronised and belongs to one test; a Deadline reads its clock.
#ifndef TESSERA_CLOCK_H_
#define TESSERA_CLOCK_H_

namespace tessera {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since an arbitrary fixed origin; never decreases.
  virtual double NowMs() const = 0;
};

// The monotonic wall clock (std::chrono::steady_clock).
const Clock& SystemClock();

// A clock that moves only when told to; each NowMs() call then adds `step_ms`.
class FakeClock : public Clock {
 public:
  explicit FakeClock(double start_ms = 0, double step_ms = 0) : now_(start_ms), step_(step_ms) {}
  double NowMs() const override {
    const double t = now_;
    now_ += step_;
    return t;
  }
  void Advance(double ms) { now_ += ms; }

 private:
  mutable double now_;
  double step_;
};

// A time limit on a clock: passed once `seconds` have gone by since it was
// set; never passed when set with seconds <= 0 (no limit).
class Deadline {
 public:
  Deadline(const Clock& clock, double seconds)
      : clock_(&clock), start_ms_(clock.NowMs()), limit_ms_(seconds * 1000) {}
  bool Passed() const { return limit_ms_ > 0 && clock_->NowMs() - start_ms_ >= limit_ms_; }
  double ElapsedS() const { return (clock_->NowMs() - start_ms_) / 1000; }

 private:
  const Clock* clock_;
  double start_ms_;
  double limit_ms_;
};

}  // namespace tessera

#endif  // TESSERA_CLOCK_H_
