"""Runs clients/script.json through a Python MySQL client, as `make clients` does.

Usage: python_clients.py CLIENT HOST:PORT SCRIPT, CLIENT one of
  pymysql           PyMySQL (parameters interpolated by the driver)
  mysqlclient       mysqlclient (MySQLdb, the C client library)
  connector-python  MySQL Connector/Python with prepared=True (server-side prepares)
  sqlalchemy        SQLAlchemy over PyMySQL: the script through exec_driver_sql, then
                    reflection (no warnings), engine.begin() rollback, pandas to_sql/read_sql
Prints one line per check: "ok CLIENT: check" or "FAIL CLIENT: check: why".
"""

import datetime
import decimal
import json
import sys
import warnings


def text(v):
    """A value as the script writes it."""
    if v is None:
        return None
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8")
    if isinstance(v, float):
        return repr(v) if v != int(v) else str(int(v))
    if isinstance(v, datetime.datetime):
        return v.isoformat(" ")
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v)
    return str(v)


def is_query(sql):
    return sql.strip().split(" ", 1)[0].upper() in ("SELECT", "SHOW", "DESCRIBE", "DESC", "WITH")


class Runner:
    def __init__(self, name):
        self.name = name
        self.passed = 0
        self.failed = 0

    def report(self, check, err):
        if err is None:
            print(f"ok {self.name}: {check}")
            self.passed += 1
        else:
            print(f"FAIL {self.name}: {check}: {err}")
            self.failed += 1
        sys.stdout.flush()

    def check(self, check, fn):
        try:
            self.report(check, fn())
        except Exception as e:  # a check that raises failed; the next one runs
            self.report(check, f"{type(e).__name__}: {e}")


def compare(step, got, db):
    if "contains" in step:
        if any(v is not None and step["contains"] in v for r in got for v in r):
            return None
        return f"no value contains {step['contains']!r}: {got}"
    if "rows" not in step:
        return None
    if "cols" in step:
        got = [[r[c] if c < len(r) else None for c in step["cols"]] for r in got]
    want = [[None if v is None else v.replace("{db}", db) for v in r] for r in step["rows"]]
    if got != want:
        return f"got {got}, want {want}"
    return None


def error_number(e):
    if hasattr(e, "errno") and isinstance(e.errno, int):
        return e.errno
    if getattr(e, "args", None) and isinstance(e.args[0], int):
        return e.args[0]
    orig = getattr(e, "orig", None)  # SQLAlchemy wraps the driver's error
    return error_number(orig) if orig is not None else None


def run_script(runner, steps, db, execute, tx):
    """execute(sql, params, want_rows) -> (rows or None, affected); tx(op)."""
    for step in steps:
        def one(step=step):
            if "tx" in step:
                tx(step["tx"])
                return None
            sql = step["sql"].replace("{db}", db)
            want_rows = "rows" in step or "contains" in step or is_query(sql)
            try:
                rows, affected = execute(sql, step.get("params"), want_rows)
            except Exception as e:
                if "error" in step and error_number(e) == step["error"]:
                    return None
                raise
            if "error" in step:
                return f"want error {step['error']}, got success"
            if "affected" in step and affected != step["affected"]:
                return f"{affected} rows affected, want {step['affected']}"
            if rows is not None:
                return compare(step, [[text(v) for v in r] for r in rows], db)
            return None
        runner.check(step["name"], one)


def dbapi_client(name, addr, steps):
    # PEP 249 drivers start with autocommit off; the script starts in
    # autocommit as the other clients do, and turns it off in its own steps.
    host, port = addr.rsplit(":", 1)
    port = int(port)
    runner = Runner(name)
    if name == "pymysql":
        import pymysql
        conn = pymysql.connect(host=host, port=port, user="root", password="", autocommit=True)
        style = "format"
    elif name == "mysqlclient":
        import MySQLdb
        conn = MySQLdb.connect(host=host, port=port, user="root", passwd="", autocommit=True)
        style = "format"
    else:
        import mysql.connector
        conn = mysql.connector.connect(host=host, port=port, user="root", password="", use_pure=True, autocommit=True)
        style = "qmark"
    db = "clients_" + name.replace("-", "_")

    def cursor():
        if name == "connector-python":
            return conn.cursor(prepared=True)
        return conn.cursor()

    def execute(sql, params, want_rows):
        cur = cursor()
        try:
            if params is not None and style == "format":
                sql = sql.replace("%", "%%").replace("?", "%s")
            if params is None:
                cur.execute(sql)
            else:
                cur.execute(sql, tuple(params))
            rows = list(cur.fetchall()) if want_rows else None
            return rows, cur.rowcount
        finally:
            cur.close()

    def tx(op):
        if op == "begin":
            if name == "connector-python":
                conn.start_transaction()
            else:
                conn.begin()
        elif op == "commit":
            conn.commit()
        elif op == "rollback":
            conn.rollback()
        elif op in ("autocommit_off", "autocommit_on"):
            on = op == "autocommit_on"
            if name == "connector-python":
                conn.autocommit = on
            else:
                conn.autocommit(on)
        else:
            raise ValueError(f"unknown tx {op}")

    run_script(runner, steps, db, execute, tx)
    conn.close()
    return runner


def sqlalchemy_client(addr, steps):
    import pandas
    import sqlalchemy
    from sqlalchemy import inspect, text as sqltext

    runner = Runner("sqlalchemy")
    db = "clients_sqlalchemy"
    url = f"mysql+pymysql://root@{addr}"
    engine = sqlalchemy.create_engine(url)
    # One session for the script, in autocommit as the other clients start;
    # its tx steps drive the DB-API connection underneath.
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        raw = conn.connection.dbapi_connection

        def execute(sql, params, want_rows):
            if params is not None:
                sql = sql.replace("%", "%%").replace("?", "%s")
            result = conn.exec_driver_sql(sql, tuple(params) if params is not None else ())
            rows = [tuple(r) for r in result.fetchall()] if want_rows else None
            return rows, result.rowcount

        def tx(op):
            if op == "begin":
                raw.begin()
            elif op == "commit":
                raw.commit()
            elif op == "rollback":
                raw.rollback()
            elif op in ("autocommit_off", "autocommit_on"):
                raw.autocommit(op == "autocommit_on")
            else:
                raise ValueError(f"unknown tx {op}")

        run_script(runner, steps, db, execute, tx)

    # What SQLAlchemy users do with a database: reflect it, write in a
    # transaction that rolls back, move DataFrames.
    with engine.begin() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE {db}")
        conn.exec_driver_sql(f"CREATE TABLE {db}.accounts (id BIGINT NOT NULL, name VARCHAR(40), amount DECIMAL(10,2), PRIMARY KEY (id), KEY by_name (name)) COMMENT 'it''s reflected' TBLPROPERTIES ('owner' = 'o''brien')")
        conn.exec_driver_sql(f"INSERT INTO {db}.accounts VALUES (1, 'alice', 12.50)")
        conn.exec_driver_sql(f"CREATE TABLE {db}.payments (id BIGINT NOT NULL PRIMARY KEY, paid_from BIGINT, CONSTRAINT paid_by FOREIGN KEY (paid_from) REFERENCES accounts (id))")
    engine = sqlalchemy.create_engine(f"{url}/{db}")
    insp = inspect(engine)

    def reflected(fn):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = fn()
        if caught:
            raise AssertionError("warned: " + "; ".join(str(w.message) for w in caught))
        return got

    def expect(got, want):
        return None if got == want else f"got {got!r}, want {want!r}"

    runner.check("reflection: get_table_names", lambda: expect(reflected(insp.get_table_names), ["accounts", "payments"]))
    runner.check("reflection: get_columns", lambda: expect(
        [(c["name"], str(c["type"]), c["nullable"]) for c in reflected(lambda: insp.get_columns("accounts"))],
        [("id", "BIGINT", False), ("name", "VARCHAR(40)", True), ("amount", "DECIMAL(10, 2)", True)]))
    runner.check("reflection: get_pk_constraint", lambda: expect(
        reflected(lambda: insp.get_pk_constraint("accounts"))["constrained_columns"], ["id"]))
    runner.check("reflection: get_indexes", lambda: expect(
        [(i["name"], i["column_names"], i["unique"]) for i in reflected(lambda: insp.get_indexes("accounts"))],
        [("by_name", ["name"], False)]))
    runner.check("reflection: get_foreign_keys", lambda: expect(
        [(f["name"], f["constrained_columns"], f["referred_table"], f["referred_columns"])
         for f in reflected(lambda: insp.get_foreign_keys("payments"))],
        [("paid_by", ["paid_from"], "accounts", ["id"])]))
    runner.check("reflection: get_table_comment", lambda: expect(
        reflected(lambda: insp.get_table_comment("accounts"))["text"], "it's reflected"))

    def table_reflects():
        meta = sqlalchemy.MetaData()
        t = reflected(lambda: sqlalchemy.Table("accounts", meta, autoload_with=engine))
        return expect([c.name for c in t.primary_key.columns], ["id"])
    runner.check("reflection: Table(autoload_with=engine)", table_reflects)

    def layout_reflects():
        with engine.begin() as conn:
            conn.exec_driver_sql("CREATE TABLE events (id BIGINT NOT NULL, at DATETIME(6), kind VARCHAR(10), PRIMARY KEY (id)) "
                                 "PARTITIONED BY (days(at), kind) WRITE ORDERED BY id COMMENT 'laid out' "
                                 "TBLPROPERTIES ('write.parquet.compression-codec' = 'zstd')")
        t = reflected(lambda: sqlalchemy.Table("events", sqlalchemy.MetaData(), autoload_with=engine))
        return expect(([c.name for c in t.columns], [c.name for c in t.primary_key.columns], t.comment),
                      (["id", "at", "kind"], ["id"], "laid out"))
    runner.check("reflection of a partitioned, sorted table", layout_reflects)

    def executemany():
        events = sqlalchemy.Table("events", sqlalchemy.MetaData(), autoload_with=engine)
        with engine.begin() as conn:
            conn.execute(events.insert(), [{"id": i, "at": datetime.datetime(2024, 1, i, 12, 30), "kind": k}
                                           for i, k in ((1, "a"), (2, "b"), (3, "a"))])
        with engine.connect() as conn:
            got = conn.execute(sqlalchemy.select(events.c.kind, sqlalchemy.func.count()).group_by(events.c.kind)
                               .order_by(events.c.kind)).all()
        return expect([tuple(r) for r in got], [("a", 2), ("b", 1)])
    runner.check("Core insert of many rows (executemany)", executemany)

    def begin_rolls_back():
        class Boom(Exception):
            pass
        try:
            with engine.begin() as conn:
                conn.execute(sqltext("INSERT INTO accounts (id, name) VALUES (:id, :name)"), {"id": 2, "name": "temp"})
                n = conn.execute(sqltext("SELECT COUNT(*) FROM accounts")).scalar()
                if n != 2:
                    return f"inside the transaction {n} rows, want 2"
                raise Boom()
        except Boom:
            pass
        with engine.connect() as conn:
            n = conn.execute(sqltext("SELECT COUNT(*) FROM accounts")).scalar()
        return expect(n, 1)
    runner.check("engine.begin() rolls back on an exception", begin_rolls_back)

    def begin_commits():
        with engine.begin() as conn:
            conn.execute(sqltext("UPDATE accounts SET amount = :a WHERE id = :id"), {"a": decimal.Decimal("13.75"), "id": 1})
        with engine.connect() as conn:
            return expect(conn.execute(sqltext("SELECT amount FROM accounts WHERE id = 1")).scalar(), decimal.Decimal("13.75"))
    runner.check("engine.begin() commits", begin_commits)

    def to_sql_read_sql():
        frame = pandas.DataFrame({"id": [1, 2, 3], "city": ["Oslo", "Zoë's", None], "temp": [1.5, -2.25, 3.0],
                                  "day": pandas.to_datetime(["2024-01-01", "2024-01-02", "2024-01-03"])})
        frame.to_sql("weather", engine, index=False, if_exists="replace")
        back = pandas.read_sql("SELECT * FROM weather ORDER BY id", engine)
        got = [(int(r.id), r.city if isinstance(r.city, str) else None, float(r.temp), str(r.day)[:10]) for r in back.itertuples()]
        return expect(got, [(1, "Oslo", 1.5, "2024-01-01"), (2, "Zoë's", -2.25, "2024-01-02"), (3, None, 3.0, "2024-01-03")])
    runner.check("pandas to_sql then read_sql", to_sql_read_sql)

    def to_sql_multi():
        frame = pandas.DataFrame({"n": list(range(7)), "s": [f"row {i}" for i in range(7)]})
        frame.to_sql("multi", engine, index=False, if_exists="replace", method="multi", chunksize=3)
        back = pandas.read_sql("SELECT n, s FROM multi ORDER BY n", engine)
        return expect([(int(r.n), r.s) for r in back.itertuples()], [(i, f"row {i}") for i in range(7)])
    runner.check("pandas to_sql method=multi in chunks", to_sql_multi)

    def to_sql_append():
        pandas.DataFrame({"id": [4], "city": ["Lima"], "temp": [20.5], "day": pandas.to_datetime(["2024-01-04"])}).to_sql(
            "weather", engine, index=False, if_exists="append")
        back = pandas.read_sql(sqltext("SELECT city FROM weather WHERE temp > :t ORDER BY id"), engine, params={"t": 2})
        return expect([c if isinstance(c, str) else None for c in back.city], [None, "Lima"])
    runner.check("pandas to_sql append, read_sql with a parameter", to_sql_append)

    with engine.connect() as conn:
        conn.exec_driver_sql(f"DROP DATABASE {db}")
    engine.dispose()
    return runner


def main():
    name, addr, script = sys.argv[1:4]
    with open(script, encoding="utf-8") as f:
        steps = json.load(f)["steps"]
    if name == "sqlalchemy":
        sqlalchemy_client(addr, steps)
    else:
        dbapi_client(name, addr, steps)


if __name__ == "__main__":
    main()
