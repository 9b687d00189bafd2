package catalogs_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
)

// The test servers: each is started by the test that needs it on a free
// loopback port and stopped when it ends. A missing server fails the test
// with the way to install it (.ci/run installs all of them).

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitHTTP waits until url answers at all.
func waitHTTP(t testing.TB, url, what string, cmd *exec.Cmd, log string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			return
		}
		if cmd.ProcessState != nil {
			break
		}
	}
	out, _ := os.ReadFile(log)
	t.Fatalf("%s did not start:\n%s", what, out)
}

// restFixtureJar is Apache Iceberg's REST catalog test fixture: the runnable
// jar Maven Central publishes as org.apache.iceberg:iceberg-open-api (the
// image apache/iceberg-rest-fixture runs the same jar). .ci/run fetches it.
const restFixtureVersion = "1.10.1"

func restFixtureJar() string {
	if p := os.Getenv("ICESQL_REST_FIXTURE_JAR"); p != "" {
		return p
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".m2", "repository", "org", "apache", "iceberg", "iceberg-open-api",
		restFixtureVersion, "iceberg-open-api-"+restFixtureVersion+".jar")
}

// startRESTCatalog runs the Iceberg REST fixture, backed by a JDBC catalog on
// SQLite and a warehouse folder both icesql and the server read and write.
func startRESTCatalog(t testing.TB) (uri, warehouse string) {
	t.Helper()
	dir := t.TempDir()
	warehouse = filepath.Join(dir, "warehouse")
	return startRESTFixture(t, dir, "file://"+warehouse), warehouse
}

// startRESTCatalogOnS3 runs the Iceberg REST fixture with its warehouse in
// a bucket of the moto server at s3endpoint, which the server reaches with
// Java's S3FileIO and path-style access: the shape of an AIStor Tables or
// S3 Tables set-up.
func startRESTCatalogOnS3(t testing.TB, s3endpoint, warehouse string) string {
	t.Helper()
	return startRESTFixture(t, t.TempDir(), warehouse,
		"CATALOG_IO__IMPL=org.apache.iceberg.aws.s3.S3FileIO",
		"CATALOG_S3_ENDPOINT="+s3endpoint, "CATALOG_S3_PATH__STYLE__ACCESS=true",
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=us-east-1")
}

// startRESTFixture starts the fixture with its files in dir; env adds
// CATALOG_* settings (the fixture maps CATALOG_A_B__C to property a.b-c).
func startRESTFixture(t testing.TB, dir, warehouse string, env ...string) (uri string) {
	t.Helper()
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatal("the REST catalog tests need Java 17+: apt-get install default-jre-headless (.ci/run does)")
	}
	jar := restFixtureJar()
	if _, err := os.Stat(jar); err != nil {
		t.Fatalf("the REST catalog tests need Iceberg's REST fixture %s: mvn dependency:get -Dartifact=org.apache.iceberg:iceberg-open-api:%s -Dtransitive=false (.ci/run does), or set ICESQL_REST_FIXTURE_JAR", jar, restFixtureVersion)
	}
	port := freePort(t)
	log := filepath.Join(dir, "server.log")
	logf, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(java, "-jar", jar)
	// The fixture reads its catalog's properties from CATALOG_* variables.
	cmd.Env = append(os.Environ(),
		"CATALOG_REST_PORT="+strconv.Itoa(port),
		"CATALOG_WAREHOUSE="+warehouse,
		"CATALOG_URI=jdbc:sqlite:file:"+filepath.Join(dir, "catalog.db"),
		"CATALOG_JDBC_USER=icesql", "CATALOG_JDBC_PASSWORD=icesql")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); logf.Close() })
	go cmd.Wait()
	uri = fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHTTP(t, uri+"/v1/config", "the Iceberg REST fixture", cmd, log)
	return uri
}

// postgresBin finds a PostgreSQL server program: on PATH, else where
// Debian's postgresql package puts it.
func postgresBin(t testing.TB, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name); len(m) > 0 {
		return m[len(m)-1]
	}
	t.Fatalf("the SQL catalog tests need a PostgreSQL server (%s): apt-get install postgresql (.ci/run does)", name)
	return ""
}

// startPostgres runs a throwaway PostgreSQL cluster and returns its URL.
// PostgreSQL refuses to run as root, so as root the cluster belongs to the
// postgres user the Debian package creates.
func startPostgres(t testing.TB) string {
	t.Helper()
	initdb, pgctl := postgresBin(t, "initdb"), postgresBin(t, "pg_ctl")
	dir, err := os.MkdirTemp("", "icesql-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var cred *syscall.Credential
	if os.Getuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatal("running as root, the PostgreSQL tests need the postgres user: apt-get install postgresql (.ci/run does)")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	run := func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", filepath.Base(name), args, err, out)
		}
	}
	data := filepath.Join(dir, "data")
	run(initdb, "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8")
	port := freePort(t)
	run(pgctl, "-D", data, "-l", filepath.Join(dir, "log"), "-w", "-o",
		fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", port, dir), "start")
	t.Cleanup(func() {
		cmd := exec.Command(pgctl, "-D", data, "-m", "immediate", "stop")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		cmd.Run()
	})
	return fmt.Sprintf("postgresql://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
}

// s3Props are the file IO properties of a warehouse on the moto server.
func s3Props(endpoint string) iceberg.Properties {
	return iceberg.Properties{
		"s3.endpoint": endpoint, "s3.path-style-access": "true",
		"s3.access-key-id": "test", "s3.secret-access-key": "test", "s3.region": "us-east-1",
	}
}

var _ = context.Background
