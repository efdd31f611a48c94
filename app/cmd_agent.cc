// `tessera agent`: the node agent (node_agent.h). `agent --node N --plan
// nodeplan.json --state-dir DIR` reconciles the node to its NodePlan (once
// with --once, else every --interval until SIGTERM); with --transition it
// runs the node's part of a transition; `agent --server URL --node N
// --state-dir DIR` runs under `tessera serve` (remote_agent.h) until SIGTERM;
// `agent inventory` lists the GPUs and MIG instances NVML reports, read-only.
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "cli_flags.h"
#include "cli_output.h"
#include "commands.h"
#include "net_command.h"
#include "output_file.h"
#include "tessera/agent/node_agent.h"
#include "tessera/agent/remote_agent.h"
#include "tessera/durations.h"
#include "tessera/emit/node_plan.h"
#include "tessera/nvml/nvml.h"
#include "tessera/transition/transition_format.h"
#include "tessera/util/text_io.h"

namespace tessera::cli {
namespace {

volatile std::sig_atomic_t g_stop = 0;
void OnStop(int) { g_stop = 1; }

struct AgentFlags {
  std::string node;
  std::string plan;
  std::string state_dir;
  std::string nvml = kDefaultNvmlLibrary;
  bool once = false;
  std::string transition;
  int phase = 0;  // 0 = every phase
  std::string serve_command;
  std::string mps_command;
  std::string mps_control_command = "nvidia-cuda-mps-control";
  int base_port = 0;
  std::string mps_root;
  bool no_serving = false;
  double ready_timeout_s = 120;
  double drain_timeout_s = 30;
  double interval_s = 30;
  std::string format = "text";
  bool quiet = false;
  std::string server;      // --server: run under a control plane
  std::string token_file;  // its bearer token
  int poll_wait_s = 30;
};

struct InventoryFlags {
  std::string nvml = kDefaultNvmlLibrary;
  std::string format = "text";
  std::string output = "-";
};

struct MigFlags {
  std::string nvml = kDefaultNvmlLibrary;
  std::string format = "text";
  int gpu = 0;
  int profile_id = 0;
  int start = 0;
};

// A command flag's words, split at spaces (no shell quoting: a command that
// needs it goes in a script); "none" = no command.
std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  if (words.size() == 1 && words[0] == "none") words.clear();
  return words;
}

std::string ReportJson(const NodePlan& plan, const AgentReport& report) {
  nlohmann::ordered_json j;
  j["node"] = plan.node;
  j["converged"] = report.converged;
  j["phases_run"] = report.phases_run;
  j["phases_skipped"] = report.phases_skipped;
  j["steps"] = nlohmann::ordered_json::array();
  for (const AgentStep& s : report.steps) {
    nlohmann::ordered_json step = {{"op", s.op},       {"gpu", s.gpu},       {"profile", s.profile},
                                   {"start", s.start}, {"detail", s.detail}, {"ok", s.ok}};
    if (!s.ok) step["error"] = s.error;
    j["steps"].push_back(step);
  }
  j["notes"] = report.notes;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string ReportText(const NodePlan& plan, const AgentReport& report, bool transition) {
  int failed = 0;
  for (const AgentStep& s : report.steps) failed += s.ok ? 0 : 1;
  std::string out = fmt::format("node {}: {}, {} step(s) run, {} failed", plan.node,
                                report.converged ? "converged to its plan" : "NOT converged",
                                report.steps.size(), failed);
  if (transition) {
    out +=
        fmt::format("; {} phase(s) run, {} done before", report.phases_run, report.phases_skipped);
  }
  out += "\n";
  for (const AgentStep& s : report.steps) {
    if (!s.ok) out += "  failed: " + s.op + ": " + s.error + "\n";
  }
  for (const std::string& note : report.notes) out += "  note: " + note + "\n";
  return out;
}

Result<NodePlan> ReadPlan(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(const std::string text, ReadTextFile(path));
  return ParseNodePlanJson(text, path);
}

AgentOptions Options(const AgentFlags& flags) {
  AgentOptions options;
  options.state_dir = flags.state_dir;
  options.serve_command = Words(flags.serve_command);
  options.mps_command = Words(flags.mps_command);
  options.mps_control_command = Words(flags.mps_control_command);
  options.base_port = flags.base_port;
  options.mps_root = flags.mps_root;
  options.serving = !flags.no_serving;
  options.ready_timeout_s = flags.ready_timeout_s;
  options.drain_timeout_s = flags.drain_timeout_s;
  return options;
}

AgentProgress Progress(const AgentFlags& flags) {
  if (flags.quiet) return nullptr;
  return [](const std::string& line) { PrintMessage("tessera: agent: " + line + "\n"); };
}

#ifdef TESSERA_CLI_NET
// Under `tessera serve`: polls, applies and reports until SIGTERM or SIGINT
// (then ends after the step in flight, exit 0).
int RunRemoteAgent(const AgentFlags& flags) {
  if (flags.node.empty() || flags.state_dir.empty()) {
    return ReportError(
        Status::InvalidArgument("agent: --server needs --node and --state-dir; see tessera agent "
                                "--help"));
  }
  RemoteAgentOptions options;
  options.server = flags.server;
  options.node = flags.node;
  options.nvml_library = flags.nvml;
  options.agent = Options(flags);
  options.poll_wait_s = flags.poll_wait_s;
  if (!flags.token_file.empty()) {
    Result<std::string> token = ReadTokenFile(flags.token_file);
    if (!token.ok()) return ReportError(token.status());
    options.token = *token;
  }
  Result<std::unique_ptr<RemoteAgent>> agent = RemoteAgent::Create(options, Progress(flags));
  if (!agent.ok()) return ReportError(agent.status());
  const Status s = RunUntilStopped([&] { return (*agent)->Run(); }, [&] { (*agent)->Stop(); });
  if (!s.ok()) return ReportError(s);
  return kExitOk;
}
#endif  // TESSERA_CLI_NET

int RunAgent(const AgentFlags& flags) {
#ifdef TESSERA_CLI_NET
  if (!flags.server.empty()) return RunRemoteAgent(flags);
#else
  if (!flags.server.empty()) return RunInNetBinary();
#endif
  if (flags.node.empty() || flags.plan.empty() || flags.state_dir.empty()) {
    return ReportError(Status::InvalidArgument(
        "agent: --node, --plan and --state-dir are required (or --server, --node and "
        "--state-dir under `tessera serve`, or `tessera agent inventory`); see tessera agent "
        "--help"));
  }
  if (flags.phase != 0 && flags.transition.empty()) {
    return ReportError(Status::InvalidArgument("agent: --phase needs --transition"));
  }
  Result<NodePlan> plan = ReadPlan(flags.plan);
  if (!plan.ok()) return ReportError(plan.status());
  std::optional<Transition> transition;
  if (!flags.transition.empty()) {
    Result<std::string> text = ReadTextFile(flags.transition);
    if (!text.ok()) return ReportError(text.status());
    Result<Transition> parsed = ParseTransitionJson(*text, flags.transition);
    if (!parsed.ok()) return ReportError(parsed.status());
    transition = std::move(*parsed);
  }
  const NodePlan shown = *plan;
  Result<std::unique_ptr<NodeAgent>> agent =
      NodeAgent::Open(flags.node, std::move(*plan), flags.nvml, Options(flags), Progress(flags));
  if (!agent.ok()) return ReportError(agent.status());
  std::signal(SIGTERM, OnStop);
  std::signal(SIGINT, OnStop);
  while (true) {
    Result<AgentReport> report =
        transition
            ? (*agent)->RunTransition(*transition, flags.transition,
                                      flags.phase ? std::optional<int>(flags.phase) : std::nullopt)
            : (*agent)->Reconcile();
    if (!report.ok()) return ReportError(report.status());
    const std::string out = flags.format == "json"
                                ? ReportJson(shown, *report)
                                : EscapeMessage(ReportText(shown, *report, transition.has_value()));
    std::cout << out << std::flush;
    if (flags.once || transition) return report->converged ? kExitOk : kExitInfeasible;
    const Deadline next(SystemClock(), flags.interval_s);
    while (!g_stop && !next.Passed()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (g_stop) return report->converged ? kExitOk : kExitInfeasible;
    // The plan file may have changed (a ConfigMap update): the next round
    // converges to it; a plan that does not read or fit is reported and the
    // last good one kept.
    Result<NodePlan> next_plan = ReadPlan(flags.plan);
    Status adopted = next_plan.ok() ? (*agent)->SetPlan(std::move(*next_plan)) : next_plan.status();
    if (!adopted.ok())
      PrintMessage("tessera: agent: keeping the last plan: " + adopted.message() + "\n");
  }
}

int RunInventory(const InventoryFlags& flags) {
  Result<std::unique_ptr<Nvml>> nvml = Nvml::Open(flags.nvml);
  if (!nvml.ok()) return ReportError(nvml.status());
  Result<std::vector<NvmlGpu>> gpus = ReadInventory(**nvml);
  if (!gpus.ok()) return ReportError(gpus.status());
  const std::string out = flags.format == "json" ? FormatInventoryJson(*gpus)
                                                 : EscapeMessage(FormatInventoryText(*gpus));
  if (Status s = WriteOutput(flags.output, out); !s.ok()) return ReportError(s);
  return kExitOk;
}

// `agent mig create`: the instance found or made, one line of text or JSON.
int RunMigCreate(const MigFlags& flags) {
  Result<std::unique_ptr<Nvml>> nvml = Nvml::Open(flags.nvml);
  if (!nvml.ok()) return ReportError(nvml.status());
  Result<NvmlGpuInstance> gi = EnsureMigInstance(**nvml, flags.gpu, flags.profile_id, flags.start);
  if (!gi.ok()) return ReportError(gi.status());
  const NvmlComputeInstance& ci = gi->compute_instances.front();
  if (flags.format == "json") {
    const nlohmann::ordered_json out = {{"gpu", flags.gpu},   {"profile_id", gi->profile_id},
                                        {"start", gi->start}, {"size", gi->size},
                                        {"gi", gi->id},       {"ci", ci.id},
                                        {"uuid", ci.uuid}};
    std::cout << out.dump() << "\n";
  } else {
    std::cout << EscapeMessage(fmt::format("GPU {} start {}: GI {} CI {} {}\n", flags.gpu,
                                           gi->start, gi->id, ci.id, ci.uuid));
  }
  return kExitOk;
}

// `agent mig destroy`: nothing printed but with --format json ({"gpu", "start"}).
int RunMigDestroy(const MigFlags& flags) {
  Result<std::unique_ptr<Nvml>> nvml = Nvml::Open(flags.nvml);
  if (!nvml.ok()) return ReportError(nvml.status());
  if (Status s = RemoveMigInstance(**nvml, flags.gpu, flags.start); !s.ok()) return ReportError(s);
  if (flags.format == "json") {
    std::cout << nlohmann::ordered_json{{"gpu", flags.gpu}, {"start", flags.start}}.dump() << "\n";
  }
  return kExitOk;
}

constexpr const char* kMigFooter =
    "Makes or removes one MIG instance, as the mig.tessera.io DRA node plugin does for a\n"
    "claim (docs/dra.md): create finds the GPU instance of --profile-id at --start with\n"
    "its full compute instance, or makes what is missing of them; destroy removes the\n"
    "GPU instance at --start, compute instances first. Both are idempotent: run twice,\n"
    "the second run changes nothing. The MIG mode is never changed.\n\n"
    "Examples:\n"
    "  tessera agent mig create --gpu 0 --profile-id 9 --start 4 --format json\n"
    "  tessera agent mig destroy --gpu 0 --start 4";

constexpr const char* kAgentFooter =
    "The node agent makes one node run its NodePlan (written by `tessera deploy`, one per\n"
    "node: DIR/nodes/<node>.json). It loads NVML at run time (--nvml; no CUDA needed to\n"
    "build), reads every GPU instance, compute instance and process it started, and\n"
    "converges the node to the plan by (GPU, profile, start):\n"
    "  not in the plan:  drain -> stop processes -> stop the MPS daemon -> destroy the\n"
    "                    compute instances -> destroy the GPU instance\n"
    "  new in the plan:  create the GPU instance at its start -> create its compute\n"
    "                    instance -> start the MPS daemon -> start the serving processes\n"
    "                    -> wait until GET /v2/health/ready answers 200\n"
    "It owns the MIG state of every GPU of the node with MIG on, and never changes the\n"
    "MIG mode: a GPU the plan uses with MIG off is an error saying how to provision it.\n\n"
    "Crash safety: each step is journaled in --state-dir (journal.jsonl) before and after\n"
    "it runs; killed at any point and started again, the agent converges with no orphan\n"
    "or duplicate instance and no process left behind. Run twice, the second run does\n"
    "nothing. --transition runs the node's steps of a transition phase by phase (done\n"
    "phases are kept in the state dir; --phase K runs one phase, for a coordinator),\n"
    "then converges to --plan, which must be the node after it (`tessera deploy\n"
    "--deployment B.json --transition T.json`).\n\n"
    "Under a control plane (--server URL instead of --plan; docs/control-plane.md), the\n"
    "agent long-polls GET /v1/nodes/<node>/plan: it adopts the node's plan, runs each\n"
    "transition phase it has steps in and posts the result (POST /v1/nodes/<node>/status:\n"
    "ok, or the failed step's error; then the daemon dispatches the next phase), and\n"
    "otherwise reconciles to the plan and posts whether it converged and what runs where\n"
    "(its inventory) when that changes. Network errors and 5xx answers are retried with\n"
    "backoff. --server may list the replicas of a replicated control plane\n"
    "(http://a:8080,http://b:8080,http://c:8080): the agent tries the next on an error and\n"
    "follows a follower's 307 to the leader. SIGTERM or SIGINT ends it after the step in flight "
    "(exit 0). --token-file\n"
    "holds the daemon's bearer token.\n\n"
    "Commands (--serve-command, --mps-command) are split at spaces and take the\n"
    "NodePlan placeholders {model_repository} {model} {model_config} {batch} {http_port}\n"
    "{grpc_port} {metrics_port} {service} {gpu} {start} {process} {pipe_directory}\n"
    "{log_directory}. Each process gets CUDA_VISIBLE_DEVICES=<MIG UUID>,\n"
    "CUDA_MPS_PIPE_DIRECTORY, and CUDA_MPS_ACTIVE_THREAD_PERCENTAGE (clients) or\n"
    "CUDA_MPS_LOG_DIRECTORY (the daemon); logs go to DIR/logs/.\n\n"
    "Exit codes: 0 the node runs its plan (--server: stopped by a signal); 3 some step\n"
    "failed (each is listed with its GPU, profile and start, and NVML's error); 2 bad\n"
    "input (plan, flags, URL, MIG mode off, NVML not loadable, another agent on the state\n"
    "dir; --server: the daemon refused the token, or answered what the agent cannot use).\n\n"
    "Examples:\n"
    "  tessera deploy --deployment plan.json --out deploy\n"
    "  sudo tessera agent --node node-0 --plan deploy/nodes/node-0.json --state-dir "
    "/var/lib/tessera --once\n"
    "  tessera agent --node node-0 --plan deploy/nodes/node-0.json --state-dir st \\\n"
    "      --nvml build/libtessera-fake-nvml.so --once    # on the fake NVML\n"
    "  tessera agent --node node-0 --plan B/nodes/node-0.json --state-dir /var/lib/tessera \\\n"
    "      --transition T.json\n"
    "  tessera agent --server http://10.0.0.5:8080 --node node-0 --state-dir /var/lib/tessera \\\n"
    "      --token-file /etc/tessera/token    # under `tessera serve`\n"
    "  tessera agent inventory --format json";

constexpr const char* kInventoryFooter =
    "Read-only: lists every GPU NVML reports with its MIG mode and, when MIG is on, its\n"
    "GPU instances (profile, profile ID, placement start:size as `nvidia-smi mig -lgi`\n"
    "prints it), their compute instances and MIG device UUIDs (`nvidia-smi -L`). It\n"
    "never creates, destroys or changes anything.\n\n"
    "Examples:\n"
    "  tessera agent inventory\n"
    "  tessera agent inventory --format json -o inventory.json\n"
    "  TESSERA_FAKE_NVML_STATE=st.json TESSERA_FAKE_NVML_DEVICES=a100-80gb*2 \\\n"
    "      tessera agent inventory --nvml build/libtessera-fake-nvml.so";

}  // namespace

void AddAgentCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "agent", "Make a node run its NodePlan through NVML, MPS and serving processes");
  cmd->footer(kAgentFooter);
  cmd->require_subcommand(0, 1);
  auto flags = std::make_shared<AgentFlags>();
  cmd->add_option("--node", flags->node, "This node's name, as the NodePlan names it");
  CLI::Option* plan = cmd->add_option(
      "--plan", flags->plan, "The node's NodePlan JSON (tessera deploy: nodes/<node>.json)");
  cmd->add_option("--state-dir", flags->state_dir,
                  "Journal, lock, logs and MIG UUID files (created if missing)");
  cmd->add_option("--nvml", flags->nvml, "NVML library to load")->capture_default_str();
  CLI::Option* once =
      cmd->add_flag("--once", flags->once, "Reconcile once and exit (default: every --interval)");
  CLI::Option* transition = cmd->add_option(
      "--transition", flags->transition,
      "Run this node's steps of a transition JSON (tessera transition), then converge");
  CLI::Option* phase =
      cmd->add_option("--phase", flags->phase, "With --transition: run only phase K (1-based)")
          ->check(CLI::Range(1, 1'000'000));
  cmd->add_option("--serve-command", flags->serve_command,
                  "Serving command template (default: the plan's tritonserver command)");
  cmd->add_option("--mps-command", flags->mps_command,
                  "MPS control daemon command (default: the plan's, nvidia-cuda-mps-control -d)");
  cmd->add_option("--mps-control-command", flags->mps_control_command,
                  "MPS control: \"get_server_list\" before clients start, \"quit\" to stop a "
                  "daemon (on stdin); none = neither")
      ->capture_default_str();
  cmd->add_option("--base-port", flags->base_port,
                  "First port of this node's serving processes (default: the plan's)")
      ->check(CLI::Range(1, 65535));
  cmd->add_option("--mps-root", flags->mps_root,
                  "Root of this node's MPS pipe and log directories (default: the plan's)");
  cmd->add_flag("--no-serving", flags->no_serving,
                "MIG instances and MPS daemons only (pods run the servers)");
  cmd->add_option("--ready-timeout", flags->ready_timeout_s,
                  "How long a serving process may take to be ready")
      ->transform(DurationFlag(kReadyTimeout))
      ->capture_default_str();
  cmd->add_option("--drain-timeout", flags->drain_timeout_s,
                  "SIGTERM, then SIGKILL after this long")
      ->transform(DurationFlag(kDrainTimeout))
      ->capture_default_str();
  CLI::Option* interval =
      cmd->add_option("--interval", flags->interval_s, "Time between reconciles without --once")
          ->transform(DurationFlag(kReconcileInterval))
          ->capture_default_str();
  CLI::Option* server = cmd->add_option(
      "--server", flags->server,
      "Run under `tessera serve` at this URL (http://HOST:PORT; several, comma-separated, for "
      "replicas): poll the node's plan and transition phases, post results (instead of --plan)");
  server->excludes(plan)->excludes(once)->excludes(transition)->excludes(phase)->excludes(interval);
  cmd->add_option("--token-file", flags->token_file,
                  "With --server: a file holding the daemon's bearer token")
      ->needs(server);
  cmd->add_option("--poll-wait", flags->poll_wait_s,
                  "With --server: seconds a poll waits for a change (long-poll)")
      ->check(CLI::Range(0, 60))
      ->needs(server)
      ->capture_default_str();
  cmd->add_option("--format", flags->format, "Report format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_flag("--quiet", flags->quiet, "No progress lines on stderr");

  CLI::App* inventory =
      cmd->add_subcommand("inventory", "List GPUs, MIG mode and MIG instances (read-only)");
  inventory->footer(kInventoryFooter);
  auto inv = std::make_shared<InventoryFlags>();
  inventory->add_option("--nvml", inv->nvml, "NVML library to load")->capture_default_str();
  inventory->add_option("--format", inv->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  inventory->add_option("-o,--output", inv->output, "Output file (- = stdout)");
  inventory->callback([inv, &exit_code] { exit_code = RunInventory(*inv); });

  CLI::App* mig = cmd->add_subcommand("mig", "Make or remove one MIG instance (idempotent)");
  mig->footer(kMigFooter);
  mig->require_subcommand(1);
  auto mig_flags = std::make_shared<MigFlags>();
  const auto common = [&](CLI::App* sub) {
    sub->add_option("--nvml", mig_flags->nvml, "NVML library to load")->capture_default_str();
    sub->add_option("--format", mig_flags->format, "Output format")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    sub->add_option("--gpu", mig_flags->gpu, "GPU index")->required()->check(CLI::Range(0, 63));
    sub->add_option("--start", mig_flags->start, "First memory slice of the instance")
        ->required()
        ->check(CLI::Range(0, 7));
  };
  CLI::App* create = mig->add_subcommand("create", "Find or make the instance and its CI");
  common(create);
  create
      ->add_option("--profile-id", mig_flags->profile_id,
                   "GPU instance profile ID, as nvidia-smi mig -lgip lists it")
      ->required()
      ->check(CLI::Range(0, 63));
  create->callback([mig_flags, &exit_code] { exit_code = RunMigCreate(*mig_flags); });
  CLI::App* destroy = mig->add_subcommand("destroy", "Remove the instance at --start, if any");
  common(destroy);
  destroy->callback([mig_flags, &exit_code] { exit_code = RunMigDestroy(*mig_flags); });

  cmd->callback([cmd, flags, &exit_code] {
    if (cmd->got_subcommand("inventory") || cmd->got_subcommand("mig")) return;
    exit_code = RunAgent(*flags);
  });
}

}  // namespace tessera::cli
