// ServiceCovers: the ways one service can be served by whole MIG segments.
//
// A "resource" is one MIG profile of one GPU model of the problem's pool; a
// service's best triplet on a resource is its feasible triplet with the most
// capacity (Triplet::capacity_rps: throughput under the latency rule; ties:
// the smaller batch, then fewer processes). A cover of a service is a count
// of segments per resource, each running that best triplet, whose
// capacities sum to at least the service's rate; it is
// minimal when dropping any one segment leaves the rate uncovered. Every
// plan that uses best triplets contains a minimal cover of each service, so
// choosing one minimal cover per service loses no optimal plan.
//
// Services with the same best triplets and rate have the same covers; they
// form one class, solved once with a multiplicity (110 services of S5 x 10
// are 11 classes).
//
// Listing covers is bounded per class and over all classes (the model gets
// a column per cover), and by a deadline: a class left without covers is
// modelled per service, which is as exact, only with a weaker relaxation.
//
// Thread-safety: pure functions.
#ifndef TESSERA_PLANNERS_EXACT_SERVICE_COVERS_H_
#define TESSERA_PLANNERS_EXACT_SERVICE_COVERS_H_

#include <limits>
#include <optional>
#include <vector>

#include "tessera/problem.h"
#include "tessera/util/clock.h"

namespace tessera {

struct Resource {
  int pool = 0;     // index into Problem::pool()
  int profile = 0;  // index into that GPU model's profiles
  friend auto operator<=>(const Resource&, const Resource&) = default;
};

struct ServiceClass {
  std::vector<int> services;                 // indices into Problem::services(), ascending
  std::vector<std::optional<Triplet>> best;  // per resource; nullopt = cannot serve
  double rate_rps = 0;
  // Minimal covers (counts per resource), or empty when there are more than
  // the enumeration limit: the class is then modelled per service instead.
  std::vector<std::vector<int>> covers;
};

struct CoverSet {
  std::vector<Resource> resources;    // sorted
  std::vector<ServiceClass> classes;  // in order of their first service
};

struct CoverLimits {
  // Candidate count vectors generated for one class before it is left
  // without covers.
  int per_class = 20000;
  // Covers listed over all classes: classes are listed smallest first (by an
  // estimate of their candidates) while the total stays within it.
  long total = std::numeric_limits<long>::max();
};

// Groups the feasible services of `problem` into classes and enumerates
// their minimal covers within `limits`; classes not listed in full, or not
// reached before `deadline` passes, are left without covers.
CoverSet BuildCoverSet(const Problem& problem, const CoverLimits& limits,
                       const Deadline& deadline = Deadline(SystemClock(), 0));

// The number of segments and compute slices of `counts` (per resource).
int SegmentCount(const std::vector<int>& counts);
int ComputeSlices(const Problem& problem, const CoverSet& set, const std::vector<int>& counts);

}  // namespace tessera

#endif  // TESSERA_PLANNERS_EXACT_SERVICE_COVERS_H_
