// Command goclient runs clients/script.json through go-sql-driver/mysql,
// as `make clients` does: with server-side prepared statements
// (-mode prepared: every statement with parameters is prepared on the
// server, COM_STMT_PREPARE and COM_STMT_EXECUTE) or with the driver
// interpolating the parameters into the text (-mode interpolate). It
// prints one line per step, "ok NAME: step" or "FAIL NAME: step: why".
package main

import (
	"context"
	gosql "database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

type step struct {
	Name     string      `json:"name"`
	SQL      string      `json:"sql"`
	Params   []any       `json:"params"`
	Tx       string      `json:"tx"`
	Error    int         `json:"error"`
	Affected *int64      `json:"affected"`
	Rows     [][]*string `json:"rows"`
	Cols     []int       `json:"cols"`
	Contains string      `json:"contains"`
}

// executor is what a step runs on: the connection, or the open transaction.
type executor interface {
	ExecContext(ctx context.Context, query string, args ...any) (gosql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*gosql.Rows, error)
	PrepareContext(ctx context.Context, query string) (*gosql.Stmt, error)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:3306", "icesql's MySQL address")
	script := flag.String("script", "clients/script.json", "the shared script")
	mode := flag.String("mode", "prepared", "prepared (server-side prepares) or interpolate (interpolateParams=true)")
	flag.Parse()
	name := "go-sql-driver-" + *mode
	if err := run(*addr, *script, *mode, name); err != nil {
		fmt.Printf("FAIL %s: the client: %v\n", name, err)
		os.Exit(1)
	}
}

func run(addr, script, mode, name string) error {
	data, err := os.ReadFile(script)
	if err != nil {
		return err
	}
	var s struct{ Steps []step }
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("%s: %w", script, err)
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "tcp", addr
	cfg.InterpolateParams = mode == "interpolate"
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := gosql.OpenDB(connector)
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conn, err := db.Conn(ctx) // one session: USE and transactions hold on it
	if err != nil {
		return err
	}
	defer conn.Close()
	database := "clients_go_" + mode
	var tx *gosql.Tx
	for _, st := range s.Steps {
		var ex executor = conn
		if tx != nil {
			ex = tx
		}
		err := runStep(ctx, conn, ex, &tx, st, database, mode == "prepared")
		if err != nil {
			fmt.Printf("FAIL %s: %s: %v\n", name, st.Name, err)
		} else {
			fmt.Printf("ok %s: %s\n", name, st.Name)
		}
	}
	return nil
}

func runStep(ctx context.Context, conn *gosql.Conn, ex executor, tx **gosql.Tx, st step, database string, prepare bool) error {
	switch st.Tx {
	case "":
	case "begin":
		t, err := conn.BeginTx(ctx, nil)
		*tx = t
		return err
	case "commit", "rollback":
		if *tx == nil { // under autocommit off
			_, err := conn.ExecContext(ctx, strings.ToUpper(st.Tx))
			return err
		}
		t := *tx
		*tx = nil
		if st.Tx == "commit" {
			return t.Commit()
		}
		return t.Rollback()
	case "autocommit_off", "autocommit_on":
		_, err := conn.ExecContext(ctx, "SET autocommit = "+map[string]string{"autocommit_off": "0", "autocommit_on": "1"}[st.Tx])
		return err
	default:
		return fmt.Errorf("unknown tx %q", st.Tx)
	}
	query := strings.ReplaceAll(st.SQL, "{db}", database)
	args := st.Params
	for i, a := range args {
		if f, ok := a.(float64); ok && f == float64(int64(f)) {
			args[i] = int64(f) // JSON numbers: integers go as integers
		}
	}
	wantsRows := st.Rows != nil || st.Contains != "" || isQuery(query)
	var (
		rows   *gosql.Rows
		result gosql.Result
		err    error
	)
	if prepare && len(args) > 0 {
		var stmt *gosql.Stmt
		if stmt, err = ex.PrepareContext(ctx, query); err == nil {
			defer stmt.Close()
			if wantsRows {
				rows, err = stmt.QueryContext(ctx, args...)
			} else {
				result, err = stmt.ExecContext(ctx, args...)
			}
		}
	} else if wantsRows {
		rows, err = ex.QueryContext(ctx, query, args...)
	} else {
		result, err = ex.ExecContext(ctx, query, args...)
	}
	if st.Error != 0 {
		var me *mysql.MySQLError
		if errors.As(err, &me) && int(me.Number) == st.Error {
			return nil
		}
		if rows != nil {
			rows.Close()
		}
		return fmt.Errorf("want error %d, got %v", st.Error, err)
	}
	if err != nil {
		return err
	}
	if rows == nil {
		if st.Affected != nil {
			n, err := result.RowsAffected()
			if err != nil || n != *st.Affected {
				return fmt.Errorf("%d rows affected (%v), want %d", n, err, *st.Affected)
			}
		}
		return nil
	}
	defer rows.Close()
	got, err := texts(rows)
	if err != nil {
		return err
	}
	return check(st, got, database)
}

func isQuery(q string) bool {
	first, _, _ := strings.Cut(strings.TrimSpace(q), " ")
	switch strings.ToUpper(first) {
	case "SELECT", "SHOW", "DESCRIBE", "DESC", "WITH":
		return true
	}
	return false
}

// texts reads every row, each value as the script writes it.
func texts(rows *gosql.Rows) ([][]*string, error) {
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]*string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]*string, len(cols))
		for i, v := range vals {
			row[i] = text(v)
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

func text(v any) *string {
	var s string
	switch v := v.(type) {
	case nil:
		return nil
	case []byte:
		s = string(v)
	case int64:
		s = strconv.FormatInt(v, 10)
	case uint64:
		s = strconv.FormatUint(v, 10)
	case float64:
		s = strconv.FormatFloat(v, 'g', -1, 64)
	case float32:
		s = strconv.FormatFloat(float64(v), 'g', -1, 32)
	case time.Time:
		s = v.Format("2006-01-02")
	default:
		s = fmt.Sprint(v)
	}
	return &s
}

func check(st step, got [][]*string, database string) error {
	show := func(rows [][]*string) string {
		var b strings.Builder
		for _, r := range rows {
			b.WriteString("[")
			for i, v := range r {
				if i > 0 {
					b.WriteString(", ")
				}
				if v == nil {
					b.WriteString("NULL")
				} else {
					b.WriteString(strconv.Quote(*v))
				}
			}
			b.WriteString("]")
		}
		return b.String()
	}
	if st.Contains != "" {
		for _, r := range got {
			for _, v := range r {
				if v != nil && strings.Contains(*v, st.Contains) {
					return nil
				}
			}
		}
		return fmt.Errorf("no value contains %q: %s", st.Contains, show(got))
	}
	if st.Rows == nil {
		return nil
	}
	if st.Cols != nil {
		for i, r := range got {
			picked := make([]*string, len(st.Cols))
			for j, c := range st.Cols {
				if c < len(r) {
					picked[j] = r[c]
				}
			}
			got[i] = picked
		}
	}
	want := make([][]*string, len(st.Rows))
	for i, r := range st.Rows {
		want[i] = make([]*string, len(r))
		for j, v := range r {
			if v != nil {
				s := strings.ReplaceAll(*v, "{db}", database)
				want[i][j] = &s
			}
		}
	}
	if show(got) != show(want) {
		return fmt.Errorf("got %s, want %s", show(got), show(want))
	}
	return nil
}
