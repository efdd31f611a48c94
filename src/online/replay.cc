#include "tessera/online/replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <utility>

#include "tessera/util/input_limits.h"

namespace tessera {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Builds the time series: counts by arrival bucket, and the active hardware
// rate integrated exactly over time.
class SeriesBuilder {
 public:
  SeriesBuilder(double t0, double bucket_s) : t0_(t0), bucket_s_(bucket_s), last_t_(t0) {}

  // Integrates `rate` from the last call's time to `t`; `resident` is the VM
  // count during that span (recorded at the bucket ends crossed).
  void AdvanceTo(double t, double rate, int resident) {
    while (last_t_ < t) {
      size_t b = Bucket(last_t_);
      double bucket_end = t0_ + (b + 1) * bucket_s_;
      // Rounding can put a time that closed bucket b back into it (t0 +
      // (b + 1) x bucket, less t0, over bucket, just under b + 1): move on,
      // or this loop would never advance.
      if (bucket_end <= last_t_) {
        b = Bucket(bucket_end + bucket_s_ / 2);
        bucket_end = t0_ + (b + 1) * bucket_s_;
      }
      const double until = std::min(t, bucket_end);
      samples_[b].active_hw_rate += rate * (until - last_t_);  // integral for now
      auc_ += rate * (until - last_t_);
      if (until == bucket_end) samples_[b].resident_vms = resident;
      last_t_ = until;
    }
  }

  void CountArrival(double t, bool accepted) {
    ReplaySample& s = samples_[Bucket(t)];
    ++s.arrivals;
    s.accepted += accepted;
  }

  // Closes the series at `end` with `resident` VMs left; returns the samples
  // with rates as time-weighted means and cumulative counts filled in.
  std::vector<ReplaySample> Finish(double end, int resident) {
    Bucket(end);
    // A replay ending exactly on a bucket boundary does not open a new bucket.
    if (samples_.size() > 1 && end == t0_ + (samples_.size() - 1) * bucket_s_ &&
        samples_.back().arrivals == 0) {
      samples_.pop_back();
    }
    int arrivals = 0, accepted = 0;
    for (size_t b = 0; b < samples_.size(); ++b) {
      ReplaySample& s = samples_[b];
      s.start_s = b * bucket_s_;
      const double covered = std::min(bucket_s_, end - (t0_ + s.start_s));
      s.active_hw_rate = covered > 0 ? s.active_hw_rate / covered : 0;
      s.cumulative_arrivals = arrivals += s.arrivals;
      s.cumulative_accepted = accepted += s.accepted;
    }
    if (!samples_.empty()) samples_.back().resident_vms = resident;
    return std::move(samples_);
  }

  // Integral of the rate over the replay, in rate-seconds.
  double auc() const { return auc_; }

 private:
  size_t Bucket(double t) {
    const size_t b = static_cast<size_t>(std::floor((t - t0_) / bucket_s_));
    if (samples_.size() <= b) samples_.resize(b + 1);
    return b;
  }

  double t0_, bucket_s_, last_t_;
  double auc_ = 0;
  std::vector<ReplaySample> samples_;
};

class ReplayRun {
 public:
  ReplayRun(const VmTrace& trace, OnlinePlacer& placer, const ReplayOptions& options)
      : trace_(trace),
        placer_(placer),
        options_(options),
        cluster_(trace),
        t0_(trace.vms.empty() ? 0 : trace.vms.front().arrival_s),
        series_(t0_, options.bucket_s),
        hardware_(cluster_.num_hosts() + cluster_.num_gpus()),
        accepted_per_profile_(trace.gpu->profiles.size(), 0) {}

  Result<ReplayReport> Run() {
    placer_.Start(cluster_);
    const double interval = placer_.MaintenanceIntervalS();
    double next_maintenance = interval > 0 ? t0_ + interval : kInf;
    size_t next_arrival = 0;
    while (next_arrival < trace_.vms.size() || !departures_.empty()) {
      const double ta =
          next_arrival < trace_.vms.size() ? trace_.vms[next_arrival].arrival_s : kInf;
      const double td = departures_.empty() ? kInf : departures_.top().first;
      Status status;
      if (td <= ta && td <= next_maintenance) {
        status = Depart();
      } else if (next_maintenance <= ta) {
        Advance(next_maintenance);
        placer_.Maintain(next_maintenance, cluster_);
        next_maintenance += interval;
      } else {
        status = Arrive(trace_.vms[next_arrival++]);
      }
      if (!status.ok()) return status;
      if (options_.after_event) options_.after_event(cluster_);
    }
    return Report();
  }

 private:
  using Departure = std::pair<double, int>;  // time, VM id

  void Advance(double t) {
    const double rate =
        static_cast<double>(cluster_.active_hosts() + cluster_.active_gpus()) / hardware_;
    series_.AdvanceTo(t, rate, cluster_.resident_vms());
    end_ = std::max(end_, t);
  }

  Status Arrive(const VmRequest& vm) {
    Advance(vm.arrival_s);
    const bool accepted = placer_.Place(vm, cluster_);
    const VmLocation where = cluster_.LocationOf(vm.id);
    if (accepted != (where.gpu >= 0)) {
      return Status::Internal("policy " + std::string(placer_.Name()) + " misreported VM " +
                              vm.name);
    }
    series_.CountArrival(vm.arrival_s, accepted);
    if (accepted) {
      ++accepted_per_profile_[vm.profile];
      if (vm.departure_s != kNeverDeparts) departures_.push({vm.departure_s, vm.id});
      peak_resident_ = std::max(peak_resident_, cluster_.resident_vms());
    }
    return Status::Ok();
  }

  Status Depart() {
    const auto [t, vm] = departures_.top();
    departures_.pop();
    Advance(t);
    const int gpu = cluster_.LocationOf(vm).gpu;
    if (Status released = cluster_.Release(vm); !released.ok()) {
      return Status::Internal("departure of " + trace_.vms[vm].name + ": " + released.message());
    }
    placer_.Released(vm, gpu, cluster_);
    return Status::Ok();
  }

  ReplayReport Report() {
    ReplayReport r;
    r.policy = std::string(placer_.Name());
    r.gpu = trace_.gpu->name;
    r.hosts = cluster_.num_hosts();
    r.gpus = cluster_.num_gpus();
    r.requests = static_cast<int>(trace_.vms.size());
    const std::vector<int> requests = RequestsPerProfile(trace_);
    for (size_t p = 0; p < requests.size(); ++p) {
      if (requests[p] == 0) continue;
      r.per_profile.push_back({static_cast<int>(p), requests[p], accepted_per_profile_[p]});
      r.accepted += accepted_per_profile_[p];
    }
    r.acceptance = r.requests > 0 ? static_cast<double>(r.accepted) / r.requests : 0;
    r.samples = series_.Finish(end_, cluster_.resident_vms());
    r.active_hw_auc = 100 * series_.auc() / 3600;
    double rate_sum = 0;
    for (const ReplaySample& s : r.samples) rate_sum += s.active_hw_rate;
    r.mean_active_hw_rate = r.samples.empty() ? 0 : rate_sum / r.samples.size();
    r.migrations = cluster_.migrations();
    for (const MigrationEvent& m : r.migrations) {
      ++(m.kind == MigrationKind::kIntraGpu ? r.intra_migrations : r.inter_migrations);
    }
    r.migration_share =
        r.accepted > 0 ? static_cast<double>(r.intra_migrations + r.inter_migrations) / r.accepted
                       : 0;
    r.peak_resident_vms = peak_resident_;
    r.duration_s = end_ - t0_;
    return r;
  }

  const VmTrace& trace_;
  OnlinePlacer& placer_;
  const ReplayOptions& options_;
  OnlineCluster cluster_;
  double t0_;
  double end_ = 0;
  SeriesBuilder series_;
  double hardware_;
  std::vector<int> accepted_per_profile_;
  std::priority_queue<Departure, std::vector<Departure>, std::greater<Departure>> departures_;
  int peak_resident_ = 0;
};

// The replay's series has one bucket per `bucket_s` of the trace's span and
// its cluster one entry per GPU: both stay bounded only for traces within
// the input limits, whatever made them.
Status CheckTraceLimits(const VmTrace& trace) {
  if (!limits::kClusterGpus.Contains(static_cast<double>(trace.TotalGpus()))) {
    return Status::InvalidArgument(
        fmt::format("replay: the trace's hosts hold {} GPUs; {}", trace.TotalGpus(),
                    OutOfRange(limits::kClusterGpus, static_cast<double>(trace.TotalGpus()))));
  }
  for (const VmRequest& vm : trace.vms) {
    const bool departs_ok =
        vm.departure_s == kNeverDeparts ||
        (limits::kTraceTimeS.Contains(vm.departure_s) && vm.departure_s >= vm.arrival_s);
    if (limits::kTraceTimeS.Contains(vm.arrival_s) && departs_ok) continue;
    return Status::InvalidArgument(fmt::format(
        "replay: VM {} arrives at {:g} s and departs at {:g} s; times must be {} with departure "
        ">= arrival",
        vm.name, vm.arrival_s, vm.departure_s, limits::kTraceTimeS.Describe()));
  }
  return Status::Ok();
}

}  // namespace

Result<ReplayReport> Replay(const VmTrace& trace, OnlinePlacer& placer,
                            const ReplayOptions& options) {
  if (trace.gpu == nullptr) return Status::InvalidArgument("replay: the trace has no GPU model");
  if (!std::isfinite(options.bucket_s) || options.bucket_s <= 0) {
    return Status::InvalidArgument("replay: the sample length must be a finite time > 0");
  }
  if (options.clock == nullptr) return Status::InvalidArgument("replay: no clock");
  TESSERA_RETURN_IF_ERROR(CheckTraceLimits(trace));
  const double started_ms = options.clock->NowMs();
  ReplayRun run(trace, placer, options);
  Result<ReplayReport> report = run.Run();
  if (!report.ok()) return report;
  ReplayReport r = std::move(report).value();
  r.replay_ms = options.clock->NowMs() - started_ms;
  return r;
}

}  // namespace tessera
