"""What installing a role costs: wheel size, installed size, distributions, import time.

For each target (``a2c-computer``, ``a2c-agent``, ``a2c-agent[mcp]``) this builds the wheels
of the given source tree (default: this checkout) into a temporary folder, installs the
target with the core wheel into a fresh venv (other dependencies from the package index by
name), and reports:

* the target's own wheel size;
* the venv's ``site-packages`` size and how many distributions it holds, and the largest
  of them (so a new dependency shows by name);
* the import time of the role as it runs (the Computer: ``a2c_computer._app``, what
  ``run`` loads, and ``a2c_computer._mcp``, its MCP client side; ``a2c_agent``; with the
  ``mcp`` extra, also the bridge ``a2c_agent._bridge._run``), median of ``--imports`` cold runs
  in new interpreters (bytecode compiled at install, so the first run is not special).

Usage::

    uv run python tools/bench/bench_install.py                  # this checkout
    uv run python tools/bench/bench_install.py --src /tmp/base  # another build (a git archive)

Run it for two builds in the same session to compare (the figures depend on the disk and
on the machine's load; the sizes do not).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
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
        ("a2c_agent", "a2c_agent._bridge._run"),
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


def _import_ms(python: Path, module: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        _run(python, "-c", f"import {module}")
        times.append((time.perf_counter() - start) * 1000)
    base = []
    for _ in range(runs):
        start = time.perf_counter()
        _run(python, "-c", "pass")
        base.append((time.perf_counter() - start) * 1000)
    return statistics.median(times) - statistics.median(base)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=ROOT, help="the source tree to build")
    parser.add_argument("--python", default="3.11", help="the interpreter of the venvs")
    parser.add_argument("--imports", type=int, default=7, help="cold imports per module")
    parser.add_argument("--targets", default=",".join(TARGETS))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="a2c-install-") as tmp:
        work = Path(tmp)
        wheels = work / "wheels"
        for package in ("a2c-protocol-core", "a2c-computer", "a2c-agent"):
            _run(
                "uv",
                "build",
                "--quiet",
                "--wheel",
                "--out-dir",
                wheels,
                args.src / "packages" / package,
            )
        for target in args.targets.split(","):
            built, requirement, modules = TARGETS[target]
            venv = work / target.replace("[", "-").replace("]", "")
            _run("uv", "venv", "--quiet", "--python", args.python, venv)
            python = venv / "bin" / "python"
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
            print(f"\n{target} ({args.src})")
            print(
                f"  wheel {found[built[-1]].name}: {found[built[-1]].stat().st_size / 1024:.0f} KiB"
            )
            print(f"  site-packages: {_size(site) / 2**20:.1f} MiB, {len(dists)} distributions")
            print("  largest: " + ", ".join(f"{n} {s / 2**20:.1f}" for n, s in top) + " (MiB)")
            print(
                "  mcp-related: "
                + ", ".join(
                    f"{n} {dists[n] / 2**20:.2f}"
                    for n in sorted(dists)
                    if n
                    in {
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
            )
            for module in modules:
                ms = _import_ms(python, module, args.imports)
                print(
                    f"  import {module}: {ms:.0f} ms (median of {args.imports}, minus a bare start)"
                )


if __name__ == "__main__":
    main()
