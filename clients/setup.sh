#!/usr/bin/env bash
# Installs the real MySQL clients `make clients` runs, once, into
# $CLIENTS_CACHE (default ~/.cache/icesql-clients), never into the
# repository: a Python virtualenv (PyPI) with PyMySQL, mysqlclient,
# MySQL Connector/Python, SQLAlchemy and pandas; Node's mysql2 (npm); and
# MySQL Connector/J with Gson, which the Java runner reads the script with
# (Maven Central, into ~/.m2). Each is keyed by its versions, so a change
# here reinstalls it. mysqlclient builds against the MariaDB client
# library's headers (Debian's libmariadb-dev, which .ci/run installs).
# Prints three lines: the venv's python, the node_modules folder, and the
# Java class path.
set -euo pipefail

PYTHON_REQUIREMENTS="pymysql==1.2.4 mysqlclient==2.3.1 mysql-connector-python==26.10.0 sqlalchemy==2.1.9 pandas==3.1.1"
NODE_REQUIREMENTS="mysql2@3.24.5"
CONNECTOR_J=com.mysql:mysql-connector-j:9.5.0
GSON=com.google.code.gson:gson:2.13.2

cache="${CLIENTS_CACHE:-$HOME/.cache/icesql-clients}"
mkdir -p "$cache"

venv="$cache/venv"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$PYTHON_REQUIREMENTS" ]; then
  if ! pkg-config --exists libmariadb 2>/dev/null && ! pkg-config --exists mysqlclient 2>/dev/null; then
    echo "clients/setup.sh: mysqlclient needs the MariaDB client headers: apt-get install libmariadb-dev pkg-config" >&2
    exit 1
  fi
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  # shellcheck disable=SC2086 # the requirements are words
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check $PYTHON_REQUIREMENTS >&2
  echo "$PYTHON_REQUIREMENTS" > "$venv/.requirements"
fi

node="$cache/node"
if [ ! -d "$node/node_modules/mysql2" ] || [ "$(cat "$node/.requirements" 2>/dev/null)" != "$NODE_REQUIREMENTS" ]; then
  rm -rf "$node"
  mkdir -p "$node"
  (cd "$node" && echo '{"name": "icesql-clients", "private": true}' > package.json &&
    npm install --silent --no-audit --no-fund --no-package-lock "$NODE_REQUIREMENTS" >&2)
  echo "$NODE_REQUIREMENTS" > "$node/.requirements"
fi

classpath=""
for artifact in "$CONNECTOR_J" "$GSON"; do
  IFS=: read -r group id version <<< "$artifact"
  jar="$HOME/.m2/repository/${group//.//}/$id/$version/$id-$version.jar"
  if [ ! -s "$jar" ]; then
    mvn -q -B dependency:get -Dartifact="$artifact" -Dtransitive=false >&2
  fi
  classpath="$classpath${classpath:+:}$jar"
done

echo "$venv/bin/python"
echo "$node/node_modules"
echo "$classpath"
