// `tessera serve`: the control plane's daemon (docs/control-plane.md). It
// opens the store (--store: one SQLite file, or an etcd cluster that
// several replicas share), seeds it with a scenario when it holds none
// (--scenario, else the embedded S3), serves the API and the dashboard on
// --listen until SIGINT or SIGTERM, then stops cleanly (exit 0).
#include <pthread.h>

#include <csignal>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "autoscale_flags.h"
#include "cli_flags.h"
#include "cli_output.h"
#include "commands.h"
#include "net_command.h"
#include "tessera/control/control_assets.h"
#include "tessera/control/control_plane.h"
#include "tessera/control/control_server.h"
#include "tessera/control/control_store.h"
#include "tessera/durations.h"
#include "tessera/emit/deploy_artifacts.h"
#include "tessera/k8s/cluster_watch.h"
#include "tessera/k8s/kube_client.h"
#include "tessera/k8s/scheduler_extender.h"
#include "tessera/online/online_placer.h"
#include "tessera/util/input_limits.h"
#include "tessera/util/text_io.h"

namespace tessera::cli {
namespace {

struct ServeFlags {
  ProblemInputs input;
  std::string store;              // --store; empty: sqlite:<--db>
  std::string db = "tessera.db";  // --db PATH: --store sqlite:PATH
  std::string listen = "127.0.0.1:8080";
  std::string advertise_url;  // empty: http://<--listen>
  std::string name;           // empty: the advertised host:port
  int lease_ttl_s = 5;
  std::string token_file;
  int gpus_per_node = 8;
  bool auto_mode = true;
  double replan_threshold = 0.10;
  double replan_hold_s = 10;
  bool autoscale = false;
  double autoscale_minute_s = 60;
  AutoscalePolicyOptions policy;
  std::string step_durations;
  std::vector<std::string> routers;
  int spare_gpus = 1;
  std::string planner;  // empty: the library's default, as `tessera plan`
  double time_limit_s = 0;
  // The scheduler extender (docs/kubernetes.md), on with --kubeconfig.
  std::string kubeconfig;
  std::string kube_context;
  ExtenderOptions extender;
};

#ifdef TESSERA_CLI_NET
// The scenario a new store starts with: the flags' (--scenario, --parva-slo)
// or the embedded S3.
Result<Scenario> SeedScenario(const ProblemInputs& input) {
  if (!input.scenario.empty() || !input.parva_slo.empty()) return LoadScenario(input);
  const std::optional<Asset> s3 = FindAsset("scenarios/s3.yaml");
  if (!s3) return Status::Internal("the embedded default scenario is missing");
  Result<Scenario> scenario = ParseScenarioYaml(s3->bytes, "examples/scenarios/s3.yaml");
  if (!scenario.ok()) return scenario.status();
  return Replicated(*scenario, input.replicate);
}

// PUT /v1/scenario through the plane, as a client would; a follower leaves
// it to the leader (307).
Status PutScenario(ControlPlane& plane, const Scenario& scenario) {
  ApiRequest request;
  request.method = "PUT";
  request.path = "/v1/scenario";
  request.body = FormatScenarioJson(scenario);
  request.content_type = "application/json";
  const ApiResponse response = plane.Handle(request);
  if (response.status / 100 == 2 || response.status == 307) return Status::Ok();
  std::string message = response.body;
  const nlohmann::json body = nlohmann::json::parse(response.body, nullptr, false);
  if (body.is_object() && body.contains("error") && body["error"].contains("message"))
    message = body["error"]["message"].get<std::string>();
  return Status::InvalidArgument(scenario.source + ": " + message);
}

// The Kubernetes side of the daemon: the API server's client, the
// extender over it and the watch that feeds it.
struct KubeParts {
  std::unique_ptr<KubeClient> client;
  std::unique_ptr<KubeClientApi> api;
  std::unique_ptr<SchedulerExtender> extender;
};

Result<KubeParts> OpenKube(const ServeFlags& flags) {
  Result<KubeConfig> config = LoadKubeconfig(flags.kubeconfig, flags.kube_context);
  if (!config.ok()) return config.status().WithContext("--kubeconfig");
  KubeParts parts;
  Result<std::unique_ptr<KubeClient>> client = KubeClient::Create(*config);
  if (!client.ok()) return client.status().WithContext("--kubeconfig");
  parts.client = std::move(*client);
  parts.api = std::make_unique<KubeClientApi>(*parts.client);
  Result<std::unique_ptr<SchedulerExtender>> extender =
      SchedulerExtender::Create(flags.extender, *parts.api);
  if (!extender.ok()) return extender.status();
  parts.extender = std::move(*extender);
  return parts;
}

// The replica's advertised URL and name: the flags', else --listen's
// address (a replicated store needs a fixed port to advertise).
Result<StoreOptions> StoreOptionsOf(const ServeFlags& flags, const ServerOptions& server) {
  StoreOptions options;
  options.lease_ttl_s = flags.lease_ttl_s;
  options.advertise_url = flags.advertise_url;
  const bool replicated = flags.store.rfind("etcd:", 0) == 0;
  if (options.advertise_url.empty()) {
    if (replicated && server.port == 0) {
      return Status::InvalidArgument(
          "--advertise-url: an etcd store is shared by replicas, which send clients to the "
          "leader's URL: give --listen a port other than 0, or --advertise-url");
    }
    const bool any = server.host == "0.0.0.0" || server.host == "::";
    if (replicated && any) {
      return Status::InvalidArgument(
          "--advertise-url: --listen " + flags.listen +
          " names no address other replicas can reach; give --advertise-url http://HOST:PORT");
    }
    const std::string host =
        server.host.find(':') == std::string::npos ? server.host : "[" + server.host + "]";
    options.advertise_url = "http://" + host + ":" + std::to_string(server.port);
  }
  // --lease-ttl is in range (CLI11 checked it): what is left is the URL.
  if (Status s = CheckStoreOptions(options); replicated && !s.ok()) {
    return Status::InvalidArgument("--advertise-url: " + s.message());
  }
  options.name = flags.name;
  if (options.name.empty())
    options.name = options.advertise_url.substr(std::string("http://").size());
  return options;
}

int RunServe(const ServeFlags& flags) {
  if (Status s = CheckInputsApply(flags.input, /*mps=*/false, "tessera serve"); !s.ok())
    return ReportError(s);
  // The policy's options, checked before anything is opened or written.
  std::optional<AutoscalePolicyOptions> policy;
  if (flags.autoscale) {
    policy = flags.policy;
    if (Status d = ApplyStepDurations(flags.step_durations, *policy); !d.ok()) {
      return ReportError(d);
    }
    if (Status checked = CheckAutoscalePolicy(*policy); !checked.ok()) return ReportError(checked);
  }
  ServerOptions server;
  if (Status s = ParseListenAddress(flags.listen, "--listen", server); !s.ok())
    return ReportError(s);
  if (!flags.token_file.empty()) {
    Result<std::string> token = ReadTokenFile(flags.token_file);
    if (!token.ok()) return ReportError(token.status());
    server.token = std::move(*token);
  }
  Result<StoreOptions> store_options = StoreOptionsOf(flags, server);
  if (!store_options.ok()) return ReportError(store_options.status());
  const std::string spec = flags.store.empty() ? "sqlite:" + flags.db : flags.store;
  Result<std::unique_ptr<ControlStore>> store = OpenControlStore(spec, *store_options);
  if (!store.ok()) {
    return ReportError(Status::InvalidArgument((flags.store.empty() ? "--db: " : "--store: ") +
                                               store.status().message()));
  }
  const std::string described = (*store)->Describe();
  Result<std::optional<std::string>> stored = (*store)->Scenario();
  if (!stored.ok()) return ReportError(stored.status());
  const bool seed = !stored->has_value();
  if (!seed && (!flags.input.scenario.empty() || !flags.input.parva_slo.empty()))
    PrintMessage("tessera: note: the store (" + described +
                 ") already holds a scenario: it is kept (--scenario seeds a new store only; "
                 "PUT /v1/scenario replaces it)\n");

  KubeParts kube;
  if (!flags.kubeconfig.empty()) {
    Result<KubeParts> opened = OpenKube(flags);
    if (!opened.ok()) return ReportError(opened.status());
    kube = std::move(*opened);
    server.extender = kube.extender.get();
  }

  ControlOptions options;
  options.auto_mode = flags.auto_mode;
  options.replan_threshold = flags.replan_threshold;
  options.replan_hold_s = flags.replan_hold_s;
  if (flags.autoscale) {
    options.autoscale = *policy;
    options.autoscale_minute_s = flags.autoscale_minute_s;
  }
  options.routers = flags.routers;
  options.spare_gpus = flags.spare_gpus;
  options.deploy.gpus_per_node = flags.gpus_per_node;
  options.default_planner = flags.planner;
  options.plan_time_limit_s = flags.time_limit_s;
  options.inputs = flags.input;
  options.replica_name = store_options->name;
  Result<std::unique_ptr<ControlPlane>> plane = ControlPlane::Open(std::move(*store), options);
  if (!plane.ok()) return ReportError(plane.status());
  if (seed) {
    Result<Scenario> scenario = SeedScenario(flags.input);
    if (!scenario.ok()) return ReportError(scenario.status());
    if (Status s = PutScenario(**plane, *scenario); !s.ok()) return ReportError(s);
  }

  const StopSignals stop_signals;
  Result<std::unique_ptr<ControlServer>> running = ControlServer::Start(**plane, server);
  if (!running.ok()) return ReportError(running.status());
  const std::string host =
      server.host.find(':') == std::string::npos ? server.host : "[" + server.host + "]";
  std::cout << "tessera serve: listening on http://" << host << ":" << (*running)->port()
            << " (store " << described << ", replica " << store_options->name << ")" << std::endl;
  std::unique_ptr<ClusterWatch> watch;
  if (kube.extender) {
    std::cout << "tessera serve: scheduler extender at http://" << host << ":" << (*running)->port()
              << "/scheduler (policy " << flags.extender.policy << ", " << flags.extender.gpu
              << " nodes, API server " << kube.client->config().server << ")" << std::endl;
    watch = ClusterWatch::Start(*kube.client, *kube.extender,
                                [](const std::string& line) { PrintMessage(line + "\n"); });
  }
  stop_signals.Wait();
  if (watch) watch->Stop();
  (*running)->Stop();
  return kExitOk;
}
#endif  // TESSERA_CLI_NET

constexpr const char* kServeHelp =
    "Serves the control plane (docs/control-plane.md): the desired state of a cluster in\n"
    "a store (--store: one SQLite file, or etcd shared by replicas), its API under /v1 (OpenAPI "
    "document at /v1/openapi.json),\n"
    "/healthz, /readyz, /metrics (Prometheus) and the dashboard at /. It re-plans when\n"
    "rates or SLOs change (--auto: when a rate moves more than --replan-threshold, or with\n"
    "--autoscale as the autoscaling policy of `tessera autoscale` decides on observed rates) and\n"
    "moves the cluster with checked transitions that node agents (`tessera agent\n"
    "--server URL`) carry out.\n\n"
    "A new store starts with --scenario (or --parva-slo), else the embedded S3 example;\n"
    "a store that holds a scenario keeps it (PUT /v1/scenario replaces it). The planning\n"
    "flags (--gpu, --profiles, --latency-factor, --capacity-rule, ...) apply to every\n"
    "plan the daemon makes.\n\n"
    "Security: PUT, PATCH and POST need 'Authorization: Bearer <token>' when --token-file\n"
    "is given (one line; its trailing newline is stripped). Listening on an address other\n"
    "than loopback without a token is refused.\n\n"
    "Replicas: several `tessera serve --store etcd:URL,...` share one etcd cluster; the one\n"
    "holding the election's oldest lease leads and alone writes (every write is fenced in\n"
    "etcd by its election key). Followers answer reads and send mutations and agents'\n"
    "polls to the leader (307); a dead or paused leader is replaced within --lease-ttl.\n"
    "Each advertises --advertise-url (default http://<--listen>, so --listen needs a port).\n\n"
    "It prints 'tessera serve: listening on http://HOST:PORT (store ..., replica NAME)' once\n"
    "bound (with port 0 the OS picks the port) and runs until SIGINT or SIGTERM (exit 0).\n\n"
    "Examples:\n"
    "  tessera serve\n"
    "  tessera serve --db /var/lib/tessera/s6.db --scenario examples/scenarios/s6.yaml\n"
    "  tessera serve --listen 0.0.0.0:8080 --token-file /etc/tessera/token --no-auto\n"
    "  tessera serve --listen 127.0.0.1:0 --db /tmp/t.db --gpus-per-node 4 --spare-gpus 2\n"
    "  tessera serve --router-agent edge --autoscale --lead 10m --margin 0.05 --spare-gpus 2\n"
    "  tessera serve --store etcd:http://10.0.0.1:2379,http://10.0.0.2:2379,http://10.0.0.3:2379 "
    "\\\n"
    "       --listen 0.0.0.0:8080 --advertise-url http://10.0.0.1:8080 --token-file token\n"
    "  curl -s localhost:8080/v1/deployment\n"
    "  curl -s -X PATCH -H 'Authorization: Bearer '$(cat token) \\\n"
    "       -H 'Content-Type: application/json' -d '{\"rate_rps\": 900}' \\\n"
    "       localhost:8080/v1/services/resnet50\n\n"
    "Kubernetes: with --kubeconfig it also serves kube-scheduler's extender protocol at\n"
    "/scheduler/{filter,prioritize,bind} (state at /scheduler/state): pods asking for\n"
    "tessera.io/mig-<profile> get a node, GPU and start slice from --policy, the online\n"
    "policy of `tessera replay`, on nodes labelled tessera.io/gpus. `tessera k8s\n"
    "scheduler-config` writes the scheduler's configuration; docs/kubernetes.md.\n"
    "  tessera serve --kubeconfig ~/.kube/config --policy grmu --node-gpu A100-80GB\n\n"
    "Exit codes: 0 stopped by SIGINT/SIGTERM, 2 bad flags, token file, store or address.";

}  // namespace

void AddServeCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ServeFlags>();
  CLI::App* cmd =
      app.add_subcommand("serve", "Serve the control plane: API, metrics and dashboard");
  cmd->footer(kServeHelp);
  CLI::Option* store =
      cmd->add_option("--store", flags->store,
                      "Where the desired state lives: sqlite:PATH (one file, created if missing; "
                      "the default, sqlite:tessera.db) or etcd:URL[,URL...] (an etcd cluster that "
                      "several replicas share, one of them leading)");
  cmd->add_option("--db", flags->db, "Shorthand of --store sqlite:PATH")
      ->capture_default_str()
      ->excludes(store);
  cmd->add_option("--advertise-url", flags->advertise_url,
                  "With an etcd store: this replica's URL as clients and agents reach it, where "
                  "followers send mutations (default: http://<--listen>)");
  cmd->add_option("--name", flags->name,
                  "With an etcd store: this replica's name in the election, /readyz and /metrics "
                  "(default: the advertised HOST:PORT)");
  cmd->add_option("--lease-ttl", flags->lease_ttl_s,
                  "With an etcd store: seconds of the leader's lease, 1-300; a dead or paused "
                  "leader is replaced within it")
      ->check(CLI::Range(1, 300))
      ->capture_default_str();
  cmd->add_option("--listen", flags->listen,
                  "HOST:PORT to serve on ([::1]:8080 for IPv6; port 0: any free port)")
      ->capture_default_str();
  cmd->add_option("--token-file", flags->token_file,
                  "File holding the bearer token that PUT, PATCH and POST must carry");
  AddInputFlags(*cmd, flags->input);
  cmd->add_option("--gpus-per-node", flags->gpus_per_node,
                  "GPUs of each node: node-k holds cluster GPUs k x N ... (k+1) x N - 1")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_flag("--auto,!--no-auto", flags->auto_mode,
                "Re-plan and start a transition by itself when a declared or observed rate "
                "moves more than --replan-threshold (default: on)");
  cmd->add_option("--replan-threshold", flags->replan_threshold,
                  "Relative rate change that triggers an automatic re-plan, in (0, 10]")
      ->check(Within(InputRange{1e-6, 10.0}))
      ->capture_default_str();
  cmd->add_option("--replan-hold", flags->replan_hold_s,
                  "Seconds observed rates must stay beyond --replan-threshold before an automatic "
                  "re-plan (a PATCHed rate re-plans at once), 0-3600")
      ->check(Within(InputRange{0.0, 3600.0}))
      ->capture_default_str();
  CLI::Option* autoscale = cmd->add_flag(
      "--autoscale", flags->autoscale,
      "In auto mode, move on observed rates by the autoscaling policy (tessera autoscale's: "
      "forecast, plan ahead with a margin, move up early and down after a hold) instead of "
      "--replan-threshold; PATCHed rates still re-plan at once");
  cmd->add_option("--autoscale-minute", flags->autoscale_minute_s,
                  "The policy's minute: observed rates are averaged and weighed once per it, " +
                      DescribeRange(kAutoscaleMinute) +
                      " (shorter for a compressed day; the policy's durations are then in these "
                      "minutes)")
      ->transform(DurationFlag(kAutoscaleMinute))
      ->default_str("1m")
      ->needs(autoscale);
  for (CLI::Option* option : AddAutoscalePolicyFlags(*cmd, flags->policy, flags->step_durations)) {
    option->needs(autoscale);
  }
  cmd->add_option("--router-agent", flags->routers,
                  "A router (`tessera router-agent --name NAME`) in front of the serving "
                  "processes; repeat for several. Each drains and readies its servers in every "
                  "phase of a transition, and its observed traffic feeds auto mode")
      ->check([](const std::string& name) {
        return IsDns1123Label(name) ? std::string()
                                    : "a router name is 1-63 characters of [a-z0-9-], starting and "
                                      "ending with a letter or digit, got '" +
                                          name + "'";
      });
  cmd->add_option("--spare-gpus", flags->spare_gpus,
                  "GPUs a transition may use beyond the larger of its two plans")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  cmd->add_option("--planner", flags->planner,
                  "Planner of a plan request that names none (`tessera plan --help` lists them); "
                  "default: tessera plan's (exact, with parva beside it when exact proves no "
                  "optimum in time)")
      ->check(CLI::IsMember(BuiltinPlanners().Names()));
  cmd->add_option("--time-limit", flags->time_limit_s,
                  "Wall-clock time a searching planner may take per plan, " +
                      DescribeRange(kTimeLimit) + "; default: the planner's own")
      ->transform(DurationFlag(kTimeLimit));
  cmd->add_option("--kubeconfig", flags->kubeconfig,
                  "Serve the Kubernetes scheduler extender, watching the API server of this "
                  "kubeconfig (docs/kubernetes.md)");
  cmd->add_option("--kube-context", flags->kube_context,
                  "Context of --kubeconfig (default: its current-context)");
  cmd->add_option("--policy", flags->extender.policy,
                  "Extender: online placement policy, " + BuiltinPlacers().JoinedNames())
      ->check(CLI::IsMember(BuiltinPlacers().Names()))
      ->capture_default_str();
  cmd->add_option("--node-gpu", flags->extender.gpu,
                  "Extender: the GPU model of every node's GPUs (MIG-capable)")
      ->capture_default_str();
  cmd->add_option("--heavy-share", flags->extender.placer.heavy_share,
                  "Extender, grmu: share of all GPUs the full-GPU basket may hold, 0..1")
      ->check(Within(InputRange{0.0, 1.0}))
      ->capture_default_str();
  cmd->add_option("--fair-factor", flags->extender.placer.fair_factor,
                  "Extender, fair: the full-GPU basket may hold this fraction of the full-GPU "
                  "requests' share of the GPU demand seen")
      ->check(Within(limits::kFairFactor))
      ->capture_default_str();
  cmd->add_option("--reservation-ttl", flags->extender.reservation_ttl_s,
                  "Extender: seconds a filter's reservation waits for its bind, (0, 3600]")
      ->check(Within(InputRange{1e-3, 3600.0}))
      ->capture_default_str();
  // The callback holds the flags: the options above write into them while
  // CLI11 parses, after this function has returned.
#ifdef TESSERA_CLI_NET
  cmd->callback([flags, &exit_code] { exit_code = RunServe(*flags); });
#else
  cmd->callback([flags, &exit_code] {
    (void)flags;
    exit_code = RunInNetBinary();
  });
#endif
}

}  // namespace tessera::cli
