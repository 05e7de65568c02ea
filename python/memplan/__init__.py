"""memplan: how much GPU memory a model job needs, before it starts.

The planning commands of the ``memplan`` CLI, from the same C++ core::

    import memplan

    plan = memplan.estimate("llama-2-7b", "training", batch=4, seq=2048, gpu="a100-80gb")
    print(plan.total_bytes, plan.verdict)       # exact bytes; "fits", "fits, but ..." or "does not fit"
    for c in plan.components:
        print(c.name, c.bytes, c.formula)

A model is anything the CLI takes (a built-in name, a model .yaml, a config.json, a snapshot
directory, a .safetensors or .gguf file, a Hub id ORG/NAME) or a dict in config.json form.
Options are the CLI's, as keyword arguments with Python names (``--new-tokens 64`` is
``new_tokens=64``, ``--no-kv-cache`` is ``no_kv_cache=True``, lists are lists);
``memplan.options()`` lists them with their help. Every result's ``to_dict()`` equals the
CLI's ``--format json`` output for the same plan. Bad input raises ``memplan.InputError``
(a ``ValueError``) with the CLI's located message.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
from typing import Any, Iterable, Mapping

from . import _memplan
from ._memplan import InputError, InternalError, __version__

__all__ = [
    "Component", "Estimate", "Fit", "Hooks", "InputError", "InternalError", "Recommendation", "Report", "Sweep",
    "estimate", "fit", "gpus", "hooks", "models", "options", "probe", "recommend", "sweep", "__version__",
]

# The option table by Python name (the CLI's flag in snake_case: batch, seq, new_tokens).
_OPTIONS: dict[str, dict[str, Any]] = {o["name"]: o for o in _memplan.option_table()}


def options() -> list[dict[str, Any]]:
    """The plan options: name (the keyword argument), key (the plan-file key), kind, group, help,
    default and the workloads each applies to."""
    return [dict(o) for o in _OPTIONS.values()]


class Component:
    """One row of a breakdown: a name, its exact bytes, the arithmetic, and the rows inside it."""

    def __init__(self, row: Mapping[str, Any]):
        self.name: str = row["name"]
        self.bytes: int = row["bytes"]
        self.formula: str = row.get("formula", "")
        self.children: list[Component] = [Component(c) for c in row.get("detail", [])]

    def __repr__(self) -> str:
        return f"Component({self.name!r}, {self.bytes:,} bytes)"


class Report:
    """A command's report. ``to_dict()`` is the CLI's ``--format json`` output, parsed."""

    def __init__(self, text: str):
        self._data: dict[str, Any] = json.loads(text)

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(self._data)

    def __getitem__(self, key: str) -> Any:
        return copy.deepcopy(self._data[key])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({json.dumps(self._data)[:120]}...)"


class Estimate(Report):
    """``memplan estimate``: the memory of one plan, by component, and its verdict against a GPU."""

    @property
    def total_bytes(self) -> int:
        """What must fit on the (most loaded) GPU."""
        return self._data["total_bytes"]

    @property
    def allocated_bytes(self) -> int | None:
        """The total less the CUDA context and the allocator's overhead (one-GPU plans)."""
        return self._data.get("allocated_bytes")

    @property
    def components(self) -> list[Component]:
        """The breakdown's rows (for a multi-GPU layout: those of the most loaded device)."""
        rows = self._data.get("components")
        if rows is None:
            devices = self._data.get("devices", [])
            rows = max(devices, key=lambda d: d.get("total_bytes", 0)).get("components", []) if devices else []
        return [Component(c) for c in rows]

    @property
    def verdict(self) -> str | None:
        """With a GPU: "fits", "fits, but above the threshold ..." or "does not fit"; else None."""
        return self._data.get("verdict")

    @property
    def fits(self) -> bool | None:
        return self._data.get("fits")

    def __repr__(self) -> str:
        model = self._data.get("model", {}).get("name", "?")
        kind = self._data.get("workload", {}).get("kind", "?")
        verdict = f", {self.verdict}" if self.verdict else ""
        return f"Estimate({model}, {kind}: {self.total_bytes:,} bytes{verdict})"


class Fit(Report):
    """``memplan fit``: the largest value of the varied option that fits, and what binds."""

    @property
    def value(self) -> int | None:
        return self._data.get("value")

    @property
    def binding(self) -> Any:
        return copy.deepcopy(self._data.get("binding"))


class Recommendation(Report):
    """``memplan recommend``: the changes that save memory, ranked, and the GPUs that fit."""

    @property
    def mitigations(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self._data.get("mitigations", []))

    @property
    def gpus_that_fit(self) -> list[Any]:
        return copy.deepcopy(self._data.get("gpus_that_fit", []))


class Sweep(Report):
    """``memplan sweep``: one row per point of the grid."""

    @property
    def rows(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self._data["rows"])

    def to_pandas(self):
        """The rows as a pandas DataFrame (needs pandas)."""
        import pandas  # only here: pandas is optional

        return pandas.DataFrame(self.rows)


class Hooks(Report):
    """``memplan hooks``: hook points with shapes and bytes, and what the selection costs."""

    @property
    def rows(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self._data["hooks"])

    @property
    def selected_bytes(self) -> int:
        return self._data["selected_bytes"]


def _model(model: Any) -> tuple[str, str]:
    """(name or path, config.json text) for the core."""
    if isinstance(model, Mapping):
        return "", json.dumps(model)
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model), ""
    raise InputError(f"model must be a name, a path or a dict in config.json form, not {type(model).__name__}")


def _words(name: str, value: Any, option: Mapping[str, Any]) -> list[str] | None:
    """The option's value as the command line's words; None when a flag is not set."""
    kind = option["kind"]
    if kind == "flag":
        if not isinstance(value, bool):
            raise InputError(f"{name}={value!r}: True or False")
        return [] if value else None
    if isinstance(value, bool):
        raise InputError(f"{name}={value!r}: {option['help']}")
    if kind == "list":
        values = [value] if isinstance(value, (str, int)) else list(value)
        return [str(v) for v in values]
    if isinstance(value, (str, int, float)):
        return [str(value)]
    raise InputError(f"{name}={value!r}: a {kind} is expected ({option['help']})")


def _unknown(name: str, known: Iterable[str]) -> InputError:
    close = difflib.get_close_matches(name, list(known), n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else " (memplan.options() lists them)"
    error = InputError(f"unknown option {name}{hint}")
    error.key = name
    return error


def _options(given: Mapping[str, Any], own: Iterable[str] = ()) -> list[tuple[str, list[str]]]:
    out = []
    for name, value in given.items():
        option = _OPTIONS.get(name)
        if option is None:
            raise _unknown(name, [*_OPTIONS, *own])
        if value is None:
            continue
        words = _words(name, value, option)
        if words is not None:
            out.append((name, words))
    return out


def _device(gpu: str | None, probe: bool = False, no_calibration: bool = False, cpu: bool | str = False) -> Any:
    d = _memplan.DeviceArgs()
    d.gpu = gpu or ""
    d.probe = probe
    d.no_calibration = no_calibration
    if not isinstance(cpu, (bool, str)):
        raise InputError(f"cpu={cpu!r}: True (the RAM available now) or a size such as '64GiB'")
    d.cpu = "host" if cpu is True else cpu or ""
    return d


_OWN = ("model", "workload", "gpu", "probe", "no_calibration", "cpu", "as_model_type")


def estimate(model: Any = "llama-2-7b", workload: str | None = None, *, gpu: str | None = None, probe: bool = False,
             no_calibration: bool = False, cpu: bool | str = False, as_model_type: str | None = None,
             **options: Any) -> Estimate:
    """The memory a workload needs on a model, and where it goes (``memplan estimate``).

    workload: weights, inference (default), generation, extraction, streaming_extraction,
    training, sae and the analyses. gpu: a GPU of ``memplan.gpus()`` or a capacity such as
    "24GiB"; the verdict says whether the plan fits. probe: plan for this machine's first GPU.
    cpu: plan for this machine's CPU instead (True: against the RAM available now; or a size
    such as "64GiB"): fp32 by default, no CUDA context or caching allocator. as_model_type: read a config of an unknown model_type as this one. Other keyword
    arguments are plan options (``memplan.options()``).
    """
    if workload is not None:
        options = {"workload": workload, **options}
    name, text = _model(model)
    return Estimate(_memplan.estimate(name, text, as_model_type or "", _device(gpu, probe, no_calibration, cpu),
                                      _options(options, _OWN)))


def fit(model: Any, *, gpu: str, vary: str, as_model_type: str | None = None, **options: Any) -> Fit:
    """The largest batch, seq or chunk (``vary``) whose plan fits on ``gpu`` (``memplan fit``)."""
    name, text = _model(model)
    return Fit(_memplan.fit(name, text, as_model_type or "", _device(gpu), vary, _options(options, _OWN)))


def recommend(model: Any, *, gpu: str, as_model_type: str | None = None, **options: Any) -> Recommendation:
    """What to change when a plan does not fit ``gpu``, ranked, and the GPUs it fits (``memplan recommend``)."""
    name, text = _model(model)
    return Recommendation(_memplan.recommend(name, text, as_model_type or "", _device(gpu), _options(options, _OWN)))


def _axis(name: str, value: Any) -> list[str]:
    values = [value] if isinstance(value, (str, int)) else list(value)
    if not values or any(isinstance(v, bool) or not isinstance(v, (str, int)) for v in values):
        raise InputError(f"{name}={value!r}: a value or a list of values")
    return [str(v) for v in values]


def sweep(models: Any, *, workload: Any = "inference", batch: Any = 1, seq: Any = None, precision: Any = "auto",
          gpu: str | None = None, smallest_gpu: bool = False, as_model_type: str | None = None,
          **options: Any) -> Sweep:
    """A grid of plans: models x workloads x precisions x batch sizes x sequence lengths
    (``memplan sweep``). Each axis takes one value or a list; ``seq`` defaults to 2048, or the
    shortest context of the models if shorter."""
    request = _memplan.SweepRequest()
    request.workloads = _axis("workload", workload)
    request.batches = _axis("batch", batch)
    request.seqs = [] if seq is None else _axis("seq", seq)
    request.precisions = _axis("precision", precision)
    request.gpu = gpu or ""
    request.smallest_gpu = smallest_gpu
    names = [models] if isinstance(models, (str, os.PathLike)) else list(models)
    return Sweep(_memplan.sweep([os.fspath(m) for m in names], as_model_type or "", request,
                                _options(options, ("workload", "batch", "seq", "precision", "gpu", "smallest_gpu"))))


def hooks(model: Any = "llama-2-7b", filter: Any = None, *, batch: int = 1, seq: int | None = None,
          precision: str = "bf16", layers: Any = None, pos_slice: int = 0, remove_batch_dim: bool = False,
          all: bool = False, as_model_type: str | None = None) -> Hooks:
    """A model's TransformerLens hook points with shapes and bytes (``memplan hooks``).

    filter: hook names or globs, as ``run_with_cache(names_filter=...)`` takes a list
    ("blocks.*.hook_resid_post"); layers: 3, [0, 5, 11] or "0-11"; pos_slice: the last N
    positions; all: one row per hook instead of per hook kind.
    """
    request = _memplan.HooksRequest()
    for key, value in (("batch", batch), ("pos_slice", pos_slice)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InputError(f"{key}={value!r}: a whole number")
    request.batch = batch
    request.seq = seq or 0
    request.precision = precision
    request.filter = [] if filter is None else [filter] if isinstance(filter, str) else list(filter)
    if layers is not None:
        request.layers = str(layers) if isinstance(layers, (str, int)) else ",".join(str(x) for x in layers)
    request.pos_slice = pos_slice
    request.remove_batch_dim = remove_batch_dim
    request.all = all
    name, text = _model(model)
    return Hooks(_memplan.hooks(name, text, as_model_type or "", request))


def models() -> list[dict[str, Any]]:
    """The built-in models with their exact parameter counts (``memplan models``)."""
    return json.loads(_memplan.models())["models"]


def gpus() -> list[dict[str, Any]]:
    """The GPU table, with the user's MEMPLAN_GPU_FILE (``memplan gpus``)."""
    return json.loads(_memplan.gpus())["gpus"]


def probe(warn_above: float = 0.85) -> Report:
    """This machine's GPUs, host and environment (``memplan probe``); no driver is an answer, not an error."""
    return Report(_memplan.probe(warn_above))


def _options_doc(skip: Iterable[str] = ()) -> str:
    """The option table's help, as a docstring section."""
    lines = ["", "    Plan options (keyword arguments; memplan.options() has them as data):"]
    for o in _OPTIONS.values():
        if o["name"] in skip:
            continue
        default = f" (default: {o['default']})" if o["default"] else ""
        text = (o["help"] + default).replace("\n", "\n          ")
        lines.append(f"      {o['name']}: {text}")
    return "\n".join(lines) + "\n"


for _command in (estimate, fit, recommend):
    _command.__doc__ = (_command.__doc__ or "") + _options_doc(skip=("workload",))
sweep.__doc__ = (sweep.__doc__ or "") + _options_doc(skip=("workload", "batch", "seq", "precision"))
del _command
