"""The subcommand registry and what every subcommand promises: help text on every option,
exit 2 on usage errors, one clear line when an optional package or the GPU is missing."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import REPO, run_argus

from argus_lsp import cli

KNOWN = ("check", "rules", "serve", "knowledge", "profile")


def _parser_of(name: str) -> argparse.ArgumentParser | None:
    module = importlib.import_module(cli.SUBCOMMANDS[name].module)
    factory = getattr(module, "build_parser", None) or getattr(module, "_parser", None)
    return factory() if factory else None


def _options_without_help(parser: argparse.ArgumentParser, where: str) -> list[str]:
    missing = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                missing += _options_without_help(sub, f"{where} {sub_name}")
            continue
        if not action.help or action.help == argparse.SUPPRESS:
            missing.append(f"{where} {'/'.join(action.option_strings) or action.dest}")
    return missing


def test_every_option_of_every_subcommand_has_help_text():
    parsers = {name: _parser_of(name) for name in cli.SUBCOMMANDS}
    assert all(parsers[name] is not None for name in KNOWN)
    missing = [m for name, p in parsers.items() if p is not None for m in _options_without_help(p, name)]
    assert missing == []


def test_top_level_help_lists_every_subcommand(argus):
    r = argus("--help")
    assert r.rc == 0
    for name, sub in cli.SUBCOMMANDS.items():
        assert f"  {name}" in r.out and sub.summary in r.out
    r = argus()
    assert r.rc == 2 and "commands:" in r.err


@pytest.mark.parametrize(
    "args",
    [
        ["chek"],
        ["--bogus"],
        ["check", "--bogus"],
        ["check", "--format", "xml"],
        ["rules", "DF002", "extra"],
        ["serve", "--bogus"],
        ["knowledge"],
        ["knowledge", "search"],
        ["knowledge", "list", "--bottleneck", "disk"],
        ["profile"],
        ["profile", "k.py::k", "--backend", "tpu"],
    ],
)
def test_usage_errors_exit_2_everywhere(argus, args):
    r = argus(*args)
    assert r.rc == 2, r
    assert "Traceback" not in r.err and r.err.strip(), r


def test_unknown_command_suggests_the_closest(argus):
    assert "unknown command 'chek'; did you mean `argus check`?" in argus("chek").err


def test_knowledge_search_without_a_match_says_so(argus):
    r = argus("knowledge", "search", "zzqxwv")
    assert r.rc == 1 and r.out == "", r
    assert r.err == "argus knowledge: no card matches 'zzqxwv'\n"
    r = argus("knowledge", "search", "split-k")  # and a match is still found
    assert r.rc == 0 and r.out.strip(), r


# --- argus profile ------------------------------------------------------------------------------

# Makes `import rich` fail as it does where the package is not installed, then runs the CLI.
_WITHOUT_RICH = """
import sys
class NoRich:
    def find_spec(self, name, path=None, target=None):
        if name == "rich" or name.startswith("rich."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, NoRich())
from argus_lsp.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_profile_without_rich_names_the_extra(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", _WITHOUT_RICH, "profile", str(REPO / "examples" / "gemm.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc
    assert proc.stderr == (
        "argus: `argus profile` needs the package 'rich', which is not installed: "
        "pip install 'argus-lsp[agent]'\n"
    )


def _gpu_visible() -> bool:
    return bool(shutil.which("nvidia-smi") or shutil.which("rocm-smi") or os.path.exists("/dev/nvidia0"))


@pytest.mark.skipif(_gpu_visible(), reason="this host has a GPU; the test is about one without")
def test_profile_backend_nvidia_without_a_gpu_is_one_line(tmp_path):
    target = f"{REPO / 'examples' / 'gemm.py'}::gemm_kernel"
    r = run_argus("profile", target, "--backend", "nvidia", "--shape", "small", cwd=tmp_path)
    assert r.rc == 1, r
    assert r.out == "" and "Traceback" not in r.err, r
    (line,) = r.err.splitlines()
    assert line.startswith("error: gemm.py::gemm_kernel on local: ")
    assert "no GPU visible to torch on this host (backend nvidia was asked for)" in line or (
        "torch is not installed" in line
    )


# --- the bundled examples' tasks ----------------------------------------------------------------


def test_every_bundled_example_has_a_task():
    from argus.agent.task import TaskError, load_task
    from argus.analyzers import list_kernels

    examples = sorted((REPO / "examples").glob("*.py"))
    assert examples
    for path in examples:
        tasks = []
        for kernel in list_kernels(path.read_bytes()):
            try:
                tasks.append(load_task(f"{path}::{kernel.name}"))
            except TaskError:  # a helper kernel that the task's launcher runs (naive_moe's down GEMM)
                continue
        assert tasks, f"{path}: no kernel of it has a task"
        for task in tasks:
            assert task.kind == "spec", path
            if path.name.startswith("gemm"):  # the checker's examples: a small shape set to profile on the CPU
                assert task.launcher == "gemm", path
                request = task.request("small")
                assert [i["shape"] for i in request["inputs"]] == [[128, 128], [128, 128]]
                assert request["flops"] == 2 * 128**3


@pytest.mark.slow
def test_profiling_the_examples_on_the_cpu_interpreter_shows_the_bug(tmp_path):
    """A real run of both examples' tasks (the worker imports them; here on the CPU interpreter):
    the correct GEMM matches torch.matmul, the one with the stale B pointer does not."""
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    targets = [f"{REPO / 'examples' / name}::gemm_kernel" for name in ("gemm.py", "gemm_stale_b.py")]
    r = run_argus("profile", *targets, "--shape", "small", "--backend", "cpu", "--json", cwd=tmp_path)
    assert r.rc == 0, r
    good, stale = json.loads(r.out)
    assert good["sizes"] == {"M": 128, "N": 128, "K": 128}
    assert good["rel_error"] < 1e-2 < stale["rel_error"]


def test_examples_folder_has_no_stray_sidecars():
    for sidecar in (REPO / "examples").glob("*.argus.toml"):
        assert Path(str(sidecar).removesuffix(".argus.toml")).is_file(), sidecar
