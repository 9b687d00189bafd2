#!/usr/bin/env bash
# Apache Iceberg's REST Compatibility Kit (RCK) against `icesql serve`:
# RESTCompatibilityKitCatalogTests from Maven Central
# (org.apache.iceberg:iceberg-open-api:1.10.1, classifiers tests and
# test-fixtures), run with JUnit's console launcher. Maven resolves the jars
# into ~/.m2 (interop/rck/pom.xml). Prints "rck: N passed, M failed, K skipped".
# Usage: interop/rck.sh path/to/icesql
set -euo pipefail
bin=$(realpath "${1:-bin/icesql}")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT

(cd "$here/rck" && mvn -q -B -o dependency:build-classpath -Dmdep.outputFile="$work/cp.txt" >/dev/null 2>&1 ||
	mvn -q -B dependency:build-classpath -Dmdep.outputFile="$work/cp.txt" >"$work/mvn.log" 2>&1) ||
	{ cat "$work/mvn.log"; echo "rck: resolving the kit failed"; exit 1; }
cp=$(cat "$work/cp.txt")
launcher=$(tr ':' '\n' <"$work/cp.txt" | grep junit-platform-console-standalone)
tests=$(tr ':' '\n' <"$work/cp.txt" | grep 'iceberg-open-api-.*-tests.jar')

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
myport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" serve --create --warehouse "$work/warehouse" --addr "127.0.0.1:$myport" --http "127.0.0.1:$port" >"$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 100); do
	curl -sf "http://127.0.0.1:$port/v1/config" >/dev/null && break
	sleep 0.2
done

# The kit reads the catalog's client properties from CATALOG_* variables
# (CATALOG_A_B__C is a.b-c). JUnit's rck.local=false: test the server at uri, not a
# server of the kit's own. The warehouse places tables itself, so a
# requested location is overridden, which the specification allows.
export CATALOG_URI="http://127.0.0.1:$port/_iceberg"
export CATALOG_WAREHOUSE=warehouse
export CATALOG_RCK_REQUIRES__NAMESPACE__CREATE=true
export CATALOG_RCK_OVERRIDES__REQUESTED__LOCATION=true
export CATALOG_RCK_SUPPORTS__SERVERSIDE__RETRY=true
export CATALOG_RCK_SUPPORTS__NAMES__WITH__DOT=true
# Tables come with s3:// locations in the S3 API of icesql serve (and its
# endpoint and keys in their config): open them with S3FileIO through the
# file IO that picks one by scheme (the kit defaults to HadoopFileIO).
export CATALOG_IO__IMPL=org.apache.iceberg.io.ResolvingFileIO

java -jar "$launcher" execute --class-path "$cp" --scan-class-path "$tests" \
	--include-classname 'org.apache.iceberg.rest.RESTCompatibilityKitCatalogTests' \
	--config rck.local=false --details=tree --disable-ansi-colors --disable-banner --reports-dir "$work/reports" >"$work/junit.log" 2>&1 || true
cp "$work/junit.log" "${RCK_LOG:-/tmp/icesql-rck.log}"
passed=$(grep -Eo '[0-9]+ tests successful' "$work/junit.log" | grep -Eo '^[0-9]+' || echo 0)
failed=$(grep -Eo '[0-9]+ tests failed' "$work/junit.log" | grep -Eo '^[0-9]+' || echo 0)
skipped=$(grep -Eo '[0-9]+ tests skipped' "$work/junit.log" | grep -Eo '^[0-9]+' || echo 0)
aborted=$(grep -Eo '[0-9]+ tests aborted' "$work/junit.log" | grep -Eo '^[0-9]+' || echo 0)
grep -E '✘' "$work/junit.log" | sed 's/^[│ ├└─]*/failed: /' | head -50 || true
echo "full log: ${RCK_LOG:-/tmp/icesql-rck.log}"
echo "rck: $passed passed, $failed failed, $((skipped + aborted)) skipped"
[ "$failed" = 0 ]
