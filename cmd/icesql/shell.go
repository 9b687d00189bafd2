package main

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	vmysql "github.com/dolthub/vitess/go/mysql"
	"github.com/go-sql-driver/mysql"
	"github.com/sirupsen/logrus"

	"github.com/icesql/icesql/engine"
)

// sqlOptions are the flags of sql.
type sqlOptions struct {
	fs   *flag.FlagSet
	cfg  *engine.Config
	exec *string
}

func sqlFlags(stderr io.Writer) *sqlOptions {
	o := &sqlOptions{}
	o.fs, o.cfg = commonFlags("sql", stderr)
	o.exec = o.fs.String("e", "", "statements to run, separated by ';'")
	return o
}

func runSQL(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	o := sqlFlags(stderr)
	fs, cfg, exec := o.fs, o.cfg, o.exec
	if done, err := parseFlags(fs, "sql", args, stdout, stderr); done {
		return err
	}
	if err := finishCatalogFlags(fs, cfg); err != nil {
		return err
	}
	if err := finishWarehouse(fs, cfg); err != nil {
		return err
	}
	logrus.SetLevel(logrus.ErrorLevel) // errors are printed as the mysql client does
	ctx := context.Background()
	e, err := engine.Open(ctx, *cfg)
	if err != nil {
		return err
	}
	defer e.Close()
	db := sql.OpenDB(e.Connector())
	defer db.Close()
	conn, err := db.Conn(ctx) // one session, so USE and BEGIN carry over
	if err != nil {
		return err
	}
	defer conn.Close()
	sh := &shell{conn: conn, out: stdout, errOut: stderr}

	if *exec != "" {
		stmts, rest := splitStatements(*exec)
		if strings.TrimSpace(rest) != "" {
			stmts = append(stmts, rest)
		}
		for _, s := range stmts {
			if !sh.execute(ctx, s, false) {
				return exitCode(1)
			}
		}
		return nil
	}
	return sh.interactive(ctx, stdin)
}

type shell struct {
	conn   *sql.Conn
	out    io.Writer
	errOut io.Writer
}

// interactive reads statements line by line until EOF, exit or quit.
func (sh *shell) interactive(ctx context.Context, in io.Reader) error {
	tty := isTerminal(in)
	if tty {
		fmt.Fprintf(sh.out, "icesql %s. Statements end with ';'. Type 'exit' to leave.\n\n", engine.Version)
	}
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 1024*1024), 64*1024*1024)
	var pending string
	prompt := func() {
		if !tty {
			return
		}
		if strings.TrimSpace(pending) == "" {
			fmt.Fprint(sh.out, "icesql> ")
		} else {
			fmt.Fprint(sh.out, "     -> ")
		}
	}
	prompt()
	for scanner.Scan() {
		line := scanner.Text()
		if strings.TrimSpace(pending) == "" {
			switch strings.ToLower(strings.TrimRight(strings.TrimSpace(line), ";")) {
			case "exit", "quit", `\q`:
				return nil
			}
		}
		pending += line + "\n"
		stmts, rest := splitStatements(pending)
		pending = rest
		for _, s := range stmts {
			sh.execute(ctx, s, true)
		}
		prompt()
	}
	if strings.TrimSpace(pending) != "" {
		sh.execute(ctx, pending, true)
	}
	return scanner.Err()
}

// returnsRows tells statements that produce a result set from those that
// report rows affected, by their first keyword.
func returnsRows(stmt string) bool {
	word := strings.ToUpper(firstWord(stmt))
	switch word {
	case "SELECT", "SHOW", "DESCRIBE", "DESC", "EXPLAIN", "WITH", "VALUES", "TABLE", "CALL", "(":
		return true
	}
	return false
}

func firstWord(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "(") {
		return "("
	}
	end := strings.IndexFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '(' })
	if end < 0 {
		return s
	}
	return s[:end]
}

// execute runs one statement and prints its outcome as the mysql client
// does; it reports whether the statement succeeded.
func (sh *shell) execute(ctx context.Context, stmt string, timing bool) bool {
	start := time.Now()
	elapsed := func() string {
		if !timing {
			return ""
		}
		return fmt.Sprintf(" (%.2f sec)", time.Since(start).Seconds())
	}
	if returnsRows(stmt) {
		rows, err := sh.conn.QueryContext(ctx, stmt)
		if err != nil {
			sh.printError(err)
			return false
		}
		res, err := fetch(rows)
		if err != nil {
			sh.printError(err)
			return false
		}
		switch {
		case len(res.columns) == 0:
			fmt.Fprintf(sh.out, "Query OK%s\n", elapsed())
		case len(res.rows) == 0:
			fmt.Fprintf(sh.out, "Empty set%s\n", elapsed())
		default:
			printTable(sh.out, res)
			fmt.Fprintf(sh.out, "%s in set%s\n", plural(int64(len(res.rows)), "row"), elapsed())
		}
	} else {
		r, err := sh.conn.ExecContext(ctx, stmt)
		if err != nil {
			sh.printError(err)
			return false
		}
		n, _ := r.RowsAffected()
		fmt.Fprintf(sh.out, "Query OK, %s affected%s\n", plural(n, "row"), elapsed())
	}
	if timing {
		fmt.Fprintln(sh.out)
	}
	return true
}

// printError shows an error as the mysql client does: ERROR 1146 (42S02): ...
func (sh *shell) printError(err error) {
	var se *vmysql.SQLError
	var me *mysql.MySQLError
	switch {
	case errors.As(err, &se):
		fmt.Fprintf(sh.errOut, "ERROR %d (%s): %s\n", se.Number(), se.SQLState(), se.Message)
	case errors.As(err, &me):
		fmt.Fprintf(sh.errOut, "ERROR %d (%s): %s\n", me.Number, string(me.SQLState[:]), me.Message)
	default:
		fmt.Fprintf(sh.errOut, "ERROR: %v\n", err)
	}
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// splitStatements cuts complete statements (ended by ';' outside quotes and
// comments) off the front of text and returns them with the unfinished rest.
func splitStatements(text string) (stmts []string, rest string) {
	start := 0
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '\'' || c == '"' || c == '`':
			i = skipQuoted(text, i)
		case c == '#' || (c == '-' && strings.HasPrefix(text[i:], "-- ")):
			if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
				i += j
			} else {
				i = len(text)
			}
		case c == '/' && strings.HasPrefix(text[i:], "/*"):
			if j := strings.Index(text[i+2:], "*/"); j >= 0 {
				i += j + 3
			} else {
				i = len(text)
			}
		case c == ';':
			if s := strings.TrimSpace(text[start:i]); s != "" {
				stmts = append(stmts, s)
			}
			start = i + 1
		}
	}
	if start > len(text) {
		return stmts, ""
	}
	return stmts, text[start:]
}

// skipQuoted returns the index of the quote closing the one at i (or the end
// of text), honouring doubled quotes and backslash escapes.
func skipQuoted(text string, i int) int {
	q := text[i]
	for j := i + 1; j < len(text); j++ {
		switch text[j] {
		case '\\':
			if q != '`' {
				j++
			}
		case q:
			if j+1 < len(text) && text[j+1] == q {
				j++
				continue
			}
			return j
		}
	}
	return len(text)
}
