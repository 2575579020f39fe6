"""Build the published wheels from a clone: the tested way to install a role.

The distributions are not on a package index. From a clone, build the role you need and its
core, then ``pip install`` both wheels where the role runs::

    uv run python tools/build_wheels.py a2c-agent           # the core and the agent wheel
    uv run python tools/build_wheels.py                     # the four published wheels
    uv run python tools/build_wheels.py --include-private   # also the demo and the test kit

By default only the distributions of ``tools/versions.toml`` are built: the workspace also
holds private helpers (``a2c-demo``, ``a2c-testkit``) that are never published, and
``uv build --all-packages`` would build those too. A role always comes with
``a2c-protocol-core``, which every role requires.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Final

__all__ = ["CORE", "PRIVATE", "main", "plan", "published"]

ROOT: Final = Path(__file__).resolve().parent.parent
CORE: Final = "a2c-protocol-core"
#: Workspace members that are never published.
PRIVATE: Final = ("a2c-demo", "a2c-testkit")


def published(root: Path = ROOT) -> list[str]:
    """The published distributions, in the order of ``tools/versions.toml``."""
    data = tomllib.loads((root / "tools" / "versions.toml").read_text(encoding="utf-8"))
    return list(data["distributions"])


def plan(names: Sequence[str], *, include_private: bool, public: Sequence[str]) -> list[str]:
    """What to build for ``names`` (all published ones when empty); ValueError if unknown."""
    known = [*public, *PRIVATE]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown distribution {unknown[0]!r}; choose from {', '.join(known)}")
    chosen = list(names) or list(public)
    if any(n != CORE for n in chosen) and CORE not in chosen:
        chosen.insert(0, CORE)  # every role requires the core; a lone role wheel cannot install
    if include_private:
        chosen += [n for n in PRIVATE if n not in chosen]
    return chosen


def main(argv: Sequence[str] | None = None) -> int:
    """Build the wheels; returns the exit status (2 for a usage error)."""
    public = published()
    parser = argparse.ArgumentParser(
        prog="build_wheels.py", description="Build the published a2c wheels from this clone."
    )
    parser.add_argument("names", nargs="*", metavar="DISTRIBUTION", help=", ".join(public))
    parser.add_argument("--out-dir", type=Path, default=ROOT / "dist", help="default: dist/")
    parser.add_argument(
        "--include-private", action="store_true", help=f"also build {', '.join(PRIVATE)}"
    )
    args = parser.parse_args(argv)
    try:
        names = plan(args.names, include_private=args.include_private, public=public)
    except ValueError as exc:
        parser.error(str(exc))
    for name in names:
        print(f"building {name}", file=sys.stderr)
        cmd = ["uv", "build", "--package", name, "--wheel", "--out-dir", str(args.out_dir)]
        if subprocess.run(cmd, cwd=ROOT, check=False).returncode != 0:
            print(f"build_wheels.py: building {name} failed", file=sys.stderr)
            return 1
    print(f"wheels in {args.out_dir}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
