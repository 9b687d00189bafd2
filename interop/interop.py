#!/usr/bin/env python3
"""Interoperability check of icesql with Spark, PyIceberg and DuckDB (`make interop`).

icesql writes every kind of table it can (all types, every partition transform,
partition values that need escaping in a path, schema and partition evolution,
v2 position deletes, v3 deletion vectors, branches) into a warehouse; Spark 3.5
with Iceberg's runtime (a `type=hadoop` catalog on that folder), PyIceberg (a
StaticTable on the newest metadata file) and DuckDB (iceberg_scan on it) read
them. Spark then writes the same kinds into a second warehouse, which icesql
reads through its Hadoop catalog. Each check compares the full row sets (and,
for filtered reads, the rows a WHERE selects) and the metadata tables' counts.
icesql is reached over the MySQL wire (PyMySQL), one server per warehouse; one
Spark session serves every check.

Prints one line per failed check, and `interop: N passed, M failed`; exits 1
when a check failed.
"""

import argparse
import datetime
import decimal
import glob
import importlib.util
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback

os.environ["TZ"] = "UTC"  # PySpark turns timestamps into naive local datetimes
os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"  # Spark listens on loopback only
time.tzset()


# ---------------------------------------------------------------- values

def norm(v):
    """One spelling per value, whichever engine returned it."""
    if v is None:
        return None
    if isinstance(v, bool):
        return int(v)  # MySQL's BOOLEAN is TINYINT(1)
    if isinstance(v, float):
        return repr(round(v, 6))
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, datetime.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return v.isoformat(sep=" ", timespec="microseconds")
    if isinstance(v, (datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    return v


def rowset(rows):
    return sorted((tuple(norm(x) for x in r) for r in rows), key=repr)


def diff(want, got, limit=4):
    w, g = list(want), list(got)
    missing = [r for r in w if r not in g][:limit]
    extra = [r for r in g if r not in w][:limit]
    return "%d rows, want %d; missing %s; unexpected %s" % (len(g), len(w), missing, extra)


class Checks:
    def __init__(self):
        self.passed, self.failed = 0, []

    def run(self, name, fn):
        try:
            fn()
            self.passed += 1
        except Exception as e:  # noqa: BLE001 - every failure is reported
            msg = str(e).strip().splitlines()
            self.failed.append(name)
            print("FAIL %s: %s" % (name, msg[0][:600] if msg else type(e).__name__), flush=True)
            if os.environ.get("INTEROP_VERBOSE"):
                traceback.print_exc()

    def same(self, name, want, get):
        def fn():
            got = get()
            if got != want:
                raise AssertionError(diff(want, got))
        self.run(name, fn)


# ---------------------------------------------------------------- engines

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Icesql:
    """An `icesql serve` process and one MySQL connection to it."""

    def __init__(self, binary, args, log):
        import pymysql
        self.port = free_port()
        self.proc = subprocess.Popen([binary, "serve", "--addr", "127.0.0.1:%d" % self.port] + args,
                                     stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while True:
            try:
                self.conn = pymysql.connect(host="127.0.0.1", port=self.port, user="root", autocommit=True)
                break
            except pymysql.err.OperationalError:
                if self.proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError("icesql serve %s did not start (see %s)" % (args, log.name))
                time.sleep(0.2)

    def execute(self, sql):
        with self.conn.cursor() as c:
            c.execute(sql)
            return c.fetchall()

    def rows(self, sql):
        return rowset(self.execute(sql))

    def close(self):
        self.conn.close()
        self.proc.terminate()
        self.proc.wait(timeout=30)


def newest_metadata(table_dir):
    """The newest v<N>.metadata.json or v<N>.gz.metadata.json (gzip-compressed)."""
    files = glob.glob(os.path.join(table_dir, "metadata", "v*.metadata.json"))
    if not files:
        raise RuntimeError("no metadata file under %s" % table_dir)
    return max(files, key=lambda f: int(re.search(r"v(\d+)(\.gz)?\.metadata\.json$", f).group(1)))


class PyIceberg:
    def table(self, table_dir):
        from pyiceberg.table import StaticTable
        return StaticTable.from_metadata("file://" + newest_metadata(table_dir))

    def rows(self, table_dir, cols, row_filter=None, snapshot=None):
        t = self.table(table_dir)
        kw = {"selected_fields": tuple(cols)}
        if row_filter:
            kw["row_filter"] = row_filter
        if snapshot:
            ref = t.metadata.snapshot_by_name(snapshot)
            if ref is None:
                raise AssertionError("PyIceberg finds no ref %s" % snapshot)
            kw["snapshot_id"] = ref.snapshot_id
        tbl = t.scan(**kw).to_arrow()
        data = tbl.to_pylist()
        return rowset(tuple(r[c] for c in cols) for r in data)

    def counts(self, table_dir):
        t = self.table(table_dir)
        return (t.inspect.snapshots().num_rows, t.inspect.files().num_rows)


class DuckDB:
    def __init__(self, extensions=("avro", "iceberg")):
        import duckdb
        self.duckdb = duckdb
        self.con = duckdb.connect()
        self.con.execute("SET TimeZone = 'UTC'") if self._load("icu") else None
        for ext in extensions:
            if not self._load(ext):
                raise RuntimeError("DuckDB's %s extension is not installed (pip install duckdb-extension-%s==%s)"
                                   % (ext, ext, duckdb.__version__))

    def _load(self, name):
        try:
            self.con.execute("LOAD " + name)
            return True
        except Exception:  # noqa: BLE001 - try the PyPI package next
            pass
        spec = importlib.util.find_spec("duckdb_extension_" + name)
        if spec is None or not spec.submodule_search_locations:
            return False
        found = glob.glob(os.path.join(spec.submodule_search_locations[0], "extensions", "*", name + ".duckdb_extension"))
        if not found:
            return False
        self.con.execute("LOAD '%s'" % found[0])
        return True

    def rows(self, table_dir, cols, where=None):
        sql = "SELECT %s FROM iceberg_scan('%s')" % (", ".join('"%s"' % c for c in cols), newest_metadata(table_dir))
        if where:
            sql += " WHERE " + where
        return rowset(self.con.execute(sql).fetchall())

    def snapshots(self, table_dir):
        return self.con.execute("SELECT count(*) FROM iceberg_snapshots('%s')" % newest_metadata(table_dir)).fetchone()[0]


def start_spark(jar, ice_wh, spark_wh):
    from pyspark.sql import SparkSession
    b = (SparkSession.builder.master("local[2]").appName("icesql-interop")
         .config("spark.jars", jar)
         .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", "2")
         .config("spark.driver.memory", "2g")
         .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC"))
    for name, wh in (("ice", ice_wh), ("spk", spark_wh)):
        b = (b.config("spark.sql.catalog.%s" % name, "org.apache.iceberg.spark.SparkCatalog")
             .config("spark.sql.catalog.%s.type" % name, "hadoop")
             .config("spark.sql.catalog.%s.warehouse" % name, "file://" + wh))
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


# ---------------------------------------------------------------- the tables

HOSTILE = ["", "a/b", "50%", "it's", "two words", "q?u#e&r+y", "né ü 名", "x=y", "plain"]


QUOTE = {
    "icesql": lambda s: "'" + s.replace("\\", "\\\\").replace("'", "''") + "'",  # MySQL: backslash escapes too
    "spark": lambda s: "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'",
    "duckdb": lambda s: "'" + s.replace("'", "''") + "'",
}


def render(w, dialect):
    """A WHERE clause (column, operator, value) in one engine's SQL."""
    col, op, val = w
    if op == "IS NULL":
        return "%s IS NULL" % col
    return "%s %s %s" % (col, op, val if isinstance(val, (int, float)) else QUOTE[dialect](val))


def pyiceberg_filter(w):
    from pyiceberg import expressions as ex
    col, op, val = w
    if op == "IS NULL":
        return ex.IsNull(col)
    if isinstance(val, str) and col in TIMESTAMP_COLS:
        val = val.replace(" ", "T") + ("T00:00:00" if len(val) == 10 else "") + ("+00:00" if col == "tz" else "")
    return {"=": ex.EqualTo, ">": ex.GreaterThan, ">=": ex.GreaterThanOrEqual, "<": ex.LessThan}[op](col, val)


TIMESTAMP_COLS = {"ts", "tz"}


# Each table: the statements that make it (icesql's dialect for ICESQL, Spark's
# for SPARK; {q} quotes a string for that dialect), the columns every reader
# compares, WHERE clauses whose rows every reader compares, and whether a
# branch b1 is read too. `spark_cols` leaves out what Spark cannot read.
COMMON_TYPES = [
    "b BOOLEAN", "i INT", "l BIGINT", "f FLOAT", "d DOUBLE", "amount DECIMAL(10,2)", "big DECIMAL(38,9)",
    "s STRING", "dt DATE", "ts TIMESTAMP_NTZ", "tz TIMESTAMP_LTZ",
]
TYPE_ROWS = [
    "(true, 1, 10000000000, 1.5, 2.25, 12.34, 123456789012345678901234567.123456789, 'abc', DATE '2024-02-29', "
    "TIMESTAMP_NTZ '2024-02-29 13:14:15.123456', TIMESTAMP '2024-02-29 13:14:15.654321')",
    "(false, -2147483648, -9223372036854775808, -0.25, -1e300, -0.01, -1.000000001, '', DATE '1900-01-01', "
    "TIMESTAMP_NTZ '1900-01-01 00:00:00', TIMESTAMP '2100-12-31 23:59:59.999999')",
    "(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
]
ICESQL_TYPE_ROWS = [r.replace("TIMESTAMP_NTZ '", "'").replace("TIMESTAMP '", "'").replace("DATE '", "'") for r in TYPE_ROWS]
TYPE_COLS = ["b", "i", "l", "f", "d", "amount", "big", "s", "dt", "ts", "tz"]

PART_ROWS = [
    (1, "alpha", "2024-01-15 10:30:00", "2024-01-15", 5),
    (2, "beta", "2023-12-31 23:59:59", "2023-06-01", 123456),
    (3, "alphabet", "1969-12-31 23:00:00", "1969-07-20", -7),
    (4, None, None, None, None),
    (5, "", "2024-01-15 11:00:00", "2024-01-16", 0),
]


def part_values(ts_kw, date_kw):
    out = []
    for i, s, ts, d, n in PART_ROWS:
        out.append("(%d, %s, %s, %s, %s)" % (
            i, "NULL" if s is None else "'%s'" % s,
            "NULL" if ts is None else "%s'%s'" % (ts_kw, ts),
            "NULL" if d is None else "%s'%s'" % (date_kw, d),
            "NULL" if n is None else n))
    return ", ".join(out)


def tables(dialect):
    """The tables both sides write, in the given dialect ("icesql" or "spark")."""
    ice = dialect == "icesql"
    q = QUOTE[dialect]
    ts_kw, date_kw = ("", "") if ice else ("TIMESTAMP_NTZ ", "DATE ")
    ddl_types = ", ".join(COMMON_TYPES)
    mor = "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read'"
    using = "" if ice else " USING iceberg"
    part_ddl = "(id INT, s STRING, ts TIMESTAMP_NTZ, d DATE, n INT)"
    hostile_rows = ", ".join("(%d, %s)" % (i, q(v)) for i, v in enumerate(HOSTILE)) + ", (99, NULL)"
    t = []
    t.append(dict(name="types", stmts=[
        "CREATE TABLE {T} (%s)%s" % (ddl_types, using),
        "INSERT INTO {T} VALUES " + ", ".join(ICESQL_TYPE_ROWS if ice else TYPE_ROWS),
    ], cols=TYPE_COLS, where=[("s", "=", "abc"), ("tz", ">", "2050-01-01"), ("i", "IS NULL", None), ("dt", "<", "2000-01-01")]))
    for name, part in (
        ("part_bucket_trunc", "bucket(4, id), truncate(3, s), truncate(100, n)"),
        ("part_time", "years(d), hours(ts)"),
        ("part_days_months", "days(ts), months(d)"),
        ("part_identity", "s, d, n"),
    ):
        t.append(dict(name=name, stmts=[
            "CREATE TABLE {T} %s%s PARTITIONED BY (%s)" % (part_ddl, using, part),
            "INSERT INTO {T} VALUES " + part_values(ts_kw, date_kw),
        ], cols=["id", "s", "ts", "d", "n"], where=[("s", "=", "alpha"), ("ts", ">=", "2024-01-01"), ("d", "<", "2000-01-01"), ("n", ">", 100), ("s", "=", "")]))
    t.append(dict(name="empty_part", stmts=[
        "CREATE TABLE {T} (id INT, name STRING, tag STRING)%s PARTITIONED BY (name)" % using,
        "INSERT INTO {T} VALUES (1, '', 'a'), (2, 'abc', 'b'), (3, 'zzz', 'c')",
    ], cols=["id", "name", "tag"], where=[("name", "=", "abc"), ("name", "=", ""), ("name", ">", "a")]))
    t.append(dict(name="hostile", stmts=[
        "CREATE TABLE {T} (id INT, name STRING)%s PARTITIONED BY (name)" % using,
        "INSERT INTO {T} VALUES " + hostile_rows,
    ], cols=["id", "name"], where=[("name", "=", v) for v in HOSTILE] + [("name", "IS NULL", None)]))
    t.append(dict(name="evolved", stmts=[
        "CREATE TABLE {T} (id INT, name STRING, price FLOAT, gone STRING)%s" % using,
        "INSERT INTO {T} VALUES (1, 'a', 1.5, 'x'), (2, 'b', 2.5, 'y')",
        "ALTER TABLE {T} ADD COLUMN tier STRING",
        "INSERT INTO {T} VALUES (3, 'c', 3.5, 'z', 'gold')",
        "ALTER TABLE {T} RENAME COLUMN name TO label",
        "ALTER TABLE {T} DROP COLUMN gone",
        "ALTER TABLE {T} ALTER COLUMN id TYPE BIGINT",
        "ALTER TABLE {T} ALTER COLUMN price TYPE DOUBLE",
        "INSERT INTO {T} VALUES (10000000000, 'd', 4.25, NULL)",
    ], cols=["id", "label", "price", "tier"], where=[("tier", "IS NULL", None), ("tier", "=", "gold"), ("id", ">", 2)]))
    t.append(dict(name="posdeletes_v2", stmts=[
        "CREATE TABLE {T} (id INT, dep STRING)%s TBLPROPERTIES ('format-version'='2', %s)" % (using, mor),
        "INSERT INTO {T} VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e')",
        "DELETE FROM {T} WHERE id IN (2, 4)",
        "UPDATE {T} SET dep = 'z' WHERE id = 5",
    ], cols=["id", "dep"], where=[("dep", "=", "z")]))
    t.append(dict(name="dv_v3", stmts=[
        "CREATE TABLE {T} (id INT, dep STRING)%s TBLPROPERTIES ('format-version'='3', %s)" % (using, mor),
        "INSERT INTO {T} VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e')",
        "DELETE FROM {T} WHERE id = 2",
        "DELETE FROM {T} WHERE id = 4",
        "UPDATE {T} SET dep = 'z' WHERE id = 5",
    ], cols=["id", "dep"], where=[("dep", "=", "z")], duckdb_v3=True))
    t.append(dict(name="cow", stmts=[
        "CREATE TABLE {T} (id INT, dep STRING)%s PARTITIONED BY (dep)" % using,
        "INSERT INTO {T} VALUES (1, 'a'), (2, 'b'), (3, 'a'), (4, 'b')",
        "DELETE FROM {T} WHERE id = 1",
        "UPDATE {T} SET id = 40 WHERE id = 4",
    ], cols=["id", "dep"], where=[("dep", "=", "a")]))
    t.append(dict(name="branched", stmts=[
        "CREATE TABLE {T} (id INT, s STRING)%s" % using,
        "INSERT INTO {T} VALUES (1, 'main')",
        "ALTER TABLE {T} CREATE BRANCH b1",
        "ALTER TABLE {T} CREATE TAG t1",
        "INSERT INTO {T}.branch_b1 VALUES (2, 'b1')",
        "INSERT INTO {T} VALUES (3, 'main')",
    ], cols=["id", "s"], where=[], branch="b1"))
    t.append(dict(name="gzip_metadata", stmts=[
        "CREATE TABLE {T} (id INT, s STRING)%s TBLPROPERTIES ('write.metadata.compression-codec'='gzip')" % using,
        "INSERT INTO {T} VALUES (1, 'a'), (2, 'b')",
        "INSERT INTO {T} VALUES (3, 'c')",
        "DELETE FROM {T} WHERE id = 2",
    ], cols=["id", "s"], where=[("s", "=", "c")]))
    t.append(dict(name="part_evolved", stmts=[
        "CREATE TABLE {T} (id INT, region STRING, ts TIMESTAMP_NTZ)%s PARTITIONED BY (region)" % using,
        "INSERT INTO {T} VALUES (1, 'us', %s'2024-01-01 00:00:00'), (2, 'eu', %s'2024-02-01 00:00:00')" % (ts_kw, ts_kw),
        "ALTER TABLE {T} ADD PARTITION FIELD bucket(4, id)",
        "INSERT INTO {T} VALUES (3, 'us', %s'2024-03-01 00:00:00')" % ts_kw,
        "ALTER TABLE {T} DROP PARTITION FIELD region",
        "ALTER TABLE {T} ADD PARTITION FIELD days(ts)",
        "INSERT INTO {T} VALUES (4, 'ap', %s'2024-04-01 00:00:00'), (5, NULL, NULL)" % ts_kw,
    ], cols=["id", "region", "ts"], where=[("region", "=", "us"), ("ts", ">", "2024-02-15"), ("id", "=", 4)]))
    return t


# ---------------------------------------------------------------- the checks

def check_table(checks, spec, origin, ident, table_dir, ice, spark, pyi, duck, spark_name):
    """Every reader of one table against the reference reading: icesql's for
    the tables icesql wrote (itself checked against rows computed here for the
    filters that have them), Spark's for the tables Spark wrote."""
    name, cols = spec["name"], spec["cols"]
    collist = ", ".join("`%s`" % c for c in cols)
    label = "%s-written %s" % (origin, name)

    def ice_read(w=None):
        return ice.rows("SELECT %s FROM %s%s" % (collist, ident, " WHERE " + render(w, "icesql") if w else ""))

    def spark_read(w=None):
        return rowset(spark.sql("SELECT %s FROM %s%s" % (collist, spark_name, " WHERE " + render(w, "spark") if w else "")).collect())

    readers = [
        ("icesql", ice_read), ("Spark", spark_read),
        ("PyIceberg", lambda w=None: pyi.rows(table_dir, cols, pyiceberg_filter(w) if w else None)),
        ("DuckDB", lambda w=None: duck.rows(table_dir, cols, render(w, "duckdb") if w else None)),
    ]
    reference = "icesql" if origin == "icesql" else "Spark"
    for w in [None] + spec["where"]:
        what = "every row" if w is None else "WHERE " + render(w, "icesql")
        try:
            want = dict(readers)[reference](w)
        except Exception as e:  # noqa: BLE001
            checks.run("%s: %s reads %s" % (label, reference, what), lambda e=e: _raise(e))
            continue
        if w is not None and w[0] == "name":
            # Computed here, independently of every engine.
            every = dict(readers)[reference](None)
            idx = cols.index("name")
            expect = rowset(r for r in every if _matches(r[idx], w))
            checks.same("%s: %s reads %s" % (label, reference, what), expect, lambda want=want: want)
        for reader, read in readers:
            if reader != reference:
                checks.same("%s: %s reads %s" % (label, reader, what), want, lambda read=read, w=w: read(w))
    # Metadata tables: snapshots and files (data and delete files), as each reader counts them.
    try:
        spark_counts = tuple(spark.sql("SELECT COUNT(*) FROM %s.%s" % (spark_name, m)).collect()[0][0] for m in ("snapshots", "files"))
    except Exception as e:  # noqa: BLE001
        checks.run("%s: Spark reads the metadata tables" % label, lambda e=e: _raise(e))
        return
    checks.same("%s: icesql counts snapshots and files as Spark does" % label, spark_counts,
                lambda: tuple(ice.execute("SELECT COUNT(*) FROM %s.%s" % (ident, m))[0][0] for m in ("snapshots", "files")))
    checks.same("%s: PyIceberg counts snapshots and files as Spark does" % label, spark_counts, lambda: pyi.counts(table_dir))
    checks.same("%s: DuckDB counts snapshots as Spark does" % label, spark_counts[0], lambda: duck.snapshots(table_dir))
    if spec.get("branch"):
        b = spec["branch"]
        bwant = rowset(spark.sql("SELECT %s FROM %s VERSION AS OF '%s'" % (collist, spark_name, b)).collect())
        checks.same("%s: icesql reads branch %s as Spark does" % (label, b), bwant,
                    lambda: ice.rows("SELECT %s FROM %s.branch_%s" % (collist, ident, b)))
        checks.same("%s: PyIceberg reads branch %s as Spark does" % (label, b), bwant,
                    lambda: pyi.rows(table_dir, cols, snapshot=b))


def _raise(e):
    raise e


def _matches(v, w):
    _, op, val = w
    if op == "IS NULL":
        return v is None
    if v is None:
        return False
    return {"=": v == val, ">": v > val, ">=": v >= val, "<": v < val}[op]


# ---------------------------------------------------------------- the history tester's tables

def kept_value(v):
    """A value read from a kept table, in the form expected.json spells it
    (sqltests/history/keep.go): integers and decimals as digits, dates and
    timestamps as text, doubles as numbers."""
    if v is None or isinstance(v, (bool, float, str)):
        return v
    if isinstance(v, int):
        return str(v)
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, datetime.datetime):
        return v.isoformat(sep=" ", timespec="microseconds")
    if isinstance(v, datetime.date):
        return v.isoformat()
    raise TypeError("unexpected value %r" % (v,))


def kept_rows(rows):
    return sorted((tuple(kept_value(x) for x in r) for r in rows), key=repr)


def check_history(checks, work, pyi, duck):
    """The history tester (sqltests/history) runs fixed seeds against MariaDB
    and keeps each history's warehouse with the rows the oracle holds at the
    end; PyIceberg reads every table and branch of it, DuckDB every table,
    and each must return exactly those rows."""
    import json
    keep = os.path.join(work, "history")
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, HISTORY_SEEDS="1,2", HISTORY_STEPS="30", HISTORY_KEEP=keep)
    with open(os.path.join(work, "history.log"), "w") as log:
        rc = subprocess.call(["go", "test", "-count=1", "-timeout", "30m", "-run", "TestHistory$", "-v", "./sqltests/history"],
                             cwd=repo, env=env, stdout=log, stderr=subprocess.STDOUT)
    if rc != 0:
        checks.run("the history tester runs seeds 1 and 2 (see %s)" % log.name,
                   lambda: _raise(RuntimeError("go test ./sqltests/history exited with %d" % rc)))
    for exp in sorted(glob.glob(os.path.join(keep, "seed*", "expected.json"))):
        with open(exp) as f:
            kept = json.load(f)
        wh = os.path.join(os.path.dirname(exp), kept["warehouse"])
        for t in kept["tables"]:
            table_dir = os.path.join(wh, t["namespace"], t["name"])
            want = sorted((tuple(r) for r in t["rows"]), key=repr)
            ref = t["ref"]
            label = "history seed %d: %s.%s%s" % (kept["seed"], t["namespace"], t["name"], "" if ref == "main" else " branch " + ref)

            def pyiceberg_read(table_dir=table_dir, cols=t["columns"], ref=ref):
                tbl = pyi.table(table_dir)
                kw = {"selected_fields": tuple(cols)}
                if ref != "main":
                    snap = tbl.metadata.snapshot_by_name(ref)
                    if snap is None:
                        raise AssertionError("PyIceberg finds no ref %s" % ref)
                    kw["snapshot_id"] = snap.snapshot_id
                return kept_rows(tuple(r[c] for c in cols) for r in tbl.scan(**kw).to_arrow().to_pylist())
            checks.same("%s: PyIceberg reads the oracle's %d rows" % (label, len(want)), want, pyiceberg_read)
            if ref == "main":
                sql = "SELECT %s FROM iceberg_scan('%s')" % (", ".join('"%s"' % c for c in t["columns"]), newest_metadata(table_dir))
                checks.same("%s: DuckDB reads the oracle's %d rows" % (label, len(want)), want,
                            lambda sql=sql: kept_rows(duck.con.execute(sql).fetchall()))


# ---------------------------------------------------------------- invalid fixtures

# The fixtures (../shared/fixtures, tables.json) icesql refuses with a clean
# error because the fixture itself breaks the spec (sqltests/fixtures_test.go,
# knownFailures): another engine must refuse it too, for the same reason.
# Each: the table folder, its metadata file, who refuses, and what the
# refusal must say.
INVALID_FIXTURES = [
    ("duckdb-iceberg/data/persistent/equality_delete_cross_partition/warehouse/ns/t", "vfinal.metadata.json",
     "Java", r"9876543210123456789"),  # snapshot-id beyond the signed 64-bit range
    ("duckdb-iceberg/data/persistent/equality_delete_extra_column/warehouse/ns/t", "vfinal.metadata.json",
     "Java", r"9876543210123456789"),
    ("duckdb-iceberg/data/persistent/timestamptz_ns", "v1.metadata.json",
     "Java", r"next-row-id"),  # format v3 without next-row-id
    ("duckdb-iceberg/data/persistent/legacy_bare_deletion_vector/warehouse/default/legacy_bare_deletion_vector",
     "00002-legacy-bare-dv.metadata.json", "PyIceberg", r"magic"),  # a deletion vector that is not a Puffin file
]


def check_invalid_fixtures(checks, spark):
    """Spark's Iceberg (Java, through the session's JVM) or PyIceberg refuses
    each invalid fixture, as icesql does."""
    from pyiceberg.table import StaticTable
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    fixtures = os.path.join(os.path.dirname(repo), "shared", "fixtures")
    jvm = spark._jvm
    for table_dir, meta, who, pattern in INVALID_FIXTURES:
        full = os.path.join(fixtures, table_dir)
        location = os.path.join(full, "metadata", meta)

        def refuse(who=who, pattern=pattern, full=full, location=location):
            if not os.path.exists(location):
                raise RuntimeError("fixture %s is missing (../shared/fixtures)" % location)
            try:
                if who == "Java":
                    io = jvm.org.apache.iceberg.hadoop.HadoopFileIO(spark._jsc.hadoopConfiguration())
                    jvm.org.apache.iceberg.TableMetadataParser.read(io, "file://" + location)
                else:
                    # The fixture's paths are relative to the fixture
                    # source's root (duckdb-iceberg/): read from there.
                    cwd = os.getcwd()
                    os.chdir(os.path.join(fixtures, table_dir.split("/")[0]))
                    try:
                        StaticTable.from_metadata("file://" + location).scan().to_arrow()
                    finally:
                        os.chdir(cwd)
            except Exception as e:  # noqa: BLE001 - the refusal is the point
                if not re.search(pattern, str(e)):
                    raise AssertionError("refused, but not for the expected reason (%s): %s" % (pattern, str(e)[:300]))
                return
            raise AssertionError("%s read it" % who)
        checks.run("invalid fixture %s: %s refuses it too" % (table_dir.split("/persistent/")[-1], who), refuse)


# ---------------------------------------------------------------- a warehouse path with a space

def check_spaced_warehouse(checks, binary, work, spark, pyi, duck, log):
    """icesql serving a warehouse whose path holds a space and non-ASCII
    characters keeps each table's files under that path, recorded as given
    (not URL-escaped), so that Spark (loading the table by its folder),
    PyIceberg and DuckDB read its rows."""
    wh = os.path.join(work, "my warehouse", "Straße 名")
    ice = Icesql(binary, ["--warehouse", wh, "--create"], log)
    try:
        for stmt in ["CREATE DATABASE sp",
                     "CREATE TABLE sp.t (id INT, s STRING) PARTITIONED BY (s) TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')",
                     "INSERT INTO sp.t VALUES (1, 'it''s'), (2, 'a b'), (3, 'a b'), (4, 'x')",
                     "DELETE FROM sp.t WHERE id = 3"]:
            ice.execute(stmt)
        want = ice.rows("SELECT id, s FROM sp.t")
    finally:
        ice.close()
    table_dir = os.path.join(wh, "sp", "t")
    checks.same("spaced warehouse: icesql reads its rows", rowset([(1, "it's"), (2, "a b"), (4, "x")]), lambda: want)
    checks.same("spaced warehouse: no folder beside it", [os.path.join(work, "my warehouse")],
                lambda: sorted(p for p in glob.glob(os.path.join(work, "my*")) if os.path.isdir(p)))
    checks.same("spaced warehouse: PyIceberg reads the table", want, lambda: pyi.rows(table_dir, ["id", "s"]))
    checks.same("spaced warehouse: DuckDB reads the table", want, lambda: duck.rows(table_dir, ["id", "s"]))
    checks.same("spaced warehouse: Spark reads the table", want,
                lambda: rowset(spark.read.format("iceberg").load(table_dir).select("id", "s").collect()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--icesql", required=True, help="the icesql binary")
    ap.add_argument("--jar", required=True, help="iceberg-spark-runtime jar")
    ap.add_argument("--keep", action="store_true", help="keep the warehouses")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="icesql-interop-")
    ice_wh, spark_wh = os.path.join(work, "icesql"), os.path.join(work, "spark")
    os.makedirs(ice_wh)
    os.makedirs(spark_wh)
    log = open(os.path.join(work, "icesql.log"), "w")
    checks = Checks()
    started = time.time()
    ice = ice_spark = spark = None
    try:
        ice = Icesql(args.icesql, ["--warehouse", ice_wh], log)
        ice.execute("CREATE DATABASE it")
        ice_tables = tables("icesql")
        for spec in ice_tables:
            for stmt in spec["stmts"]:
                try:
                    ice.execute(stmt.replace("{T}", "it." + spec["name"]))
                except Exception as e:  # noqa: BLE001
                    checks.run("icesql writes %s: %s" % (spec["name"], stmt[:80]), lambda e=e: _raise(e))
        spark = start_spark(args.jar, ice_wh, spark_wh)
        pyi, duck = PyIceberg(), DuckDB()
        for spec in ice_tables:
            check_table(checks, spec, "icesql", "it." + spec["name"], os.path.join(ice_wh, "it", spec["name"]),
                        ice, spark, pyi, duck, "ice.it." + spec["name"])

        # Spark writes the same kinds; icesql reads them through its Hadoop catalog.
        spark.sql("CREATE NAMESPACE IF NOT EXISTS spk.sp")
        spark_tables = tables("spark")
        for spec in spark_tables:
            for stmt in spec["stmts"]:
                try:
                    spark.sql(stmt.replace("{T}", "spk.sp." + spec["name"]))
                except Exception as e:  # noqa: BLE001
                    checks.run("Spark writes %s: %s" % (spec["name"], stmt[:80]), lambda e=e: _raise(e))
        ice_spark = Icesql(args.icesql, ["--catalog", "type=hadoop,warehouse=file://" + spark_wh], log)
        for spec in spark_tables:
            check_table(checks, spec, "Spark", "sp." + spec["name"], os.path.join(spark_wh, "sp", spec["name"]),
                        ice_spark, spark, pyi, duck, "spk.sp." + spec["name"])

        # icesql appends to a Spark-written table and Spark reads it back.
        def append_back():
            ice_spark.execute("INSERT INTO sp.hostile VALUES (100, 'it''s'), (101, '')")
            got = rowset(spark.sql("SELECT id FROM spk.sp.hostile WHERE name IN ('it\\'s', '')").collect())
            want = rowset([(3,), (0,), (100,), (101,)])
            if got != want:
                raise AssertionError(diff(want, got))
        spark.sql("REFRESH TABLE spk.sp.hostile")
        checks.run("icesql appends to a Spark-written table, Spark reads it", append_back)

        check_history(checks, work, pyi, duck)
        check_invalid_fixtures(checks, spark)
        check_spaced_warehouse(checks, args.icesql, work, spark, pyi, duck, log)
    finally:
        for s in (ice, ice_spark):
            if s is not None:
                s.close()
        if spark is not None:
            spark.stop()
        log.close()
        if args.keep:
            print("warehouses kept in %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("interop took %.0f s" % (time.time() - started))
    print("interop: %d passed, %d failed" % (checks.passed, len(checks.failed)))
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
