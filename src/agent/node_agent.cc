// The node agent: see node_agent.h.
#include "tessera/agent/node_agent.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "agent/journal.h"
#include "agent/supervisor.h"
#include "tessera/transition/transition_format.h"
#include "tessera/util/text_io.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using agent::Journal;
using agent::RunningUnit;
using agent::StepSubject;
using agent::Supervisor;
using agent::UnitSpec;

// A MIG instance's place on the node: what the agent diffs by.
using Place = std::tuple<int, int, int>;  // local GPU, profile ID, start

std::string PlaceName(int gpu, int start) { return fmt::format("gpu{}-start{}", gpu, start); }
std::string MpsUnit(int gpu, int start) { return "mps:" + PlaceName(gpu, start); }
std::string ServeUnit(const NodeProcess& p) { return "serve:" + p.name; }

std::string Fnv1a(const std::string& text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
  return fmt::format("{:016x}", h);
}

Status MakeDirectories(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) return Status::IoError(path + ": cannot create the directory: " + ec.message());
  return Status::Ok();
}

// How long one MPS control command may take.
constexpr double kControlTimeoutS = 10;

// Writes `content` to `path` through a temporary file renamed over it, so a
// kill never leaves half a file; IoError naming the path and `what`.
Status WriteAtomically(const std::string& path, const std::string& content,
                       const std::string& what) {
  {
    std::ofstream out(path + ".tmp", std::ios::trunc | std::ios::binary);
    out << content;
    out.flush();
    if (!out) return Status::IoError(path + ".tmp: cannot write " + what);
  }
  std::error_code ec;
  fs::rename(path + ".tmp", path, ec);
  if (ec) return Status::IoError(path + ": cannot write " + what + ": " + ec.message());
  return Status::Ok();
}

std::string GpuLabel(const NvmlGpu& gpu) {
  return fmt::format("GPU {} ({}, {})", gpu.index, gpu.name, gpu.uuid);
}

}  // namespace

class NodeAgent::Impl {
 public:
  Impl(NodePlan plan, AgentOptions options, AgentProgress progress, std::unique_ptr<Nvml> nvml,
       int lock_fd, Journal journal, std::string state_dir)
      : plan_(std::move(plan)),
        options_(std::move(options)),
        progress_(std::move(progress)),
        nvml_(std::move(nvml)),
        lock_fd_(lock_fd),
        journal_(std::move(journal)),
        state_dir_(std::move(state_dir)),
        supervisor_(state_dir_, *options_.clock) {}
  ~Impl() { ::close(lock_fd_); }

  Status CheckMachine();
  Status SetPlan(NodePlan plan);
  Status ApplyCommandOverrides();
  Result<AgentReport> Reconcile(AgentReport report);
  Result<AgentReport> RunTransition(const Transition& t, const std::string& source,
                                    std::optional<int> only_phase);
  Result<std::vector<AgentInstance>> Observe();
  // Closes the steps a killed agent left open; their notes go into the
  // first report.
  Status CloseInterrupted(const std::vector<agent::OpenStep>& open);

 private:
  // Runs one journaled step; returns its outcome and records it in `report`.
  Status Step(AgentReport& report, StepSubject subject,
              const std::function<Result<std::string>()>& body);
  Result<NvmlGpu> ReadGpu(int index);
  // The GPU instance at `place`, read fresh, or nullopt.
  std::optional<NvmlGpuInstance> FindInstance(const NvmlGpu& gpu, int profile_id, int start) const;
  std::string ProfileName(int gpu, int profile_id) const;
  // Stops every unit of the place (serving processes drained first, then the
  // MPS daemon) and destroys its compute and GPU instances.
  Status TearDown(AgentReport& report, int gpu, const NvmlGpuInstance& gi);
  // Stops the units in `names` (serving ones drained first).
  Status StopUnits(AgentReport& report, int gpu, int start, const std::string& profile,
                   const std::vector<std::string>& names);
  // Polls the MPS control command with "get_server_list" until the daemon
  // of `instance` answers (a client that finds no daemon runs without MPS).
  Status WaitForDaemon(const NodeInstance& instance);
  // <state-dir>/mig/gpu<g>-start<s>.uuid holds `uuid` (replaced atomically).
  Status WriteUuidFile(int gpu, int start, const std::string& uuid);
  // Makes `target` run at its place on `gpu`.
  Status Ensure(AgentReport& report, int gpu, const NodeInstance& target);
  std::vector<UnitSpec> UnitsOf(int gpu, const NodeInstance& instance,
                                const std::string& uuid) const;
  bool Matches(int gpu_index, const NvmlGpu& gpu, const std::vector<const NodeInstance*>& want,
               const std::map<std::string, RunningUnit>& units, std::string* why) const;
  std::vector<const NodeInstance*> Desired(int gpu) const;
  Status SaveProgress(const std::string& id, const std::set<int>& done);
  std::set<int> LoadProgress(const std::string& id) const;

  NodePlan plan_;
  AgentOptions options_;
  AgentProgress progress_;
  std::unique_ptr<Nvml> nvml_;
  int lock_fd_;
  Journal journal_;
  std::string state_dir_;
  Supervisor supervisor_;
  const GpuModel* model_ = nullptr;
  int device_count_ = 0;
  std::vector<std::string> notes_;  // for the next report
};

// ---- Opening: the lock, the journal, NVML, the plan against the machine ----

Result<std::unique_ptr<NodeAgent>> NodeAgent::Open(const std::string& node, NodePlan plan,
                                                   const std::string& nvml_library,
                                                   AgentOptions options, AgentProgress progress) {
  if (plan.node != node) {
    return Status::InvalidArgument(
        fmt::format("--node {} does not match the plan's node {}: give this node's plan",
                    QuoteForMessage(node), QuoteForMessage(plan.node)));
  }
  if (options.state_dir.empty()) return Status::InvalidArgument("--state-dir is required");
  // NVML first: a library that does not load leaves no state directory behind.
  Result<std::unique_ptr<Nvml>> nvml = Nvml::Open(nvml_library);
  if (!nvml.ok()) return nvml.status();
  TESSERA_RETURN_IF_ERROR(MakeDirectories(options.state_dir));
  std::error_code ec;
  const std::string state_dir = fs::weakly_canonical(fs::absolute(options.state_dir), ec).string();
  const std::string lock_path = state_dir + "/agent.lock";
  const int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0) return Status::IoError(lock_path + ": cannot open the agent's lock");
  if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = {0};
    [[maybe_unused]] ssize_t n = ::pread(lock_fd, pid, sizeof pid - 1, 0);
    ::close(lock_fd);
    return Status::InvalidArgument(
        fmt::format("{}: another agent (pid {}) runs on this state directory; one agent per node",
                    lock_path, Trim(pid)));
  }
  const std::string me = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock_fd, 0) != 0 || ::pwrite(lock_fd, me.data(), me.size(), 0) < 0) {
    ::close(lock_fd);
    return Status::IoError(lock_path + ": cannot write the agent's pid");
  }
  std::vector<agent::OpenStep> open_steps;
  Result<Journal> journal = Journal::Open(state_dir, &open_steps);
  if (!journal.ok()) {
    ::close(lock_fd);
    return journal.status();
  }
  auto impl = std::make_unique<Impl>(std::move(plan), std::move(options), std::move(progress),
                                     std::move(*nvml), lock_fd, std::move(*journal), state_dir);
  TESSERA_RETURN_IF_ERROR(impl->CloseInterrupted(open_steps));
  TESSERA_RETURN_IF_ERROR(impl->ApplyCommandOverrides());
  TESSERA_RETURN_IF_ERROR(impl->CheckMachine());
  return std::unique_ptr<NodeAgent>(new NodeAgent(std::move(impl)));
}

NodeAgent::NodeAgent(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
NodeAgent::~NodeAgent() = default;

Result<AgentReport> NodeAgent::Reconcile() { return impl_->Reconcile(AgentReport{}); }

Status NodeAgent::SetPlan(NodePlan plan) { return impl_->SetPlan(std::move(plan)); }

Status NodeAgent::Impl::SetPlan(NodePlan plan) {
  if (plan.node != plan_.node) {
    return Status::InvalidArgument(fmt::format("the new plan is for node {}, this agent runs {}",
                                               QuoteForMessage(plan.node),
                                               QuoteForMessage(plan_.node)));
  }
  NodePlan old = std::move(plan_);
  plan_ = std::move(plan);
  Status s = ApplyCommandOverrides();
  if (s.ok()) s = CheckMachine();
  if (!s.ok()) plan_ = std::move(old);
  return s;
}

Result<AgentReport> NodeAgent::RunTransition(const Transition& transition,
                                             const std::string& source,
                                             std::optional<int> only_phase) {
  return impl_->RunTransition(transition, source, only_phase);
}

Result<std::vector<AgentInstance>> NodeAgent::Observe() { return impl_->Observe(); }

Result<std::vector<AgentInstance>> NodeAgent::Impl::Observe() {
  const auto units = supervisor_.Scan();
  std::vector<AgentInstance> out;
  for (int index = 0; index < device_count_; ++index) {
    TESSERA_ASSIGN_OR_RETURN(const NvmlGpu gpu, ReadGpu(index));
    if (!gpu.mig_enabled) continue;
    for (const NvmlGpuInstance& gi : gpu.instances) {
      AgentInstance seen;
      seen.gpu = plan_.node_index * plan_.gpus_per_node + index;
      seen.profile = ProfileName(index, gi.profile_id);
      seen.start = gi.start;
      const std::string place = PlaceName(index, gi.start);
      bool daemon = false, serving = false;
      for (const auto& [name, unit] : units) {
        if (unit.place != place) continue;
        if (name == MpsUnit(index, gi.start)) daemon = true;
        // A serving unit is "serve:<service>-<place>-p<k>" (NodeProcess::name).
        const size_t cut = name.rfind("-" + place + "-p");
        if (name.rfind("serve:", 0) == 0 && cut != std::string::npos && cut > 6) {
          serving = true;
          seen.service = name.substr(6, cut - 6);
        }
      }
      if (!options_.serving) {
        for (const NodeInstance* instance : Desired(index)) {
          if (instance->profile_id == gi.profile_id && instance->instance.start == gi.start)
            seen.service = instance->instance.service;
        }
      }
      seen.ready = gi.compute_instances.size() == 1 && daemon && (serving || !options_.serving);
      out.push_back(seen);
    }
  }
  std::sort(out.begin(), out.end(), [](const AgentInstance& a, const AgentInstance& b) {
    return std::tie(a.gpu, a.start) < std::tie(b.gpu, b.start);
  });
  return out;
}

Status NodeAgent::Impl::CloseInterrupted(const std::vector<agent::OpenStep>& open) {
  for (const agent::OpenStep& step : open) {
    const std::string note = fmt::format(
        "step {} ({} on GPU {}, {} at start {}) was interrupted by the previous agent's end; "
        "the node is read afresh and converged",
        step.seq, step.subject.op, step.subject.gpu, step.subject.profile, step.subject.start);
    TESSERA_RETURN_IF_ERROR(
        journal_.End(step.seq, false, "interrupted: the agent ended inside this step", true));
    notes_.push_back(note);
    if (progress_) progress_("note: " + note);
  }
  return Status::Ok();
}

Status NodeAgent::Impl::ApplyCommandOverrides() {
  if (!options_.mps_command.empty()) plan_.serving.mps_command = options_.mps_command;
  if (options_.base_port > 0 || !options_.mps_root.empty()) {
    if (options_.base_port > 0) plan_.serving.base_port = options_.base_port;
    if (!options_.mps_root.empty()) plan_.serving.mps_root = options_.mps_root;
    TESSERA_ASSIGN_OR_RETURN(const GpuModel* model, FindMigGpu(plan_.gpu));
    for (NodeGpu& gpu : plan_.gpus) {
      for (NodeInstance& instance : gpu.instances) {
        const Instance planned{instance.instance.profile,        instance.instance.start,
                               instance.instance.service,        instance.instance.model,
                               instance.instance.batch,          instance.instance.procs,
                               instance.instance.throughput_rps, instance.instance.latency_ms};
        TESSERA_ASSIGN_OR_RETURN(instance,
                                 BuildNodeInstance(plan_.serving, *model, gpu.index, planned));
      }
    }
  }
  if (options_.serve_command.empty()) return Status::Ok();
  plan_.serving.command = options_.serve_command;
  for (NodeGpu& gpu : plan_.gpus) {
    for (NodeInstance& instance : gpu.instances) {
      for (NodeProcess& process : instance.processes) {
        TESSERA_ASSIGN_OR_RETURN(
            process.command,
            ExpandCommand(plan_.serving.command, plan_.serving, instance, process, gpu.index));
      }
    }
  }
  return Status::Ok();
}

Result<NvmlGpu> NodeAgent::Impl::ReadGpu(int index) { return nvml_->ReadGpu(index); }

Status NodeAgent::Impl::CheckMachine() {
  TESSERA_ASSIGN_OR_RETURN(model_, FindMigGpu(plan_.gpu));
  TESSERA_ASSIGN_OR_RETURN(device_count_, nvml_->DeviceCount());
  for (const NodeGpu& planned : plan_.gpus) {
    if (planned.index >= device_count_) {
      return Status::InvalidArgument(fmt::format(
          "the plan places instances on GPU {} of node {}, but NVML lists {} GPU(s) here",
          planned.index, plan_.node, device_count_));
    }
    TESSERA_ASSIGN_OR_RETURN(const NvmlGpu gpu, ReadGpu(planned.index));
    if (!gpu.mig_supported) {
      return Status::InvalidArgument(fmt::format(
          "{} has no MIG; the plan ({} GPUs) needs a GPU with MIG", GpuLabel(gpu), plan_.gpu));
    }
    if (!gpu.mig_enabled) {
      return Status::InvalidArgument(fmt::format(
          "{} has MIG mode off{}; the plan places {} instance(s) there. Provision it first: "
          "`nvidia-smi -i {} -mig 1` (on A100 and A30 a GPU reset follows), or "
          "`nvidia-mig-parted apply -f mig-parted.yaml -c tessera-{} --mode-only`; "
          "the agent never changes the MIG mode",
          GpuLabel(gpu), gpu.mig_pending_enabled ? " (on after a reset: pending)" : "",
          planned.instances.size(), gpu.index, plan_.node));
    }
    for (const NodeInstance& instance : planned.instances) {
      const auto profile =
          std::find_if(gpu.profiles.begin(), gpu.profiles.end(),
                       [&](const NvmlProfile& p) { return p.id == instance.profile_id; });
      if (profile == gpu.profiles.end() ||
          std::find(profile->starts.begin(), profile->starts.end(), instance.instance.start) ==
              profile->starts.end()) {
        return Status::InvalidArgument(fmt::format(
            "{} offers no profile {} ({}) at start {}; the plan is for {} GPUs", GpuLabel(gpu),
            instance.profile_id, instance.instance.profile, instance.instance.start, plan_.gpu));
      }
    }
  }
  return Status::Ok();
}

// ---- Steps ----

Status NodeAgent::Impl::Step(AgentReport& report, StepSubject subject,
                             const std::function<Result<std::string>()>& body) {
  const std::string what =
      fmt::format("{} GPU {} {}@{}{}", subject.op, subject.gpu, subject.profile, subject.start,
                  subject.detail.empty() ? "" : " " + subject.detail);
  TESSERA_ASSIGN_OR_RETURN(const long long seq, journal_.Begin(subject));
  if (progress_) progress_("begin " + what);
  Result<std::string> outcome = body();
  AgentStep step{subject.op, subject.gpu, subject.profile, subject.start, subject.detail, true, ""};
  if (outcome.ok()) {
    TESSERA_RETURN_IF_ERROR(journal_.End(seq, true, *outcome));
    if (progress_) progress_("done  " + what + (outcome->empty() ? "" : ": " + *outcome));
  } else {
    step.ok = false;
    step.error = fmt::format("GPU {}, profile {}, start {}: {}", subject.gpu, subject.profile,
                             subject.start, outcome.status().message());
    TESSERA_RETURN_IF_ERROR(journal_.End(seq, false, step.error));
    if (progress_) progress_("FAIL  " + what + ": " + outcome.status().message());
  }
  report.steps.push_back(step);
  return outcome.ok() ? Status::Ok() : Status::IoError(step.error);
}

std::optional<NvmlGpuInstance> NodeAgent::Impl::FindInstance(const NvmlGpu& gpu, int profile_id,
                                                             int start) const {
  for (const NvmlGpuInstance& gi : gpu.instances) {
    if (gi.profile_id == profile_id && gi.start == start) return gi;
  }
  return std::nullopt;
}

std::string NodeAgent::Impl::ProfileName(int gpu, int profile_id) const {
  for (const MigProfile& p : model_->profiles) {
    if (p.id == profile_id) return p.name;
  }
  return fmt::format("profile {} (GPU {})", profile_id, gpu);
}

std::vector<UnitSpec> NodeAgent::Impl::UnitsOf(int gpu, const NodeInstance& instance,
                                               const std::string& uuid) const {
  std::vector<UnitSpec> units;
  UnitSpec mps;
  mps.name = MpsUnit(gpu, instance.instance.start);
  mps.place = PlaceName(gpu, instance.instance.start);
  Result<std::vector<std::string>> argv =
      ExpandCommand(plan_.serving.mps_command, plan_.serving, instance, NodeProcess{}, gpu);
  mps.argv = argv.ok() ? *argv : plan_.serving.mps_command;
  mps.env = {{"CUDA_VISIBLE_DEVICES", uuid},
             {"CUDA_MPS_PIPE_DIRECTORY", instance.pipe_directory},
             {"CUDA_MPS_LOG_DIRECTORY", instance.log_directory}};
  units.push_back(mps);
  if (!options_.serving) return units;
  for (const NodeProcess& process : instance.processes) {
    UnitSpec serve;
    serve.name = ServeUnit(process);
    serve.place = mps.place;
    serve.argv = process.command;
    serve.env = {
        {"CUDA_VISIBLE_DEVICES", uuid},
        {"CUDA_MPS_PIPE_DIRECTORY", instance.pipe_directory},
        {"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", std::to_string(process.active_thread_percentage)}};
    units.push_back(serve);
  }
  return units;
}

Status NodeAgent::Impl::StopUnits(AgentReport& report, int gpu, int start,
                                  const std::string& profile,
                                  const std::vector<std::string>& names) {
  // Serving processes first (drained: SIGTERM, time to finish what they
  // hold), the MPS daemon last: its clients must be gone before it quits.
  std::vector<std::string> ordered = names;
  std::stable_partition(ordered.begin(), ordered.end(),
                        [](const std::string& n) { return n.rfind("mps:", 0) != 0; });
  Status first;
  for (const std::string& name : ordered) {
    const bool mps = name.rfind("mps:", 0) == 0;
    Status s = Step(report, {mps ? "stop-mps" : "drain", gpu, profile, start, name},
                    [&]() -> Result<std::string> {
                      if (mps && !options_.mps_control_command.empty()) {
                        const auto units = supervisor_.Scan();
                        const auto unit = units.find(name);
                        if (unit != units.end()) {
                          // `quit` reaches the daemon through its pipe directory.
                          Status quit = supervisor_.RunToEnd(
                              options_.mps_control_command,
                              {{"CUDA_MPS_PIPE_DIRECTORY", unit->second.pipe_directory}}, "quit\n",
                              kControlTimeoutS);
                          if (!quit.ok() && progress_) progress_("note: " + quit.message());
                        }
                      }
                      if (supervisor_.Terminate(name, options_.drain_timeout_s)) {
                        return std::string("exited");
                      }
                      return std::string("still running after the drain time");
                    });
    if (s.ok()) {
      s = Step(report, {"stop-process", gpu, profile, start, name}, [&]() -> Result<std::string> {
        TESSERA_RETURN_IF_ERROR(supervisor_.Kill(name));
        return std::string();
      });
    }
    if (first.ok() && !s.ok()) first = s;
  }
  return first;
}

Status NodeAgent::Impl::TearDown(AgentReport& report, int gpu, const NvmlGpuInstance& gi) {
  const std::string profile = ProfileName(gpu, gi.profile_id);
  std::vector<std::string> names;
  for (const auto& [name, unit] : supervisor_.Scan()) {
    if (unit.place == PlaceName(gpu, gi.start)) names.push_back(name);
  }
  TESSERA_RETURN_IF_ERROR(StopUnits(report, gpu, gi.start, profile, names));
  for (const NvmlComputeInstance& ci : gi.compute_instances) {
    TESSERA_RETURN_IF_ERROR(Step(report,
                                 {"destroy-compute-instance", gpu, profile, gi.start,
                                  fmt::format("GI {} CI {}", gi.id, ci.id)},
                                 [&]() -> Result<std::string> {
                                   TESSERA_RETURN_IF_ERROR(
                                       nvml_->DestroyComputeInstance(gpu, gi.id, ci.id));
                                   return std::string();
                                 }));
  }
  return Step(report, {"destroy-gpu-instance", gpu, profile, gi.start, fmt::format("GI {}", gi.id)},
              [&]() -> Result<std::string> {
                TESSERA_RETURN_IF_ERROR(nvml_->DestroyGpuInstance(gpu, gi.id));
                std::error_code ec;
                fs::remove(fmt::format("{}/mig/{}.uuid", state_dir_, PlaceName(gpu, gi.start)), ec);
                return std::string();
              });
}

Status NodeAgent::Impl::WriteUuidFile(int gpu, int start, const std::string& uuid) {
  TESSERA_RETURN_IF_ERROR(MakeDirectories(state_dir_ + "/mig"));
  const std::string path = fmt::format("{}/mig/{}.uuid", state_dir_, PlaceName(gpu, start));
  Result<std::string> known = ReadTextFile(path);
  if (known.ok() && *known == uuid + "\n") return Status::Ok();
  return WriteAtomically(path, uuid + "\n", "the MIG UUID file");
}

Status NodeAgent::Impl::WaitForDaemon(const NodeInstance& instance) {
  if (options_.mps_control_command.empty()) return Status::Ok();
  const Deadline deadline(*options_.clock, options_.ready_timeout_s);
  while (true) {
    Status answered = supervisor_.RunToEnd(options_.mps_control_command,
                                           {{"CUDA_MPS_PIPE_DIRECTORY", instance.pipe_directory}},
                                           "get_server_list\n", kControlTimeoutS);
    if (answered.ok()) return answered;
    if (deadline.Passed()) {
      return Status::IoError(
          fmt::format("the MPS control daemon in {} does not answer after {} s: {}",
                      instance.pipe_directory, options_.ready_timeout_s, answered.message()));
    }
    ::usleep(50 * 1000);
  }
}

Status NodeAgent::Impl::Ensure(AgentReport& report, int gpu, const NodeInstance& target) {
  TESSERA_ASSIGN_OR_RETURN(NvmlGpu observed, ReadGpu(gpu));
  std::optional<NvmlGpuInstance> gi =
      FindInstance(observed, target.profile_id, target.instance.start);
  if (!gi) {
    TESSERA_RETURN_IF_ERROR(Step(
        report, {"create-gpu-instance", gpu, target.instance.profile, target.instance.start, ""},
        [&]() -> Result<std::string> {
          TESSERA_ASSIGN_OR_RETURN(
              gi, nvml_->CreateGpuInstance(gpu, target.profile_id, target.instance.start));
          return fmt::format("GI {}", gi->id);
        }));
  }
  // Exactly one compute instance, the full-size one the agent makes: any
  // other (made by hand, or half of an interrupted step) is replaced.
  const int slices = target.compute_slices;
  for (const NvmlComputeInstance& ci : gi->compute_instances) {
    if (gi->compute_instances.size() == 1 && ci.slice_count == slices) break;
    std::vector<std::string> names;
    for (const auto& [name, unit] : supervisor_.Scan()) {
      if (unit.place == PlaceName(gpu, target.instance.start)) names.push_back(name);
    }
    TESSERA_RETURN_IF_ERROR(
        StopUnits(report, gpu, target.instance.start, target.instance.profile, names));
    TESSERA_RETURN_IF_ERROR(
        Step(report,
             {"destroy-compute-instance", gpu, target.instance.profile, target.instance.start,
              fmt::format("GI {} CI {} (not the plan's)", gi->id, ci.id)},
             [&]() -> Result<std::string> {
               TESSERA_RETURN_IF_ERROR(nvml_->DestroyComputeInstance(gpu, gi->id, ci.id));
               return std::string();
             }));
  }
  if (gi->compute_instances.size() != 1 || gi->compute_instances.front().slice_count != slices) {
    NvmlComputeInstance made;
    TESSERA_RETURN_IF_ERROR(Step(report,
                                 {"create-compute-instance", gpu, target.instance.profile,
                                  target.instance.start, fmt::format("GI {}", gi->id)},
                                 [&]() -> Result<std::string> {
                                   TESSERA_ASSIGN_OR_RETURN(
                                       made, nvml_->CreateComputeInstance(gpu, gi->id));
                                   return fmt::format("CI {} {}", made.id, made.uuid);
                                 }));
    gi->compute_instances = {made};
  }
  const std::string uuid = gi->compute_instances.front().uuid;
  const std::vector<UnitSpec> want = UnitsOf(gpu, target, uuid);
  // Units at this place that are not wanted as they run: stopped. One scan
  // serves the whole decision, and another only when something stopped.
  std::map<std::string, RunningUnit> running = supervisor_.Scan();
  std::vector<std::string> stale;
  for (const auto& [name, unit] : running) {
    if (unit.place != PlaceName(gpu, target.instance.start)) continue;
    const auto spec =
        std::find_if(want.begin(), want.end(), [&](const UnitSpec& u) { return u.name == name; });
    if (spec == want.end() || spec->Fingerprint() != unit.spec) stale.push_back(name);
  }
  // A changed MPS daemon takes its clients with it.
  if (std::find(stale.begin(), stale.end(), MpsUnit(gpu, target.instance.start)) != stale.end()) {
    for (const auto& [name, unit] : running) {
      if (unit.place == PlaceName(gpu, target.instance.start) &&
          std::find(stale.begin(), stale.end(), name) == stale.end()) {
        stale.push_back(name);
      }
    }
  }
  if (!stale.empty()) {
    TESSERA_RETURN_IF_ERROR(
        StopUnits(report, gpu, target.instance.start, target.instance.profile, stale));
    running = supervisor_.Scan();
  }
  TESSERA_RETURN_IF_ERROR(MakeDirectories(target.pipe_directory));
  TESSERA_RETURN_IF_ERROR(MakeDirectories(target.log_directory));
  std::vector<const UnitSpec*> started;
  bool daemon_answers = false;  // the daemon answered since this run looked
  for (const UnitSpec& unit : want) {
    if (running.count(unit.name) > 0) continue;
    const bool mps = unit.name.rfind("mps:", 0) == 0;
    TESSERA_RETURN_IF_ERROR(Step(report,
                                 {mps ? "start-mps" : "start-process", gpu, target.instance.profile,
                                  target.instance.start, unit.name},
                                 [&]() -> Result<std::string> {
                                   // The first client also waits for a daemon that an earlier
                                   // (killed) agent started and this run found running.
                                   if (!mps && !daemon_answers)
                                     TESSERA_RETURN_IF_ERROR(WaitForDaemon(target));
                                   TESSERA_RETURN_IF_ERROR(supervisor_.Start(unit));
                                   if (mps) TESSERA_RETURN_IF_ERROR(WaitForDaemon(target));
                                   daemon_answers = true;
                                   return std::string();
                                 }));
    if (!mps) started.push_back(&unit);
  }
  // The MIG UUID of the place, for serving pods (docs/deployment.md, "The
  // MIG UUID file contract"): written once its MPS daemon runs.
  TESSERA_RETURN_IF_ERROR(WriteUuidFile(gpu, target.instance.start, uuid));
  // What this run started is waited for here; a process an earlier agent
  // started is waited for by Reconcile's final check.
  for (const NodeProcess& process : target.processes) {
    const std::string name = ServeUnit(process);
    if (std::none_of(started.begin(), started.end(),
                     [&](const UnitSpec* u) { return u->name == name; })) {
      continue;
    }
    TESSERA_RETURN_IF_ERROR(
        Step(report, {"wait-ready", gpu, target.instance.profile, target.instance.start, name},
             [&]() -> Result<std::string> {
               TESSERA_RETURN_IF_ERROR(
                   supervisor_.WaitReady(name, process.http_port, options_.ready_timeout_s));
               return fmt::format("port {}", process.http_port);
             }));
  }
  return Status::Ok();
}

// ---- Reconciling ----

std::vector<const NodeInstance*> NodeAgent::Impl::Desired(int gpu) const {
  std::vector<const NodeInstance*> out;
  for (const NodeGpu& g : plan_.gpus) {
    if (g.index != gpu) continue;
    for (const NodeInstance& instance : g.instances) out.push_back(&instance);
  }
  return out;
}

bool NodeAgent::Impl::Matches(int gpu_index, const NvmlGpu& gpu,
                              const std::vector<const NodeInstance*>& want,
                              const std::map<std::string, RunningUnit>& units,
                              std::string* why) const {
  if (gpu.instances.size() != want.size()) {
    *why = fmt::format("GPU {} holds {} GPU instance(s), the plan {}", gpu_index,
                       gpu.instances.size(), want.size());
    return false;
  }
  for (const NodeInstance* instance : want) {
    const std::optional<NvmlGpuInstance> gi =
        FindInstance(gpu, instance->profile_id, instance->instance.start);
    if (!gi || gi->compute_instances.size() != 1 ||
        gi->compute_instances.front().slice_count != instance->compute_slices) {
      *why = fmt::format("GPU {} {}@{} is missing or lacks its one compute instance", gpu_index,
                         instance->instance.profile, instance->instance.start);
      return false;
    }
    for (const UnitSpec& spec : UnitsOf(gpu_index, *instance, gi->compute_instances.front().uuid)) {
      const auto unit = units.find(spec.name);
      if (unit == units.end() || unit->second.spec != spec.Fingerprint()) {
        *why = fmt::format("{} is not running as the plan says", spec.name);
        return false;
      }
    }
  }
  return true;
}

Result<AgentReport> NodeAgent::Impl::Reconcile(AgentReport report) {
  report.notes.insert(report.notes.end(), notes_.begin(), notes_.end());
  notes_.clear();
  TESSERA_RETURN_IF_ERROR(
      journal_.Record("run", {{"mode", "reconcile"}, {"node", plan_.node}, {"pid", ::getpid()}}));
  Status failed;
  auto remember = [&](const Status& s) {
    if (failed.ok() && !s.ok()) failed = s;
  };
  std::vector<int> managed;
  std::set<std::string> places;  // the places the plan keeps
  for (int index = 0; index < device_count_; ++index) {
    TESSERA_ASSIGN_OR_RETURN(const NvmlGpu gpu, ReadGpu(index));
    const std::vector<const NodeInstance*> want = Desired(index);
    if (!gpu.mig_enabled) {
      if (!want.empty()) {
        return Status::InvalidArgument(
            fmt::format("{} has MIG mode off since the agent started", GpuLabel(gpu)));
      }
      continue;
    }
    managed.push_back(index);
    for (const NodeInstance* instance : want)
      places.insert(PlaceName(index, instance->instance.start));
    for (const NvmlGpuInstance& gi : gpu.instances) {
      const bool kept = std::any_of(want.begin(), want.end(), [&](const NodeInstance* i) {
        return i->profile_id == gi.profile_id && i->instance.start == gi.start;
      });
      if (!kept) remember(TearDown(report, index, gi));
    }
  }
  // Processes whose instance the plan does not keep (their GPU instance may
  // be gone already: an agent killed between the two).
  std::map<std::string, std::vector<std::string>> strays;
  for (const auto& [name, unit] : supervisor_.Scan()) {
    if (places.count(unit.place) == 0) strays[unit.place].push_back(name);
  }
  for (const auto& [place, names] : strays) {
    int gpu = 0, start = 0;
    std::sscanf(place.c_str(), "gpu%d-start%d", &gpu, &start);
    remember(StopUnits(report, gpu, start, "", names));
  }
  for (const NodeGpu& g : plan_.gpus) {
    for (const NodeInstance& instance : g.instances) remember(Ensure(report, g.index, instance));
  }
  // The node as it is now, read afresh: the plan's instances, each with its
  // processes running as planned and ready.
  const auto units = supervisor_.Scan();
  std::string why;
  bool matches = failed.ok();
  for (int index : managed) {
    if (!matches) break;
    TESSERA_ASSIGN_OR_RETURN(const NvmlGpu gpu, ReadGpu(index));
    matches = Matches(index, gpu, Desired(index), units, &why);
  }
  for (const auto& [name, unit] : units) {
    if (matches && places.count(unit.place) == 0) {
      matches = false;
      why = name + " runs outside the plan";
    }
  }
  for (const NodeGpu& g : plan_.gpus) {
    for (const NodeInstance& instance : g.instances) {
      for (const NodeProcess& p : instance.processes) {
        if (!matches || !options_.serving) break;
        Status ready = supervisor_.WaitReady(ServeUnit(p), p.http_port, options_.ready_timeout_s);
        if (!ready.ok()) {
          matches = false;
          why = ready.message();
        }
      }
    }
  }
  if (!matches && !why.empty()) report.notes.push_back("not converged: " + why);
  report.converged = matches;
  TESSERA_RETURN_IF_ERROR(journal_.Record(
      "converged", {{"ok", matches}, {"steps", report.steps.size()}, {"why", why}}));
  return report;
}

// ---- Transitions ----

std::set<int> NodeAgent::Impl::LoadProgress(const std::string& id) const {
  std::set<int> done;
  Result<std::string> text = ReadTextFile(state_dir_ + "/transition.json");
  if (!text.ok()) return done;
  const nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object() || !j.contains("transition") || j["transition"] != id ||
      !j.contains("phases_done") || !j["phases_done"].is_array()) {
    return done;
  }
  for (const auto& k : j["phases_done"]) {
    if (k.is_number_integer()) done.insert(k.get<int>());
  }
  return done;
}

Status NodeAgent::Impl::SaveProgress(const std::string& id, const std::set<int>& done) {
  nlohmann::ordered_json j;
  j["transition"] = id;
  j["phases_done"] = done;
  return WriteAtomically(state_dir_ + "/transition.json", j.dump(2) + "\n",
                         "the transition's progress");
}

Result<AgentReport> NodeAgent::Impl::RunTransition(const Transition& t, const std::string& source,
                                                   std::optional<int> only_phase) {
  const int phases = static_cast<int>(t.phases.size());
  if (t.gpu != plan_.gpu) {
    return Status::InvalidArgument(fmt::format("{}: the transition is for {} GPUs, the plan for {}",
                                               source, t.gpu, plan_.gpu));
  }
  if (only_phase && (*only_phase < 1 || *only_phase > phases)) {
    return Status::InvalidArgument(
        fmt::format("--phase {}: {} has phases 1 to {}", *only_phase, source, phases));
  }
  // This node's steps, by phase, with local GPU indices.
  const int per_node = plan_.gpus_per_node;
  std::vector<std::vector<TransitionStep>> mine(phases);
  std::map<std::pair<int, int>, const TransitionStep*> last;  // (local GPU, start) -> last step
  for (int k = 0; k < phases; ++k) {
    for (const TransitionStep& step : t.phases[k].steps) {
      if (step.gpu / per_node != plan_.node_index) continue;
      TransitionStep local = step;
      local.gpu = step.gpu % per_node;
      if (local.gpu >= device_count_) {
        return Status::InvalidArgument(fmt::format(
            "{}: step {} acts on cluster GPU {} (GPU {} of node {}), but NVML lists {} GPU(s)",
            source, step.id, step.gpu, local.gpu, plan_.node, device_count_));
      }
      if (model_->FindProfile(step.profile) == nullptr) {
        return Status::InvalidArgument(fmt::format("{}: step {}: {} has no profile {}", source,
                                                   step.id, plan_.gpu,
                                                   QuoteForMessage(step.profile)));
      }
      mine[k].push_back(local);
    }
  }
  for (const auto& phase : mine) {
    for (const TransitionStep& step : phase) last[{step.gpu, step.start}] = &step;
  }
  // The plan must be the node after the transition (`tessera deploy
  // --transition`): the final reconcile would otherwise undo it.
  for (const auto& [place, step] : last) {
    const std::vector<const NodeInstance*> want = Desired(place.first);
    const bool listed = std::any_of(want.begin(), want.end(), [&](const NodeInstance* i) {
      return i->instance.start == place.second && i->instance.profile == step->profile &&
             i->instance.service == step->service;
    });
    if (listed == (step->action == StepAction::kDestroy)) {
      return Status::InvalidArgument(fmt::format(
          "the plan of node {} is not this node after {}: step {} leaves GPU {} start {} {}, the "
          "plan {}; write the plan with `tessera deploy --deployment B.json --transition {}`",
          plan_.node, source, step->id, place.first, place.second,
          step->action == StepAction::kDestroy ? "empty" : "serving " + step->service,
          listed ? "lists an instance there" : "does not", source));
    }
  }
  const std::string id = Fnv1a(FormatTransitionJson(t));
  std::set<int> done = LoadProgress(id);
  AgentReport report;
  report.notes = std::move(notes_);
  notes_.clear();
  TESSERA_RETURN_IF_ERROR(journal_.Record("run", {{"mode", "transition"},
                                                  {"node", plan_.node},
                                                  {"transition", id},
                                                  {"source", source},
                                                  {"phases", phases},
                                                  {"pid", ::getpid()}}));
  for (int k = 1; k <= phases; ++k) {
    const std::vector<TransitionStep>& steps = mine[k - 1];
    if (done.count(k) > 0) {
      ++report.phases_skipped;
      continue;
    }
    if (only_phase && k != *only_phase) {
      if (k < *only_phase && !steps.empty()) {
        return Status::InvalidArgument(fmt::format(
            "--phase {}: phase {} of {} has steps on node {} that have not run; run it first",
            *only_phase, k, source, plan_.node));
      }
      continue;
    }
    if (progress_)
      progress_(fmt::format("phase {}/{}: {} step(s) on this node", k, phases, steps.size()));
    TESSERA_RETURN_IF_ERROR(journal_.Record("phase-begin", {{"transition", id}, {"phase", k}}));
    Status failed;
    // Destroys first (their slices may be what a later phase needs), then
    // reconfigures and creates; each step converges its place, so a phase
    // run again after a crash redoes only what is not done.
    for (const TransitionStep& step : steps) {
      if (step.action != StepAction::kDestroy || !failed.ok()) continue;
      TESSERA_ASSIGN_OR_RETURN(const NvmlGpu gpu, ReadGpu(step.gpu));
      const std::optional<NvmlGpuInstance> gi =
          FindInstance(gpu, model_->FindProfile(step.profile)->id, step.start);
      if (gi) failed = TearDown(report, step.gpu, *gi);
    }
    for (const TransitionStep& step : steps) {
      if (step.action == StepAction::kDestroy || !failed.ok()) continue;
      TESSERA_ASSIGN_OR_RETURN(
          const NodeInstance target,
          BuildNodeInstance(plan_.serving, *model_, step.gpu, InstanceAfter(step)));
      failed = Ensure(report, step.gpu, target);
    }
    if (!failed.ok()) {
      report.notes.push_back(fmt::format("phase {} stopped: {}", k, failed.message()));
      return report;
    }
    done.insert(k);
    TESSERA_RETURN_IF_ERROR(SaveProgress(id, done));
    TESSERA_RETURN_IF_ERROR(journal_.Record("phase-end", {{"transition", id}, {"phase", k}}));
    ++report.phases_run;
  }
  if (only_phase && *only_phase < phases) {
    report.converged = true;  // this phase is done; the node is between plans
    return report;
  }
  return Reconcile(std::move(report));
}

// ---- Inventory ----

std::string FormatInventoryText(const std::vector<NvmlGpu>& gpus) {
  std::string out;
  for (const NvmlGpu& gpu : gpus) {
    out += fmt::format("GPU {}: {} ({}), MIG {}{}\n", gpu.index, gpu.name, gpu.uuid,
                       !gpu.mig_supported ? "not supported"
                       : gpu.mig_enabled  ? "on"
                                          : "off",
                       gpu.mig_supported && gpu.mig_pending_enabled != gpu.mig_enabled
                           ? fmt::format(" (pending {})", gpu.mig_pending_enabled ? "on" : "off")
                           : "");
    if (!gpu.mig_enabled) continue;
    if (gpu.instances.empty()) {
      out += "  no GPU instances\n";
      continue;
    }
    out += fmt::format("  {:>3}  {:<12} {:>10}  {:<15}  {:>3}  {}\n", "GI", "profile", "profile ID",
                       "placement", "CI", "MIG device");
    for (const NvmlGpuInstance& gi : gpu.instances) {
      std::string name = fmt::format("id {}", gi.profile_id);
      for (const NvmlProfile& p : gpu.profiles) {
        if (p.id == gi.profile_id) name = p.name;
      }
      const std::string placement = fmt::format("{}:{}", gi.start, gi.size);
      if (gi.compute_instances.empty()) {
        out += fmt::format("  {:>3}  {:<12} {:>10}  {:<15}  {:>3}  {}\n", gi.id, name,
                           gi.profile_id, placement, "-", "(no compute instance)");
      }
      for (const NvmlComputeInstance& ci : gi.compute_instances) {
        out += fmt::format("  {:>3}  {:<12} {:>10}  {:<15}  {:>3}  {}\n", gi.id, name,
                           gi.profile_id, placement, ci.id, ci.uuid);
      }
    }
  }
  if (gpus.empty()) out += "no GPUs\n";
  return out;
}

std::string FormatInventoryJson(const std::vector<NvmlGpu>& gpus) {
  nlohmann::ordered_json doc;
  doc["format"] = "tessera-inventory";
  doc["version"] = 1;
  doc["gpus"] = nlohmann::ordered_json::array();
  for (const NvmlGpu& gpu : gpus) {
    nlohmann::ordered_json g;
    g["index"] = gpu.index;
    g["name"] = gpu.name;
    g["uuid"] = gpu.uuid;
    g["mig_supported"] = gpu.mig_supported;
    g["mig_enabled"] = gpu.mig_enabled;
    g["mig_pending_enabled"] = gpu.mig_pending_enabled;
    g["profiles"] = nlohmann::ordered_json::array();
    for (const NvmlProfile& p : gpu.profiles) {
      g["profiles"].push_back({{"name", p.name},
                               {"id", p.id},
                               {"nvml_profile", p.nvml_profile},
                               {"slices", p.slice_count},
                               {"memory_slices", p.memory_slices},
                               {"instances", p.instance_count},
                               {"sms", p.multiprocessor_count},
                               {"memory_mib", p.memory_mib},
                               {"starts", p.starts}});
    }
    g["gpu_instances"] = nlohmann::ordered_json::array();
    for (const NvmlGpuInstance& gi : gpu.instances) {
      nlohmann::ordered_json cis = nlohmann::ordered_json::array();
      for (const NvmlComputeInstance& ci : gi.compute_instances) {
        cis.push_back({{"id", ci.id},
                       {"profile_id", ci.profile_id},
                       {"slices", ci.slice_count},
                       {"uuid", ci.uuid}});
      }
      g["gpu_instances"].push_back({{"id", gi.id},
                                    {"profile_id", gi.profile_id},
                                    {"start", gi.start},
                                    {"size", gi.size},
                                    {"compute_instances", cis}});
    }
    doc["gpus"].push_back(g);
  }
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace tessera
