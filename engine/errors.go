package engine

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer/analyzererrors"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/dolthub/vitess/go/vt/sqlparser"
	goerrors "gopkg.in/src-d/go-errors.v1"

	"github.com/icesql/icesql/storage"
)

// notSupported is MySQL error 1235 (ER_NOT_SUPPORTED_YET) for a statement
// icesql understands but cannot honour. go-mysql-server passes a
// *mysql.SQLError to the client unchanged, code and all.
func notSupported(format string, args ...any) error {
	return mysql.NewSQLError(mysql.ERNotSupportedYet, mysql.SSClientError, format, args...)
}

// conflict is MySQL error 1213 (ER_LOCK_DEADLOCK), the code clients retry on.
func conflict(format string, args ...any) *mysql.SQLError {
	return mysql.NewSQLError(mysql.ERLockDeadlock, "40001", format, args...)
}

// annotated prefixes err's message with what was being done. Unlike
// fmt.Errorf it keeps the MySQL code of a coded error for wire clients:
// go-mysql-server's handler only recognises an unwrapped *mysql.SQLError.
func annotated(err error, doing string) error {
	var coded *mysql.SQLError
	if errors.As(err, &coded) {
		return mysql.NewSQLError(coded.Num, coded.State, "%s: %s", doing, coded.Message)
	}
	if isConflict(err) {
		return conflict("%s: %v", doing, err)
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// isConflict reports whether err is a commit that lost to a concurrent
// change, whatever wrapped it on the way up.
func isConflict(err error) bool {
	var coded *mysql.SQLError
	if errors.As(err, &coded) && coded.Num == mysql.ERLockDeadlock {
		return false // already coded, with its own message
	}
	return errors.Is(err, storage.ErrConflict) || errors.Is(err, storage.ErrRowConflict) ||
		errors.Is(err, table.ErrCommitFailed) || errors.Is(err, table.ErrCommitDiverged)
}

// wrappedCode finds the code of a *mysql.SQLError that was wrapped by
// fmt.Errorf before go-mysql-server's wire handler flattened the chain to
// its text (sql.CastSQLError only recognises an unwrapped *mysql.SQLError,
// so the client would get 1105): SQLError.Error() writes the code into the
// text as " (errno N) (sqlstate S)". A conflict that reached the handler as
// a storage sentinel is recognised by the sentinel's text.
var (
	wrappedCode  = regexp.MustCompile(` \(errno (\d+)\) \(sqlstate (\w{5})\)`)
	conflictText = regexp.MustCompile(regexp.QuoteMeta(storage.ErrConflict.Error()) + ` after \d+ attempts|` +
		regexp.QuoteMeta(storage.ErrRowConflict.Error()) + `|` + regexp.QuoteMeta(table.ErrCommitFailed.Error()))
)

// innerCode is the coded error a flattened 1105 message stands for, or nil.
func innerCode(msg string) *mysql.SQLError {
	if m := wrappedCode.FindStringSubmatchIndex(msg); m != nil {
		num, err := strconv.Atoi(msg[m[2]:m[3]])
		if err == nil && num != mysql.ERUnknownError {
			return mysql.NewSQLError(num, msg[m[4]:m[5]], "%s", msg[:m[0]]+msg[m[1]:])
		}
	}
	if conflictText.MatchString(msg) {
		return conflict("%s", msg)
	}
	return nil
}

// catalogError turns the catalog's sentinel errors about name into the
// go-mysql-server errors that carry the MySQL codes clients expect.
func catalogError(err error, name string) error {
	var bad *storage.NameError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &bad):
		return nameError(bad)
	case errors.Is(err, catalog.ErrNoSuchTable):
		return sql.ErrTableNotFound.New(name)
	case errors.Is(err, catalog.ErrTableAlreadyExists):
		return sql.ErrTableAlreadyExists.New(name)
	case errors.Is(err, catalog.ErrNoSuchNamespace):
		return sql.ErrDatabaseNotFound.New(name)
	case errors.Is(err, catalog.ErrNamespaceAlreadyExists):
		return sql.ErrDatabaseExists.New(name)
	}
	return err
}

// nameError is the MySQL error for a name that cannot be stored:
// ER_TOO_LONG_IDENT for its length, else ER_WRONG_DB_NAME or
// ER_WRONG_TABLE_NAME (views share the table's).
func nameError(e *storage.NameError) error {
	switch {
	case e.TooLong:
		return mysql.NewSQLError(mysql.ERTooLongIdent, mysql.SSClientError, "%s", e.Error())
	case e.Kind == "database":
		return mysql.NewSQLError(mysql.ERWrongDbName, mysql.SSClientError, "%s", e.Error())
	}
	return mysql.NewSQLError(mysql.ERWrongTableName, mysql.SSClientError, "%s", e.Error())
}

// codedKind is a go-mysql-server error kind and the MySQL code it means.
type codedKind struct {
	kind  *goerrors.Kind
	code  int
	state string
	// match recognises the kind's message once flattened: by default the
	// kind's message with its verbs as wildcards.
	match *regexp.Regexp
}

// mysqlCodes lists the error kinds go-mysql-server reports as 1105
// (ER_UNKNOWN_ERROR) although MySQL has a code for them. Its server handler
// flattens every error to a *mysql.SQLError before an integrator can see the
// kind, so kinds are recognised by their message as well (see mysqlError).
var mysqlCodes = func() []codedKind {
	list := []codedKind{
		{kind: sql.ErrSyntaxError, code: mysql.ERParseError, state: mysql.SSClientError,
			match: regexp.MustCompile(`^syntax error (at position|near )`)}, // the kind's message is a bare %s; "near" is the planner's
		{kind: sql.ErrColumnNotFound, code: mysql.ERBadFieldError, state: mysql.SSBadFieldError},
		{kind: sql.ErrTableColumnNotFound, code: mysql.ERBadFieldError, state: mysql.SSBadFieldError},
		{kind: sql.ErrTableAlreadyExists, code: mysql.ERTableExists, state: "42S01"},
		{kind: sql.ErrTableNotFound, code: mysql.ERNoSuchTable, state: mysql.SSUnknownTable},
		{kind: sql.ErrExistingView, code: mysql.ERTableExists, state: "42S01"},
		{kind: sql.ErrNoForeignKeySupport, code: mysql.ERNotSupportedYet, state: mysql.SSClientError}, // foreignkeys.go: only CREATE TABLE records them
		{kind: sql.ErrViewDoesNotExist, code: mysql.ERBadTable, state: mysql.SSUnknownTable},
		{kind: sql.ErrDatabaseNotFound, code: mysql.ERBadDb, state: mysql.SSClientError},
		{kind: sql.ErrNoDatabaseSelected, code: mysql.ERNoDb, state: "3D000"},
		{kind: sql.ErrDuplicateColumn, code: mysql.ERDupFieldName, state: "42S21"},
		{kind: sql.ErrInvalidIdentifier, code: mysql.ERTooLongIdent, state: "42000"}, // its one use: a name over 64 bytes
		{kind: analyzererrors.ErrValidationGroupBy, code: mysql.ERWrongFieldWithGroup, state: "42000"},
		{kind: analyzererrors.ErrValidationGroupByOrderBy, code: mysql.ERWrongFieldWithGroup, state: "42000"},
		{kind: sql.ErrNonAggregatedColumnWithoutGroupBy, code: mysql.ERMixOfGroupFuncAndFields, state: "42000"},
		badTimeValue,
		{kind: sql.ErrInvalidValue, code: mysql.ERTruncatedWrongValueForField, state: "HY000"},
		{kind: types.ErrConvertingToTime, code: mysql.ERTruncatedWrongValue, state: "22007"},
		{kind: types.ErrLengthBeyondLimit, code: mysql.ERDataTooLong, state: mysql.SSDataTooLong},
		{kind: sql.ErrValueOutOfRange, code: mysql.ERWarnDataOutOfRange, state: mysql.SSDataOutOfRange},
		{kind: types.ErrConvertToDecimalLimit, code: mysql.ERWarnDataOutOfRange, state: mysql.SSDataOutOfRange},
		{kind: sql.ErrInsertIntoMismatchValueCount, code: mysql.ERWrongValueCountOnRow, state: "21S01"},
		{kind: sql.ErrUnknownTable, code: mysql.ERBadTable, state: mysql.SSUnknownTable},
		{kind: sql.ErrStoredProcedureDoesNotExist, code: mysql.ERSPDoesNotExist, state: "42000"},
		{kind: sql.ErrAmbiguousColumnName, code: mysql.ERNonUniq, state: "23000"},
		{kind: sql.ErrDuplicateAliasOrTable, code: mysql.ERNonUniqTable, state: "42000"},
		{kind: planbuilder.ErrSelectsDifferentLength, code: mysql.ERWrongNumberOfColumnsInSelect, state: "21000"},
		{kind: ordinalOutOfRange, code: mysql.ERBadFieldError, state: mysql.SSBadFieldError},
		{kind: invalidIntervalUnit, code: mysql.ERParseError, state: mysql.SSClientError},
		{kind: sql.ErrFunctionNotFound, code: mysql.ERSPDoesNotExist, state: "42000"},                   // MySQL: FUNCTION db.f does not exist
		{kind: plan.ErrTruncateNotSupported, code: mysql.ERNotSupportedYet, state: mysql.SSClientError}, // metadata tables
		{kind: sql.ErrPrivilegeCheckFailed, code: erTableAccessDenied, state: mysql.SSClientError},      // statementError names the command
		{kind: sql.ErrTableAccessDeniedForUser, code: erTableAccessDenied, state: mysql.SSClientError},
		{kind: sql.ErrDatabaseAccessDeniedForUser, code: mysql.ERDBAccessDenied, state: mysql.SSClientError},
	}
	verb := regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)
	for i, k := range list {
		if k.match != nil {
			continue // a narrower case of its kind, or a kind whose message is a bare verb
		}
		parts := verb.Split(k.kind.Message, -1)
		for j, p := range parts {
			parts[j] = regexp.QuoteMeta(p)
		}
		list[i].match = regexp.MustCompile("^" + strings.Join(parts, "(?s:.*)") + "$")
	}
	return list
}()

// Errors go-mysql-server makes without a kind of its own (fmt.Errorf, or
// an unexported kind), recognised by their message: GROUP BY 3 of a
// two-column select list (MySQL: 1054), INTERVAL 1 FORTNIGHT (MySQL: a
// syntax error).
var (
	ordinalOutOfRange   = goerrors.NewKind("column ordinal out of range: %d")
	invalidIntervalUnit = goerrors.NewKind("invalid interval unit: %s")
)

// badTimeValue is a bad date or time, which go-mysql-server reports as any
// bad value (1366) and MySQL as 1292.
var badTimeValue = codedKind{kind: sql.ErrInvalidValue, code: mysql.ERTruncatedWrongValue, state: "22007",
	match: regexp.MustCompile(`^error: '.*' is not a valid value for '(date|datetime|timestamp|time)(\(\d\))?'$`)}

// narrowCodes pick out part of a kind that go-mysql-server itself codes.
var narrowCodes = []codedKind{badTimeValue}

// mysqlError is the error a client sees: a *mysql.SQLError with the code
// MySQL uses for the same mistake, and MySQL's SQLSTATE for that code.
func mysqlError(err error) *mysql.SQLError {
	return withMySQLState(codedError(err))
}

// mysqlStates are the SQLSTATEs MySQL sends with its error codes where
// they are not HY000. go-mysql-server codes many errors with HY000
// (1146 "table not found" among them), and clients branch on the state
// (JDBC's SQLSyntaxErrorException, SQLAlchemy's NoSuchTableError).
var mysqlStates = map[int]string{
	1044: "42000", 1045: "28000", 1046: "3D000", 1048: "23000", 1049: "42000",
	1050: "42S01", 1051: "42S02", 1052: "23000", 1054: "42S22", 1055: "42000",
	1060: "42S21", 1061: "42000", 1062: "23000", 1063: "42000", 1064: "42000",
	1067: "42000", 1068: "42000", 1072: "42000", 1075: "42000", 1091: "42000",
	1109: "42S02", 1113: "42000", 1136: "21S01", 1140: "42000", 1142: "42000",
	1143: "42000", 1146: "42S02", 1149: "42000", 1166: "42000", 1213: "40001",
	1216: "23000", 1217: "23000", 1222: "21000", 1241: "21000", 1242: "21000",
	1264: "22003", 1292: "22007", 1305: "42000", 1365: "22012", 1406: "22001",
	1451: "23000", 1452: "23000", 1582: "42000", 1583: "42000", 1630: "42000",
	1690: "22003",
}

// withMySQLState gives se MySQL's SQLSTATE for its code when it carries
// the general HY000.
func withMySQLState(se *mysql.SQLError) *mysql.SQLError {
	if se == nil || (se.State != mysql.SSUnknownSQLState && se.State != "") {
		return se
	}
	if state, ok := mysqlStates[se.Num]; ok {
		fixed := *se
		fixed.State = state
		return &fixed
	}
	return se
}

func codedError(err error) *mysql.SQLError {
	if err == nil {
		return nil
	}
	err = sql.UnwrapError(err)
	if isConflict(err) {
		return conflict("%s", err.Error())
	}
	if isNoMemory(err) {
		return outOfMemory(false) // memlimit.go
	}
	var coded *mysql.SQLError
	if errors.As(err, &coded) && coded.Num != mysql.ERUnknownError {
		// Already coded, maybe by go-mysql-server's handler with a code
		// broader than MySQL's (1366 for any bad value, where a bad date is 1292).
		for _, k := range narrowCodes {
			if k.match.MatchString(coded.Message) {
				return mysql.NewSQLError(k.code, k.state, "%s", coded.Message)
			}
		}
		return coded
	}
	for _, k := range mysqlCodes {
		if inner := kindIn(k.kind, err); inner != nil && (k.match == nil || k.match.MatchString(inner.Error())) {
			return mysql.NewSQLError(k.code, k.state, "%s", err.Error())
		}
	}
	se := sql.CastSQLError(err)
	if se.Num != mysql.ERUnknownError {
		return se
	}
	if inner := innerCode(se.Message); inner != nil {
		return inner
	}
	for _, k := range mysqlCodes {
		if k.match.MatchString(se.Message) {
			return mysql.NewSQLError(k.code, k.state, "%s", se.Message)
		}
	}
	return se
}

// kindIn returns the error of kind k in err's chain, or nil.
func kindIn(k *goerrors.Kind, err error) error {
	for ; err != nil; err = errors.Unwrap(err) {
		if k.Is(err) {
			return err
		}
	}
	return nil
}

// statementError is mysqlError with the codes MySQL gives for the same
// cause depending on the statement: dropping a missing table is 1051, not
// 1146; dropping a missing database is 1008, not 1049.
func statementError(query string, err error) *mysql.SQLError {
	se := mysqlError(err)
	if se == nil {
		return nil
	}
	if se.Message == errInsertIntoViewGMS {
		return mysql.NewSQLError(erNonInsertableTable, "HY000", "the target of the INSERT is a view; icesql views are read-only: insert into the tables it reads")
	}
	words := strings.Fields(strings.ToUpper(sqlparser.StripLeadingComments(query)))
	if se.Num == erTableAccessDenied && strings.HasPrefix(se.Message, "command denied") && len(words) > 0 {
		// MySQL names the command: "INSERT command denied to user 'u'@'h'".
		return mysql.NewSQLError(se.Num, se.State, "%s %s", words[0], se.Message)
	}
	if isCreateView(words) && wrongColumnCount.MatchString(se.Message) {
		return mysql.NewSQLError(erViewWrongList, "HY000", "View's SELECT and view's field list have different column counts: %s", se.Message)
	}
	if len(words) < 2 || words[0] != "DROP" {
		return se
	}
	switch {
	case se.Num == mysql.ERNoSuchTable && words[1] == "TABLE":
		return mysql.NewSQLError(mysql.ERBadTable, mysql.SSUnknownTable, "%s", se.Message)
	case se.Num == mysql.ERBadDb && (words[1] == "DATABASE" || words[1] == "SCHEMA" || words[1] == "NAMESPACE"):
		return mysql.NewSQLError(mysql.ERDbDropExists, "HY000", "%s", se.Message)
	}
	return se
}

// erNonInsertableTable is MySQL's ER_NON_INSERTABLE_TABLE, which vitess does not name.
const erNonInsertableTable = 1471

// wrongColumnCount is go-mysql-server's sql.ErrInvalidColumnNumber, by its
// message since the wire handler flattens errors before icesql sees them.
var wrongColumnCount = regexp.MustCompile(`^tuple should contain \d+ column\(s\), but has \d+`)

// erViewWrongList is MySQL's ER_VIEW_WRONG_LIST, which vitess does not name.
const erViewWrongList = 1353

// isCreateView reports whether a statement's words begin CREATE [OR REPLACE] ... VIEW.
func isCreateView(words []string) bool {
	if len(words) < 2 || words[0] != "CREATE" {
		return false
	}
	for _, w := range words[1:] {
		if w == "VIEW" {
			return true
		}
		if w == "AS" || w == "TABLE" || w == "SELECT" {
			return false
		}
	}
	return false
}

// errInsertIntoViewGMS is go-mysql-server's message for an INSERT into a view.
const errInsertIntoViewGMS = "expected insert destination to be resolved or unresolved table"

// codeMappingHandler gives wire clients the same codes as statementError,
// and adds a failed statement's error to its session's diagnostics
// (diagnostics.go).
type codeMappingHandler struct {
	mysql.Handler
	sessions *statementLimits // the session of each connection
}

func (h codeMappingHandler) recode(c *mysql.Conn, query string, err error) error {
	if err == nil {
		return nil
	}
	se := statementError(query, err)
	rememberError(h.sessions.sessionOf(c.ConnectionID), se)
	return se
}

func (h codeMappingHandler) ComInitDB(c *mysql.Conn, schemaName string) error {
	return h.recode(c, "", h.Handler.ComInitDB(c, schemaName))
}

func (h codeMappingHandler) ComQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) error {
	return h.recode(c, query, h.Handler.ComQuery(ctx, c, query, callback))
}

func (h codeMappingHandler) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) (string, error) {
	rest, err := h.Handler.ComMultiQuery(ctx, c, query, callback)
	return rest, h.recode(c, query, err)
}

func (h codeMappingHandler) ComPrepare(ctx context.Context, c *mysql.Conn, query string, prepare *mysql.PrepareData) ([]*querypb.Field, error) {
	fields, err := h.Handler.ComPrepare(ctx, c, query, prepare)
	return fields, h.recode(c, query, err)
}

func (h codeMappingHandler) ComStmtExecute(ctx context.Context, c *mysql.Conn, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) error {
	return h.recode(c, prepare.PrepareStmt, h.Handler.ComStmtExecute(ctx, c, prepare, callback))
}

// erTableAccessDenied is MySQL's ER_TABLEACCESS_DENIED_ERROR, which vitess
// does not name.
const erTableAccessDenied = 1142
