"""What installing a role costs: wheel size, installed size, distributions, import time.

For each target (``a2c-computer``, ``a2c-agent``, ``a2c-agent[mcp]``) this builds the wheels
of the given source tree (default: this checkout) into a temporary folder, installs the
target with the core wheel into a fresh venv (other dependencies from the package index by
name), and reports:

* the target's own wheel size;
* the venv's ``site-packages`` size and how many distributions it holds, and the largest
  of them (so a new dependency shows by name);
* the import CPU time of the role as it runs (the Computer: ``a2c_computer._app``, what
  ``run`` loads, and ``a2c_computer._mcp``, its MCP client side; ``a2c_agent``; with the
  ``mcp`` extra, also the bridge ``a2c_agent._bridge._server``), median of ``--imports`` runs
  in new interpreters (bytecode compiled at install, so the first run is not special).

Usage::

    uv run python tools/bench/bench_install.py                  # this checkout
    mkdir -p /tmp/base && git archive main packages | tar -x -C /tmp/base
    uv run python tools/bench/bench_install.py --src /tmp/base --src .   # before, after

With several ``--src`` the cold imports alternate between the builds, so that the
machine's load hits them alike (import times depend on it; the sizes do not).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[2]

#: target -> (the distributions to build, the install requirement, the modules to import)
TARGETS: Final = {
    "a2c-computer": (
        ("a2c-protocol-core", "a2c-computer"),
        "a2c-computer",
        ("a2c_computer._app", "a2c_computer._mcp"),
    ),
    "a2c-agent": (("a2c-protocol-core", "a2c-agent"), "a2c-agent", ("a2c_agent",)),
    "a2c-agent[mcp]": (
        ("a2c-protocol-core", "a2c-agent"),
        "a2c-agent[mcp]",
        ("a2c_agent", "a2c_agent._bridge._server"),
    ),
}


def _run(*args: str | Path, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, args))} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def _site(venv: Path) -> Path:
    return next((venv / "lib").glob("python*/site-packages"))


def _dists(site: Path) -> dict[str, int]:
    """Distribution name -> bytes of the files its RECORD lists."""
    sizes: dict[str, int] = {}
    for info in site.glob("*.dist-info"):
        name = info.name.removesuffix(".dist-info").rsplit("-", 1)[0].lower().replace("_", "-")
        record = info / "RECORD"
        total = 0
        if record.exists():
            for line in record.read_text().splitlines():
                rel = line.split(",", 1)[0]
                path = (site / rel).resolve()
                if path.is_file():
                    total += path.stat().st_size
        sizes[name] = total
    return sizes


def _import_cpu_ms(python: Path, module: str) -> float:
    """CPU time (user + system) of ``import module`` in a new interpreter: less sensitive to
    the machine's load than wall time, and without the interpreter's own start."""
    code = (
        "import time; t = time.process_time(); "
        f"import {module}; print((time.process_time() - t) * 1000)"
    )
    return float(_run(python, "-c", code).strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--src",
        type=Path,
        action="append",
        help="a source tree to build (repeat to compare builds; default: this checkout)",
    )
    parser.add_argument("--python", default="3.11", help="the interpreter of the venvs")
    parser.add_argument("--imports", type=int, default=7, help="cold imports per module")
    parser.add_argument("--targets", default=",".join(TARGETS))
    args = parser.parse_args()
    sources: list[Path] = args.src or [ROOT]
    timings: dict[tuple[int, str, str], list[float]] = {}
    pythons: dict[tuple[int, str], Path] = {}
    with tempfile.TemporaryDirectory(prefix="a2c-install-") as tmp:
        for index, src in enumerate(sources):
            work = Path(tmp) / str(index)
            wheels = work / "wheels"
            for package in ("a2c-protocol-core", "a2c-computer", "a2c-agent"):
                _run(
                    "uv",
                    "build",
                    "--quiet",
                    "--wheel",
                    "--out-dir",
                    wheels,
                    src / "packages" / package,
                )
            for target in args.targets.split(","):
                built, requirement, _ = TARGETS[target]
                venv = work / target.replace("[", "-").replace("]", "")
                _run("uv", "venv", "--quiet", "--python", args.python, venv)
                python = venv / "bin" / "python"
                pythons[index, target] = python
                found = {p: next(wheels.glob(p.replace("-", "_") + "-*.whl")) for p in built}
                extra = requirement[len(built[-1]) :]
                _run(
                    "uv",
                    "pip",
                    "install",
                    "--quiet",
                    "--compile-bytecode",
                    "--python",
                    python,
                    found[built[0]],
                    f"{built[-1]}{extra} @ {found[built[-1]].as_uri()}",
                )
                site = _site(venv)
                dists = _dists(site)
                top = sorted(dists.items(), key=lambda kv: -kv[1])[:8]
                wheel = found[built[-1]]
                print(f"\n{target} ({src})")
                print(f"  wheel {wheel.name}: {wheel.stat().st_size / 1024:.0f} KiB")
                print(f"  site-packages: {_size(site) / 2**20:.1f} MiB, {len(dists)} distributions")
                print("  largest: " + ", ".join(f"{n} {s / 2**20:.1f}" for n, s in top) + " (MiB)")
                print(
                    "  mcp-related: "
                    + ", ".join(
                        f"{n} {dists[n] / 2**20:.2f}" for n in sorted(dists) if n in _WATCHED
                    )
                )
        # Imports in new interpreters, the builds alternating so that noise hits them alike.
        for _ in range(args.imports):
            for (index, target), python in pythons.items():
                for module in TARGETS[target][2]:
                    took = _import_cpu_ms(python, module)
                    timings.setdefault((index, target, module), []).append(took)
    print(
        f"\nimport CPU time, ms (median of {args.imports} new interpreters, the builds alternating)"
    )
    for (index, target, module), samples in timings.items():
        print(f"  [{index}] {target:16} {module:26} {statistics.median(samples):7.0f}")


_WATCHED = frozenset(
    {
        "mcp",
        "mcp-types",
        "httpx",
        "httpx2",
        "httpcore",
        "httpcore2",
        "opentelemetry-api",
        "pyjwt",
        "cryptography",
        "starlette",
        "uvicorn",
        "sse-starlette",
        "httpx-sse",
        "truststore",
        "jsonschema",
        "pydantic",
        "pydantic-core",
        "python-multipart",
        "pydantic-settings",
    }
)


if __name__ == "__main__":
    main()
