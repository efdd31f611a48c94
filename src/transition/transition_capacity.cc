// TransitionCapacity (transition.h): the SLO-safe share of every instance
// configuration of the two plans, B's over A's.
#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include "tessera/deployment.h"
#include "tessera/transition.h"

namespace tessera {

TransitionCapacity::TransitionCapacity(const Deployment& from, const Deployment& to) {
  // B first: try_emplace keeps the first figure of a configuration.
  for (const Deployment* d : {&to, &from}) {
    std::unordered_map<std::string, const ServiceOutcome*> outcome;
    for (const ServiceOutcome& s : d->services) outcome.try_emplace(s.name, &s);
    for (const GpuAssignment& g : d->gpus) {
      for (const Instance& in : g.instances()) {
        auto it = outcome.find(in.service);
        if (it == outcome.end() || !(in.throughput_rps > 0)) continue;
        // What the rule counts the instance for, as a share of its throughput.
        const double share =
            d->rule.CountedRps(in.batch, in.procs, in.throughput_rps, in.latency_ms,
                               it->second->slo_ms, it->second->rate_rps) /
            in.throughput_rps;
        shares_.try_emplace(Key{in.service, in.model, in.profile, in.batch, in.procs},
                            std::isfinite(share) ? std::clamp(share, 0.0, 1.0) : 1.0);
      }
    }
  }
}

double TransitionCapacity::Share(const std::string& service, const std::string& model,
                                 const std::string& profile, int batch, int procs) const {
  auto it = shares_.find(Key{service, model, profile, batch, procs});
  return it == shares_.end() ? 1.0 : it->second;
}

double TransitionCapacity::Of(const Instance& instance) const {
  return instance.throughput_rps *
         Share(instance.service, instance.model, instance.profile, instance.batch, instance.procs);
}

double TransitionCapacity::Of(const TransitionStep& step) const {
  return step.throughput_rps *
         Share(step.service, step.model, step.profile, step.batch, step.procs);
}

}  // namespace tessera
