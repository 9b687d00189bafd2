#!/usr/bin/env bash
# Installs what the tests need that a fresh Debian machine lacks (`make
# setup`, and `make check` before it runs them): the mysql command-line
# client (Debian's mariadb-client) for the wire test, a MariaDB server
# (Debian's mariadb-server) as the history tester's oracle, moto's server
# (PyPI) for the S3 and Glue tests, PostgreSQL (Debian) and Java plus Apache
# Iceberg's REST catalog fixture (Maven Central) for the catalog tests,
# strace, with which a test checks that commits are synced to disk, and what
# `make clients` builds its clients with. The tests start and stop the
# servers themselves, each on a free loopback port. `make clients` and `make
# interop` install their own peers (clients/setup.sh, interop/setup.sh).
# Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v mysql >/dev/null 2>&1 || missing+=(mariadb-client)
{ command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ]; } || missing+=(mariadb-server)
command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
{ command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; } || missing+=(postgresql)
id postgres >/dev/null 2>&1 || missing+=(postgresql)
command -v strace >/dev/null 2>&1 || missing+=(strace) # TestCommitIsDurable watches fsync with it
# make clients: Node for mysql2, a JDK for the Connector/J runner, and the
# MariaDB client headers mysqlclient (PyPI) builds against
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
command -v javac >/dev/null 2>&1 || missing+=(default-jdk-headless)
{ command -v pkg-config >/dev/null 2>&1 && pkg-config --exists libmariadb; } || missing+=(libmariadb-dev pkg-config)
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${missing[@]}"
fi

# Iceberg's REST catalog test fixture: the runnable jar published as
# org.apache.iceberg:iceberg-open-api (keep the version in step with
# restFixtureVersion in storage/catalogs/servers_test.go).
REST_FIXTURE_VERSION=1.10.1
REST_FIXTURE_JAR="$HOME/.m2/repository/org/apache/iceberg/iceberg-open-api/$REST_FIXTURE_VERSION/iceberg-open-api-$REST_FIXTURE_VERSION.jar"
if [ ! -s "$REST_FIXTURE_JAR" ]; then
  mvn -q -B dependency:get -Dartifact="org.apache.iceberg:iceberg-open-api:$REST_FIXTURE_VERSION" -Dtransitive=false
fi

# The AWS SDK for Java v2 as Iceberg's S3FileIO ships it (and the logging
# API it needs), for the S3 API's Java client test (storage/s3serve).
AWS_BUNDLE_JAR="$HOME/.m2/repository/org/apache/iceberg/iceberg-aws-bundle/$REST_FIXTURE_VERSION/iceberg-aws-bundle-$REST_FIXTURE_VERSION.jar"
if [ ! -s "$AWS_BUNDLE_JAR" ]; then
  mvn -q -B dependency:get -Dartifact="org.apache.iceberg:iceberg-aws-bundle:$REST_FIXTURE_VERSION" -Dtransitive=false
fi
if [ ! -s "$HOME/.m2/repository/org/slf4j/slf4j-api/2.0.17/slf4j-api-2.0.17.jar" ]; then
  mvn -q -B dependency:get -Dartifact=org.slf4j:slf4j-api:2.0.17 -Dtransitive=false
fi

if ! command -v moto_server >/dev/null 2>&1; then
  python3 -m pip install --quiet "moto[server]==5.2.5"
fi


# make lint's checkers, at pinned versions, into ~/.cache/icesql-tools.
TOOLS="$HOME/.cache/icesql-tools"
[ -x "$TOOLS/staticcheck" ] || GOBIN="$TOOLS" go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
[ -x "$TOOLS/go-errorlint" ] || GOBIN="$TOOLS" go install github.com/polyfloyd/go-errorlint@v1.8.0
