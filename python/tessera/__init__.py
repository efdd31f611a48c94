"""Tessera for Python: plan, validate and simulate spatial sharing of NVIDIA
GPUs (MIG instances, MPS processes) for DNN inference, on the same C++ core
as the ``tessera`` command line.

The nouns are the CLI's::

    import tessera
    s6 = tessera.Scenario.from_yaml("examples/scenarios/s6.yaml")
    plan = tessera.plan(s6)                          # a Plan: GPUs, instances, metrics
    print(plan.gpus, plan.metrics["gpcs"])
    report = tessera.simulate(plan, duration="30s")  # a Report: p99 and SLO per service
    report.to_pandas()                               # with pandas installed

Every option is a keyword with a type and a default, checked by the same
C++ library the ``tessera`` command calls (no command line in between):
``plan(s, "exact", time_limit=3, rule=LatencyRule(latency_factor=0.4))`` is
``tessera plan --planner exact --time-limit 3 --latency-factor 0.4``. A
mistyped keyword is Python's TypeError; a bad value raises
:class:`InputError` with the CLI's message, which names the option by its
command-line spelling (``--time-limit``). Plans, reports and errors are the
CLI's: ``plan.to_json()`` is ``tessera plan --format json``. Durations are
seconds (a number), a :class:`datetime.timedelta` or a string such as
``"30s"``, ``"500ms"``, ``"2m"``. The GIL is released while a plan, a
simulation, a transition or a replay runs, so threads plan in parallel.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import datetime
import io
import json
import logging
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from . import _core
from ._errors import (
    FileError,
    InfeasibleError,
    InputError,
    InternalError,
    NotFoundError,
    TesseraError,
)

__version__ = "0.1.0"

__all__ = [
    "Scenario",
    "ProfileTable",
    "Plan",
    "Report",
    "Transition",
    "ReplayResult",
    "AutoscaleResult",
    "LatencyRule",
    "plan",
    "validate",
    "simulate",
    "transition",
    "replay",
    "autoscale",
    "forecasters",
    "planners",
    "default_planner",
    "policies",
    "TesseraError",
    "InputError",
    "NotFoundError",
    "FileError",
    "InfeasibleError",
    "InternalError",
]

PathLike = Union[str, "os.PathLike[str]"]
#: A duration: seconds (a number), a timedelta, or text such as "30s", "500ms", "2m".
Duration = Union[float, int, str, datetime.timedelta]

_log = logging.getLogger("tessera")


def _notes(texts: Sequence[str]) -> List[str]:
    """The notes a run printed as the CLI would on stderr, one line each
    without the ``tessera: note:`` prefix; each is logged on the ``tessera``
    logger at INFO level too."""
    out = []
    for text in texts:
        for line in text.splitlines():
            line = line.removeprefix("tessera: note: ").rstrip()
            if line:
                out.append(line)
                _log.info("%s", line)
    return out


def _frame(rows: List[Dict[str, Any]]) -> Any:
    """A pandas DataFrame of `rows`; ImportError naming pandas without it."""
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - exercised without pandas only
        raise ImportError("to_pandas() needs pandas: pip install pandas") from e
    return pandas.DataFrame(rows)


def _duration(name: str, value: Optional[Duration]) -> Optional[float]:
    """`value` in the keyword's unit (seconds; milliseconds for ``*_ms``
    keywords), range-checked by the library when the request runs; text is
    parsed (and checked) by the CLI's duration parser."""
    if value is None:
        return None
    if isinstance(value, datetime.timedelta):
        seconds = value.total_seconds()
        return seconds * 1000 if name.endswith("_ms") else seconds
    if isinstance(value, str):
        return _core.parse_duration(name, value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name}: expected a number, a timedelta or a string such as '30s', "
                        f"got {value!r}")
    return float(value)


def _seed(seed: int) -> int:
    """`seed` checked as the CLI checks ``--seed``."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"--seed: must be a number >= 0, got '{seed}'")
    return seed


@dataclasses.dataclass(frozen=True)
class LatencyRule:
    """How a plan counts a segment's capacity within the SLO; each field
    unset keeps the default (docs/latency-rule.md). The fields are the CLI's
    flags of the same names.

    - ``latency_factor``: the share of the SLO one batch may take (default 0.5);
    - ``capacity_rule``: ``pooled[:CV]``, ``queueing``, ``bursty:SHARE`` or ``bare``;
    - ``capacity_quantile``: the share of requests the queueing and pooled rules keep
      within the SLO at a segment's counted load (default 0.995);
    - ``router``: ``leastconn`` (default), ``first``, ``weighted``, ``equal`` or ``jsq``;
    - ``rate_margin``: plan for (1 + M) x every rate;
    - ``compat``: ``parva-artifact`` (ParvaGPU's artifact rule; not with latency_factor).
    """

    latency_factor: Optional[float] = None
    capacity_rule: Optional[str] = None
    capacity_quantile: Optional[float] = None
    router: Optional[str] = None
    rate_margin: Optional[float] = None
    compat: Optional[str] = None


def _inputs(profiles: Union[PathLike, ProfileTable, None] = None, gpu: Optional[str] = None,
            rule: Optional[LatencyRule] = None, coeffs: Optional[PathLike] = None,
            gpulet_tables: Optional[PathLike] = None,
            price: Optional[float] = None) -> "_core.Inputs":
    """The library's ProblemInputs of the keywords."""
    inputs = _core.Inputs()
    if isinstance(profiles, ProfileTable):
        inputs.profile_table = profiles._handle
    elif profiles is not None:
        inputs.profiles = os.fspath(profiles)
    if gpu is not None:
        inputs.gpu = gpu
    if rule is not None:
        if not isinstance(rule, LatencyRule):
            raise TypeError(f"rule: expected a tessera.LatencyRule, got {rule!r}")
        inputs.latency_factor = rule.latency_factor
        inputs.capacity_rule = rule.capacity_rule or ""
        inputs.capacity_quantile = rule.capacity_quantile
        inputs.router = rule.router or ""
        inputs.rate_margin = rule.rate_margin
        inputs.compat = rule.compat or ""
    if coeffs is not None:
        inputs.coefficients = os.fspath(coeffs)
    if gpulet_tables is not None:
        inputs.gpulet_tables = os.fspath(gpulet_tables)
    inputs.price_per_hour = price
    return inputs


class Scenario:
    """The services to serve: each a DNN model with a request rate (req/s)
    and a latency SLO (ms), and optionally the GPU model or a priced pool.

    Make one with :meth:`from_yaml` (a scenario file, as ``--scenario``),
    :meth:`from_dict` (the same keys as the YAML) or :meth:`from_yaml_text`.
    Errors name the file (or ``<dict>``), the line and the field.
    """

    __slots__ = ("_handle",)

    def __init__(self, handle: "_core.Scenario") -> None:
        self._handle = handle

    @classmethod
    def from_yaml(cls, path: PathLike) -> "Scenario":
        """Reads a scenario YAML file (DESIGN.md, Formats)."""
        return cls(_core.Scenario.load(os.fspath(path)))

    @classmethod
    def from_yaml_text(cls, text: str, source: str = "<string>") -> "Scenario":
        """Parses scenario YAML; `source` names it in error messages."""
        return cls(_core.Scenario.parse(text, source))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "<dict>") -> "Scenario":
        """A scenario from a mapping with the YAML's keys, e.g.
        ``{"gpu": "a100-80gb", "services": [{"name": "r50", "model":
        "resnet50", "rate_rps": 800, "slo_ms": 200}]}``. It is checked as a
        file is, with the line of its JSON rendering in messages."""
        def plain(value: Any) -> Any:  # NumPy scalars (int64, float32...) as numbers
            if hasattr(value, "item"):
                return value.item()
            raise InputError(f"{source}: {value!r} is not a number, string, list or mapping")

        return cls.from_yaml_text(json.dumps(data, indent=1, default=plain), source)

    def to_dict(self) -> Dict[str, Any]:
        """The scenario as a dict with the YAML's keys (from_dict reads it back)."""
        return json.loads(self._handle.to_json())

    def to_yaml(self) -> str:
        """The scenario as YAML, as ``tessera gen`` writes it."""
        return self._handle.to_yaml()

    def scaled(self, factor: float) -> "Scenario":
        """The same services with every rate multiplied by `factor`."""
        return Scenario(self._handle.scaled(float(factor)))

    def replicated(self, copies: int) -> "Scenario":
        """`copies` copies of every service, as ``--replicate``: the first keeps
        its name, copy k >= 2 is named ``name#k``."""
        return Scenario(self._handle.replicated(int(copies)))

    @property
    def name(self) -> str:
        return self.to_dict().get("name", "")

    @property
    def services(self) -> List[Dict[str, Any]]:
        """One dict per service: name, model, rate_rps, slo_ms."""
        return self.to_dict()["services"]

    @property
    def source(self) -> str:
        """The file (or ``<dict>``) it was read from."""
        return self._handle.source

    def __repr__(self) -> str:
        return f"<tessera.Scenario {self.name or self.source!r}: {len(self.services)} services>"


class ProfileTable:
    """Measured (or synthesized) performance of models on MIG profiles: one
    row per (model, gpu, profile, batch, procs) with the segment's
    throughput (req/s) and batch latency (ms), optionally p99_ms and mem_gib.

    Give it to :func:`plan` as ``profiles=table``. Make one with
    :meth:`from_csv` (a Tessera CSV, a ParvaGPU ``prof_data`` directory or
    one of its model CSVs, as ``--profiles``), :meth:`from_records` or
    :meth:`from_arrays`.
    """

    COLUMNS = ("model", "gpu", "profile", "batch", "procs", "throughput_rps", "latency_ms")
    OPTIONAL_COLUMNS = ("p99_ms", "mem_gib")

    __slots__ = ("_handle",)

    def __init__(self, handle: "_core.Profiles") -> None:
        self._handle = handle

    @classmethod
    def from_csv(cls, path: PathLike, gpu: str = "a100-80gb") -> "ProfileTable":
        """Reads profiles as ``--profiles PATH`` does; `gpu` is the catalog GPU
        ParvaGPU data is attributed to."""
        return cls(_core.Profiles.load(os.fspath(path), gpu))

    @classmethod
    def from_csv_text(cls, text: str, source: str = "<string>") -> "ProfileTable":
        """Parses Tessera profile CSV text; `source` names it in messages."""
        return cls(_core.Profiles.parse(text, source))

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]],
                     source: str = "<records>") -> "ProfileTable":
        """One mapping per row with the columns of :attr:`COLUMNS` (and
        optionally p99_ms, mem_gib). Checked as a file is: messages name
        `source` and the row's line (row 1 is line 2, after the header)."""
        rows = list(records)
        columns = list(cls.COLUMNS)
        columns += [c for c in cls.OPTIONAL_COLUMNS if any(c in r for r in rows)]
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow(["" if row.get(c) is None else row.get(c) for c in columns])
        return cls.from_csv_text(out.getvalue(), source)

    @classmethod
    def from_arrays(cls, source: str = "<arrays>", /,
                    **columns: Sequence[Any]) -> "ProfileTable":
        """Columns as equal-length sequences (lists, NumPy arrays, pandas
        Series): ``from_arrays(model=[...], gpu=[...], profile=[...],
        batch=[...], procs=[...], throughput_rps=[...], latency_ms=[...])``."""
        lengths = {name: len(values) for name, values in columns.items()}
        if len(set(lengths.values())) > 1:
            raise InputError(f"{source}: columns differ in length: {lengths}")
        names = list(columns)
        rows = [dict(zip(names, values)) for values in zip(*(columns[n] for n in names))]
        unknown = set(names) - set(cls.COLUMNS) - set(cls.OPTIONAL_COLUMNS)
        if unknown:
            raise InputError(f"{source}: unknown column(s) {sorted(unknown)}; "
                             f"expected {list(cls.COLUMNS + cls.OPTIONAL_COLUMNS)}")
        return cls.from_records(rows, source)

    def to_csv(self) -> str:
        """Tessera profile CSV; from_csv_text reads back the same table, bit for bit."""
        return self._handle.to_csv()

    def to_records(self) -> List[Dict[str, Any]]:
        """One dict per row, numbers as numbers."""
        numeric = {"batch": int, "procs": int}
        rows = []
        for row in csv.DictReader(io.StringIO(self.to_csv())):
            rows.append({k: (None if v == "" else numeric.get(k, float)(v))
                         if k not in ("model", "gpu", "profile") else v
                         for k, v in row.items()})
        return rows

    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame (needs pandas)."""
        return _frame(self.to_records())

    def __len__(self) -> int:
        return len(self._handle)

    def __repr__(self) -> str:
        return f"<tessera.ProfileTable: {len(self)} rows>"


class Plan:
    """A deployment: which GPUs, cut into which MIG instances (or shared
    whole through MPS), each serving which service with what batch size and
    how many processes; checked by the independent validator before it is
    returned.

    ``gpus`` (count), ``instances`` (one dict per instance), ``services``
    (each service's outcome) and ``metrics`` read its JSON, which
    :meth:`to_json` gives exactly as ``tessera plan --format json`` writes
    it. In a notebook the plan draws itself (``_repr_svg_``).
    """

    __slots__ = ("_handle", "_json", "_dict", "notes")

    def __init__(self, handle: "_core.Plan") -> None:
        self._handle = handle
        self._json: Optional[str] = None
        self._dict: Optional[Dict[str, Any]] = None
        #: What the CLI would have noted on stderr (e.g. the default planner's
        #: choice, derived coefficients), one line each.
        self.notes: List[str] = _notes(handle.notes)

    @classmethod
    def from_json(cls, text: str, scenario: Scenario, source: str = "<json>", *,
                  profiles: Union[PathLike, ProfileTable, None] = None,
                  gpu: Optional[str] = None, rule: Optional[LatencyRule] = None,
                  coeffs: Optional[PathLike] = None) -> "Plan":
        """A plan read from its JSON (``tessera plan --format json``), for
        the services of `scenario`, with the profiles (or, for an MPS plan,
        the iGniter coefficients `coeffs`) it was made with; without them,
        the profiles the plan records. It keeps the rule it records (a
        `rule` that contradicts it is an error). :func:`validate` checks it."""
        inputs = _inputs(profiles, gpu, rule, coeffs)
        return cls(_core.plan_from_json(text, source, scenario._handle, inputs))

    @classmethod
    def load(cls, path: PathLike, scenario: Scenario, *,
             profiles: Union[PathLike, ProfileTable, None] = None, gpu: Optional[str] = None,
             rule: Optional[LatencyRule] = None, coeffs: Optional[PathLike] = None) -> "Plan":
        """A plan read from a JSON file (see :meth:`from_json`); a file that
        is not there or cannot be read raises the CLI's error for it."""
        name = os.fspath(path)
        text = _core.read_text(name)
        return cls.from_json(text, scenario, name, profiles=profiles, gpu=gpu, rule=rule,
                             coeffs=coeffs)

    def to_json(self) -> str:
        """The deployment JSON, byte for byte what ``tessera plan --format json`` writes."""
        if self._json is None:
            self._json = self._handle.to_json()
        return self._json

    def to_dict(self) -> Dict[str, Any]:
        """The deployment JSON as a dict (a fresh one: changing it changes
        nothing in the plan)."""
        return json.loads(self.to_json())

    def _parsed(self) -> Dict[str, Any]:
        """The deployment JSON as a dict, parsed once, for the properties."""
        if self._dict is None:
            self._dict = json.loads(self.to_json())
        return self._dict

    def to_table(self) -> str:
        """The plan as ``tessera plan`` prints it for people."""
        return self._handle.to_table()

    def to_svg(self) -> str:
        """Every GPU drawn (``tessera plan --svg``)."""
        return self._handle.to_svg()

    def to_csv(self) -> str:
        """ParvaGPU's deployment map (MIG plans only)."""
        return self._handle.to_csv()

    def _repr_svg_(self) -> str:
        return self.to_svg()

    def save(self, path: PathLike) -> None:
        """Writes :meth:`to_json` to `path`."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_json())

    @property
    def planner(self) -> str:
        return self._parsed()["planner"]

    @property
    def gpu(self) -> str:
        """The GPU model (of a pool plan: its first model; see each GPU's ``gpu``)."""
        return self._parsed()["gpu"]

    @property
    def sharing(self) -> str:
        """``mig+mps`` (MIG instances) or ``mps`` (GPUs shared whole)."""
        return self._parsed()["sharing"]

    @property
    def gpus(self) -> int:
        """How many GPUs the plan uses."""
        return int(self._parsed()["metrics"]["gpus"])

    @property
    def instances(self) -> List[Dict[str, Any]]:
        """One dict per MIG instance (or MPS process group), with the index
        of its GPU under ``gpu_index``."""
        rows = []
        for g in self._parsed()["gpus"]:
            for inst in g.get("instances", g.get("processes", [])):
                rows.append({"gpu_index": g["index"], **inst})
        return rows

    @property
    def services(self) -> List[Dict[str, Any]]:
        """Each service's outcome: rate, capacity, SLO, status."""
        return self._parsed()["services"]

    @property
    def metrics(self) -> Dict[str, Any]:
        """GPUs, compute slices, cost and the other figures of the plan."""
        return self._parsed()["metrics"]

    @property
    def feasible(self) -> bool:
        """False when some service cannot meet its SLO (the CLI's exit 3);
        ``services`` says which and why."""
        return self._handle.feasible

    @property
    def scenario(self) -> Scenario:
        """The scenario the plan serves."""
        return Scenario(self._handle.scenario)

    def validate(self, scenario: Optional[Scenario] = None) -> List[Dict[str, str]]:
        """See :func:`validate`."""
        return validate(self, scenario)

    def __repr__(self) -> str:
        return (f"<tessera.Plan {self.planner}: {self.gpus} GPUs, "
                f"{len(self.instances)} instances, {self.sharing}>")


def planners() -> Dict[str, str]:
    """Every planner's name and how it shares GPUs (``mig`` or ``mps``), as
    ``tessera compare --list``."""
    return dict(_core.planners())


def policies() -> List[str]:
    """The online placement policies of :func:`replay`."""
    return list(_core.placers())


def plan(scenario: Scenario, planner: Optional[str] = None, *,
         profiles: Union[PathLike, ProfileTable, None] = None, gpu: Optional[str] = None,
         rule: Optional[LatencyRule] = None, coeffs: Optional[PathLike] = None,
         gpulet_tables: Optional[PathLike] = None, price: Optional[float] = None,
         time_limit: Optional[Duration] = None, seed: int = 1, score: str = "capped",
         current: Union[Plan, PathLike, None] = None, max_extra_gpus: Optional[int] = None,
         repack_gpus: int = 0, consolidate: bool = False,
         shadow: Optional[bool] = None) -> Plan:
    """Plans `scenario` and validates the plan, as ``tessera plan``.

    - `planner`: one of :func:`planners`; None is the default every front-end
      shares (:func:`default_planner`; igniter when `coeffs` is given);
    - `profiles`: a path (``--profiles``: a CSV or a ParvaGPU ``prof_data``
      directory) or a :class:`ProfileTable`; None: the embedded synthesized ones;
    - `gpu`: the GPU model (default: the scenario's, else a100-80gb);
    - `rule`: a :class:`LatencyRule` (default: the pooled rule, leastconn);
    - `coeffs`, `gpulet_tables`, `price`: the MPS planners' iGniter
      coefficients, gpu-lets' tables and hourly price;
    - `time_limit`: the planner's wall-clock budget (default: its own);
    - `seed`: a randomised planner's seed; `score`: ``capped`` or ``paper``
      (MIG-serving's planners);
    - `current`: a running plan (a :class:`Plan` or its JSON file) to re-plan
      from, keeping what it can; `max_extra_gpus`: GPUs the re-plan may use
      beyond the best plan from scratch; `repack_gpus`: the least-filled
      running GPUs whose instances the re-plan plans afresh (``--repack-gpus``);
      `consolidate`: replace several instances of a service by one larger
      instance where that takes less of the GPUs (``--consolidate``);
    - `shadow`: iGniter's shadow guard (MPS planners; default on for igniter).

    A plan in which some service cannot meet its SLO is returned with
    ``feasible`` False. Raises :class:`InputError` on bad input.
    """
    search = _core.SearchOptions()
    search.time_limit_s = _duration("time_limit", time_limit) or 0.0
    search.seed = _seed(seed)
    search.score = score
    inputs = _inputs(profiles, gpu, rule, coeffs, gpulet_tables, price)
    current_plan = current._handle if isinstance(current, Plan) else None
    current_path = "" if current is None or isinstance(current, Plan) else os.fspath(current)
    return Plan(_core.plan(scenario._handle, planner or "", inputs, search, current_plan,
                           current_path, max_extra_gpus, repack_gpus, consolidate, shadow))


def default_planner() -> str:
    """The planner :func:`plan`, ``tessera plan``, ``tessera serve`` and
    ``tessera compare`` use when none is named."""
    return _core.default_planner()


def validate(plan: Plan, scenario: Optional[Scenario] = None) -> List[Dict[str, str]]:
    """The independent validator on `plan` against `scenario` (default: the
    one it was made for), under the rule the plan records: one dict (rule,
    where, message) per violation; empty when the plan is valid."""
    rows = _core.validate(plan._handle, None if scenario is None else scenario._handle)
    return [{"rule": r, "where": w, "message": m} for r, w, m in rows]


class Report:
    """A simulation's report: per service its requests, rates, waiting,
    p50/p95/p99/max latency and SLO compliance (the share within the SLO).
    ``services`` is a list of dicts; :meth:`to_pandas` a DataFrame."""

    __slots__ = ("_json", "_dict", "notes")

    def __init__(self, text: str, notes: Sequence[str] = ()) -> None:
        self._json = text
        self._dict = json.loads(text)
        #: What the CLI would have noted on stderr, one line each.
        self.notes: List[str] = _notes(notes)

    def to_json(self) -> str:
        """Byte for byte what ``tessera simulate --format json`` writes."""
        return self._json

    def to_dict(self) -> Dict[str, Any]:
        """The report JSON as a dict (a fresh one)."""
        return json.loads(self._json)

    @property
    def services(self) -> List[Dict[str, Any]]:
        return copy.deepcopy(self._dict["services"])

    @property
    def duration_s(self) -> float:
        return self._dict["duration_s"]

    @property
    def misses(self) -> List[str]:
        """Services with fewer than 99% of requests within the SLO."""
        return [s["name"] for s in self.services if s["compliance"] < 0.99]

    def to_pandas(self) -> Any:
        """One row per service (needs pandas)."""
        return _frame(self.services)

    def __repr__(self) -> str:
        return (f"<tessera.Report: {len(self.services)} services over {self.duration_s:g} s, "
                f"{len(self.misses)} missing their SLO>")


def simulate(plan: Plan, arrivals: str = "poisson", duration: Optional[Duration] = None,
             scenario: Optional[Scenario] = None, *, seed: int = 1, router: Optional[str] = None,
             variability: str = "none", max_queue_delay_ms: Optional[Duration] = None,
             drop_after_ms: Duration = 0, burst_on_share: Optional[float] = None,
             burst_on_s: Optional[Duration] = None) -> Report:
    """Replays `plan` request by request on a simulated clock, as ``tessera
    simulate``: `arrivals` poisson, constant, bursty or ``trace:FILE``;
    `duration` (default 60 s, or with a trace its last request rounded up
    to a second); `scenario` gives other rates (default: the plan's own);
    `router` (default: the plan's) weighted, jsq, equal, leastconn or first;
    `variability` none, exponential, lognormal or lognormal:CV;
    `max_queue_delay_ms` (default: the plan's batch budget) and
    `drop_after_ms` (0: never) in milliseconds; `burst_on_share` and
    `burst_on_s` shape bursty arrivals. Same seed, same report."""
    options = _core.SimulateOptions()
    options.arrivals = arrivals
    options.duration_s = _duration("duration", duration)
    options.seed = _seed(seed)
    options.router = router or ""
    options.variability = variability
    options.max_queue_delay_ms = _duration("max_queue_delay_ms", max_queue_delay_ms)
    options.drop_after_ms = _duration("drop_after_ms", drop_after_ms) or 0.0
    options.burst_on_share = burst_on_share
    options.burst_on_s = _duration("burst_on_s", burst_on_s)
    text, notes = _core.simulate(plan._handle, None if scenario is None else scenario._handle,
                                 options)
    return Report(text, notes)


class Transition:
    """The phases that move a running cluster from plan A to plan B without
    dropping any service below min(its rate in A, in B); checked by the
    independent checker. :meth:`to_json` is ``tessera transition --format
    json``; in a notebook it draws itself."""

    __slots__ = ("_handle", "_dict")

    def __init__(self, handle: "_core.Transition") -> None:
        self._handle = handle
        self._dict = json.loads(handle.to_json())

    def to_json(self) -> str:
        return self._handle.to_json()

    def to_dict(self) -> Dict[str, Any]:
        """The transition JSON as a dict (a fresh one)."""
        return json.loads(self.to_json())

    def to_text(self) -> str:
        """The phases for people (``tessera transition``)."""
        return self._handle.to_text()

    def to_svg(self) -> str:
        return self._handle.to_svg()

    def _repr_svg_(self) -> str:
        return self.to_svg()

    @property
    def phases(self) -> List[Dict[str, Any]]:
        return copy.deepcopy(self._dict["phases"])

    @property
    def summary(self) -> Dict[str, Any]:
        """Steps, phases, GPUs touched and the other totals."""
        return copy.deepcopy(self._dict["summary"])

    @property
    def checked(self) -> str:
        """What the independent checker measured, in one line."""
        return self._handle.summary()

    @property
    def naive(self) -> str:
        """The naive order (destroy all that differs, then create), in one line."""
        return self._handle.naive_summary()

    def __repr__(self) -> str:
        return f"<tessera.Transition: {self.checked}>"


def transition(a: Plan, b: Plan, spare_gpus: int = 0) -> Transition:
    """Plans the move from MIG plan `a` to MIG plan `b` (which must serve its
    scenario), as ``tessera transition``, with up to `spare_gpus` GPUs
    beyond A's. Raises :class:`InfeasibleError` saying how many spare GPUs
    it needs when none keeps every floor."""
    return Transition(_core.transition(a._handle, b._handle, int(spare_gpus)))


class ReplayResult:
    """Online placement of a VM/pod trace: one row per policy (acceptance,
    active hardware, migrations, ...) with ``per_profile`` acceptance;
    :meth:`to_json` is ``tessera replay --format json``."""

    __slots__ = ("_json", "_rows", "notes")

    def __init__(self, text: str, notes: Sequence[str] = ()) -> None:
        self._json = text
        self._rows = json.loads(text)
        #: What the trace loader did (hosts, pods kept and dropped, the
        #: profile mix), as ``tessera replay`` notes it, one line each.
        self.notes: List[str] = _notes(notes)

    def to_json(self) -> str:
        return self._json

    @property
    def policies(self) -> List[Dict[str, Any]]:
        """One dict per policy replayed."""
        rows = self._rows if isinstance(self._rows, list) else self._rows["policies"]
        return copy.deepcopy(rows)

    def to_pandas(self) -> Any:
        """One row per policy, without the nested per-profile lists (needs pandas)."""
        return _frame([{k: v for k, v in row.items() if not isinstance(v, (list, dict))}
                       for row in self.policies])

    def __repr__(self) -> str:
        names = ", ".join(f"{p['policy']} {p['acceptance']:.1%}" for p in self.policies)
        return f"<tessera.ReplayResult: {names}>"


def replay(nodes: PathLike, pods: PathLike, policy: str = "grmu", *, gpu: str = "a100-40gb",
           hosts: Optional[int] = None, gpus_per_host: Optional[int] = None,
           max_pods: Optional[int] = None, lifetime: str = "trace", heavy_share: float = 0.3,
           fair_factor: float = 0.55, consolidate_every: Optional[Duration] = None,
           defragment: bool = True, mecc_window: Duration = "24h", optimum: bool = False,
           optimum_time_limit: float = 60.0) -> ReplayResult:
    """Replays an Alibaba-format node and pod list through online MIG
    placement, as ``tessera replay``: `policy` one of :func:`policies`, or
    ``"all"`` for every one (``--compare``); `gpu` the MIG GPU model every
    trace GPU becomes; the stress knobs `hosts`, `gpus_per_host`, `max_pods`
    and `lifetime` (``trace``, ``none`` or ``scale:K``); grmu's
    `heavy_share`, fair's `fair_factor`, grmu and fair's `consolidate_every`
    (None: never) and `defragment`, mecc's `mecc_window`; `optimum` solves
    GRMU's ILP offline (at most 40 VMs) within `optimum_time_limit` seconds
    per objective."""
    options = _core.ReplayOptions()
    options.nodes = os.fspath(nodes)
    options.pods = os.fspath(pods)
    if policy == "all":
        options.every_policy = True
    else:
        options.policy = policy
    options.gpu = gpu
    options.hosts = hosts
    options.gpus_per_host = gpus_per_host
    options.max_pods = max_pods
    options.lifetime = lifetime
    options.heavy_share = heavy_share
    options.fair_factor = fair_factor
    options.consolidate_every_s = _duration("consolidate_every", consolidate_every) or 0.0
    options.defragment = defragment
    options.mecc_window_s = _duration("mecc_window", mecc_window) or 0.0
    options.optimum = optimum
    options.optimum_time_limit_s = optimum_time_limit
    text, notes = _core.replay(options)
    return ReplayResult(text, notes)


class AutoscaleResult:
    """A day of traffic autoscaled, as ``tessera autoscale``: one dict per
    strategy (``autoscale``, ``static-peak``, ``oracle``) with its GPU-hours,
    fewest and most GPUs, moves, the moves it declined, and per service every
    minute's share within the SLO and SLO-safe capacity; :meth:`to_json` is
    ``tessera autoscale --format json``."""

    __slots__ = ("_json", "_data", "notes")

    def __init__(self, text: str, notes: Sequence[str] = ()) -> None:
        self._json = text
        self._data = json.loads(text)
        #: The run's notes, one line each.
        self.notes: List[str] = _notes(notes)

    def to_json(self) -> str:
        return self._json

    @property
    def strategies(self) -> List[Dict[str, Any]]:
        """One dict per strategy: autoscale, static-peak, oracle."""
        return copy.deepcopy(self._data["strategies"])

    @property
    def gpu_hours(self) -> Dict[str, float]:
        """GPU-hours of the day by strategy."""
        return {s["name"]: s["gpu_hours"] for s in self._data["strategies"]}

    @property
    def minutes(self) -> int:
        """Minutes in the day."""
        return int(self._data["minutes"])

    def to_pandas(self) -> Any:
        """One row per strategy, without the per-minute series (needs pandas)."""
        return _frame([{"name": s["name"], "gpu_hours": s["gpu_hours"], "min_gpus": s["min_gpus"],
                        "peak_gpus": s["peak_gpus"], "max_spare_gpus": s["max_spare_gpus"],
                        "moves": len(s["moves"]),
                        "service_minutes_below_target": s["service_minutes_below_target"]}
                       for s in self._data["strategies"]])

    def __repr__(self) -> str:
        hours = ", ".join(f"{name} {h:.1f}" for name, h in self.gpu_hours.items())
        return f"<tessera.AutoscaleResult: {self.minutes} minutes, GPU-hours {hours}>"


def forecasters() -> List[str]:
    """The forecasters of :func:`autoscale`."""
    return list(_core.forecasters())


def autoscale(scenario: Scenario, rates: PathLike, *, season: Optional[PathLike] = None,
              planner: Optional[str] = None, forecaster: str = "holt", lead: Duration = "10m",
              margin: float = 0.05, hysteresis: float = 0.08, down_hold: Duration = "5m",
              spare_gpus: int = 2, plan_windows: int = 2, hedge_turns: bool = False,
              consolidate: bool = False, step_durations: Optional[str] = None,
              sample: Duration = "3s", oracle_interval: Duration = "15m", jobs: int = 0,
              seed: int = 1,
              profiles: Union[PathLike, ProfileTable, None] = None, gpu: Optional[str] = None,
              rule: Optional[LatencyRule] = None) -> AutoscaleResult:
    """Autoscales a day of traffic, as ``tessera autoscale``: `rates` a CSV
    of per-minute rates (``minute,multiplier`` over the scenario's rates, or
    ``minute,<service>,...``); `season` the previous day for the seasonal
    forecaster; `forecaster` one of :func:`forecasters`; `lead`, `margin`,
    `hysteresis`, `down_hold`, `spare_gpus`, `plan_windows`, `hedge_turns`
    (``--hedge-turns``), `consolidate` (``--consolidate``) and
    `step_durations` (``"model-load=30s,mig-create=5s"``) the policy's;
    `sample` the simulated seconds of a minute without a transition;
    `oracle_interval` the oracle's; `jobs` simulation threads
    (0: one per core); `profiles`, `gpu` and `rule` as :func:`plan` takes
    them (MIG planners only)."""
    options = _core.AutoscaleOptions()
    options.forecaster = forecaster
    options.lead_s = _duration("lead", lead) or 0.0
    options.margin = margin
    options.hysteresis = hysteresis
    options.down_hold_s = _duration("down_hold", down_hold) or 0.0
    options.spare_gpus = spare_gpus
    options.plan_windows = plan_windows
    options.hedge_turns = hedge_turns
    options.consolidate = consolidate
    options.sample_s = _duration("sample", sample) or 0.0
    options.oracle_interval_s = _duration("oracle_interval", oracle_interval) or 0.0
    options.jobs = jobs
    options.seed = _seed(seed)
    text, notes = _core.autoscale(scenario._handle, _inputs(profiles, gpu, rule),
                                  os.fspath(rates), "" if season is None else os.fspath(season),
                                  planner or "", options, step_durations or "")
    return AutoscaleResult(text, notes)
