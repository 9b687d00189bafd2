// Command icesql runs SQL over Apache Iceberg tables: as a MySQL server
// (icesql serve), as a one-shot or interactive SQL shell (icesql sql), or
// prints its version.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/metrics"
)

const usage = `icesql runs SQL over Apache Iceberg tables.

Usage:
  icesql serve [--warehouse PATH] [--addr HOST:PORT] [--user U --password-file F]
      Serve the warehouse over the MySQL protocol (default 127.0.0.1:3306).
  icesql sql [--warehouse PATH] [-e "STATEMENTS"]
      Run statements and print their results; without -e, an interactive shell.
  icesql version
      Print the version.
  icesql help
      Print this text. 'icesql COMMAND --help' prints the flags of one command.
` + commonUsage + catalogUsageHeader + catalogUsage + serverUsage + httpUsage + logUsage + serveUsage + sqlUsage

// commonUsage describes the flags of commonFlags.
const commonUsage = `
Flags of serve and sql (the warehouse):
  --warehouse PATH      folder or s3://bucket/prefix of the embedded catalog (default ./warehouse);
                        a folder named with --warehouse must exist unless --create is given
  --create              create the --warehouse folder when it does not exist (the default
                        ./warehouse is always created)
  --catalog-name NAME   catalog prefix accepted in names like icesql.db.table (default icesql)
  --s3-endpoint URL, --s3-region R, --s3-path-style, --s3-access-key-id K, --s3-secret-access-key S
                        how to reach an s3:// warehouse; credentials default to the AWS chain
  --allow-unsafe-commits
                        write to a store without conditional writes (one writer only)
  --memory-limit-mib N  memory limit in MiB: a statement that would pass it fails with error
                        1038 or 1041 (default: GOMEMLIMIT as a soft limit, else none)
`

// serveUsage describes the flags serve defines in this file.
const serveUsage = `
Flags of serve (loading and logging):
  --local-infile=false  refuse LOAD DATA LOCAL INFILE (error 3948); accepted by default
`

// sqlUsage describes the flags of sql.
const sqlUsage = `
Flags of sql:
  -e "STATEMENTS"       run these statements (separated by ';') and exit
  --force               go on after a statement fails, in -e or a script piped to stdin (which
                        otherwise stops at the first error); the exit status is still 1
  --history-file PATH   history of the shell on a terminal (default ~/.icesql_history or
                        env ICESQL_HISTFILE; "" keeps none)

The shell on a terminal edits lines and recalls history (arrows, Ctrl-R); Ctrl-C clears the
line being typed or cancels the running statement; a statement ending in \G prints its rows
vertically; exit, quit, \q or Ctrl-D leave.
`

// commandUsage is the help of one command: its line of usage and its flags.
func commandUsage(name string) string {
	switch name {
	case "serve":
		return "Usage: icesql serve [flags]\n  Serve the warehouse over the MySQL protocol.\n" +
			commonUsage + catalogUsageHeader + catalogUsage + serverUsage + httpUsage + logUsage + serveUsage
	case "sql":
		return "Usage: icesql sql [flags] [-e \"STATEMENTS\"]\n  Run statements and print their results; without -e, an interactive shell.\n" +
			commonUsage + catalogUsageHeader + catalogUsage + sqlUsage
	}
	return usage
}

const catalogUsageHeader = `
Flags of serve and sql (another catalog than the embedded one):
`

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		var exit exitCode
		if errors.As(err, &exit) {
			os.Exit(int(exit)) // the reason was already shown
		}
		fmt.Fprintln(os.Stderr, "icesql:", err)
		os.Exit(1)
	}
}

// exitCode ends the program with a status after the error was already shown.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitCode(2)
	}
	switch args[0] {
	case "serve":
		return serve(args[1:], stdout, stderr)
	case "sql":
		return runSQL(args[1:], stdin, stdout, stderr)
	case "import":
		return runImport(args[1:], stdout, stderr) // import.go
	case "version", "--version", "-v":
		fmt.Fprintf(stdout, "icesql %s\n", engine.Version)
		return nil
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "icesql: unknown command %q\n\n%s", args[0], usage)
	return exitCode(2)
}

// commonFlags are the flags of every command that opens a warehouse.
func commonFlags(name string, stderr io.Writer) (*flag.FlagSet, *engine.Config) {
	fs := flag.NewFlagSet("icesql "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	// parseFlags prints the help (on stdout) or a pointer to it.
	fs.Usage = func() {}
	cfg := &engine.Config{}
	fs.StringVar(&cfg.Warehouse, "warehouse", defaultWarehouse, "folder of the embedded catalog")
	fs.Bool("create", false, "create the --warehouse folder when it does not exist")
	fs.StringVar(&cfg.CatalogName, "catalog-name", "icesql", "catalog prefix accepted in three-part names")
	fs.StringVar(&cfg.S3.Endpoint, "s3-endpoint", os.Getenv("AWS_ENDPOINT_URL_S3"), "S3 endpoint of an s3:// warehouse (default: AWS; env AWS_ENDPOINT_URL_S3)")
	fs.StringVar(&cfg.S3.Region, "s3-region", "", "S3 region (default: AWS_REGION or the AWS config)")
	fs.BoolVar(&cfg.S3.PathStyle, "s3-path-style", false, "address buckets in the URL path, as most self-hosted stores need")
	fs.StringVar(&cfg.S3.AccessKeyID, "s3-access-key-id", "", "S3 access key (default: AWS_ACCESS_KEY_ID or the AWS config)")
	fs.StringVar(&cfg.S3.SecretAccessKey, "s3-secret-access-key", "", "S3 secret key (default: AWS_SECRET_ACCESS_KEY or the AWS config)")
	fs.BoolVar(&cfg.S3.AllowUnsafeCommits, "allow-unsafe-commits", false,
		"write to an object store that ignores conditional writes (safe only with a single writer)")
	fs.Func("memory-limit-mib", "limit on the server's memory in MiB: a statement that would pass it fails with MySQL error 1038 or 1041 (default: GOMEMLIMIT as a soft limit, else none)", func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > 1<<40 {
			return fmt.Errorf("--memory-limit-mib wants a number of MiB, not %q", v)
		}
		cfg.MemoryLimit = n << 20
		return nil
	})
	addCatalogFlags(fs)
	return fs, cfg
}

// defaultWarehouse is the README's warehouse, created when missing.
const defaultWarehouse = "./warehouse"

// parseFlags parses args; --help prints the command's help on stdout and
// reports done, a bad flag is an error with exit status 2.
func parseFlags(fs *flag.FlagSet, name string, args []string, stdout, stderr io.Writer) (done bool, err error) {
	switch err := fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, commandUsage(name))
		return true, nil
	case err != nil:
		fmt.Fprintf(stderr, "run 'icesql %s --help' for its flags\n", name)
		return true, exitCode(2)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "icesql %s: unexpected argument %q (flags come as --name value)\nrun 'icesql %s --help' for its flags\n",
			name, fs.Arg(0), name)
		return true, exitCode(2)
	}
	return false, nil
}

// finishWarehouse checks that a local warehouse folder exists, or creates it
// when --create is given or the folder is the README's ./warehouse: a mistyped
// --warehouse would otherwise serve a new, empty warehouse without a word.
func finishWarehouse(flags *flag.FlagSet, cfg *engine.Config) error {
	if len(cfg.CatalogProperties) > 0 {
		return nil // another catalog: the warehouse is its business
	}
	path, isFile := strings.CutPrefix(cfg.Warehouse, "file://")
	if !isFile && strings.Contains(path, "://") {
		return nil // an object store: a prefix need not exist
	}
	st, err := os.Stat(path)
	switch {
	case err == nil && !st.IsDir():
		return fmt.Errorf("warehouse %s is a file, not a folder", cfg.Warehouse)
	case err == nil:
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("warehouse %s: %w", cfg.Warehouse, err)
	}
	create := flags.Lookup("create").Value.(flag.Getter).Get().(bool)
	if !create && filepath.Clean(path) != filepath.Clean(defaultWarehouse) {
		return fmt.Errorf("warehouse %s does not exist: check the path, or add --create to start a new warehouse there", cfg.Warehouse)
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return fmt.Errorf("create warehouse %s: %w", cfg.Warehouse, err)
	}
	return nil
}

// serveOptions are the flags of serve.
type serveOptions struct {
	fs          *flag.FlagSet
	cfg         *engine.Config
	scfg        engine.ServerConfig
	sflags      *serverFlags
	localInfile *bool
	httpAddr    *string
	bucket      *string
	s3Locations *bool
	log         *logFlags
}

func serveFlags(stderr io.Writer) *serveOptions {
	o := &serveOptions{}
	o.fs, o.cfg = commonFlags("serve", stderr)
	o.sflags = addServerFlags(o.fs, &o.scfg) // serverflags.go
	o.httpAddr = o.fs.String("http", "127.0.0.1:8181", "address of the Iceberg REST catalog ('' turns it off)")
	o.bucket = o.fs.String("bucket", "warehouse", "the bucket of the S3 API on --http, which is the warehouse folder")
	o.s3Locations = o.fs.Bool("s3-locations", false, "name the files icesql writes s3://BUCKET/... (for clients with only an S3 file IO, such as Spark's S3FileIO); engines that read the warehouse folder directly then need the S3 API too")
	o.log = addLogFlags(o.fs) // serverlog.go
	o.localInfile = o.fs.Bool("local-infile", true, "accept LOAD DATA LOCAL INFILE, which loads a file the client sends (--local-infile=false refuses it with error 3948)")
	return o
}

func serve(args []string, stdout, stderr io.Writer) error {
	o := serveFlags(stderr)
	fs, cfg, sflags := o.fs, o.cfg, o.sflags
	if done, err := parseFlags(fs, "serve", args, stdout, stderr); done {
		return err
	}
	cfg.NoLocalInfile = !*o.localInfile
	if err := sflags.finish(stderr); err != nil {
		return err
	}
	scfg := o.scfg // complete after finish (password, TLS)
	if err := finishCatalogFlags(fs, cfg); err != nil {
		return err
	}
	if err := finishWarehouse(fs, cfg); err != nil {
		return err
	}
	log, err := o.log.logger(stderr)
	if err != nil {
		return err
	}
	cfg.Log = serverLog(log)
	stats := metrics.New()
	scfg.Observer = observers{stats, slowQueryLog{log: log, threshold: time.Duration(o.log.slowMS) * time.Millisecond}}
	// go-mysql-server logs every connection and failed query at info and
	// warning level; a server log should hold what needs attention.
	logrus.SetLevel(logrus.ErrorLevel)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e, err := openEngine(ctx, *cfg)
	if err != nil {
		return err
	}
	defer e.Close()
	srv, err := e.NewServer(scfg)
	if err != nil {
		return err
	}
	login := "-u root"
	if scfg.User != "" {
		login = "-u " + scfg.User + " -p"
	}
	host, port := splitAddr(srv.Addr())
	fmt.Fprintf(stdout, "icesql %s serving %s on %s\nconnect with: mysql -h %s -P %s %s\n",
		engine.Version, servedCatalog(cfg), srv.Addr(), host, port, login)
	httpSet := false
	fs.Visit(func(f *flag.Flag) { httpSet = httpSet || f.Name == "http" })
	if err := serveHTTP(ctx, e, *o.httpAddr, servedS3{*o.bucket, *o.s3Locations}, httpSet, scfg, stats.Handler(), stdout, stderr); err != nil { // http.go
		srv.Close()
		return err
	}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Start(); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

func splitAddr(addr string) (host, port string) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, ""
	}
	return host, port
}

// openEngine opens the engine cfg describes, after setting the Go
// runtime's soft memory limit from cfg.MemoryLimit: the limit is the
// process's, which the program owns (engine.RuntimeMemoryLimit).
func openEngine(ctx context.Context, cfg engine.Config) (*engine.Engine, error) {
	if cfg.MemoryLimit > 0 {
		debug.SetMemoryLimit(engine.RuntimeMemoryLimit(cfg.MemoryLimit))
	}
	return engine.Open(ctx, cfg)
}
