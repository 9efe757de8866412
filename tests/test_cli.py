"""The ``wobble`` command's own surface: ``--version`` prints the package version, and every subcommand's
``--help`` ends with an example that the parser itself accepts."""

import argparse
import shlex
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

from wobble import __version__, cli

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = cli.build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _help(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    assert exit_.value.code == 0
    return capsys.readouterr().out


def test_version_prints_the_package_version(capsys):
    out = _help(["--version"], capsys)
    expected = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["version"]
    assert out.strip() == f"wobble {expected}"
    assert expected == version("wobble") == __version__


def test_every_subcommand_has_an_example():
    assert set(_subcommands()) == set(cli.EXAMPLES) - {""}


@pytest.mark.parametrize("command", ["", *sorted(set(cli.EXAMPLES) - {""})])
def test_help_ends_with_an_example(command, capsys):
    out = _help([command, "--help"] if command else ["--help"], capsys)
    lines = out.rstrip("\n").splitlines()
    assert lines[-2:] == ["example:", f"  {cli.EXAMPLES[command]}"]
    assert lines[-3] == ""


@pytest.mark.parametrize("command", sorted(set(cli.EXAMPLES) - {""}))
def test_the_example_is_a_valid_call_of_its_subcommand(command):
    example = cli.EXAMPLES[command].split("|")[-1]  # `echo ... | wobble extract gsm8k`: the wobble part
    argv = shlex.split(example)
    assert argv[0] == "wobble" and argv[1] == command
    args, unknown = cli.build_parser().parse_known_args(argv[1:])
    assert args.command == command
    assert unknown == [] or command == "resume"  # resume hands what it does not know to Snakemake


# The examples that run the workflow (resume, fetch-data) or read a file only a run makes (score) are left out.
RUNNABLE = ["", "audit", "perturb", "sources", "check-config", "extract"]


@pytest.mark.parametrize("command", RUNNABLE)
def test_the_example_works_on_a_fresh_clone(command):
    import subprocess

    example = cli.EXAMPLES[command].replace("wobble ", f"{Path(sys.executable).with_name('wobble')} ", 1)
    proc = subprocess.run(example, shell=True, cwd=PYPROJECT.parent, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
