package wire

import (
	"context"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
)

// vitess writes the info string of an OK packet ("Statement prepared",
// "Rows matched: 1  Changed: 1  Warnings: 0") after a '#' byte. MariaDB's
// client library, which the mysql command-line client and mysqlclient use,
// reads that byte as the string's length (35): an info shorter than that
// ran past the packet's end, and the client failed with ERROR 2027
// "Received malformed packet" (every PREPARE ... FROM). icesql sends no
// info that short; the statement's answer is the OK packet itself.
const shortestSafeInfo = '#'

// OkInfoHandler drops the info strings the client would misread.
type OkInfoHandler struct {
	mysql.Handler
}

func dropShortInfo(res *sqltypes.Result) {
	if res != nil && len(res.Fields) == 0 && len(res.Info) < shortestSafeInfo {
		res.Info = ""
	}
}

func (h OkInfoHandler) ComQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) error {
	return h.Handler.ComQuery(ctx, c, query, func(res *sqltypes.Result, more bool) error {
		dropShortInfo(res)
		return callback(res, more)
	})
}

func (h OkInfoHandler) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) (string, error) {
	return h.Handler.ComMultiQuery(ctx, c, query, func(res *sqltypes.Result, more bool) error {
		dropShortInfo(res)
		return callback(res, more)
	})
}
