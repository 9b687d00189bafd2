// Runs clients/script.json through MySQL Connector/J, as `make clients`
// does: every statement as a PreparedStatement prepared on the server
// (useServerPrepStmts=true), then DatabaseMetaData's getTables, getColumns,
// getPrimaryKeys and getIndexInfo, answered from SHOW statements (the
// default) and from information_schema (useInformationSchema=true).
// Usage: java -cp ...:mysql-connector-j.jar:gson.jar ConnectorJ HOST:PORT SCRIPT
// Prints one line per check: "ok connector-j: check" or "FAIL connector-j: check: why".

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;

public class ConnectorJ {
  static final String NAME = "connector-j";

  public static void main(String[] args) throws Exception {
    String addr = args[0];
    JsonObject script = new Gson().fromJson(Files.readString(Path.of(args[1])), JsonObject.class);
    String url = "jdbc:mysql://" + addr + "/?user=root&useServerPrepStmts=true&useSSL=false&allowPublicKeyRetrieval=true";
    String db = "clients_connector_j";
    try (Connection conn = DriverManager.getConnection(url)) {
      for (JsonElement e : script.getAsJsonArray("steps")) {
        JsonObject step = e.getAsJsonObject();
        check(step.get("name").getAsString(), () -> runStep(conn, step, db));
      }
    }
    for (boolean infoSchema : new boolean[] {false, true}) {
      metadata(url + "&useInformationSchema=" + infoSchema, infoSchema ? "information_schema" : "SHOW");
    }
  }

  static void check(String name, Callable<String> c) {
    String err;
    try {
      err = c.call();
    } catch (Exception e) {
      err = e.getClass().getSimpleName() + ": " + e.getMessage();
    }
    System.out.println(err == null ? "ok " + NAME + ": " + name : "FAIL " + NAME + ": " + name + ": " + err);
  }

  static boolean isQuery(String sql) {
    String first = sql.trim().split(" ", 2)[0].toUpperCase();
    return Arrays.asList("SELECT", "SHOW", "DESCRIBE", "DESC", "WITH").contains(first);
  }

  // begun: a transaction the script began (not autocommit off), which
  // COMMIT or ROLLBACK ends by going back to autocommit.
  static boolean begun = false;

  static String runStep(Connection conn, JsonObject step, String db) throws SQLException {
    if (step.has("tx")) {
      String op = step.get("tx").getAsString();
      switch (op) {
        case "begin":
          conn.setAutoCommit(false);
          begun = true;
          return null;
        case "commit":
        case "rollback":
          if (op.equals("commit")) {
            conn.commit();
          } else {
            conn.rollback();
          }
          if (begun) {
            conn.setAutoCommit(true);
            begun = false;
          }
          return null;
        case "autocommit_off":
        case "autocommit_on":
          conn.setAutoCommit(op.equals("autocommit_on"));
          return null;
        default:
          return "unknown tx " + op;
      }
    }
    String sql = step.get("sql").getAsString().replace("{db}", db);
    boolean wantRows = step.has("rows") || step.has("contains") || isQuery(sql);
    try (PreparedStatement ps = conn.prepareStatement(sql)) {
      if (step.has("params")) {
        JsonArray params = step.getAsJsonArray("params");
        for (int i = 0; i < params.size(); i++) {
          JsonElement p = params.get(i);
          if (p.isJsonNull()) {
            ps.setNull(i + 1, java.sql.Types.VARCHAR);
          } else if (p.getAsJsonPrimitive().isString()) {
            ps.setString(i + 1, p.getAsString());
          } else if (p.getAsJsonPrimitive().isNumber()) {
            double d = p.getAsDouble();
            if (d == Math.rint(d) && !p.getAsString().contains(".")) {
              ps.setLong(i + 1, p.getAsLong());
            } else {
              ps.setDouble(i + 1, d);
            }
          } else {
            ps.setObject(i + 1, p.getAsString());
          }
        }
      }
      List<List<String>> rows = null;
      long affected = -1;
      try {
        if (wantRows) {
          rows = new ArrayList<>();
          try (ResultSet rs = ps.executeQuery()) {
            int n = rs.getMetaData().getColumnCount();
            while (rs.next()) {
              List<String> row = new ArrayList<>();
              for (int i = 1; i <= n; i++) {
                row.add(rs.getString(i));
              }
              rows.add(row);
            }
          }
        } else {
          affected = ps.executeUpdate();
        }
      } catch (SQLException e) {
        if (step.has("error") && e.getErrorCode() == step.get("error").getAsInt()) {
          return null;
        }
        throw e;
      }
      if (step.has("error")) {
        return "want error " + step.get("error") + ", got success";
      }
      if (step.has("affected") && affected != step.get("affected").getAsLong()) {
        return affected + " rows affected, want " + step.get("affected");
      }
      return rows == null ? null : compare(step, rows, db);
    }
  }

  static String compare(JsonObject step, List<List<String>> got, String db) {
    if (step.has("contains")) {
      String want = step.get("contains").getAsString();
      for (List<String> r : got) {
        for (String v : r) {
          if (v != null && v.contains(want)) {
            return null;
          }
        }
      }
      return "no value contains " + want + ": " + got;
    }
    if (!step.has("rows")) {
      return null;
    }
    if (step.has("cols")) {
      List<List<String>> picked = new ArrayList<>();
      for (List<String> r : got) {
        List<String> p = new ArrayList<>();
        for (JsonElement c : step.getAsJsonArray("cols")) {
          int i = c.getAsInt();
          p.add(i < r.size() ? r.get(i) : null);
        }
        picked.add(p);
      }
      got = picked;
    }
    List<List<String>> want = new ArrayList<>();
    for (JsonElement r : step.getAsJsonArray("rows")) {
      List<String> row = new ArrayList<>();
      for (JsonElement v : r.getAsJsonArray()) {
        row.add(v.isJsonNull() ? null : v.getAsString().replace("{db}", db));
      }
      want.add(row);
    }
    return got.equals(want) ? null : "got " + got + ", want " + want;
  }

  // metadata checks DatabaseMetaData on a table with a primary key and an index.
  static void metadata(String url, String how) throws SQLException {
    String db = "clients_connector_j_meta";
    try (Connection conn = DriverManager.getConnection(url)) {
      try (var st = conn.createStatement()) {
        st.execute("CREATE DATABASE " + db);
        st.execute("CREATE TABLE " + db + ".accounts (id BIGINT NOT NULL, name VARCHAR(40), amount DECIMAL(10,2), PRIMARY KEY (id), KEY by_name (name))");
        st.execute("CREATE TABLE " + db + ".events (acct BIGINT, kind VARCHAR(10), CONSTRAINT for_account FOREIGN KEY (acct) REFERENCES " + db + ".accounts (id))");
      }
      DatabaseMetaData md = conn.getMetaData();
      check("DatabaseMetaData (" + how + "): getTables", () -> expect(
          column(md.getTables(db, null, "%", new String[] {"TABLE"}), "TABLE_NAME", "TABLE_TYPE"),
          List.of(List.of("accounts", "TABLE"), List.of("events", "TABLE"))));
      check("DatabaseMetaData (" + how + "): getColumns", () -> expect(
          column(md.getColumns(db, null, "accounts", "%"), "COLUMN_NAME", "TYPE_NAME", "NULLABLE", "ORDINAL_POSITION"),
          List.of(List.of("id", "BIGINT", "0", "1"), List.of("name", "VARCHAR", "1", "2"), List.of("amount", "DECIMAL", "1", "3"))));
      check("DatabaseMetaData (" + how + "): getColumns sizes", () -> expect(
          column(md.getColumns(db, null, "accounts", "amount"), "COLUMN_SIZE", "DECIMAL_DIGITS"),
          List.of(List.of("10", "2"))));
      check("DatabaseMetaData (" + how + "): getCatalogs lists the database", () -> {
        List<List<String>> cats = column(md.getCatalogs(), "TABLE_CAT");
        return cats.contains(List.of(db)) ? null : "no " + db + " in " + cats;
      });
      check("DatabaseMetaData (" + how + "): getPrimaryKeys", () -> expect(
          column(md.getPrimaryKeys(db, null, "accounts"), "COLUMN_NAME", "KEY_SEQ", "PK_NAME"),
          List.of(List.of("id", "1", "PRIMARY"))));
      check("DatabaseMetaData (" + how + "): getPrimaryKeys of a table without one", () -> expect(
          column(md.getPrimaryKeys(db, null, "events"), "COLUMN_NAME"), List.of()));
      check("DatabaseMetaData (" + how + "): getIndexInfo", () -> expect(
          column(md.getIndexInfo(db, null, "accounts", false, false), "INDEX_NAME", "COLUMN_NAME", "NON_UNIQUE", "ORDINAL_POSITION"),
          List.of(List.of("PRIMARY", "id", "false", "1"), List.of("by_name", "name", "true", "1"))));
      check("DatabaseMetaData (" + how + "): getIndexInfo unique only", () -> expect(
          column(md.getIndexInfo(db, null, "accounts", true, false), "INDEX_NAME"),
          List.of(List.of("PRIMARY"))));
      if (how.equals("SHOW")) { // from information_schema it needs REFERENTIAL_CONSTRAINTS, which icesql leaves empty
        check("DatabaseMetaData (" + how + "): getImportedKeys", () -> expect(
            column(md.getImportedKeys(db, null, "events"), "PKTABLE_NAME", "PKCOLUMN_NAME", "FKTABLE_NAME", "FKCOLUMN_NAME", "FK_NAME"),
            List.of(List.of("accounts", "id", "events", "acct", "for_account"))));
      }
      try (var st = conn.createStatement()) {
        st.execute("DROP DATABASE " + db);
      }
    }
  }

  static List<List<String>> column(ResultSet rs, String... names) throws SQLException {
    List<List<String>> out = new ArrayList<>();
    try (rs) {
      while (rs.next()) {
        List<String> row = new ArrayList<>();
        for (String n : names) {
          // JDBC types NON_UNIQUE as boolean; drivers may hand it over as a number.
          row.add(n.equals("NON_UNIQUE") ? String.valueOf(rs.getBoolean(n)) : rs.getString(n));
        }
        out.add(row);
      }
    }
    return out;
  }

  static String expect(Object got, Object want) {
    return Objects.equals(got, want) ? null : "got " + got + ", want " + want;
  }
}
