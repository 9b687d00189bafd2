#!/usr/bin/env bash
# venv.sh DIR REQUIREMENT... makes a Python virtualenv in DIR/venv with the
# requirements installed, once: it is keyed by the requirements and made
# again when they change. Prints the venv's python. interop/setup.sh and
# the bench's TPC-H generator (bench/tpch_dbgen.go) use it.
set -euo pipefail

dir="$1"
shift
requirements="$*"
venv="$dir/venv"
stamp="$venv/.requirements"
mkdir -p "$dir"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$requirements" ]; then
  python3 -m venv "$venv" >&2
  # shellcheck disable=SC2086 # the requirements are words
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check $requirements >&2
  echo "$requirements" > "$stamp"
fi
echo "$venv/bin/python"
