#!/usr/bin/env bash
# Installs what `make interop` needs, once: a Python virtualenv with PySpark,
# PyIceberg, DuckDB (with its iceberg, avro and httpfs extensions, which DuckDB
# publishes on PyPI, and pytz, which it needs for timestamptz values) and
# PyMySQL, and Iceberg's Spark runtime jar from Maven Central. Both are cached: the venv under $INTEROP_CACHE (default
# ~/.cache/icesql-interop), keyed by this file's requirements, and the jar in
# ~/.m2. Prints the venv's python and the jar, one per line.
set -euo pipefail

ICEBERG_VERSION=1.10.1
SPARK_RUNTIME=iceberg-spark-runtime-3.5_2.12
REQUIREMENTS="pyspark==3.5.8 pyiceberg[pyarrow,sql-sqlite]==0.12.0 duckdb==1.5.5 duckdb-extension-iceberg==1.5.5 duckdb-extension-avro==1.5.5 duckdb-extension-httpfs==1.5.5 pymysql==1.2.4 pytz==2026.6"

# shellcheck disable=SC2086 # the requirements are words
python="$(bash "$(dirname "$0")/venv.sh" "${INTEROP_CACHE:-$HOME/.cache/icesql-interop}" $REQUIREMENTS)"

jar="$HOME/.m2/repository/org/apache/iceberg/$SPARK_RUNTIME/$ICEBERG_VERSION/$SPARK_RUNTIME-$ICEBERG_VERSION.jar"
if [ ! -s "$jar" ]; then
  mvn -q -B dependency:get -Dartifact="org.apache.iceberg:$SPARK_RUNTIME:$ICEBERG_VERSION" -Dtransitive=false >&2
fi
echo "$python"
echo "$jar"
