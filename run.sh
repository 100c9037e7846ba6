#!/usr/bin/env bash
# irc's two entry points. Each creates the virtual environment (.venv) when it is missing or stale,
# then runs:
#   ./run.sh demo [ARGS]   the demo: python -m irc.bench.demo ARGS (e.g. --models mlp-b32 --repeats 3)
#   ./run.sh test [ARGS]   the test suite: without ARGS first `ruff format --check` over the tree (the
#                          formatter's verdict; the tests run either way), then pytest over tests/ (or
#                          the paths in ARGS); pyproject.toml's
#                          addopts leave out the slow sweeps unless ARGS select them (-m slow). Without
#                          ARGS the suite runs on one pytest-xdist worker per CPU (-n auto): most tests
#                          compile, on one core each (2 cores: 1025 s serial, 686 s on two workers)
# Setup installs torch 2.13.0 first (pip takes the CPU build from this machine's wheel store), then
# irc itself in editable mode with the test and bench extras (filecheck, matplotlib); a stamp keyed on
# pyproject.toml's hash skips it when nothing changed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

VENV=.venv
PY="$VENV/bin/python"
TORCH=torch==2.13.0

pip_install() {
    # This machine's pip config names index folders that may not exist; drop only those warnings.
    "$PY" -m pip install --quiet "$@" 2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; }
    return "${PIPESTATUS[0]}"
}

setup() {
    local key stamp="$VENV/.irc-setup"
    key="$(sha256sum pyproject.toml | cut -d' ' -f1) $TORCH"
    if [[ -x "$PY" && -f "$stamp" && "$(cat "$stamp")" == "$key" ]] && "$PY" -c "import irc" 2>/dev/null; then
        return 0
    fi
    if [[ ! -x "$PY" ]]; then
        echo "run.sh: creating $VENV with $(python3 --version)"
        python3 -m venv "$VENV"
    fi
    echo "run.sh: installing $TORCH (CPU) into $VENV"
    pip_install "$TORCH"
    echo "run.sh: installing irc (editable) with its test and bench extras"
    pip_install -e ".[test,bench]"
    echo "$key" > "$stamp"
    echo "run.sh: environment ready"
}

run_tests() {
    local rc=0 fmt=0
    # No path given: the formatter's check, then pytest takes tests/ from pyproject.toml's testpaths, spread
    # over the CPUs.
    if [[ $# -eq 0 ]]; then
        echo "run.sh: $VENV/bin/ruff format --check ."
        "$VENV/bin/ruff" format --check . || fmt=$?
        set -- -n auto
    fi
    echo "run.sh: $PY -m pytest $*"
    "$PY" -m pytest "$@" || rc=$?
    case $rc in
        0) ;;
        5) echo "run.sh test: FAILED: pytest collected no tests (exit 5)" ;;
        *) echo "run.sh test: FAILED (pytest exit $rc)" ;;
    esac
    if [[ $fmt -ne 0 ]]; then
        echo "run.sh test: FAILED: files not formatted (run $VENV/bin/ruff format .)"
        [[ $rc -eq 0 ]] && rc=$fmt
    fi
    [[ $rc -eq 0 ]] && echo "run.sh test: PASSED"
    return "$rc"
}

cmd="${1:-}"
shift || true
case "$cmd" in
    demo) setup; exec "$PY" -m irc.bench.demo "$@" ;;
    test) setup; run_tests "$@" ;;
    setup) setup ;;
    *) echo "usage: ./run.sh demo [demo args] | ./run.sh test [pytest args] | ./run.sh setup" >&2; exit 2 ;;
esac
