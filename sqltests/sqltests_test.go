package sqltests

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/icesql/icesql/engine"
)

// TestLogic runs every testdata/*.test file twice, each time on a fresh
// warehouse: in-process through the database/sql driver, and over the MySQL
// wire against a server on a free loopback port.
func TestLogic(t *testing.T) {
	files, err := filepath.Glob("testdata/*.test")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no .test files in testdata")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".test")
		t.Run(name+"/inproc", func(t *testing.T) {
			t.Parallel()
			e := openEngine(t)
			RunFile(t, pinnedConn(t, sql.OpenDB(e.Connector())), f)
		})
		t.Run(name+"/wire", func(t *testing.T) {
			t.Parallel()
			e := openEngine(t)
			srv, err := e.NewServer(engine.ServerConfig{Addr: "127.0.0.1:0"})
			if err != nil {
				t.Fatal(err)
			}
			go srv.Start()
			t.Cleanup(func() { srv.Close() })
			cfg := mysql.NewConfig()
			cfg.User, cfg.Net, cfg.Addr = "root", "tcp", srv.Addr()
			connector, err := mysql.NewConnector(cfg)
			if err != nil {
				t.Fatal(err)
			}
			RunFile(t, pinnedConn(t, sql.OpenDB(connector)), f)
		})
	}
}

func openEngine(t *testing.T) *engine.Engine {
	t.Helper()
	e, err := engine.Open(context.Background(), engine.Config{Warehouse: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func pinnedConn(t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}
