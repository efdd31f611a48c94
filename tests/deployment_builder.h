// DeploymentBuilder: a test-only, fluent way to write a Deployment by hand.
//
//   Deployment d = DeploymentBuilder("a100-80gb", "parva")
//                      .Gpu()
//                      .Instance("3g.40gb", 4, "resnet50", 64, 2, 1288.9, 98.0)
//                      .Instance("2g.20gb", 0, "bert", 8, 1, 310.0, 41.5)
//                      .Gpu()
//                      .Instance("7g.80gb", 0, "bert", 32, 3, 1500.0, 60.0)
//                      .Service("resnet50", 829, 205)
//                      .Service("bert", 1200, 150)
//                      .Infeasible("gpt", 50, 10, "no triplet meets 0.5 x 10 ms")
//                      .LowerBound(2, "integer-cover")
//                      .Build();
//
// What Build() fills in, so tests state only what they care about:
//  * each GPU's instances sorted by start (the Deployment contract);
//  * Instance::model, when the instance has none: the model of the service
//    declared with the same name (which defaults to the service's name), or
//    the service's name for an undeclared service;
//  * ServiceOutcome::capacity_rps = the sum of the service's segment
//    throughputs (services with no instance get 0);
//  * Metrics gpus, gpcs, internal_slack, external_fragmentation and gap, by
//    ComputeMetrics (metrics.h); lower_bound, its kind and plan_ms are
//    whatever the test sets.
//
// Services appear in Deployment::services in declaration order; instances may
// name services that were never declared (those are then not listed, which
// lets emitter and validator tests cover that case).
//
// REQUIRES: the GPU name is in the catalog (asserted); Instance() follows at
// least one Gpu(). A profile the GPU lacks counts as 0 compute slices.
//
// Thread-safety: a builder is a plain value; use one per thread.
#ifndef TESSERA_TESTS_DEPLOYMENT_BUILDER_H_
#define TESSERA_TESTS_DEPLOYMENT_BUILDER_H_

#include <algorithm>
#include <cassert>
#include <map>
#include <string>
#include <utility>

#include "tessera/deployment.h"
#include "tessera/gpu_catalog.h"
#include "tessera/plan/metrics.h"

namespace tessera {

class DeploymentBuilder {
 public:
  // `gpus_per_node` sets the node of GPUs added by Gpu() (index / gpus_per_node).
  DeploymentBuilder(std::string gpu, std::string planner, int gpus_per_node = 8)
      : gpus_per_node_(gpus_per_node) {
    deployment_.gpu = std::move(gpu);
    deployment_.planner = std::move(planner);
  }

  // Starts the next GPU: index = the number of GPUs so far, node = index /
  // gpus_per_node.
  DeploymentBuilder& Gpu() {
    int index = static_cast<int>(deployment_.gpus.size());
    return Gpu(index, index / gpus_per_node_);
  }

  // Starts a GPU with an explicit index and node (for sparse or odd layouts).
  DeploymentBuilder& Gpu(int index, int node) {
    GpuAssignment gpu;
    gpu.index = index;
    gpu.node = node;
    deployment_.gpus.push_back(std::move(gpu));
    return *this;
  }

  // Adds one segment to the current GPU. `model` empty: taken from the
  // service at Build().
  DeploymentBuilder& Instance(std::string profile, int start, std::string service, int batch,
                              int procs, double throughput_rps, double latency_ms,
                              std::string model = "") {
    assert(!deployment_.gpus.empty() && "call Gpu() before Instance()");
    tessera::Instance instance;
    instance.profile = std::move(profile);
    instance.start = start;
    instance.service = std::move(service);
    instance.model = std::move(model);
    instance.batch = batch;
    instance.procs = procs;
    instance.throughput_rps = throughput_rps;
    instance.latency_ms = latency_ms;
    deployment_.gpus.back().mig().push_back(std::move(instance));
    return *this;
  }

  // Declares a served service. `model` empty: the service's name.
  DeploymentBuilder& Service(std::string name, double rate_rps, double slo_ms,
                             std::string model = "") {
    ServiceOutcome service;
    service.model = model.empty() ? name : std::move(model);
    service.name = std::move(name);
    service.rate_rps = rate_rps;
    service.slo_ms = slo_ms;
    deployment_.services.push_back(std::move(service));
    return *this;
  }

  // Declares a service the planner could not serve, with its reason.
  DeploymentBuilder& Infeasible(std::string name, double rate_rps, double slo_ms,
                                std::string reason, std::string model = "") {
    Service(std::move(name), rate_rps, slo_ms, std::move(model));
    deployment_.services.back().status = ServiceStatus::kInfeasible;
    deployment_.services.back().reason = std::move(reason);
    return *this;
  }

  DeploymentBuilder& LowerBound(int gpus, std::string kind) {
    deployment_.metrics.lower_bound = gpus;
    deployment_.metrics.lower_bound_kind = std::move(kind);
    return *this;
  }

  DeploymentBuilder& PlanMs(double plan_ms) {
    deployment_.metrics.plan_ms = plan_ms;
    return *this;
  }

  // The papers' bare capacity rule (LatencyRule::queueing_headroom off): a
  // segment counts for its whole throughput.
  DeploymentBuilder& BareCapacity() {
    deployment_.rule.queueing_headroom = false;
    return *this;
  }

  // The finished Deployment (see the file comment for what is derived).
  Deployment Build() const {
    Deployment d = deployment_;
    const GpuModel* gpu = GpuOrDie(d.gpu);
    for (GpuAssignment& g : d.gpus) {
      std::stable_sort(g.instances().begin(), g.instances().end(),
                       [](const auto& a, const auto& b) { return a.start < b.start; });
    }
    FillModelsAndCapacity(d);
    FillMetrics(*gpu, d);
    return d;
  }

 private:
  static const GpuModel* GpuOrDie(const std::string& name) {
    Result<const GpuModel*> gpu = FindGpu(name);
    assert(gpu.ok() && "DeploymentBuilder: GPU not in the catalog");
    return *gpu;
  }

  static void FillModelsAndCapacity(Deployment& d) {
    std::map<std::string, ServiceOutcome*> by_name;
    for (ServiceOutcome& s : d.services) {
      s.capacity_rps = 0;
      by_name.emplace(s.name, &s);
    }
    for (GpuAssignment& g : d.gpus) {
      for (tessera::Instance& i : g.instances()) {
        auto it = by_name.find(i.service);
        if (it == by_name.end()) {
          if (i.model.empty()) i.model = i.service;
          continue;
        }
        it->second->capacity_rps += i.throughput_rps;
        if (i.model.empty()) i.model = it->second->model;
      }
    }
  }

  // DESIGN.md, Metrics, through the one definition in ComputeMetrics.
  static void FillMetrics(const GpuModel& gpu, Deployment& d) {
    const Metrics& m = d.metrics;
    d.metrics = ComputeMetrics(d, gpu, {m.lower_bound, m.lower_bound_kind}, m.plan_ms);
  }

  int gpus_per_node_;
  Deployment deployment_;
};

}  // namespace tessera

#endif  // TESSERA_TESTS_DEPLOYMENT_BUILDER_H_
