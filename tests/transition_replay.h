// A small replay of the invariants of transition.h for the tests,
// independent of the planner's bookkeeping: the geometry of every phase's
// start state plus its creates, the floors in every worst state, the GPU
// budget and the final state.
#ifndef TESSERA_TESTS_TRANSITION_REPLAY_H_
#define TESSERA_TESTS_TRANSITION_REPLAY_H_

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tessera/deployment.h"
#include "tessera/gpu_catalog.h"
#include "tessera/mig_layout.h"
#include "tessera/transition.h"

namespace tessera::testing {

struct ReplayInstance {
  std::string profile, service, model;
  int batch = 1, procs = 1;
  double tp = 0;
};
using ReplayState = std::map<int, std::map<int, ReplayInstance>>;  // cluster GPU -> start -> instance

inline std::vector<std::string> TransitionViolations(const Deployment& from, const Deployment& to,
                                    const Transition& t) {
  std::vector<std::string> bad;
  std::map<std::string, double> rate_a, floor;
  for (const ServiceOutcome& s : from.services) rate_a[s.name] = s.rate_rps;
  for (const ServiceOutcome& s : to.services) {
    if (rate_a.count(s.name)) floor[s.name] = std::min(rate_a[s.name], s.rate_rps);
  }
  ReplayState state;
  std::map<int, std::string> model_of;
  auto count_nonempty = [](const ReplayState& s) {
    int n = 0;
    for (const auto& [gpu, insts] : s) n += !insts.empty();
    return n;
  };
  for (const GpuAssignment& g : from.gpus) {
    model_of[g.index] = GpuModelName(from, g);
    for (const Instance& in : g.instances) {
      state[g.index][in.start] = {in.profile, in.service, in.model, in.batch, in.procs,
                                  in.throughput_rps};
    }
  }
  int gpus_a = count_nonempty(state), gpus_b = 0;
  for (const GpuAssignment& g : to.gpus) gpus_b += !g.instances.empty();
  const int budget = std::max(gpus_a, gpus_b) + t.spare_gpus;
  for (const GpuAssignment& g : to.gpus) {
    auto it = t.gpu_map.find(g.index);
    if (it == t.gpu_map.end()) {
      bad.push_back("B GPU " + std::to_string(g.index) + " unmapped");
      continue;
    }
    if (!model_of.count(it->second)) model_of[it->second] = GpuModelName(to, g);
    if (model_of[it->second] != GpuModelName(to, g)) bad.push_back("model mismatch");
  }
  std::set<std::string> ids;
  for (size_t p = 0; p < t.phases.size(); ++p) {
    const std::string where = "phase " + std::to_string(p + 1);
    ReplayState with_creates = state;
    std::map<std::string, double> cap;
    for (const auto& [gpu, insts] : state) {
      for (const auto& [start, in] : insts) cap[in.service] += in.tp;
    }
    for (const TransitionStep& s : t.phases[p].steps) {
      if (!ids.insert(s.id).second) bad.push_back(where + ": duplicate id " + s.id);
      if (s.action == StepAction::kCreate) {
        if (with_creates[s.gpu].count(s.start)) bad.push_back(where + ": create on a used start");
        with_creates[s.gpu][s.start] = {s.profile, s.service, s.model, s.batch, s.procs,
                                        s.throughput_rps};
        continue;
      }
      auto g = state.find(s.gpu);
      if (g == state.end() || !g->second.count(s.start) ||
          g->second.at(s.start).profile != s.profile) {
        bad.push_back(where + ": " + s.id + " acts on no instance");
        continue;
      }
      const ReplayInstance& in = g->second.at(s.start);
      const std::string served = s.action == StepAction::kDestroy ? s.service : s.from_service;
      if (in.service != served) bad.push_back(where + ": " + s.id + " names the wrong service");
      cap[in.service] -= in.tp;
    }
    for (const auto& [gpu, insts] : with_creates) {
      if (insts.empty()) continue;
      const GpuModel& model = **FindGpu(model_of[gpu]);
      std::vector<Placement> placements;
      for (const auto& [start, in] : insts) placements.push_back({model.ProfileIndex(in.profile), start});
      if (!CheckLayout(model, placements).ok()) {
        bad.push_back(where + ": illegal layout on GPU " + std::to_string(gpu));
      }
    }
    if (count_nonempty(with_creates) > budget) bad.push_back(where + ": over the GPU budget");
    for (const auto& [name, f] : floor) {
      if (cap[name] < f - 1e-6) bad.push_back(where + ": " + name + " below its floor");
    }
    for (const TransitionStep& s : t.phases[p].steps) {
      if (s.action == StepAction::kDestroy) {
        state[s.gpu].erase(s.start);
      } else {
        state[s.gpu][s.start] = {s.profile, s.service, s.model, s.batch, s.procs,
                                 s.throughput_rps};
      }
    }
  }
  ReplayState final_b;
  for (const GpuAssignment& g : to.gpus) {
    for (const Instance& in : g.instances) {
      final_b[t.gpu_map.at(g.index)][in.start] = {in.profile, in.service, in.model, in.batch,
                                                  in.procs, in.throughput_rps};
    }
  }
  for (const auto& [gpu, insts] : state) {
    for (const auto& [start, in] : insts) {
      auto g = final_b.find(gpu);
      if (g == final_b.end() || !g->second.count(start) ||
          std::tie(g->second[start].profile, g->second[start].service, g->second[start].batch,
                   g->second[start].procs) !=
              std::tie(in.profile, in.service, in.batch, in.procs)) {
        bad.push_back("final: GPU " + std::to_string(gpu) + " at " + std::to_string(start) +
                      " differs from B");
      }
    }
  }
  for (const auto& [gpu, insts] : final_b) {
    for (const auto& [start, in] : insts) {
      if (!state[gpu].count(start)) {
        bad.push_back("final: B's instance at GPU " + std::to_string(gpu) + " missing");
      }
    }
  }
  return bad;
}

}  // namespace tessera::testing

#endif  // TESSERA_TESTS_TRANSITION_REPLAY_H_
