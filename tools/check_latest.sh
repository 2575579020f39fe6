#!/usr/bin/env bash
# The fenced upstream internals against the NEWEST releases of the libraries they touch.
#
# The Server, the Computer and the Agent reach into python-engineio, python-socketio,
# redis-py (with hiredis) and mcp (with httpx2, whose objects the Computer's OAuth hooks
# take; mcp-types is pinned exactly by mcp and follows it) from one fence per package
# (a2c_server/_upstream/, a2c_computer/_upstream.py, a2c_agent/_upstream.py); the pins'
# upper bounds stop at the versions the fences were checked against, so users never get a release we have not tried. This script tries it:
# in a throwaway venv it installs the workspace packages and the dev group, then the newest
# releases of those libraries with our upper bounds overridden, prints what it got next to
# the pins and the fences' "checked against" lines, imports each role and runs the guard
# tests and the Server suite there. GitHub runs it weekly
# (.github/workflows/latest-upstream.yml).
#
#   tools/check_latest.sh                          # the guard tests and the Server suite
#   tools/check_latest.sh -x -q                    # extra arguments go to pytest
#   tools/check_latest.sh packages/a2c-computer/tests   # a path first: these tests instead
#   tools/check_latest.sh --oldest                 # the OLDEST releases our pins allow instead
#
# With --oldest the same runs with each library at the lowest version our lower bounds
# allow (the highest of the packages' lower bounds): a lower bound the fences do not work
# with fails here (exit 1); raise it to the oldest release that passes.
#
# Exit status: 0 the newest releases pass and are within our pins; 1 a role does not
# import or a test fails with them (adapt the fence); 2 they pass but a pin's upper bound
# keeps them from users (raise it); 3 the environment could not be set up. What to do in
# each case:
# docs/contributing.md, "When the weekly upstream check fails".
# Needs uv, network access to the package index and redis-server on PATH (the multi-node
# Server tests start their own).
set -euo pipefail
cd "$(dirname "$0")/.."

LIBRARIES=(python-engineio python-socketio redis hiredis mcp httpx2)
GUARDS=(packages/a2c-server/tests/test_server_upstream_guard.py
        packages/a2c-server/tests/test_server_hotpath_guard.py
        packages/a2c-computer/tests/test_computer_upstream_guard.py
        packages/a2c-agent/tests/test_agent_upstream_guard.py)
OLDEST=""
if [ "${1:-}" = "--oldest" ]; then
  OLDEST=1
  shift
fi
WHICH="newest"
[ -z "$OLDEST" ] || WHICH="oldest allowed"
HELP="See docs/contributing.md, section \"When the weekly upstream check fails\""

say() { printf '\n==> %s\n' "$*"; }

work="$(mktemp -d "${TMPDIR:-/tmp}/a2c-latest.XXXXXX")"
trap 'rm -rf "$work"' EXIT
venv="$work/venv"
py="$venv/bin/python"

say "a throwaway venv in $work"
if ! uv venv --quiet --python "${UV_PYTHON:-3.11}" "$venv"; then
  echo "check_latest: cannot create the venv (is uv installed, Python ${UV_PYTHON:-3.11} there?)" >&2
  exit 3
fi

# The dev group of the root pyproject.toml, with the workspace members (the four packages,
# the demo, the testkit with the shared fixtures) installed editable from this checkout.
"$py" - >"$work/requirements.txt" <<'EOF'
import re
import tomllib
from pathlib import Path

members = {}
for pyproject in [*Path("packages").glob("*/pyproject.toml"), *Path("tools").glob("*/pyproject.toml")]:
    members[tomllib.loads(pyproject.read_text())["project"]["name"]] = pyproject.parent
for requirement in tomllib.loads(Path("pyproject.toml").read_text())["dependency-groups"]["dev"]:
    name, extras = re.match(r"([A-Za-z0-9._-]+)(\[[^\]]*\])?", requirement).groups()
    if name in members:
        print(f"-e ./{members[name].as_posix()}{extras or ''}")
    else:
        print(requirement)
EOF
# Overrides replace every requirement on these names: our upper bounds no longer apply and
# the resolver takes the newest release; with --oldest each is held at the lowest version
# every package's lower bound allows.
if [ -z "$OLDEST" ]; then
  printf '%s\n' "${LIBRARIES[@]}" >"$work/overrides.txt"
else
  "$py" - "${LIBRARIES[@]}" >"$work/overrides.txt" <<'EOF'
import re
import sys
import tomllib
from pathlib import Path

lowest: dict[str, tuple[tuple[int, ...], str]] = {}
for pyproject in sorted(Path("packages").glob("*/pyproject.toml")):
    project = tomllib.loads(pyproject.read_text())["project"]
    groups = [project.get("dependencies", []), *project.get("optional-dependencies", {}).values()]
    for line in (r for group in groups for r in group):
        match = re.match(r"([A-Za-z0-9._-]+)(?:\[[^\]]*\])?\s*[^;]*?>=\s*([0-9][0-9.]*)", line)
        if match:
            name, bound = match.group(1).lower(), match.group(2)
            key = tuple(int(part) for part in bound.split("."))
            if name not in lowest or key > lowest[name][0]:
                lowest[name] = (key, bound)
for name in sys.argv[1:]:
    print(f"{name}=={lowest[name][1]}" if name in lowest else name)
EOF
fi

say "installing the workspace with the $WHICH ${LIBRARIES[*]}"
if ! uv pip install --quiet --python "$py" --upgrade -r "$work/requirements.txt" \
    --override "$work/overrides.txt"; then
  echo "check_latest: the $WHICH releases cannot be installed together with the workspace." \
       "$HELP." >&2
  exit 3
fi

say "versions: $WHICH release vs our pins and the fences"
set +e
"$py" - "${LIBRARIES[@]}" <<'EOF'
import re
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement

pins: dict[str, list[str]] = {}
for pyproject in sorted(Path("packages").glob("*/pyproject.toml")):
    project = tomllib.loads(pyproject.read_text())["project"]
    groups = [project.get("dependencies", []), *project.get("optional-dependencies", {}).values()]
    for line in (r for group in groups for r in group):
        req = Requirement(line)
        spec = ",".join(sorted(map(str, req.specifier), key=lambda s: not s.startswith(">")))
        pins.setdefault(req.name.lower(), []).append(f"{project['name']}: {spec}")

behind = []
print(f"{'library':18} {'installed':10} pins (package: range)")
for name in sys.argv[1:]:
    newest = version(name)
    ranges = pins.get(name, [])
    outside = [r for r in ranges if not Requirement(f"{name}{r.split(': ', 1)[1]}").specifier.contains(newest, prereleases=True)]
    mark = "  <- newer than a pin allows" if outside else ""
    print(f"{name:18} {newest:10} {'; '.join(ranges) or '(not pinned directly)'}{mark}")
    if outside:
        behind.append(name)

print("\nthe fences say:")
fences = [*Path("packages").glob("*/src/*/_upstream.py"), *Path("packages").glob("*/src/*/_upstream/*.py")]
said = False
for fence in sorted(fences):
    for number, line in enumerate(fence.read_text().splitlines(), 1):
        if re.search(r"checked against", line, re.IGNORECASE):
            print(f"  {fence}:{number}: {line.strip()}")
            said = True
if not said:
    print("  (no fence names the versions it was checked against yet)")
sys.exit(2 if behind else 0)
EOF
pins_status=$?
set -e
if [ "$pins_status" -ne 0 ] && [ "$pins_status" -ne 2 ]; then
  echo "check_latest: cannot read the versions or the pins" >&2
  exit 3
fi

tests=(packages/a2c-server/tests)
if [ $# -gt 0 ] && [ -e "${1%%::*}" ]; then
  tests=()  # the arguments name the tests
fi
# The guard tests always run (they are quick), unless a directory given holds them.
for guard in "${GUARDS[@]}"; do
  if [ ! -f "$guard" ]; then
    echo "warning: guard test $guard is missing: its fence's names are not pinned" >&2
    continue
  fi
  covered=""
  for given in "${tests[@]}" "$@"; do
    case "$guard" in "${given%/}" | "${given%/}"/*) covered=1 ;; esac
  done
  [ -n "$covered" ] || tests+=("$guard")
done

# The Server suite hardly touches mcp: importing every role (and its fence) at least shows
# whether the Computer and the Agent still load with the newest releases.
say "each role imports with the $WHICH releases"
set +e
"$py" -c "import a2c_server, a2c_server._cluster._multinode, a2c_computer, a2c_agent" && echo "ok"
imports_status=$?

say "tests with the $WHICH releases: ${tests[*]} $*"
"$py" -m pytest -p no:cacheprovider "${tests[@]}" "$@"
tests_status=$?
set -e
if [ "$imports_status" -ne 0 ]; then
  tests_status=1
fi

say "result"
if [ "$tests_status" -ne 0 ]; then
  echo "FAILED: a role does not import, or the guard tests or the Server suite fail, with" >&2
  echo "the $WHICH releases above." >&2
  if [ -n "$OLDEST" ]; then
    echo "A lower bound lets in a release the fences do not work with: raise it to the" >&2
    echo "oldest release that passes (try them with uv pip install in this venv). $HELP." >&2
    exit 1
  fi
  echo "A release changed something a fence relies on: adapt the fence (_upstream.py), its" >&2
  echo "guard test and the pin together; until then our upper bounds keep users on the" >&2
  echo "versions that work. $HELP." >&2
  exit 1
fi
if [ -n "$OLDEST" ]; then
  echo "OK: the oldest releases our lower bounds allow pass the guard tests and the Server suite."
  exit 0
fi
if [ "$pins_status" -eq 2 ]; then
  echo "GREEN BUT PINNED OUT: the newest releases pass, but an upper bound above keeps them" >&2
  echo "from users. Raise the bound and the fence's \"checked against\" line (after the" >&2
  echo "bench), with a CHANGELOG line. $HELP." >&2
  exit 2
fi
echo "OK: the newest releases pass the guard tests and the Server suite and are within our pins."
