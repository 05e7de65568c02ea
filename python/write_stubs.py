"""Writes the memplan package's type stubs (__init__.pyi) from the built extension's option
table, so that every plan option is a typed keyword argument for editors and type checkers.
Run by the build (python/CMakeLists.txt): write_stubs.py PACKAGE_DIR/__init__.pyi."""

import os
import sys

package_dir = os.path.dirname(os.path.abspath(sys.argv[1]))
sys.path.insert(0, os.path.dirname(package_dir))
from memplan import _memplan  # noqa: E402  (the extension just built)

TYPES = {"flag": "bool", "count": "int", "number": "float", "text": "str", "list": "str | Sequence[str | int]"}
OWN = {"model", "workload", "gpu", "probe", "no_calibration", "cpu", "as_model_type"}
table = [o for o in _memplan.option_table()]


def option_params(skip=()):
    return "".join(f"    {o['name']}: {TYPES[o['kind']]} | None = ...,\n" for o in table
                   if o["name"] not in OWN and o["name"] not in skip)


MODEL = "str | os.PathLike[str] | Mapping[str, Any]"
text = f'''# Written by python/write_stubs.py from memplan's option table; do not edit.
import os
from typing import Any, Mapping, Sequence

__version__: str

class InputError(ValueError):
    key: str

class InternalError(RuntimeError): ...

class Component:
    name: str
    bytes: int
    formula: str
    children: list[Component]

class Report:
    def to_dict(self) -> dict[str, Any]: ...
    def __getitem__(self, key: str) -> Any: ...

class Estimate(Report):
    @property
    def total_bytes(self) -> int: ...
    @property
    def allocated_bytes(self) -> int | None: ...
    @property
    def components(self) -> list[Component]: ...
    @property
    def verdict(self) -> str | None: ...
    @property
    def fits(self) -> bool | None: ...

class Fit(Report):
    @property
    def value(self) -> int | None: ...
    @property
    def binding(self) -> Any: ...

class Recommendation(Report):
    @property
    def mitigations(self) -> list[dict[str, Any]]: ...
    @property
    def gpus_that_fit(self) -> list[Any]: ...

class Sweep(Report):
    @property
    def rows(self) -> list[dict[str, Any]]: ...
    def to_pandas(self) -> Any: ...

class Hooks(Report):
    @property
    def rows(self) -> list[dict[str, Any]]: ...
    @property
    def selected_bytes(self) -> int: ...

def options() -> list[dict[str, Any]]: ...

def estimate(
    model: {MODEL} = ...,
    workload: str | None = ...,
    *,
    gpu: str | None = ...,
    probe: bool = ...,
    no_calibration: bool = ...,
    cpu: bool | str = ...,
    as_model_type: str | None = ...,
{option_params()}) -> Estimate: ...

def fit(
    model: {MODEL},
    *,
    gpu: str,
    vary: str,
    as_model_type: str | None = ...,
    workload: str | None = ...,
{option_params()}) -> Fit: ...

def recommend(
    model: {MODEL},
    *,
    gpu: str,
    as_model_type: str | None = ...,
    workload: str | None = ...,
{option_params()}) -> Recommendation: ...

def sweep(
    models: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    workload: str | Sequence[str] = ...,
    batch: int | Sequence[int] = ...,
    seq: int | Sequence[int] | None = ...,
    precision: str | Sequence[str] = ...,
    gpu: str | None = ...,
    smallest_gpu: bool = ...,
    as_model_type: str | None = ...,
{option_params(skip={"batch", "seq", "precision"})}) -> Sweep: ...

def hooks(
    model: {MODEL} = ...,
    filter: str | Sequence[str] | None = ...,
    *,
    batch: int = ...,
    seq: int | None = ...,
    precision: str = ...,
    layers: int | str | Sequence[int] | None = ...,
    pos_slice: int = ...,
    remove_batch_dim: bool = ...,
    all: bool = ...,
    as_model_type: str | None = ...,
) -> Hooks: ...

def models() -> list[dict[str, Any]]: ...
def gpus() -> list[dict[str, Any]]: ...
def probe(warn_above: float = ...) -> Report: ...
'''
tmp = sys.argv[1] + ".tmp"
with open(tmp, "w") as f:
    f.write(text)
os.replace(tmp, sys.argv[1])
