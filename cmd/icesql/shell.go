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
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/chzyer/readline"

	vmysql "github.com/dolthub/vitess/go/mysql"
	"github.com/go-sql-driver/mysql"
	"github.com/sirupsen/logrus"

	"github.com/icesql/icesql/engine"
)

// sqlOptions are the flags of sql.
type sqlOptions struct {
	fs      *flag.FlagSet
	cfg     *engine.Config
	exec    *string
	force   *bool
	history string
}

func sqlFlags(stderr io.Writer) *sqlOptions {
	o := &sqlOptions{}
	o.fs, o.cfg = commonFlags("sql", stderr)
	o.exec = o.fs.String("e", "", "statements to run, separated by ';'")
	o.force = o.fs.Bool("force", false, "go on after a statement fails (the exit status is still 1)")
	o.fs.StringVar(&o.history, "history-file", historyPath(), "file of the shell's history (\"\" keeps none)")
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
	e, err := openEngine(ctx, *cfg)
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
	sh := &shell{conn: conn, out: stdout, errOut: stderr, force: *o.force}

	if *exec != "" {
		stmts, rest := splitStatements(*exec)
		if strings.TrimSpace(rest) != "" {
			stmts = append(stmts, statement{text: rest, line: strings.Count(*exec, "\n") + 1})
		}
		if err := sh.script(ctx, stmts, 0); err != nil || !sh.failed {
			return err
		}
		return exitCode(1)
	}
	if isTerminal(stdin) && isTerminal(stdout) {
		return sh.interactive(ctx, o.history)
	}
	return sh.piped(ctx, stdin)
}

// shell runs statements on one session and prints their results.
type shell struct {
	conn   *sql.Conn
	out    io.Writer
	errOut io.Writer
	force  bool // a script goes on after a failed statement
	failed bool // a statement failed (the exit status of a forced script)
	// interruptible tells execute to cancel a statement on Ctrl-C (SIGINT).
	interruptible bool
	// line is the script line the statement being run ends on (0: none),
	// for errors as the mysql client prints them in batch mode.
	line int
}

// script runs statements as a script does: the first failure ends it with
// exit status 1, unless --force; endLine is the line the last one ends on.
func (sh *shell) script(ctx context.Context, stmts []statement, endLine int) error {
	for _, s := range stmts {
		if s.line > 0 {
			sh.line = s.line + endLine
		}
		if !sh.execute(ctx, s, false) {
			sh.failed = true
			if !sh.force {
				return exitCode(1)
			}
		}
	}
	return nil
}

// piped runs the statements of a script read from stdin; it stops at the
// first failure (with exit status 1) unless --force, and Ctrl-C cancels the
// running statement, which then fails.
func (sh *shell) piped(ctx context.Context, in io.Reader) error {
	sh.interruptible = true
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 1024*1024), 64*1024*1024)
	var pending string
	pendingLines := 0 // lines of the script before pending begins
	lineNo := 0
	for scanner.Scan() {
		line := scanner.Text()
		lineNo++
		if strings.TrimSpace(pending) == "" && isQuit(line) {
			break
		}
		pending += line + "\n"
		stmts, rest := splitStatements(pending)
		if len(stmts) > 0 {
			if err := sh.script(ctx, stmts, pendingLines); err != nil {
				return err
			}
			pendingLines = lineNo - strings.Count(rest, "\n")
		}
		pending = rest
	}
	if err := scanner.Err(); err != nil {
		return fmt.Errorf("read statements: %w", err)
	}
	if strings.TrimSpace(pending) != "" {
		if err := sh.script(ctx, []statement{{text: pending, line: 1}}, lineNo-1); err != nil {
			return err
		}
	}
	if sh.failed {
		return exitCode(1)
	}
	return nil
}

// interactive is the shell on a terminal: line editing and history
// (github.com/chzyer/readline), Ctrl-C clears the line being typed or
// cancels the running statement, Ctrl-D or exit leaves.
func (sh *shell) interactive(ctx context.Context, historyFile string) error {
	if historyFile != "" {
		// The history holds statements, passwords among them (CREATE USER):
		// readline would create it readable by everyone.
		if f, err := os.OpenFile(historyFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
			f.Close()
		}
	}
	rl, err := readline.NewEx(&readline.Config{
		Prompt:                 "icesql> ",
		HistoryFile:            historyFile,
		HistoryLimit:           10000,
		DisableAutoSaveHistory: true, // a statement of several lines is saved as one entry
		HistorySearchFold:      true,
		Stdout:                 sh.out,
		Stderr:                 sh.errOut,
	})
	if err != nil {
		return fmt.Errorf("terminal: %w", err)
	}
	defer rl.Close()
	sh.interruptible = true
	fmt.Fprintf(sh.out, "icesql %s. Statements end with ';' (or \\G for vertical rows). Ctrl-C cancels, 'exit' leaves.\n\n", engine.Version)
	var pending string
	for {
		if strings.TrimSpace(pending) == "" {
			rl.SetPrompt("icesql> ")
		} else {
			rl.SetPrompt("     -> ")
		}
		line, err := rl.Readline()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			pending = "" // Ctrl-C at the prompt drops what was typed, as mysql does
			continue
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return fmt.Errorf("read statement: %w", err)
		}
		if strings.TrimSpace(pending) == "" && isQuit(line) {
			return nil
		}
		pending += line + "\n"
		stmts, rest := splitStatements(pending)
		if len(stmts) > 0 {
			entered := strings.TrimSpace(pending[:len(pending)-len(rest)])
			if err := rl.SaveHistory(strings.ReplaceAll(entered, "\n", " ")); err != nil {
				fmt.Fprintf(sh.errOut, "icesql: history: %v\n", err)
			}
		}
		pending = rest
		for _, s := range stmts {
			sh.execute(ctx, s, true)
		}
	}
}

func isQuit(line string) bool {
	switch strings.ToLower(strings.TrimRight(strings.TrimSpace(line), ";")) {
	case "exit", "quit", `\q`:
		return true
	}
	return false
}

// historyPath is where the shell keeps its history: ICESQL_HISTFILE, else
// ~/.icesql_history ("" keeps none).
func historyPath() string {
	if p, ok := os.LookupEnv("ICESQL_HISTFILE"); ok {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".icesql_history")
}

// returnsRows tells statements that produce a result set from those that
// report rows affected, by their first keyword after any comments.
func returnsRows(stmt string) bool {
	word := strings.ToUpper(firstWord(engine.SkipLeadingComments(stmt)))
	switch word {
	case "SELECT", "SHOW", "DESCRIBE", "DESC", "EXPLAIN", "WITH", "VALUES", "TABLE", "CALL", "(",
		"CHECKSUM", "ANALYZE": // MySQL's table maintenance statements answer with a table
		return true
	}
	return false
}

func firstWord(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "(") {
		return "("
	}
	end := strings.IndexFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '(' })
	if end < 0 {
		return s
	}
	return s[:end]
}

// execute runs one statement and prints its outcome as the mysql client
// does; it reports whether the statement succeeded. When the shell is
// interruptible, Ctrl-C cancels the statement, not the program.
func (sh *shell) execute(ctx context.Context, stmt statement, timing bool) bool {
	if sh.interruptible {
		var stop context.CancelFunc
		ctx, stop = context.WithCancel(ctx)
		defer stop()
		interrupts := make(chan os.Signal, 1)
		signal.Notify(interrupts, os.Interrupt)
		defer signal.Stop(interrupts)
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-interrupts:
				stop()
			case <-done:
			}
		}()
	}
	start := time.Now()
	elapsed := func() string {
		if !timing {
			return ""
		}
		return fmt.Sprintf(" (%.2f sec)", time.Since(start).Seconds())
	}
	if returnsRows(stmt.text) {
		rows, err := sh.conn.QueryContext(ctx, stmt.text)
		if err != nil {
			sh.printError(ctx, err)
			return false
		}
		res, err := fetch(rows)
		if err != nil {
			sh.printError(ctx, err)
			return false
		}
		switch {
		case len(res.columns) == 0:
			fmt.Fprintf(sh.out, "Query OK%s\n", elapsed())
		case len(res.rows) == 0:
			fmt.Fprintf(sh.out, "Empty set%s\n", elapsed())
		default:
			if stmt.vertical {
				printVertical(sh.out, res)
			} else {
				printTable(sh.out, res)
			}
			fmt.Fprintf(sh.out, "%s in set%s\n", plural(int64(len(res.rows)), "row"), elapsed())
		}
	} else {
		r, err := sh.conn.ExecContext(ctx, stmt.text)
		if err != nil {
			sh.printError(ctx, err)
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
// In a script it names the line the statement ends on, as mysql's batch
// mode does: ERROR 1146 (42S02) at line 3: ...
func (sh *shell) printError(ctx context.Context, err error) {
	at := ""
	if sh.line > 0 {
		at = fmt.Sprintf(" at line %d", sh.line)
	}
	var se *vmysql.SQLError
	var me *mysql.MySQLError
	switch {
	case ctx.Err() != nil:
		// Ctrl-C: what the mysql client prints for KILL QUERY.
		fmt.Fprintf(sh.errOut, "ERROR 1317 (70100)%s: Query execution was interrupted\n", at)
	case errors.As(err, &se):
		fmt.Fprintf(sh.errOut, "ERROR %d (%s)%s: %s\n", se.Number(), se.SQLState(), at, se.Message)
	case errors.As(err, &me):
		fmt.Fprintf(sh.errOut, "ERROR %d (%s)%s: %s\n", me.Number, string(me.SQLState[:]), at, me.Message)
	default:
		fmt.Fprintf(sh.errOut, "ERROR%s: %v\n", at, err)
	}
}

func isTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// statement is one statement of a script or the shell.
type statement struct {
	text     string
	vertical bool // ended by \G: print each row as a list of column: value
	line     int  // lines from the text's start to the statement's end, from 1
}

// splitStatements cuts complete statements (ended by ';', \g or \G outside
// quotes and comments) off the front of text and returns them with the
// unfinished rest.
func splitStatements(text string) (stmts []statement, rest string) {
	start := 0
	end := func(i, next int, vertical bool) {
		if s := strings.TrimSpace(text[start:i]); s != "" {
			stmts = append(stmts, statement{text: s, vertical: vertical, line: strings.Count(text[:i], "\n") + 1})
		}
		start = next
	}
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
			end(i, i+1, false)
		case c == '\\' && i+1 < len(text) && (text[i+1] == 'G' || text[i+1] == 'g'):
			end(i, i+2, text[i+1] == 'G')
			i++
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
