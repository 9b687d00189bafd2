"""PyIceberg through icesql's Iceberg REST catalog (issue 17).

Starts `icesql serve` with its REST catalog, then with PyIceberg's REST
client lists, loads, scans with a filter, appends a PyArrow table, creates a
table and evolves a schema; after each change icesql, over the MySQL wire,
sees it at once. The catalog hands out s3://warehouse/ locations and the
S3 API's endpoint, so PyIceberg writes its files through icesql's S3 API
into the warehouse folder. The server has an account (--user), and
PyIceberg signs in with credential=USER:PASSWORD: it exchanges it at the
catalog's OAuth2 token endpoint for a bearer token; wrong credentials are
refused there. Prints "rest-pyiceberg: N passed, M failed".

Usage: python interop/rck_pyiceberg.py path/to/icesql
"""
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    import pyarrow as pa
    import pymysql
    from pyiceberg.catalog import load_catalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import IntegerType, LongType, NestedField, StringType

    binary = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="icesql-rest-")
    port, http_port = free_port(), free_port()
    user, password = "ann", "py-s3cret"
    pwfile = os.path.join(work, "password")
    with open(pwfile, "w") as f:
        f.write(password + "\n")
    log = open(os.path.join(work, "serve.log"), "w")
    proc = subprocess.Popen([binary, "serve", "--create", "--warehouse", os.path.join(work, "wh"), "--addr", "127.0.0.1:%d" % port,
                             "--http", "127.0.0.1:%d" % http_port, "--user", user, "--password-file", pwfile],
                            stdout=log, stderr=subprocess.STDOUT)
    passed = failed = 0
    try:
        deadline = time.time() + 60
        while True:
            try:
                conn = pymysql.connect(host="127.0.0.1", port=port, user=user, password=password, autocommit=True)
                try:
                    urllib.request.urlopen("http://127.0.0.1:%d/v1/config" % http_port).read()
                except urllib.error.HTTPError as e:
                    if e.code != 401:  # up, and asking for credentials
                        raise
                break
            except Exception:
                if proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError("icesql serve did not start (see %s)" % log.name)
                time.sleep(0.2)

        def sql(q):
            with conn.cursor() as c:
                c.execute(q)
                return c.fetchall()

        def refused_sql(q):
            try:
                sql(q)
            except pymysql.MySQLError as e:
                return e.args[0]
            return 0

        def check(name, got, want):
            nonlocal passed, failed
            if got == want:
                passed += 1
            else:
                failed += 1
                print("FAIL %s: got %r, want %r" % (name, got, want))

        sql("CREATE DATABASE rdb")
        sql("CREATE TABLE rdb.t (id BIGINT, name TEXT)")
        sql("INSERT INTO rdb.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")

        uri = "http://127.0.0.1:%d/_iceberg" % http_port

        def refused(credential):
            try:
                load_catalog("wrong", type="rest", uri=uri, warehouse="warehouse", credential=credential).list_namespaces()
            except Exception as e:  # PyIceberg's OAuthError / NotAuthorizedError, saying why
                return type(e).__name__, "invalid_client" in str(e) or "not the user and password" in str(e)
            return "admitted", False
        check("a wrong password is refused at the token endpoint", refused(user + ":wrong"), ("OAuthError", True))
        check("an unknown user is refused at the token endpoint", refused("bob:" + password), ("OAuthError", True))

        cat = load_catalog("icesql", type="rest", uri=uri, warehouse="warehouse", credential="%s:%s" % (user, password))
        check("PyIceberg got a token", (cat._session.auth.auth_manager.auth_header() or "").startswith("Bearer icesql1."), True)
        check("list namespaces", ("rdb",) in cat.list_namespaces(), True)
        check("list tables", cat.list_tables("rdb"), [("rdb", "t")])
        tbl = cat.load_table("rdb.t")
        rows = tbl.scan(row_filter="id >= 2").to_arrow().sort_by("id")
        check("scan with filter", rows.column("id").to_pylist(), [2, 3])

        arrow_schema = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.large_string())])
        tbl.append(pa.Table.from_pylist([{"id": 4, "name": "d"}, {"id": 5, "name": "e"}], schema=arrow_schema))
        check("icesql sees the append", sql("SELECT COUNT(*), SUM(id) FROM rdb.t"), ((5, 15),))

        with tbl.update_schema() as update:
            update.add_column("extra", IntegerType())
        check("icesql sees the new column", sql("SELECT id, extra FROM rdb.t WHERE id = 5"), ((5, None),))
        sql("INSERT INTO rdb.t VALUES (6, 'f', 60)")
        tbl = cat.load_table("rdb.t")
        check("PyIceberg sees icesql's insert", tbl.scan(row_filter="extra = 60").to_arrow().column("id").to_pylist(), [6])

        created = cat.create_table("rdb.made", schema=Schema(NestedField(1, "k", LongType(), required=False),
                                                             NestedField(2, "v", StringType(), required=False)))
        created.append(pa.Table.from_pylist([{"k": 1, "v": "x"}],
                                            schema=pa.schema([pa.field("k", pa.int64()), pa.field("v", pa.large_string())])))
        check("icesql reads a table PyIceberg created", sql("SELECT k, v FROM rdb.made"), ((1, "x"),))
        # PyIceberg wrote them through icesql's S3 API (s3://warehouse/...),
        # into the warehouse folder.
        made = cat.load_table("rdb.made")
        check("PyIceberg writes through the S3 API", (made.location(), made.current_snapshot().manifest_list.split("/metadata/")[0],
                                                      type(made.io).__name__), ("s3://warehouse/rdb/made", "s3://warehouse/rdb/made", "PyArrowFileIO"))
        data_files = [f.file.file_path for f in made.scan().plan_files()]
        check("its data files are in the folder", [os.path.exists(os.path.join(work, "wh", p.split("s3://warehouse/", 1)[1]))
                                                   for p in data_files], [True])

        summary = cat.update_namespace_properties("rdb", removals={"absent"}, updates={"owner": "ann"})
        check("namespace properties", (summary.updated, summary.missing), (["owner"], ["absent"]))
        check("namespace properties load", cat.load_namespace_properties("rdb").get("owner"), "ann")

        # A namespace is its folder of the warehouse, where its tables go:
        # a location elsewhere is refused (400, saying where its tables
        # would go), as SQL's CREATE NAMESPACE ... LOCATION is (1235), and
        # nothing is created; the folder's own location is accepted.
        def refused_location(call):
            try:
                call()
            except Exception as e:
                return type(e).__name__, "keeps each namespace in its own folder" in str(e)
            return "accepted", False
        elsewhere = "s3://warehouse/elsewhere/lake"
        check("a namespace location elsewhere is refused", refused_location(lambda: cat.create_namespace("placed", {"location": elsewhere})),
              ("BadRequestError", True))
        check("the refused namespace does not exist", ("placed",) in cat.list_namespaces(), False)
        check("SQL refuses it too", refused_sql("CREATE NAMESPACE placed LOCATION '%s'" % os.path.join(work, "elsewhere")), 1235)
        check("setting a location elsewhere is refused", refused_location(lambda: cat.update_namespace_properties("rdb", updates={"location": elsewhere})),
              ("BadRequestError", True))
        cat.create_namespace("placed", {"location": "s3://warehouse/placed"})
        cat.create_table("placed.t", schema=Schema(NestedField(1, "k", LongType(), required=False)))
        check("a table of a namespace with its own location is in its folder",
              (cat.load_table("placed.t").location(), os.path.isdir(os.path.join(work, "wh", "placed", "t", "metadata"))),
              ("s3://warehouse/placed/t", True))

        # A namespace an older server gave a location elsewhere (its
        # properties file written here as that server wrote it) keeps its
        # tables in its folder: the catalog answers the folder as its
        # location and the old value as icesql.ignored-location, and
        # nothing is written there.
        old = os.path.join(work, "elsewhere-old")
        cat.create_namespace("oldns")
        with open(os.path.join(work, "wh", "oldns", ".icesql", "namespace.json"), "w") as f:
            f.write('{"location": "file://%s", "owner": "ann"}' % old)
        props = cat.load_namespace_properties("oldns")
        check("an old namespace's location elsewhere is not handed out",
              (props.get("location"), props.get("icesql.ignored-location"), props.get("owner")),
              ("s3://warehouse/oldns", "file://" + old, "ann"))
        oldt = cat.create_table("oldns.t", schema=Schema(NestedField(1, "k", LongType(), required=False)))
        oldt.append(pa.Table.from_pylist([{"k": 5}], schema=pa.schema([pa.field("k", pa.int64())])))
        check("its new table is in its folder, nothing outside, icesql reads it",
              (cat.load_table("oldns.t").location(), os.path.exists(old), sql("SELECT k FROM oldns.t")),
              ("s3://warehouse/oldns/t", False, ((5,),)))
    except Exception as e:  # a crash counts as one failure, with its reason
        failed += 1
        print("FAIL: %s: %s (server log %s)" % (type(e).__name__, e, log.name))
    finally:
        proc.terminate()
        proc.wait()
    print("rest-pyiceberg: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
