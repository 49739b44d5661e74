"""The stubs of the compiled module (python/dsim/_dsim.pyi) against the module itself: the
same names, the same parameters in the same order with the same defaults, and mypy's
stubtest content with the types (issue 23)."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from dsim import _dsim

STUB = Path(__file__).resolve().parents[1] / "python" / "dsim" / "_dsim.pyi"
#: Attributes every module has, which a stub does not declare.
MODULE_ATTRIBUTES = {"__name__", "__doc__", "__file__", "__loader__", "__package__", "__spec__", "__all__"}


def stub_tree() -> ast.Module:
    return ast.parse(STUB.read_text(), filename=str(STUB))


def stub_names(body: list[ast.stmt]) -> dict[str, ast.stmt]:
    """The names a stub body declares (functions, classes, annotated attributes)."""
    out: dict[str, ast.stmt] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            out[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
    return out


def stub_parameters(fn: ast.FunctionDef) -> list[tuple[str, object]]:
    """(name, default) of each parameter of a stub function, `inspect.Parameter.empty` for
    none; `self` left out."""
    args = fn.args
    assert not (args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs), f"{fn.name}: only plain parameters"
    names = [a.arg for a in args.args if a.arg != "self"]
    defaults = [ast.literal_eval(d) for d in args.defaults]
    return list(zip(names, [inspect.Parameter.empty] * (len(names) - len(defaults)) + defaults, strict=True))


def runtime_parameters(obj: object) -> list[tuple[str, object]]:
    """(name, default) of each parameter PyO3 declares in `__text_signature__`."""
    params = inspect.signature(obj).parameters.values()
    return [(p.name, p.default) for p in params if p.name != "self"]


def test_every_export_is_in_the_stub_and_nothing_else() -> None:
    exported = {n for n in dir(_dsim) if n not in MODULE_ATTRIBUTES}
    declared = set(stub_names(stub_tree().body))
    assert sorted(exported - declared) == [], "exported by the extension, missing from _dsim.pyi"
    assert sorted(declared - exported) == [], "declared in _dsim.pyi, not exported by the extension"


@pytest.mark.parametrize("name", sorted(n for n, node in stub_names(stub_tree().body).items() if isinstance(node, ast.FunctionDef)))
def test_function_parameters_match(name: str) -> None:
    fn = stub_names(stub_tree().body)[name]
    assert isinstance(fn, ast.FunctionDef)
    assert stub_parameters(fn) == runtime_parameters(getattr(_dsim, name))


def test_class_methods_match() -> None:
    for cls in (n for n in stub_tree().body if isinstance(n, ast.ClassDef)):
        runtime = getattr(_dsim, cls.name)
        methods = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}
        public = {n for n in vars(runtime) if not n.startswith("__") or n in ("__len__", "__arrow_c_array__")}
        assert sorted(public) == sorted(methods), cls.name
        for name, fn in methods.items():
            # Slot wrappers (__len__) carry their signature from CPython, not from PyO3.
            if getattr(getattr(runtime, name), "__text_signature__", None) is not None:
                assert stub_parameters(fn) == runtime_parameters(getattr(runtime, name)), f"{cls.name}.{name}"


def test_the_helpers_see_a_stale_stub() -> None:
    # The checks above compare parameter lists read this way: a parameter the stub lacks, a
    # default that differs and a name that is not exported are all told apart.
    fn = ast.parse("def replay_kinds(extra: int = 2) -> list[str]: ...").body[0]
    assert isinstance(fn, ast.FunctionDef)
    assert stub_parameters(fn) == [("extra", 2)] != runtime_parameters(_dsim.replay_kinds) == []
    declared = stub_names(ast.parse("x: int\nclass C: ...\ndef f() -> None: ...").body)
    assert sorted(declared) == ["C", "f", "x"]


def test_stubtest_accepts_the_stub() -> None:
    pytest.importorskip("mypy.stubtest", reason="mypy is in the lint extra (`make test` installs it)")
    p = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "dsim._dsim"],
        capture_output=True, text=True, cwd=STUB.parents[2],
    )
    assert p.returncode == 0, p.stdout + p.stderr
