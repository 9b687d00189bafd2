#!/usr/bin/env python3
"""Spark through icesql's Iceberg REST catalog and S3 API (issue 17).

Starts `icesql serve --user U --password-file F` over a local warehouse,
then connects Spark 3.5 (iceberg-spark-runtime and iceberg-aws-bundle 1.10.1)
to it exactly as the lakehouse tutorial connects to AIStor: type=rest, uri
http://127.0.0.1:PORT/_iceberg, the warehouse (bucket) name, SigV4 with
signing name s3tables, S3FileIO at icesql's S3 endpoint with path-style
addressing. It runs the tutorial's SQL from step 4 on (namespace,
partitioned table, inserts, schema and partition evolution,
UPDATE/DELETE/MERGE, CTAS, time travel, snapshots and history, rollback),
and after each step asks icesql the same question over the MySQL wire and
compares the answers. A second Spark catalog configured with the REST
settings only (no s3.* properties) reads a table, so the S3 endpoint and
keys the catalog hands out in LoadTableResult are what it uses. Two more
sign in with OAuth2 (credential=USER:PASSWORD exchanged at the token
endpoint): one reads and writes, one with a wrong password is refused. Then
icesql writes over the MySQL wire (an insert into Spark's table, a table
of its own with delete files, a compaction) and both Spark catalogs, which
have only S3FileIO, read every row: icesql names its files in the bucket.
remove_orphan_files lists none of the files either engine's snapshots name,
and expire_snapshots keeps the table readable. Finally the data files Spark
wrote are checked to be in the warehouse folder.

Prints one line per failed check and "rest-spark: N passed, M failed".
Usage: python interop/rest_spark.py --icesql bin/icesql --jar SPARK_RUNTIME_JAR [--aws-jar BUNDLE]
"""
import argparse
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request

os.environ["TZ"] = "UTC"
os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
time.tzset()

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop import rowset, diff  # noqa: E402  (one spelling of values for both engines)

USER, PASSWORD, BUCKET, REGION = "admin", "lakehouse-s3cret", "lakehouse", "us-east-1"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def aws_bundle(given):
    if given:
        return given
    return os.path.expanduser("~/.m2/repository/org/apache/iceberg/iceberg-aws-bundle/1.10.1/iceberg-aws-bundle-1.10.1.jar")


def spark_session(jars, http_port, s3_settings):
    from pyspark.sql import SparkSession
    endpoint = "http://127.0.0.1:%d" % http_port
    b = (SparkSession.builder.master("local[2]").appName("icesql-rest-spark")
         .config("spark.jars", ",".join(jars))
         .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", "2")
         .config("spark.driver.memory", "2g")
         .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC -Daws.region=" + REGION))
    for cat, with_s3 in (("aistor", True), ("bare", False)):
        c = "spark.sql.catalog." + cat
        b = (b.config(c, "org.apache.iceberg.spark.SparkCatalog")
             .config(c + ".type", "rest")
             .config(c + ".uri", endpoint + "/_iceberg")
             .config(c + ".warehouse", BUCKET)
             .config(c + ".io-impl", "org.apache.iceberg.aws.s3.S3FileIO")
             .config(c + ".rest.sigv4-enabled", "true")
             .config(c + ".rest.signing-name", "s3tables")
             .config(c + ".rest.signing-region", REGION)
             .config(c + ".rest.endpoint", endpoint)
             .config(c + ".rest.access-key-id", USER)
             .config(c + ".rest.secret-access-key", PASSWORD))
        if with_s3 and s3_settings:
            b = (b.config(c + ".s3.endpoint", endpoint)
                 .config(c + ".s3.access-key-id", USER)
                 .config(c + ".s3.secret-access-key", PASSWORD)
                 .config(c + ".s3.path-style-access", "true"))
    # Two catalogs sign in with OAuth2 instead (credential=USER:PASSWORD,
    # exchanged at the catalog's token endpoint), one with a wrong password.
    for cat, secret in (("oauth", PASSWORD), ("wrong", "not-" + PASSWORD)):
        c = "spark.sql.catalog." + cat
        b = (b.config(c, "org.apache.iceberg.spark.SparkCatalog")
             .config(c + ".type", "rest")
             .config(c + ".uri", endpoint + "/_iceberg")
             .config(c + ".warehouse", BUCKET)
             .config(c + ".io-impl", "org.apache.iceberg.aws.s3.S3FileIO")
             .config(c + ".credential", USER + ":" + secret))
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class Icesql:
    def __init__(self, binary, work):
        import pymysql
        self.port, self.http_port = free_port(), free_port()
        pwfile = os.path.join(work, "password")
        with open(pwfile, "w") as f:
            f.write(PASSWORD + "\n")
        self.log = open(os.path.join(work, "serve.log"), "w")
        self.wh = os.path.join(work, "wh")
        self.proc = subprocess.Popen([binary, "serve", "--create", "--warehouse", self.wh, "--addr", "127.0.0.1:%d" % self.port,
                                      "--http", "127.0.0.1:%d" % self.http_port, "--bucket", BUCKET, "--s3-locations",
                                      "--user", USER, "--password-file", pwfile],
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
    ap.add_argument("--jar", required=True, help="iceberg-spark-runtime-3.5_2.12 jar")
    ap.add_argument("--aws-jar", help="iceberg-aws-bundle jar (default: ~/.m2, as .ci/run fetches it)")
    args = ap.parse_args()
    bundle = aws_bundle(args.aws_jar)
    if not os.path.exists(bundle):
        print("rest-spark: the iceberg-aws-bundle jar %s is missing (.ci/run fetches it)" % bundle)
        print("rest-spark: 0 passed, 1 failed")
        return 1
    work = tempfile.mkdtemp(prefix="icesql-rest-spark-")
    ice = Icesql(os.path.abspath(args.icesql), work)
    spark = spark_session([args.jar, bundle], ice.http_port, s3_settings=True)
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

    def same(name, spark_q, ice_q=None):
        """Spark's and icesql's answers to one question agree (rows and columns)."""
        def run():
            df = spark.sql(spark_q)
            want = rowset(df.collect())
            got_cur = ice.conn.cursor()
            got_cur.execute(ice_q or spark_q)
            got = rowset(got_cur.fetchall())
            cols = [d[0].lower() for d in got_cur.description]
            got_cur.close()
            assert [c.lower() for c in df.columns] == cols, "columns %s, Spark has %s" % (cols, df.columns)
            assert got == want, diff(want, got)
            assert want, "no rows: the comparison would show nothing"
        check(name, run)

    def step(name, stmt):
        def run():
            spark.sql(stmt)
        check(name, run)

    try:
        # Step 4: a namespace and a table.
        step("create namespace", "CREATE NAMESPACE IF NOT EXISTS aistor.tutorial")
        spark.sql("USE aistor.tutorial")
        step("create customers", """CREATE TABLE customers (customer_id BIGINT, name STRING, country STRING,
            total_purchases DOUBLE) USING iceberg""")
        check("icesql sees the table", lambda: assert_eq(ice.rows("SHOW TABLES FROM tutorial"), (("customers",),)))
        check("location is in the bucket", lambda: assert_prefix(
            spark.sql("DESCRIBE TABLE EXTENDED customers").where("col_name = 'Location'").collect()[0][1], "s3://%s/tutorial/customers" % BUCKET))

        # Step 5: two inserts, two snapshots.
        step("insert 1", """INSERT INTO customers VALUES (1, 'Alice Johnson', 'USA', 1250.00), (2, 'Bob Smith', 'Canada', 850.50),
            (3, 'Carol White', 'UK', 2100.75), (4, 'David Brown', 'Australia', 500.25), (5, 'Emma Davis', 'USA', 1875.00)""")
        same("rows after insert 1", "SELECT * FROM tutorial.customers")
        step("insert 2", """INSERT INTO customers VALUES (6, 'Frank Wilson', 'Germany', 625.00), (7, 'Grace Lee', 'Japan', 1450.25),
            (8, 'Henry Chen', 'China', 990.00)""")
        same("rows after insert 2", "SELECT * FROM tutorial.customers")

        # Step 6: the query.
        same("revenue by country", """SELECT country, COUNT(*) AS customers, ROUND(SUM(total_purchases), 2) AS revenue
            FROM tutorial.customers GROUP BY country ORDER BY revenue DESC""")

        # Schema evolution.
        step("add column", "ALTER TABLE customers ADD COLUMN loyalty_tier STRING")
        same("rows with the new column", "SELECT * FROM tutorial.customers")
        step("update tiers", """UPDATE customers SET loyalty_tier = CASE WHEN total_purchases >= 2000 THEN 'Platinum'
            WHEN total_purchases >= 1000 THEN 'Gold' ELSE 'Silver' END""")
        same("tiers", "SELECT name, total_purchases, loyalty_tier FROM tutorial.customers ORDER BY total_purchases DESC")
        step("rename column", "ALTER TABLE customers RENAME COLUMN total_purchases TO lifetime_value")
        step("reorder column", "ALTER TABLE customers ALTER COLUMN loyalty_tier FIRST")
        same("rows after rename and reorder", "SELECT * FROM tutorial.customers")
        step("drop column", "ALTER TABLE customers DROP COLUMN loyalty_tier")
        same("rows after drop column", "SELECT * FROM tutorial.customers")

        # Partition evolution.
        step("create orders", """CREATE TABLE orders (order_id BIGINT, customer_id BIGINT, product STRING, amount DOUBLE,
            order_date STRING) USING iceberg PARTITIONED BY (order_date)""")
        step("insert orders", """INSERT INTO orders VALUES (1001, 1, 'Laptop', 1200.00, '2024-01-15'), (1002, 2, 'Mouse', 50.00, '2024-01-15'),
            (1003, 1, 'Keyboard', 75.00, '2024-01-16'), (1004, 3, 'Monitor', 350.00, '2024-01-16'),
            (1005, 5, 'Headphones', 150.00, '2024-01-17')""")
        same("orders", "SELECT * FROM tutorial.orders")
        step("add region", "ALTER TABLE orders ADD COLUMN region STRING")
        step("add partition field", "ALTER TABLE orders ADD PARTITION FIELD region")
        step("insert orders 2", """INSERT INTO orders VALUES (1006, 2, 'USB Hub', 30.00, '2024-01-18', 'AMER'),
            (1007, 7, 'Webcam', 80.00, '2024-01-18', 'APAC')""")
        same("orders filtered", "SELECT * FROM tutorial.orders WHERE order_date >= '2024-01-16' ORDER BY order_id")
        def partitions():
            # The partition struct: a Row in Spark, a JSON object over the MySQL wire.
            want = sorted((r[0]["order_date"], r[0]["region"], r[1], r[2]) for r in spark.sql(
                "SELECT partition, record_count, file_count FROM tutorial.orders.partitions").collect())
            got = sorted((json.loads(r[0])["order_date"], json.loads(r[0]).get("region"), r[1], r[2]) for r in ice.rows(
                "SELECT `partition`, record_count, file_count FROM tutorial.orders.partitions"))
            assert_eq(got, want)
            assert_eq(len(want), 5)
        check("orders partitions", partitions)
        check("partition folders in the warehouse", lambda: assert_true(
            glob.glob(os.path.join(ice.wh, "tutorial", "orders", "data", "order_date=2024-01-18", "region=APAC", "*.parquet")),
            "no data file under order_date=2024-01-18/region=APAC"))

        # UPDATE, DELETE, CTAS, MERGE.
        step("update one", "UPDATE customers SET lifetime_value = lifetime_value + 500 WHERE name = 'Alice Johnson'")
        same("rows after update", "SELECT * FROM tutorial.customers")
        before_delete = spark.sql("SELECT snapshot_id FROM aistor.tutorial.customers.snapshots ORDER BY committed_at DESC LIMIT 1").collect()[0][0]
        step("delete", "DELETE FROM customers WHERE country = 'Australia'")
        same("rows after delete", "SELECT * FROM tutorial.customers")
        step("ctas", "CREATE TABLE usa_customers AS SELECT * FROM customers WHERE country = 'USA'")
        same("ctas rows", "SELECT * FROM tutorial.usa_customers")
        step("merge", """MERGE INTO customers t USING (SELECT * FROM VALUES (2, 'Bob Smith', 'Canada', 1100.00), (9, 'Ivy Park', 'Korea', 300.00)
            AS s(customer_id, name, country, lifetime_value)) s ON t.customer_id = s.customer_id
            WHEN MATCHED THEN UPDATE SET t.lifetime_value = s.lifetime_value WHEN NOT MATCHED THEN INSERT *""")
        same("rows after merge", "SELECT * FROM tutorial.customers")

        # Time travel, snapshots, history.
        same("snapshots", "SELECT committed_at, snapshot_id, operation FROM tutorial.customers.snapshots")
        first_id, first_ts = spark.sql("SELECT snapshot_id, committed_at FROM aistor.tutorial.customers.snapshots ORDER BY committed_at LIMIT 1").collect()[0]
        same("version as of the first snapshot", "SELECT * FROM tutorial.customers VERSION AS OF %d" % first_id)
        ts = first_ts.strftime("%Y-%m-%d %H:%M:%S.%f")
        same("timestamp as of the first snapshot", "SELECT * FROM tutorial.customers TIMESTAMP AS OF '%s'" % ts)
        same("files", "SELECT file_path, record_count, file_size_in_bytes FROM tutorial.customers.files")
        same("history", "SELECT made_current_at, snapshot_id, parent_id, is_current_ancestor FROM tutorial.customers.history")

        # Rollback.
        step("rollback", "CALL aistor.system.rollback_to_snapshot('tutorial.customers', %d)" % before_delete)
        same("rows after rollback", "SELECT * FROM tutorial.customers")
        same("history after rollback", "SELECT made_current_at, snapshot_id, parent_id, is_current_ancestor FROM tutorial.customers.history")

        # The S3 endpoint and keys the catalog hands out are enough.
        check("a catalog without s3 settings reads through the handed-out endpoint", lambda: assert_eq(
            rowset(spark.sql("SELECT * FROM bare.tutorial.orders").collect()),
            rowset(ice.rows("SELECT * FROM tutorial.orders"))))
        check("a catalog without s3 settings writes through the handed-out endpoint", lambda: (
            spark.sql("INSERT INTO bare.tutorial.orders VALUES (1008, 9, 'Cable', 9.5, '2024-01-19', 'EMEA')"),
            assert_eq(ice.rows("SELECT product FROM tutorial.orders WHERE order_id = 1008"), (("Cable",),))))

        # OAuth2: a token for the account's credentials reads and writes;
        # a wrong password gets no token.
        check("a catalog signed in with OAuth2 reads", lambda: assert_eq(
            rowset(spark.sql("SELECT * FROM oauth.tutorial.orders").collect()),
            rowset(ice.rows("SELECT * FROM tutorial.orders"))))
        check("a catalog signed in with OAuth2 writes", lambda: (
            spark.sql("INSERT INTO oauth.tutorial.orders VALUES (1009, 9, 'Charger', 19.5, '2024-01-20', 'EMEA')"),
            assert_eq(ice.rows("SELECT product FROM tutorial.orders WHERE order_id = 1009"), (("Charger",),))))

        def wrong_password():
            try:
                spark.sql("SHOW NAMESPACES IN wrong").collect()
            except Exception as e:
                assert "NotAuthorizedException" in str(e) and "invalid_client" in str(e), "refused, but not as the spec says: %s" % e
                return
            raise AssertionError("a catalog with a wrong password was admitted")
        check("a wrong password gets no token", wrong_password)

        # icesql's own writes (SQL over the MySQL wire, procedures) name their
        # files s3://BUCKET/..., so Spark with only S3FileIO reads them.
        def ice_exec(q):
            with ice.conn.cursor() as c:
                c.execute(q)

        def spark_reads(name, table, ice_q=None):
            def run():
                for cat in ("aistor", "bare"):
                    spark.sql("REFRESH TABLE %s.tutorial.%s" % (cat, table))
                    want = rowset(ice.rows(ice_q or "SELECT * FROM tutorial." + table))
                    got = rowset(spark.sql("SELECT * FROM %s.tutorial.%s" % (cat, table)).collect())
                    assert got == want, "%s: %s" % (cat, diff(want, got))
                    assert want, "no rows: the comparison would show nothing"
            check(name, run)

        def bucket_named(table):
            names = [r[0] for r in ice.rows("SELECT file_path FROM tutorial.%s.files" % table)]
            names += [r[0] for r in ice.rows("SELECT path FROM tutorial.%s.manifests" % table)]
            return names

        check("icesql inserts into Spark's table", lambda: ice_exec(
            "INSERT INTO tutorial.customers (customer_id, name, country, lifetime_value) VALUES (10, 'Jack Ma', 'China', 720.0)"))
        spark_reads("Spark reads icesql's insert", "customers")
        check("icesql's files in Spark's table are named in the bucket", lambda: assert_true(
            any(r[0].startswith("s3://%s/tutorial/customers/" % BUCKET) for r in ice.rows(
                "SELECT file_path FROM tutorial.customers.files WHERE record_count = 1")) and
            all(p.startswith("s3://%s/" % BUCKET) for p in bucket_named("customers")),
            "file names: %r" % bucket_named("customers")))
        check("icesql creates a table and writes it", lambda: [ice_exec(q) for q in (
            "CREATE TABLE tutorial.ice_made (id BIGINT, v VARCHAR(20)) TBLPROPERTIES ('write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')",
            "INSERT INTO tutorial.ice_made VALUES (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four')",
            "INSERT INTO tutorial.ice_made VALUES (5, 'five')",
            "DELETE FROM tutorial.ice_made WHERE id = 2",
            "UPDATE tutorial.ice_made SET v = 'FOUR' WHERE id = 4")])
        check("icesql's delete files are named in the bucket", lambda: assert_true(
            ice.rows("SELECT COUNT(*) FROM tutorial.ice_made.delete_files")[0][0] > 0 and
            all(p.startswith("s3://%s/tutorial/ice_made/" % BUCKET) for p in bucket_named("ice_made")) and
            all(r[0].startswith("s3://%s/tutorial/ice_made/metadata/" % BUCKET) for r in ice.rows(
                "SELECT manifest_list FROM tutorial.ice_made.snapshots")),
            "file names: %r" % bucket_named("ice_made")))
        spark_reads("Spark reads icesql's table with its deletes", "ice_made")
        check("icesql compacts its table", lambda: ice_exec("CALL system.rewrite_data_files(table => 'tutorial.ice_made', options => map('rewrite-all', 'true'))"))
        spark_reads("Spark reads the compacted table", "ice_made")
        check("Spark appends to icesql's table", lambda: spark.sql("INSERT INTO bare.tutorial.ice_made VALUES (6, 'six')"))
        spark_reads("both writers' rows", "ice_made")

        # Maintenance takes the bucket's names for the folder's files: no
        # file a snapshot names is an orphan, and expiry keeps what is live.
        def no_live_orphans():
            live = set()
            for t in ("customers", "ice_made"):
                for q in ("SELECT file_path FROM aistor.tutorial.%s.all_files" % t, "SELECT path FROM aistor.tutorial.%s.all_manifests" % t,
                          "SELECT manifest_list FROM aistor.tutorial.%s.snapshots" % t):
                    live.update("file://" + os.path.join(ice.wh, r[0].split("s3://%s/" % BUCKET, 1)[1]) for r in spark.sql(q).collect())
                orphans = {r[0] for r in ice.rows(
                    "CALL system.remove_orphan_files(table => 'tutorial.%s', older_than => TIMESTAMP '2999-01-01 00:00:00', dry_run => true)" % t)}
                assert not orphans & live, "%s: files its snapshots name listed as orphans: %s" % (t, sorted(orphans & live))
        check("no live file is an orphan", no_live_orphans)
        check("icesql expires Spark's snapshots", lambda: ice_exec(
            "CALL system.expire_snapshots(table => 'tutorial.customers', older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)"))
        spark_reads("Spark reads the table after expiry", "customers")

        # Every file Spark wrote is in the warehouse folder, none elsewhere.
        check("files are in the warehouse folder", lambda: assert_true(
            all(os.path.exists(os.path.join(ice.wh, r[0].split("s3://%s/" % BUCKET, 1)[1]))
                for r in spark.sql("SELECT file_path FROM aistor.tutorial.customers.files").collect()),
            "a data file is missing from the folder"))
    finally:
        spark.stop()
        ice.close()
        if not failed:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("work folder kept: %s" % work)
    print("rest-spark: %d passed, %d failed" % (passed, len(failed)))
    return 1 if failed else 0


def assert_eq(got, want):
    assert got == want, "got %r, want %r" % (got, want)


def assert_prefix(got, prefix):
    assert got.startswith(prefix), "%r does not start with %r" % (got, prefix)


def assert_true(v, msg):
    assert v, msg


if __name__ == "__main__":
    sys.exit(main())
