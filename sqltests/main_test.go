package sqltests

import (
	"io"
	"os"
	"testing"

	"github.com/sirupsen/logrus"
)

// TestMain silences go-mysql-server's per-query log lines, which would
// bury the test failures.
func TestMain(m *testing.M) {
	logrus.SetOutput(io.Discard)
	os.Exit(m.Run())
}
