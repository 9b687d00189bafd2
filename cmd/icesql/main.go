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
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/sirupsen/logrus"

	"github.com/icesql/icesql/engine"
)

const usage = `icesql runs SQL over Apache Iceberg tables.

Usage:
  icesql serve [--warehouse PATH] [--addr HOST:PORT] [--user U --password-file F]
      Serve the warehouse over the MySQL protocol (default 127.0.0.1:3306).
  icesql sql [--warehouse PATH] [-e "STATEMENTS"]
      Run statements and print their results; without -e, an interactive shell.
  icesql version
      Print the version.

Common flags:
  --warehouse PATH      folder or s3://bucket/prefix of the embedded catalog (default ./warehouse)
  --catalog-name NAME   catalog prefix accepted in names like icesql.db.table (default icesql)
  --s3-endpoint URL, --s3-region R, --s3-path-style, --s3-access-key-id K, --s3-secret-access-key S
                        how to reach an s3:// warehouse; credentials default to the AWS chain
  --allow-unsafe-commits
                        write to a store without conditional writes (one writer only)
` + catalogUsage + serverUsage + httpUsage

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
	cfg := &engine.Config{}
	fs.StringVar(&cfg.Warehouse, "warehouse", "./warehouse", "folder of the embedded catalog")
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

func serve(args []string, stdout, stderr io.Writer) error {
	fs, cfg := commonFlags("serve", stderr)
	var scfg engine.ServerConfig
	sflags := addServerFlags(fs, &scfg) // serverflags.go
	httpAddr := fs.String("http", "127.0.0.1:8181", "address of the Iceberg REST catalog ('' turns it off)")
	bucket := fs.String("bucket", "warehouse", "the bucket of the S3 API on --http, which is the warehouse folder")
	localInfile := fs.Bool("local-infile", true, "accept LOAD DATA LOCAL INFILE, which loads a file the client sends (--local-infile=false refuses it with error 3948)")
	if err := fs.Parse(args); err != nil {
		return exitCode(2)
	}
	cfg.NoLocalInfile = !*localInfile
	if err := sflags.finish(stderr); err != nil {
		return err
	}
	if err := finishCatalogFlags(fs, cfg); err != nil {
		return err
	}
	cfg.Log = serverLog(stderr)
	// go-mysql-server logs every connection and failed query at info and
	// warning level; a server log should hold what needs attention.
	logrus.SetLevel(logrus.ErrorLevel)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e, err := engine.Open(ctx, *cfg)
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
	if err := serveHTTP(ctx, e, *httpAddr, *bucket, httpSet, scfg, stdout, stderr); err != nil { // http.go
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
