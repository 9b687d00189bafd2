#!/usr/bin/env python3
"""Five kinds of writer on one table lose nothing (issue 17).

Starts `icesql serve` over a fresh warehouse, creates one table, and for
SECONDS (default 30) appends to it concurrently from
  - two icesql SQL sessions over the MySQL wire,
  - Spark 3.5 through the REST catalog and the S3 API (S3FileIO),
  - PyIceberg through the REST catalog,
  - DuckDB attached to the REST catalog.
Each writer appends rows (writer, seq) one commit at a time and counts the
commits acknowledged to it. Spark and PyIceberg retry a refused commit
(409) themselves, as the table's commit.retry.* properties say; DuckDB does
not, so this script retries for it (and for PyIceberg once its retries are
spent). The SQL sessions and DuckDB are paced (a commit every PACE seconds
each), since at full speed they win nearly every race and the slower
clients starve.

Then: the rows of each writer are exactly its acknowledged appends (none
lost, none doubled), the snapshot log is linear (each snapshot's parent is
the one before it, every one an ancestor of the current), and replaying the
history agrees (the table at each snapshot has that snapshot's
total-records, growing with every commit). Prints the figures and
"rest-writers: N passed, M failed".

Usage: python interop/rest_writers.py --icesql bin/icesql --jar SPARK_RUNTIME_JAR [--aws-jar BUNDLE] [--seconds 30]
"""
import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.request

os.environ["TZ"] = "UTC"
os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
time.tzset()

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop import DuckDB  # noqa: E402

PACE = 1.0  # seconds between commits of one SQL session, and of DuckDB
RETRIES = 30  # attempts of one PyIceberg or DuckDB append


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_icesql(binary, work):
    import pymysql
    port, http_port = free_port(), free_port()
    log = open(os.path.join(work, "serve.log"), "w")
    proc = subprocess.Popen([binary, "serve", "--create", "--warehouse", os.path.join(work, "wh"), "--addr", "127.0.0.1:%d" % port,
                             "--http", "127.0.0.1:%d" % http_port, "--s3-locations"], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 60
    while True:
        try:
            pymysql.connect(host="127.0.0.1", port=port, user="root").close()
            urllib.request.urlopen("http://127.0.0.1:%d/v1/config" % http_port).read()
            return proc, port, http_port, log
        except Exception:
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("icesql serve did not start (see %s)" % log.name)
            time.sleep(0.2)


def spark_session(jars, http_port):
    from pyspark.sql import SparkSession
    c = "spark.sql.catalog.lake"
    spark = (SparkSession.builder.master("local[2]").appName("icesql-rest-writers")
             .config("spark.jars", ",".join(jars))
             .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "1")
             .config("spark.driver.memory", "1g")
             .config("spark.driver.extraJavaOptions", "-Daws.region=us-east-1")
             .config(c, "org.apache.iceberg.spark.SparkCatalog")
             .config(c + ".type", "rest")
             .config(c + ".uri", "http://127.0.0.1:%d/_iceberg" % http_port)
             .config(c + ".warehouse", "warehouse")
             .config(c + ".io-impl", "org.apache.iceberg.aws.s3.S3FileIO")
             .config(c + ".cache-enabled", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class Writer:
    """One writer's loop: append (name, seq) until stop, counting acks."""

    def __init__(self, name, append, pace=0.0):
        self.name, self.append, self.pace = name, append, pace
        self.acked, self.failed, self.errors = 0, 0, []
        self.first = None  # seconds from the start to the first acknowledged append
        self.thread = threading.Thread(target=self.run, name=name, daemon=True)

    def run(self):
        seq, start = 0, time.time()
        while not stop.is_set():
            try:
                self.append(seq)
                self.acked += 1
                if self.first is None:
                    self.first = time.time() - start
            except Exception as e:  # an append not acknowledged must have added nothing
                self.failed += 1
                if len(self.errors) < 3:
                    self.errors.append("%s: %s" % (type(e).__name__, str(e)[:300]))
            seq += 1
            if self.pace:
                stop.wait(self.pace)


stop = threading.Event()


def retrying(fn, retries=RETRIES):
    """fn, tried again after a refused commit (the client gave up)."""
    wait = 0.01
    for attempt in range(retries):
        try:
            return fn()
        except Exception:
            if attempt == retries - 1 or stop.is_set() and attempt > 3:
                raise
            time.sleep(wait)
            wait = min(wait * 2, 0.5)


def main():
    import pyarrow as pa
    import pymysql
    from pyiceberg.catalog import load_catalog

    ap = argparse.ArgumentParser()
    ap.add_argument("--icesql", required=True)
    ap.add_argument("--jar", required=True, help="iceberg-spark-runtime-3.5_2.12 jar")
    ap.add_argument("--aws-jar", default=os.path.expanduser(
        "~/.m2/repository/org/apache/iceberg/iceberg-aws-bundle/1.10.1/iceberg-aws-bundle-1.10.1.jar"))
    ap.add_argument("--seconds", type=float, default=30)
    args = ap.parse_args()
    if not os.path.exists(args.aws_jar):
        print("rest-writers: the iceberg-aws-bundle jar %s is missing (.ci/run fetches it)" % args.aws_jar)
        print("rest-writers: 0 passed, 1 failed")
        return 1
    work = tempfile.mkdtemp(prefix="icesql-rest-writers-")
    proc, port, http_port, log = start_icesql(os.path.abspath(args.icesql), work)
    passed, failed = 0, []

    def check(name, ok, detail=""):
        nonlocal passed
        if ok:
            passed += 1
        else:
            failed.append(name)
            print("FAIL %s %s" % (name, detail))

    spark = None
    try:
        ice = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)

        def sql(q, conn=ice):
            with conn.cursor() as c:
                c.execute(q)
                return c.fetchall()

        sql("CREATE DATABASE d")
        # Spark retries a refused commit commit.retry.num-retries times (4 by default).
        sql("CREATE TABLE d.w (writer VARCHAR(16), seq BIGINT) TBLPROPERTIES ('commit.retry.num-retries'='50', 'commit.retry.max-wait-ms'='500')")
        spark = spark_session([args.jar, args.aws_jar], http_port)
        # Warm up before the clock starts: Spark's first write compiles its
        # write path, which took 15-20 s at load 20 (the "1 commit in 30 s"
        # of an earlier run was mostly that), then a commit takes it 0.3-0.7 s
        # from loading the table to committing, and loses the race to the
        # faster writers most times (409, then its own retry backoff).
        spark.sql("CREATE TABLE lake.d.warm (x BIGINT)")
        spark.sql("INSERT INTO lake.d.warm VALUES (1)")
        spark.sql("SELECT COUNT(*) FROM lake.d.w").collect()
        cat = load_catalog("icesql", type="rest", uri="http://127.0.0.1:%d/_iceberg" % http_port, warehouse="warehouse")
        arrow_schema = pa.schema([pa.field("writer", pa.large_string()), pa.field("seq", pa.int64())])
        duck = DuckDB(extensions=("httpfs", "avro", "iceberg"))
        duck.con.execute("ATTACH 'warehouse' AS lake (TYPE iceberg, ENDPOINT 'http://127.0.0.1:%d', AUTHORIZATION_TYPE 'none')" % http_port)

        def sql_writer(name):
            conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
            return lambda seq: sql("INSERT INTO d.w VALUES ('%s', %d)" % (name, seq), conn)

        def pyiceberg_append(seq):
            rows = pa.Table.from_pylist([{"writer": "pyiceberg", "seq": seq}], schema=arrow_schema)
            retrying(lambda: cat.load_table("d.w").append(rows))

        def duckdb_append(seq):
            retrying(lambda: duck.con.execute("INSERT INTO lake.d.w VALUES ('duckdb', %d)" % seq))

        writers = [Writer("sql1", sql_writer("sql1"), PACE), Writer("sql2", sql_writer("sql2"), PACE),
                   Writer("spark", lambda seq: spark.sql("INSERT INTO lake.d.w VALUES ('spark', %d)" % seq)),
                   Writer("pyiceberg", pyiceberg_append), Writer("duckdb", duckdb_append, PACE)]
        for w in writers:
            w.thread.start()
        time.sleep(args.seconds)
        stop.set()
        for w in writers:
            w.thread.join(timeout=300)
            check("%s stopped" % w.name, not w.thread.is_alive())

        counts = dict(sql("SELECT writer, COUNT(*) FROM d.w GROUP BY writer"))
        acked = sum(w.acked for w in writers)
        total = sql("SELECT COUNT(*) FROM d.w")[0][0]
        for w in writers:
            print("rest-writers: %-9s %4d acknowledged, %4d in the table, %3d not acknowledged, first after %s%s" % (
                w.name, w.acked, counts.get(w.name, 0), w.failed, "%.1f s" % w.first if w.first is not None else "-",
                (" (%s)" % "; ".join(w.errors)) if w.errors else ""))
            check("%s: every acknowledged append is in the table, once" % w.name, counts.get(w.name, 0) == w.acked,
                  "%d acknowledged, %d rows" % (w.acked, counts.get(w.name, 0)))
            check("%s committed" % w.name, w.acked > 0, "no append of %s was acknowledged in %ss" % (w.name, args.seconds))
        print("rest-writers: %d acknowledged, %d in the table, over %.0f s" % (acked, total, args.seconds))
        check("total", total == acked, "%d rows, %d acknowledged" % (total, acked))
        dups = sql("SELECT writer, seq, COUNT(*) FROM d.w GROUP BY writer, seq HAVING COUNT(*) > 1")
        check("no row twice", not dups, "doubled: %r" % (dups[:5],))

        # The snapshot log is linear: one chain of parents from the current
        # snapshot back to the first holds every snapshot. (Followed by
        # parent, and then checked in time order: a commit rebased onto a
        # newer parent by a client's retry is stamped no earlier than it,
        # storage/stamp.go.)
        parent = dict(sql("SELECT snapshot_id, parent_id FROM d.w.snapshots"))
        leaves = [sid for sid in parent if sid not in set(parent.values())]
        chain, cur = [], leaves[0] if len(leaves) == 1 else None
        while cur is not None and len(chain) <= len(parent):
            chain.append(cur)
            cur = parent.get(cur)
        chain.reverse()
        snaps = [(sid, parent[sid]) for sid in chain]
        hist = sql("SELECT snapshot_id, is_current_ancestor FROM d.w.history ORDER BY made_current_at")
        linear = len(leaves) == 1 and len(chain) == len(parent) and snaps[0][1] is None
        stamps = dict(sql("SELECT snapshot_id, UNIX_TIMESTAMP(committed_at) FROM d.w.snapshots"))
        older = sum(1 for i in range(1, len(chain)) if stamps[chain[i]] < stamps[chain[i - 1]])
        check("no snapshot older than its parent", older == 0,
              "%d snapshots stamped before their parent" % older)
        check("linear snapshot log", linear and len(hist) == len(snaps) and all(h[1] for h in hist),
              "%d snapshots, %d history entries" % (len(snaps), len(hist)))
        print("rest-writers: %d snapshots, linear: %s" % (len(snaps), linear))
        # Replay: the table at each snapshot holds its total-records, one commit more each time.
        bad, prev = [], 0
        for sid, _ in snaps:
            n = sql("SELECT COUNT(*) FROM d.w VERSION AS OF %d" % sid)[0][0]
            rec = sql("SELECT summary FROM d.w.snapshots WHERE snapshot_id = %d" % sid)[0][0]
            if n <= prev or ('"total-records": "%d"' % n) not in rec.replace('":"', '": "'):
                bad.append((sid, n, prev))
            prev = n
        check("replay", not bad and prev == total, "snapshots that disagree: %r" % (bad[:5],))
    except Exception as e:  # a crash counts as one failure, with its reason
        failed.append("run")
        print("FAIL: %s: %s (server log %s)" % (type(e).__name__, e, log.name))
        traceback.print_exc(limit=5)
    finally:
        stop.set()
        if spark is not None:
            spark.stop()
        proc.terminate()
        proc.wait(timeout=30)
        if not failed:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("work folder kept: %s" % work)
    print("rest-writers: %d passed, %d failed" % (passed, len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
