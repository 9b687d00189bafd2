// Package mysqlerr is where every MySQL error a client of icesql can receive
// is coded: the numbers vitess does not name (codes.go), the SQLSTATE of each
// code (states, New), the constructors of icesql's own errors, and the
// mapping of go-mysql-server's and storage's errors to the codes MySQL gives
// for the same mistake (mapping.go), applied where errors leave the engine:
// the wire handler and the database/sql driver.
package mysqlerr

import (
	"fmt"

	"github.com/dolthub/vitess/go/mysql"
)

// MySQL error numbers the vitess package has no constant for, by number.
// Everything icesql sends a client is coded here or in vitess's mysql
// package, and New gives each its SQLSTATE from states.
const (
	ErCantDeleteFile                      = 1011 // ER_CANT_DELETE_FILE
	ErOutOfSortMemory                     = 1038 // ER_OUT_OF_SORTMEMORY
	ErOutOfResources                      = 1041 // ER_OUT_OF_RESOURCES
	ErHandshakeError                      = 1043 // ER_HANDSHAKE_ERROR
	ErUnknownCom                          = 1047 // ER_UNKNOWN_COM_ERROR
	ErTableAccessDenied                   = 1142 // ER_TABLEACCESS_DENIED_ERROR
	ErNetPacketTooLarge                   = 1153 // ER_NET_PACKET_TOO_LARGE
	ErWrongArguments                      = 1210 // ER_WRONG_ARGUMENTS
	ErSubqueryNo1Row                      = 1242 // ER_SUBQUERY_NO_1_ROW
	ErUnknownStmtHandler                  = 1243 // ER_UNKNOWN_STMT_HANDLER
	ErOptionPreventsStatement             = 1290 // ER_OPTION_PREVENTS_STATEMENT
	ErUnsupportedPS                       = 1295 // ER_UNSUPPORTED_PS ("not supported in the prepared statement protocol yet")
	ErWarnAllowedPacketOverflowed         = 1301 // ER_WARN_ALLOWED_PACKET_OVERFLOWED
	ErQueryInterrupted                    = 1317 // ER_QUERY_INTERRUPTED, what KILL QUERY's victim receives
	ErWrongObject                         = 1347 // ER_WRONG_OBJECT ("'x' is not BASE TABLE"): a tag named where a branch is wanted
	ErViewWrongList                       = 1353 // ER_VIEW_WRONG_LIST
	ErWrongValueForType                   = 1411 // ER_WRONG_VALUE_FOR_TYPE
	ErStackOverrunNeedMore                = 1436 // ER_STACK_OVERRUN_NEED_MORE
	ErNonInsertableTable                  = 1471 // ER_NON_INSERTABLE_TABLE
	ErFieldTypeNotAllowedAsPartitionField = 1659 // ER_FIELD_TYPE_NOT_ALLOWED_AS_PARTITION_FIELD
	ErMalformedPacket                     = 1835 // ER_MALFORMED_PACKET
	ErAlterOperationNotSupportedReason    = 1846 // ER_ALTER_OPERATION_NOT_SUPPORTED_REASON
	ErQueryTimeout                        = 3024 // ER_QUERY_TIMEOUT
	ErWindowRangeFrameOrderType           = 3587 // ER_WINDOW_RANGE_FRAME_ORDER_TYPE: RANGE N PRECEDING/FOLLOWING over an ORDER BY it cannot measure
	ErWindowRangeFrameTemporalType        = 3588 // ER_WINDOW_RANGE_FRAME_TEMPORAL_TYPE
	ErWindowRangeFrameNumericType         = 3589 // ER_WINDOW_RANGE_FRAME_NUMERIC_TYPE
	ErSecureTransportRequired             = 3159 // ER_SECURE_TRANSPORT_REQUIRED
	ErRegexpStackOverflow                 = 3698 // ER_REGEXP_STACK_OVERFLOW
	ErRegexpTimeOut                       = 3699 // ER_REGEXP_TIME_OUT
	ErClientLocalFilesDisabled            = 3948 // ER_CLIENT_LOCAL_FILES_DISABLED
)

// states are the SQLSTATEs MySQL sends with its error codes where they
// are not HY000. go-mysql-server codes many errors with HY000 (1146 "table
// not found" among them), and clients branch on the state (JDBC's
// SQLSyntaxErrorException, SQLAlchemy's NoSuchTableError).
var states = map[int]string{
	1044: "42000", 1045: "28000", 1046: "3D000", 1047: "08S01", 1048: "23000",
	1049: "42000", 1050: "42S01", 1051: "42S02", 1052: "23000", 1054: "42S22",
	1055: "42000", 1059: "42000", 1060: "42S21", 1061: "42000", 1062: "23000",
	1063: "42000", 1064: "42000", 1066: "42000", 1067: "42000", 1068: "42000", 1072: "42000",
	1075: "42000", 1090: "42000", 1091: "42000", 1102: "42000", 1103: "42000",
	1109: "42S02", 1110: "42000", 1113: "42000", 1136: "21S01", 1140: "42000",
	1142: "42000", 1143: "42000", 1146: "42S02", 1149: "42000", 1166: "42000",
	1213: "40001", 1216: "23000", 1217: "23000", 1222: "21000", 1235: "42000",
	1241: "21000", 1242: "21000", 1264: "22003", 1265: "01000", 1292: "22007", 1295: "42000",
	1305: "42000", 1317: "70100", 1365: "22012", 1406: "22001", 1451: "23000",
	1452: "23000", 1582: "42000", 1583: "42000", 1630: "42000", 1690: "22003",
	1846: "0A000", 3948: "42000",
}

// New is MySQL error code with its SQLSTATE (states) and a message.
func New(code int, format string, args ...any) *mysql.SQLError {
	return mysql.NewSQLError(code, State(code), format, args...)
}

// State is the SQLSTATE MySQL sends with code.
func State(code int) string {
	if s, ok := states[code]; ok {
		return s
	}
	return mysql.SSUnknownSQLState
}

// AlterNotSupported refuses a schema or table change Iceberg forbids
// without rewriting data; reason says why and what to do instead.
func AlterNotSupported(change, reason string, args ...any) error {
	return New(ErAlterOperationNotSupportedReason, "%s is not supported. Reason: %s", change, fmt.Sprintf(reason, args...))
}

// InvalidPartition refuses a partition term that does not fit its column.
func InvalidPartition(format string, args ...any) error {
	return New(ErFieldTypeNotAllowedAsPartitionField, format, args...)
}

// UnknownColumn is MySQL's 1054 for a column of tableName.
func UnknownColumn(col, tableName string) error {
	return New(mysql.ERBadFieldError, "Unknown column '%s' in '%s'", col, tableName)
}

// CantDrop is MySQL's 1091 for DROP COLUMN of a column that does not exist.
func CantDrop(col string) error {
	return New(mysql.ERCantDropFieldOrKey, "Can't DROP '%s'; check that column/key exists", col)
}

// DuplicateColumn is MySQL's 1060.
func DuplicateColumn(col string) error {
	return New(mysql.ERDupFieldName, "Duplicate column name '%s'", col)
}
