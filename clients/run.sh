#!/usr/bin/env bash
# `make clients`: real MySQL clients run one shared script
# (clients/script.json) against a served icesql, each in its own database:
# PyMySQL, mysqlclient, MySQL Connector/Python (prepared=True),
# SQLAlchemy (with reflection, engine.begin() and pandas), Node's mysql2
# (query and execute), MySQL Connector/J (server-side prepared statements and
# DatabaseMetaData) and go-sql-driver/mysql (server-side prepares and
# interpolateParams). clients/setup.sh installs them once, outside the
# repository. The server runs on a free loopback port with a warehouse in
# a temporary folder, both removed at the end. Prints each failed check and
# "clients: N passed, M failed"; exits non-zero on any failure.
#
# Usage: clients/run.sh ICESQL_BINARY [CLIENT...]   (CLIENT: a name below)
set -euo pipefail
cd "$(dirname "$0")/.."

icesql="${1:?usage: clients/run.sh ICESQL_BINARY [CLIENT...]}"
shift
only=("$@")

out=$(bash clients/setup.sh)
python=$(sed -n 1p <<< "$out")
node_modules=$(sed -n 2p <<< "$out")
classpath=$(sed -n 3p <<< "$out")

work=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
addr="127.0.0.1:$port"
"$icesql" serve --create --warehouse "$work/warehouse" --addr "$addr" --http '' > "$work/server.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do
  if "$python" -c "import socket, sys; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null; then break; fi
  if ! kill -0 "$server" 2>/dev/null; then cat "$work/server.log" >&2; echo "clients: icesql serve did not start" >&2; exit 1; fi
  sleep 0.2
done

go build -o "$work/goclient" ./clients/goclient
javac -d "$work/java" -cp "$classpath" clients/ConnectorJ.java

clients=(pymysql mysqlclient connector-python sqlalchemy mysql2-query mysql2-execute connector-j go-prepared go-interpolate)
passed=0
failed=0
for c in "${clients[@]}"; do
  if [ ${#only[@]} -gt 0 ] && [[ ! " ${only[*]} " =~ " $c " ]]; then continue; fi
  case "$c" in
    pymysql|mysqlclient|connector-python|sqlalchemy) cmd=("$python" clients/python_clients.py "$c" "$addr" clients/script.json) ;;
    mysql2-*) cmd=(env NODE_PATH="$node_modules" node clients/mysql2_client.js "${c#mysql2-}" "$addr" clients/script.json) ;;
    connector-j) cmd=(java -cp "$work/java:$classpath" ConnectorJ "$addr" clients/script.json) ;;
    go-*) cmd=("$work/goclient" -addr "$addr" -script clients/script.json -mode "${c#go-}") ;;
  esac
  log="$work/$c.log"
  set +e
  timeout 300 "${cmd[@]}" > "$log" 2>&1
  rc=$?
  set -e
  ok=$(grep -c '^ok ' "$log" || true)
  bad=$(grep -c '^FAIL ' "$log" || true)
  if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
    bad=1
    echo "FAIL $c: exited with status $rc" >> "$log"
  fi
  grep -v '^ok ' "$log" || true
  echo "$c: $ok passed, $bad failed"
  passed=$((passed + ok))
  failed=$((failed + bad))
done
echo "clients: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
