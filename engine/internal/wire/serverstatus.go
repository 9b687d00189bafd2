package wire

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
)

// StatusHandler sends a new connection the server status flags MySQL
// sends: vitess writes the handshake and the login's OK packet with the
// connection's StatusFlags, which go-mysql-server sets only after a
// connection's first query. Without SERVER_STATUS_AUTOCOMMIT in the
// handshake, drivers that read the session's autocommit from it (pymysql:
// get_autocommit) believe autocommit is already off and never turn it off,
// so their transactions (rollback()) do nothing. After each statement
// go-mysql-server sets the flags from the session: SERVER_STATUS_AUTOCOMMIT
// from @@autocommit, SERVER_STATUS_IN_TRANS while a transaction is open.
type StatusHandler struct{ mysql.Handler }

// NewConnection implements mysql.Handler.
func (h StatusHandler) NewConnection(c *mysql.Conn) {
	h.Handler.NewConnection(c)
	if _, v, ok := sql.SystemVariables.GetGlobal("autocommit"); !ok || autocommitOn(v) {
		c.StatusFlags |= mysql.ServerStatusAutocommit
	}
}

// autocommitOn reads @@global.autocommit, held as a bool or a number.
func autocommitOn(v any) bool {
	switch strings.ToUpper(fmt.Sprint(v)) {
	case "0", "FALSE", "OFF":
		return false
	}
	return true
}
