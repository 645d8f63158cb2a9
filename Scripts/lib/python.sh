#!/usr/bin/env bash
# Scripts/lib/python.sh: the one Python every check and benchmark runs, a virtual environment
# (.build/python) holding exactly Scripts/requirements.txt. Made the first time, and again only
# when that file changes; a lock keeps checks started together from making it twice.
#
#   source Scripts/lib/python.sh    # then python3 is the environment's, first on PATH
#
# Also runnable on its own, to make the environment ahead of the checks (.ci/run does).

flagpole_python() {
    local root venv wanted
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
    venv="$root/.build/python"
    wanted="$(sha256sum "$root/Scripts/requirements.txt" | cut -d' ' -f1)"
    mkdir -p "$root/.build"
    (
        set -e
        flock 9
        if [ "$(cat "$venv/requirements.sha256" 2>/dev/null)" != "$wanted" ]; then
            echo "Scripts/lib/python.sh: installing Scripts/requirements.txt into $venv" >&2
            python3 -m venv --clear "$venv"
            "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$root/Scripts/requirements.txt"
            echo "$wanted" >"$venv/requirements.sha256"
        fi
    ) 9>"$root/.build/python.lock" || { echo "Scripts/lib/python.sh: could not install Scripts/requirements.txt (above)" >&2; return 1; }
    export PATH="$venv/bin:$PATH"
    # The scripts import their neighbours: no __pycache__ in the work tree.
    export PYTHONDONTWRITEBYTECODE=1
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    flagpole_python
    python3 --version
else
    flagpole_python
fi
