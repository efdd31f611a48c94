#include "tessera/util/clock.h"

#include <chrono>

namespace tessera {
namespace {

class SteadyClock : public Clock {
 public:
  double NowMs() const override {
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
  }
};

}  // namespace

const Clock& SystemClock() {
  static const SteadyClock clock;
  return clock;
}

}  // namespace tessera
