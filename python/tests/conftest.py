"""Shared fixtures of the Python suite: the dualgibbs command (for the bitwise comparisons) and the source tree."""
import os
import pathlib
import subprocess

import pytest

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli():
    """Path of the dualgibbs command: $DUALGIBBS_CLI (set by ctest), else build/bin/dualgibbs of the source tree."""
    path = os.environ.get("DUALGIBBS_CLI", str(SOURCE_DIR / "build" / "bin" / "dualgibbs"))
    if not os.access(path, os.X_OK):
        pytest.fail(f"the dualgibbs command is not at {path} (set DUALGIBBS_CLI)")
    return path


@pytest.fixture(scope="session")
def data_dir():
    return SOURCE_DIR / "tests" / "data"


def run_cli(cli, *args):
    """Runs the command; returns (exit code, stdout bytes, stderr text)."""
    p = subprocess.run([cli, *map(str, args)], capture_output=True)
    return p.returncode, p.stdout, p.stderr.decode()
