#!/usr/bin/env python3
"""DuckDB through icesql's Iceberg REST catalog and S3 API (issue 17).

Starts `icesql serve --user U --password-file F` over a fresh local
warehouse, writes tables over the MySQL wire, then attaches DuckDB (the
iceberg, avro and httpfs extensions DuckDB publishes on PyPI) to the REST
catalog, signing in with OAuth2 (the account's user and password exchanged
at the catalog's token endpoint for a bearer token):

    ATTACH 'warehouse' AS ice (TYPE iceberg, ENDPOINT 'http://127.0.0.1:PORT',
                               CLIENT_ID 'U', CLIENT_SECRET 'P',
                               OAUTH2_SERVER_URI 'http://127.0.0.1:PORT/v1/oauth/tokens')

with no S3 secret of its own: the endpoint and keys come from the table's
LoadTableResult. A wrong password and no credentials are refused (401). DuckDB reads every table icesql wrote (types, partitions,
delete files), and INSERT, DELETE, UPDATE, CREATE TABLE, CREATE TABLE AS
SELECT and DROP TABLE from DuckDB are seen by icesql at once; icesql's
writes and maintenance on DuckDB's tables are read back by DuckDB. Every
answer is compared with icesql's over the MySQL wire.

Prints one line per failed check and "rest-duckdb: N passed, M failed".
Usage: python interop/rest_duckdb.py --icesql bin/icesql
"""
import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop import DuckDB, rowset, diff  # noqa: E402  (one spelling of values for both engines)


USER, PASSWORD = "duck", "quack-s3cret"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Icesql:
    def __init__(self, binary, work):
        import pymysql
        self.port, self.http_port = free_port(), free_port()
        self.wh = os.path.join(work, "wh")
        pwfile = os.path.join(work, "password")
        with open(pwfile, "w") as f:
            f.write(PASSWORD + "\n")
        self.log = open(os.path.join(work, "serve.log"), "w")
        self.proc = subprocess.Popen([binary, "serve", "--create", "--warehouse", self.wh, "--addr", "127.0.0.1:%d" % self.port,
                                      "--http", "127.0.0.1:%d" % self.http_port, "--s3-locations", "--user", USER, "--password-file", pwfile],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while True:
            try:
                self.conn = pymysql.connect(host="127.0.0.1", port=self.port, user=USER, password=PASSWORD, autocommit=True)
                try:
                    urllib.request.urlopen("http://127.0.0.1:%d/v1/config" % self.http_port).read()
                except urllib.error.HTTPError as e:
                    if e.code != 401:  # up, and asking for credentials
                        raise
                break
            except Exception:
                if self.proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError("icesql serve did not start (see %s)" % self.log.name)
                time.sleep(0.2)

    def rows(self, q):
        with self.conn.cursor() as c:
            c.execute(q)
            return c.fetchall()

    def close(self):
        self.conn.close()
        self.proc.terminate()
        self.proc.wait(timeout=30)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--icesql", required=True)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="icesql-rest-duckdb-")
    ice = Icesql(os.path.abspath(args.icesql), work)
    passed, failed = 0, []

    def check(name, fn):
        nonlocal passed
        try:
            fn()
            passed += 1
        except Exception as e:  # a failed check says why and the run goes on
            failed.append(name)
            print("FAIL %s: %s" % (name, e))
            if not isinstance(e, AssertionError):
                traceback.print_exc(limit=3)

    try:
        duck = DuckDB(extensions=("httpfs", "avro", "iceberg"))

        def same(name, table, where=""):
            """DuckDB's and icesql's rows of one table agree."""
            def run():
                want = rowset(ice.rows("SELECT * FROM %s %s" % (table, where)))
                got = rowset(duck.con.execute("SELECT * FROM ice.%s %s" % (table, where)).fetchall())
                assert got == want, diff(want, got)
                assert want, "no rows: the comparison would show nothing"
            check(name, run)

        def duck_does(name, stmt):
            check(name, lambda: duck.con.execute(stmt))

        for q in ("CREATE DATABASE d",
                  """CREATE TABLE d.types (id BIGINT, name TEXT, price DOUBLE, qty INT, amount DECIMAL(10, 2), ok BOOLEAN,
                     day DATE, ts DATETIME(6))""",
                  """INSERT INTO d.types VALUES (1, 'one', 1.5, 10, 12.34, TRUE, '2024-01-15', '2024-01-15 10:11:12.123456'),
                     (2, 'two', -2.25, NULL, 0.01, FALSE, '1999-12-31', '1999-12-31 23:59:59'), (3, NULL, NULL, 3, NULL, NULL, NULL, NULL)""",
                  "CREATE TABLE d.parts (id BIGINT, region VARCHAR(10), day DATE) PARTITIONED BY (region, days(day))",
                  """INSERT INTO d.parts VALUES (1, 'EU', '2024-01-01'), (2, 'EU', '2024-01-02'), (3, 'US', '2024-01-01'),
                     (4, 'US', '2024-01-03'), (5, 'APAC', '2024-01-02')""",
                  "CREATE TABLE d.mor (id BIGINT, v TEXT) TBLPROPERTIES ('write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')",
                  "INSERT INTO d.mor VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')",
                  "DELETE FROM d.mor WHERE id = 2",
                  "UPDATE d.mor SET v = 'C' WHERE id = 3"):
            ice.rows(q)

        endpoint = "http://127.0.0.1:%d" % ice.http_port

        def attach(name, secret):
            duck.con.execute("ATTACH 'warehouse' AS %s (TYPE iceberg, ENDPOINT '%s', CLIENT_ID '%s', CLIENT_SECRET '%s', "
                             "OAUTH2_SERVER_URI '%s/v1/oauth/tokens')" % (name, endpoint, USER, secret, endpoint))

        def refused(stmt, why):
            try:
                stmt()
            except Exception as e:  # DuckDB's IO error, with the server's answer
                assert why in str(e), "refused, but not for %r: %s" % (why, e)
                return
            raise AssertionError("admitted")
        check("a wrong password gets no token", lambda: refused(lambda: attach("bad", "wrong"), "invalid_client"))
        check("no credentials are refused", lambda: refused(lambda: duck.con.execute(
            "ATTACH 'warehouse' AS anon (TYPE iceberg, ENDPOINT '%s', AUTHORIZATION_TYPE 'none')" % endpoint), "401"))
        check("attach with OAuth2", lambda: attach("ice", PASSWORD))
        check("DuckDB lists icesql's tables", lambda: assert_eq(
            sorted(r[2] for r in duck.con.execute("SHOW ALL TABLES").fetchall() if r[0] == "ice"), ["mor", "parts", "types"]))
        same("every type", "d.types")
        same("a partitioned table", "d.parts")
        same("a partitioned table, filtered", "d.parts", "WHERE region = 'EU' AND day >= DATE '2024-01-02'")
        check("icesql's delete files exist", lambda: assert_true(
            ice.rows("SELECT COUNT(*) FROM d.mor.delete_files")[0][0] > 0, "d.mor has no delete files"))
        same("icesql's deletes applied", "d.mor")

        # DuckDB writes; icesql sees each commit at once.
        duck_does("DuckDB inserts", "INSERT INTO ice.d.parts VALUES (6, 'EU', DATE '2024-01-04'), (7, 'LATAM', DATE '2024-01-05')")
        same("icesql sees DuckDB's insert", "d.parts")
        duck_does("DuckDB deletes", "DELETE FROM ice.d.types WHERE id = 2")
        same("icesql sees DuckDB's delete", "d.types")
        duck_does("DuckDB updates", "UPDATE ice.d.mor SET v = 'A' WHERE id = 1")
        same("icesql sees DuckDB's update", "d.mor")
        duck_does("DuckDB creates a table", "CREATE TABLE ice.d.made (k BIGINT, v VARCHAR, ts TIMESTAMP)")
        duck_does("DuckDB inserts into its table", "INSERT INTO ice.d.made VALUES (1, 'x', TIMESTAMP '2024-02-01 01:02:03'), (2, 'y', NULL)")
        same("icesql reads DuckDB's table", "d.made")
        duck_does("DuckDB's CREATE TABLE AS SELECT", "CREATE TABLE ice.d.copied AS SELECT id, region FROM ice.d.parts WHERE region <> 'US'")
        same("icesql reads DuckDB's CTAS", "d.copied")
        check("DuckDB's files are in the warehouse folder", lambda: assert_true(
            all(os.path.exists(os.path.join(ice.wh, r[0].split("s3://warehouse/", 1)[1])) for r in ice.rows("SELECT file_path FROM d.made.files")),
            "a data file of d.made is missing from the folder"))

        # icesql writes to DuckDB's table, and compacts it; DuckDB reads both.
        check("icesql inserts into DuckDB's table", lambda: ice.rows("INSERT INTO d.made VALUES (3, 'z', '2024-03-04 05:06:07')"))
        same("DuckDB reads icesql's insert", "d.made")
        check("icesql compacts DuckDB's table", lambda: ice.rows(
            "CALL system.rewrite_data_files(table => 'd.made', options => map('rewrite-all', 'true'))"))
        same("DuckDB reads the compacted table", "d.made")
        check("no file DuckDB's snapshots name is an orphan", lambda: assert_eq(ice.rows(
            "CALL system.remove_orphan_files(table => 'd.made', older_than => TIMESTAMP '2999-01-01 00:00:00', dry_run => true)"), ()))
        def time_travel():
            first = ice.rows("SELECT snapshot_id FROM d.made.snapshots WHERE parent_id IS NULL")[0][0]
            want = rowset(ice.rows("SELECT * FROM d.made VERSION AS OF %d" % first))
            got = rowset(duck.con.execute("SELECT * FROM ice.d.made AT (VERSION => %d)" % first).fetchall())
            assert got == want, diff(want, got)
            assert want, "no rows: the comparison would show nothing"
        check("DuckDB travels to the first snapshot", time_travel)

        duck_does("DuckDB drops a table", "DROP TABLE ice.d.copied")
        check("icesql no longer has it", lambda: assert_eq(
            sorted(r[0] for r in ice.rows("SHOW TABLES FROM d")), ["made", "mor", "parts", "types"]))
    except Exception as e:  # a crash counts as one failure, with its reason
        failed.append("run")
        print("FAIL: %s: %s (server log %s)" % (type(e).__name__, e, ice.log.name))
        traceback.print_exc(limit=5)
    finally:
        ice.close()
        if not failed:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("work folder kept: %s" % work)
    print("rest-duckdb: %d passed, %d failed" % (passed, len(failed)))
    return 1 if failed else 0


def assert_eq(got, want):
    assert got == want, "got %r, want %r" % (got, want)


def assert_true(v, msg):
    assert v, msg


if __name__ == "__main__":
    sys.exit(main())
