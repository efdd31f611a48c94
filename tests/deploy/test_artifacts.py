"""Validators of `tessera deploy`'s artifacts, run by `make test` (ctest's
DeployValidators, in the venv of scripts/pyenv.sh).

Plans S3 and S6 (examples/scenarios/) with the built binary
($TESSERA_BINARY), deploys each into a temporary folder, then checks:
  * every Kubernetes manifest against the API schemas that
    kubernetes-validate bundles, strict (unknown fields fail);
  * every Triton config.pbtxt and configs/*.pbtxt parsed into Triton's own
    ModelConfig protobuf (tritonclient) and its fields checked;
  * mig-parted.yaml against the fields of mig-parted's api/spec/v1 (a small
    checker written from its documentation);
  * the router's HAProxy configuration, both copies (router/haproxy.cfg and
    the ConfigMap's), with `haproxy -c`, and its backends against the plan;
and that each validator rejects a deliberately broken document.
"""

import copy
import os
import pathlib
import subprocess

import kubernetes_validate
import pytest
import yaml
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

# A Kubernetes version kubernetes-validate 1.37.0 bundles schemas for.
K8S_VERSION = "1.36.0"

SOURCE_DIR = pathlib.Path(
    os.environ.get("TESSERA_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
SCENARIOS = ["s3", "s6"]


def binary():
    path = os.environ.get("TESSERA_BINARY")
    if not path:
        pytest.fail("TESSERA_BINARY is not set (ctest's DeployValidators sets it)")
    return path


def run(*args):
    result = subprocess.run([binary(), *args], capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"tessera {' '.join(args)}: {result.stderr}"
    return result


@pytest.fixture(scope="session", params=SCENARIOS)
def deployed(request, tmp_path_factory):
    """The folder `tessera deploy` wrote for one scenario's plan."""
    scenario = SOURCE_DIR / "examples" / "scenarios" / f"{request.param}.yaml"
    work = tmp_path_factory.mktemp(request.param)
    plan = work / "plan.json"
    run("plan", "--scenario", str(scenario), "--format", "json", "-o", str(plan))
    out = work / "deploy"
    run("deploy", "--deployment", str(plan), "--scenario", str(scenario), "--out", str(out))
    return out


# ---- Kubernetes ------------------------------------------------------------------


def validate_manifest(obj):
    """Raises kubernetes_validate.ValidationError (or a schema error) if invalid."""
    kubernetes_validate.validate(obj, K8S_VERSION, strict=True)


def manifests(folder):
    files = sorted((folder / "k8s").glob("*.yaml"))
    assert files, f"no manifests under {folder}/k8s"
    return files


def test_every_manifest_is_valid(deployed):
    kinds = set()
    for path in manifests(deployed):
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
        assert len(docs) == 1, path
        validate_manifest(docs[0])
        kinds.add(docs[0]["kind"])
    assert kinds == {"Namespace", "ConfigMap", "DaemonSet", "Service", "Deployment"}


def agent(folder):
    return yaml.safe_load((folder / "k8s" / "20-agent-daemonset.yaml").read_text())


def test_broken_manifests_are_rejected(deployed):
    unknown = agent(deployed)
    unknown["spec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    wrong_type = agent(deployed)
    wrong_type["spec"]["template"]["spec"]["hostPID"] = "no"
    no_image = agent(deployed)
    del no_image["spec"]["template"]["spec"]["containers"][0]["name"]
    for broken in (unknown, wrong_type, no_image):
        with pytest.raises(Exception):
            validate_manifest(broken)


def test_node_plan_config_maps_hold_the_node_plans(deployed):
    for path in sorted((deployed / "nodes").glob("*.json")):
        node = path.stem
        cm = yaml.safe_load((deployed / "k8s" / f"10-nodeplan-{node}.yaml").read_text())
        assert cm["data"]["nodeplan.json"] == path.read_text()


# ---- Triton ----------------------------------------------------------------------


def check_triton_config(text, service):
    """The parsed ModelConfig; raises on a parse error or a wrong field."""
    config = text_format.Parse(text, model_config_pb2.ModelConfig())
    assert config.name == service
    assert config.backend == "onnxruntime"
    assert config.max_batch_size >= 1
    assert list(config.dynamic_batching.preferred_batch_size) == [config.max_batch_size]
    assert config.dynamic_batching.max_queue_delay_microseconds >= 0
    assert len(config.instance_group) == 1
    group = config.instance_group[0]
    assert group.count == 1
    assert group.kind == model_config_pb2.ModelInstanceGroup.KIND_GPU
    assert list(group.gpus) == [0]
    return config


def test_every_triton_config_is_valid(deployed):
    services = sorted(p for p in (deployed / "triton").iterdir() if p.is_dir())
    assert services
    for folder in services:
        main = check_triton_config((folder / "config.pbtxt").read_text(), folder.name)
        batches = []
        for path in sorted((folder / "configs").glob("b*.pbtxt")):
            config = check_triton_config(path.read_text(), folder.name)
            assert path.stem == f"b{config.max_batch_size}"
            batches.append(config.max_batch_size)
        assert batches and main.max_batch_size == max(batches)


def test_broken_triton_configs_are_rejected(deployed):
    folder = next(p for p in (deployed / "triton").iterdir() if p.is_dir())
    good = (folder / "config.pbtxt").read_text()
    check_triton_config(good, folder.name)
    broken = [
        good.replace("max_batch_size", "max_batch_sise"),  # unknown field
        good.replace("KIND_GPU", "KIND_TPU"),  # unknown enum value
        good.replace("gpus: [ 0 ]", "gpus: [ 1 ]"),  # another device
        good.replace("preferred_batch_size: [", "preferred_batch_size: [ 1,"),
    ]
    for text in broken:
        assert text != good
        with pytest.raises(Exception):
            check_triton_config(text, folder.name)


# ---- mig-parted ------------------------------------------------------------------

SPEC_KEYS = {"devices", "device-filter", "mig-enabled", "mig-devices"}


def check_mig_parted(doc):
    """mig-parted's api/spec/v1 (reference §3.1); raises ValueError."""
    if not isinstance(doc, dict) or set(doc) != {"version", "mig-configs"}:
        raise ValueError(f"top-level keys must be version and mig-configs: {doc!r:.80}")
    if doc["version"] != "v1":
        raise ValueError("version must be v1")
    configs = doc["mig-configs"]
    if not isinstance(configs, dict) or not configs:
        raise ValueError("mig-configs must be a non-empty map")
    for name, specs in configs.items():
        if not isinstance(name, str) or not isinstance(specs, list) or not specs:
            raise ValueError(f"{name}: must be a non-empty list of specs")
        for spec in specs:
            if not isinstance(spec, dict) or not set(spec) <= SPEC_KEYS:
                raise ValueError(f"{name}: unknown keys {set(spec) - SPEC_KEYS}")
            devices = spec.get("devices")
            if devices != "all" and not (
                    isinstance(devices, list) and devices
                    and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                            for d in devices)):
                raise ValueError(f"{name}: devices must be 'all' or a list of ints")
            if "device-filter" in spec:
                f = spec["device-filter"]
                if not (isinstance(f, str) or (isinstance(f, list)
                                               and all(isinstance(x, str) for x in f))):
                    raise ValueError(f"{name}: device-filter must be a string or list")
            if not isinstance(spec.get("mig-enabled"), bool):
                raise ValueError(f"{name}: mig-enabled must be a bool")
            mig_devices = spec.get("mig-devices")
            if spec["mig-enabled"]:
                if not isinstance(mig_devices, dict):
                    raise ValueError(f"{name}: mig-devices is required when enabled")
                for profile, count in mig_devices.items():
                    if not isinstance(profile, str) or not isinstance(count, int) \
                            or isinstance(count, bool) or count < 0:
                        raise ValueError(f"{name}: mig-devices {profile!r}: {count!r}")
            elif mig_devices:
                raise ValueError(f"{name}: mig-devices must be empty when disabled")


def test_mig_parted_config_is_valid(deployed):
    doc = yaml.safe_load((deployed / "mig-parted.yaml").read_text())
    check_mig_parted(doc)
    nodes = sorted(p.stem for p in (deployed / "nodes").glob("*.json"))
    assert sorted(doc["mig-configs"]) == [f"tessera-{n}" for n in nodes]


def test_broken_mig_parted_configs_are_rejected(deployed):
    good = yaml.safe_load((deployed / "mig-parted.yaml").read_text())
    check_mig_parted(good)
    name = next(iter(good["mig-configs"]))

    def broken(change):
        doc = copy.deepcopy(good)
        change(doc, doc["mig-configs"][name][0])
        return doc

    cases = [
        broken(lambda d, s: d.update(version="v2")),
        broken(lambda d, s: d.update({"mig-configs": {}})),
        broken(lambda d, s: s.update(devices=7)),  # a bare integer (mig-parted#44)
        broken(lambda d, s: s.update({"mig-enabled": "yes"})),
        broken(lambda d, s: s.pop("mig-devices")),
        broken(lambda d, s: s.update({"mig-devices": {"1g.10gb": -1}})),
        broken(lambda d, s: s.update({"mig-enabled": False})),  # devices listed while disabled
        broken(lambda d, s: s.update(placement=0)),
    ]
    for doc in cases:
        with pytest.raises(ValueError):
            check_mig_parted(doc)


# ---- The router (HAProxy) ----------------------------------------------------------


def haproxy_check(path):
    """`haproxy -c -f path`: (exit code, output).

    The servers' hosts (node-0, cluster Service names) do not resolve here, and
    `init-addr last,libc,none` lets HAProxy start without them; glibc's default
    of 5 s x 2 attempts per name made the check of S6's config take 55 s, one
    1 s attempt takes it to a few."""
    env = dict(os.environ, RES_OPTIONS="timeout:1 attempts:1")
    result = subprocess.run(["haproxy", "-c", "-f", str(path)], capture_output=True, text=True,
                            check=False, env=env)
    return result.returncode, result.stdout + result.stderr


def router_configs(folder, tmp_path):
    cluster = tmp_path / "cluster-haproxy.cfg"
    config_map = yaml.safe_load((folder / "k8s" / "35-router-config.yaml").read_text())
    cluster.write_text(config_map["data"]["haproxy.cfg"])
    return [folder / "router" / "haproxy.cfg", cluster]


def test_haproxy_accepts_both_router_configs(deployed, tmp_path):
    for path in router_configs(deployed, tmp_path):
        code, output = haproxy_check(path)
        assert code == 0, f"haproxy -c {path}:\n{output}"
        assert "Configuration file is valid" in output


def test_router_has_one_server_per_serving_process(deployed):
    config = (deployed / "router" / "haproxy.cfg").read_text()
    servers = [line.split()[1] for line in config.splitlines() if line.startswith("    server ")]
    processes = list((deployed / "k8s").glob("40-serving-*.yaml"))
    assert len(servers) == len(processes)
    assert "balance leastconn" in config  # the default plan's router
    for line in config.splitlines():
        if line.startswith("    server "):
            assert " weight " in line, line


# Every other router deploy can ship, as its plan records it (S3 planned under
# --router R): the balance HAProxy gets for it, and the configs `haproxy -c` takes.
SHIPPED_ROUTERS = {"first": "balance first", "weighted": "balance random",
                   "equal": "balance random"}


@pytest.mark.parametrize("router", sorted(SHIPPED_ROUTERS))
def test_haproxy_accepts_the_configs_of_every_shipped_router(router, tmp_path):
    scenario = SOURCE_DIR / "examples" / "scenarios" / "s3.yaml"
    plan = tmp_path / "plan.json"
    # parva: the exact planner spends its whole time limit proving S3 under `queueing`.
    run("plan", "--scenario", str(scenario), "--router", router, "--planner", "parva",
        "--format", "json", "-o", str(plan))
    out = tmp_path / "deploy"
    # Node "localhost": haproxy -c resolves each server's host, and node-0 costs a DNS
    # timeout (the default router's test keeps it).
    run("deploy", "--deployment", str(plan), "--scenario", str(scenario), "--nodes",
        "localhost", "--out", str(out))
    assert SHIPPED_ROUTERS[router] in (out / "router" / "haproxy.cfg").read_text()
    for path in router_configs(out, tmp_path):
        code, output = haproxy_check(path)
        assert code == 0, f"haproxy -c {path} ({router}):\n{output}"
        assert "Configuration file is valid" in output


def test_haproxy_rejects_a_broken_router_config(deployed, tmp_path):
    broken = tmp_path / "broken.cfg"
    broken.write_text((deployed / "router" / "haproxy.cfg").read_text().replace(
        "balance leastconn", "balance fastest", 1))
    code, output = haproxy_check(broken)
    assert code != 0, output


def test_the_replicas_example_is_valid():
    """examples/kubernetes/tessera-replicas.yaml (docs/control-plane.md):
    every object valid, three serve replicas on a three-member etcd, each
    replica advertising its own pod IP."""
    path = SOURCE_DIR / "examples" / "kubernetes" / "tessera-replicas.yaml"
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    for doc in docs:
        validate_manifest(doc)
    by_kind = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    etcd = by_kind[("StatefulSet", "etcd")]
    serve = by_kind[("Deployment", "tessera-serve")]
    assert etcd["spec"]["replicas"] == 3 and serve["spec"]["replicas"] == 3
    args = serve["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--advertise-url=http://$(POD_IP):8080" in args
    store = next(a for a in args if a.startswith("--store=etcd:"))
    assert store.count("http://etcd-") == 3


def test_the_dra_examples_are_valid():
    """examples/kubernetes/tessera-dra.yaml and mig-claims.yaml (docs/dra.md):
    every object valid against Kubernetes 1.37; the plugin mounts the kubelet's
    plugin and registration directories and the CDI directory; every claim
    asks the driver's class for one profile the selector names."""
    folder = SOURCE_DIR / "examples" / "kubernetes"
    driver = [d for d in yaml.safe_load_all((folder / "tessera-dra.yaml").read_text()) if d]
    claims = [d for d in yaml.safe_load_all((folder / "mig-claims.yaml").read_text()) if d]
    for doc in driver + claims:
        kubernetes_validate.validate(doc, "1.37.0", strict=True)
    by_kind = {(d["kind"], d["metadata"]["name"]): d for d in driver}
    assert by_kind[("DeviceClass", "mig.tessera.io")]["spec"]["selectors"][0]["cel"][
        "expression"] == 'device.driver == "mig.tessera.io"'
    plugin = by_kind[("DaemonSet", "tessera-dra-plugin")]["spec"]["template"]["spec"]
    mounts = {m["mountPath"] for m in plugin["containers"][0]["volumeMounts"]}
    assert {"/var/lib/kubelet/plugins", "/var/lib/kubelet/plugins_registry",
            "/var/run/cdi"} <= mounts
    controller = by_kind[("Deployment", "tessera-dra-controller")]["spec"]
    assert controller["replicas"] == 1
    assert "--tessera=http://tessera.tessera:8080" in controller["template"]["spec"][
        "containers"][0]["args"]
    templates = [d for d in claims if d["kind"] == "ResourceClaimTemplate"]
    assert templates
    for template in templates:
        request = template["spec"]["spec"]["devices"]["requests"][0]["exactly"]
        assert request["deviceClassName"] == "mig.tessera.io"
        assert 'device.attributes["mig.tessera.io"].profile == "' in request["selectors"][0][
            "cel"]["expression"]
