"""Tessera for Python: plan, validate and simulate spatial sharing of NVIDIA
GPUs (MIG instances, MPS processes) for DNN inference, on the same C++ core
as the ``tessera`` command line.

The nouns are the CLI's::

    import tessera
    s6 = tessera.Scenario.from_yaml("examples/scenarios/s6.yaml")
    plan = tessera.plan(s6, planner="exact")        # a Plan: GPUs, instances, metrics
    print(plan.gpus, plan.metrics["gpcs"])
    report = tessera.simulate(plan, duration="30s")  # a Report: p99 and SLO per service
    report.to_pandas()                               # with pandas installed

Options are the CLI's flags of the same command, ``_`` for ``-``:
``plan(s, "exact", time_limit=3, latency_factor=0.4)`` is ``tessera plan
--planner exact --time-limit 3 --latency-factor 0.4``; ``True`` gives a flag,
``False`` its ``--no-`` form (``shadow=False``). Plans, reports and errors are
the CLI's: ``plan.to_json()`` is ``tessera plan --format json``, and every
error is a :class:`TesseraError` carrying the CLI's message. The GIL is
released while a plan, a simulation, a transition or a replay runs, so
threads plan in parallel.
"""

from __future__ import annotations

import copy
import csv
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
    "plan",
    "validate",
    "simulate",
    "transition",
    "replay",
    "planners",
    "policies",
    "TesseraError",
    "InputError",
    "NotFoundError",
    "FileError",
    "InfeasibleError",
    "InternalError",
]

PathLike = Union[str, "os.PathLike[str]"]

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
    def from_arrays(cls, source: str = "<arrays>", **columns: Sequence[Any]) -> "ProfileTable":
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
    def from_json(cls, text: str, scenario: Scenario, source: str = "<json>",
                  profiles: Union[PathLike, ProfileTable, None] = None,
                  **options: Any) -> "Plan":
        """A plan read from its JSON (``tessera plan --format json``), for
        the services of `scenario`, with the profiles (or, for an MPS plan,
        ``coeffs=``) it was made with. :func:`validate` checks it."""
        table, options = _profiles_option(profiles, options)
        return cls(_core.plan_from_json(text, source, scenario._handle, options, table))

    @classmethod
    def load(cls, path: PathLike, scenario: Scenario,
             profiles: Union[PathLike, ProfileTable, None] = None, **options: Any) -> "Plan":
        """A plan read from a JSON file (see :meth:`from_json`); a file that
        is not there or cannot be read raises the CLI's error for it."""
        name = os.fspath(path)
        text = _core.read_text(name)
        return cls.from_json(text, scenario, name, profiles, **options)

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


def _profiles_option(profiles: Union[PathLike, ProfileTable, None],
                     options: Dict[str, Any]) -> "tuple[Optional[_core.Profiles], Dict[str, Any]]":
    """The in-memory table to pass, and the options with a path as --profiles."""
    if isinstance(profiles, ProfileTable):
        return profiles._handle, options
    if profiles is not None:
        options = {**options, "profiles": os.fspath(profiles)}
    return None, {k: (os.fspath(v) if isinstance(v, os.PathLike) else v)
                  for k, v in options.items()}


def planners() -> Dict[str, str]:
    """Every planner's name and how it shares GPUs (``mig`` or ``mps``), as
    ``tessera compare --list``."""
    return dict(_core.planners())


def policies() -> List[str]:
    """The online placement policies of :func:`replay`."""
    return list(_core.placers())


def plan(scenario: Scenario, planner: str = "exact",
         profiles: Union[PathLike, ProfileTable, None] = None, **options: Any) -> Plan:
    """Plans `scenario` with `planner` (see :func:`planners`) and validates
    the plan, as ``tessera plan --planner PLANNER``.

    `profiles` is a path (``--profiles``) or a :class:`ProfileTable`;
    without it, the embedded synthesized profiles. Other options are the
    CLI's flags: ``gpu``, ``latency_factor``, ``capacity_rule``, ``router``,
    ``rate_margin``, ``compat``, ``time_limit``, ``seed``, ``score``; for the
    MPS planners ``coeffs``, ``gpulet_tables``, ``price``, ``shadow``; for
    re-planning ``current`` (a plan's JSON file) and ``max_extra_gpus``.
    A plan in which some service cannot meet its SLO is returned with
    ``feasible`` False. Raises :class:`InputError` on bad input.
    """
    table, options = _profiles_option(profiles, options)
    return Plan(_core.plan(scenario._handle, planner, options, table))


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


def simulate(plan: Plan, arrivals: str = "poisson", duration: Union[str, float, None] = None,
             scenario: Optional[Scenario] = None, **options: Any) -> Report:
    """Replays `plan` request by request on a simulated clock, as ``tessera
    simulate``: `arrivals` poisson, constant, bursty or ``trace:FILE``;
    `duration` like ``60s``, ``500ms``, ``2m`` or seconds (default, as the
    CLI's: 60 s, or with a trace its last request rounded up to a second);
    `scenario` gives other rates (default: the plan's own). Options:
    ``seed``, ``router``,
    ``variability``, ``max_queue_delay_ms``, ``drop_after_ms``,
    ``burst_on_share``, ``burst_on_s``. Same seed, same report."""
    options = {"arrivals": arrivals, "duration": duration, **options}
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


def replay(nodes: PathLike, pods: PathLike, policy: str = "grmu",
           **options: Any) -> ReplayResult:
    """Replays an Alibaba-format node and pod list through online MIG
    placement, as ``tessera replay``: `policy` one of :func:`policies`, or
    ``"all"`` for every one (``--compare``). Options: ``gpu``, ``hosts``,
    ``gpus_per_host``, ``max_pods``, ``lifetime``, ``heavy_share``,
    ``fair_factor``, ``consolidate_every``, ``no_defragment``,
    ``mecc_window``, ``optimum``, ``optimum_time_limit``."""
    options = {"nodes": os.fspath(nodes), "pods": os.fspath(pods), **options}
    if policy == "all":
        options["compare"] = True
    else:
        options["policy"] = policy
    text, notes = _core.replay(options)
    return ReplayResult(text, notes)
