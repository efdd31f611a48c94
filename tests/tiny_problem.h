// A tiny hand-made profile table and scenarios with numbers simple enough to
// work expected plans and metrics out by hand in the tests' comments.
#ifndef TESSERA_TESTS_TINY_PROBLEM_H_
#define TESSERA_TESTS_TINY_PROBLEM_H_

#include <fmt/format.h>

#include <string>
#include <vector>

#include "tessera/gpu_catalog.h"
#include "tessera/problem.h"
#include "tessera/profile_table.h"
#include "tessera/scenario.h"

namespace tessera::testing {

// Model "m" on a100-80gb, one process, batch 1 (profile: throughput, latency):
//   1g.10gb: 100 req/s, 10 ms    2g.20gb: 220 req/s, 9 ms
//   3g.40gb: 300 req/s,  8 ms    7g.80gb: 800 req/s, 40 ms (batch 8)
// Per compute slice: 100, 110, 100, 114.3 -- the 7g is the optimal segment.
inline ProfileTable TinyTable() {
  ProfileTable t;
  auto add = [&](const char* profile, int batch, double tp, double lat) {
    Status s = t.Add({{"m", "a100-80gb", profile, batch, 1}, tp, lat, {}, {}});
    (void)s;
  };
  add("1g.10gb", 1, 100, 10);
  add("2g.20gb", 1, 220, 9);
  add("3g.40gb", 1, 300, 8);
  add("7g.80gb", 8, 800, 40);
  return t;
}

// Services of model "m" with a generous SLO (every triplet allowed).
inline Scenario TinyScenario(const std::vector<double>& rates, double slo_ms = 1000) {
  Scenario s;
  s.name = "tiny";
  s.gpu = "a100-80gb";
  for (size_t i = 0; i < rates.size(); ++i) {
    s.services.push_back({fmt::format("s{}", i), "m", rates[i], slo_ms, 0});
  }
  return s;
}

inline const GpuModel& A100() { return **FindGpu("a100-80gb"); }

// The default latency rule with the bare capacity rule: a segment counts its
// whole profiled throughput, so tests can do the arithmetic by hand.
inline LatencyRule BareRule() {
  LatencyRule rule;
  rule.queueing_headroom = false;
  return rule;
}

inline Problem TinyProblem(const std::vector<double>& rates, double slo_ms = 1000) {
  return *Problem::Build(TinyScenario(rates, slo_ms), A100(), TinyTable(), BareRule());
}

}  // namespace tessera::testing

#endif  // TESSERA_TESTS_TINY_PROBLEM_H_
