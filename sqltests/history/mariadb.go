package history

import (
	"context"
	gosql "database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"
)

// MariaDB is a MariaDB server the tester started for itself: a fresh
// datadir in a temporary folder, listening on a free loopback port, no
// grant tables. It is the independent oracle: the same logical rows, the
// same DDL and DML in MySQL syntax.
type MariaDB struct {
	Addr string
	dir  string
	cmd  *exec.Cmd
	done chan error
}

// StartMariaDB initializes a datadir under dir and starts mariadbd on it.
// The Debian package mariadb-server provides both programs (.ci/run
// installs it).
func StartMariaDB(ctx context.Context, dir string) (*MariaDB, error) {
	server, err := findProgram("mariadbd", "mysqld")
	if err != nil {
		return nil, err
	}
	install, err := findProgram("mariadb-install-db", "mysql_install_db")
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	// --user=root: the tests may run as root, which mariadbd refuses
	// unless told so; as another user the option is ignored.
	out, err := exec.CommandContext(ctx, install, "--no-defaults", "--datadir="+data, "--user=root",
		"--auth-root-authentication-method=normal", "--skip-test-db").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("mariadb-install-db: %w\n%s", err, out)
	}
	for attempt := 0; ; attempt++ {
		m, err := startOn(ctx, server, dir, data)
		if err == nil || attempt == 2 {
			return m, err
		}
	}
}

func startOn(ctx context.Context, server, dir, data string) (*MariaDB, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "mariadbd.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(server, "--no-defaults", "--datadir="+data, "--user=root",
		"--socket="+filepath.Join(dir, "mariadbd.sock"), "--port="+strconv.Itoa(port),
		"--bind-address=127.0.0.1", "--skip-grant-tables", "--skip-log-bin",
		"--innodb-buffer-pool-size=128M", "--character-set-server=utf8mb4",
		"--collation-server=utf8mb4_nopad_bin", "--default-time-zone=+00:00",
		"--max-connections=50")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", server, err)
	}
	m := &MariaDB{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, cmd: cmd, done: make(chan error, 1)}
	go func() { m.done <- cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-m.done:
			log, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("mariadbd exited: %v\n%s", err, log)
		case <-ctx.Done():
			m.Close()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		db, err := m.Open("")
		if err == nil {
			err = db.PingContext(ctx)
			db.Close()
			if err == nil {
				return m, nil
			}
		}
	}
	m.Close()
	log, _ := os.ReadFile(logPath)
	return nil, fmt.Errorf("mariadbd did not answer within 60 s:\n%s", log)
}

// Open connects to the server, to database db when not empty.
func (m *MariaDB) Open(db string) (*gosql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = "root", "tcp", m.Addr, db
	cfg.InterpolateParams = true
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return gosql.OpenDB(connector), nil
}

// Close stops the server and waits for it to exit.
func (m *MariaDB) Close() error {
	if m.cmd.Process == nil {
		return nil
	}
	_ = m.cmd.Process.Signal(os.Interrupt)
	select {
	case <-m.done:
	case <-time.After(20 * time.Second):
		_ = m.cmd.Process.Kill()
		<-m.done
	}
	return nil
}

func findProgram(names ...string) (string, error) {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
		for _, dir := range []string{"/usr/sbin", "/usr/local/sbin", "/usr/bin"} {
			p := filepath.Join(dir, n)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p, nil
			}
		}
	}
	return "", errors.New("the history tester needs a MariaDB server (" + names[0] + "): apt-get install mariadb-server (.ci/run does)")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
