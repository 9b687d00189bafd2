package mysqlerr

import (
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
	"github.com/dolthub/vitess/go/vt/sqlparser"
	goerrors "gopkg.in/src-d/go-errors.v1"

	"github.com/icesql/icesql/storage"
)

// NotSupported is MySQL error 1235 (ER_NOT_SUPPORTED_YET) for a statement
// icesql understands but cannot honour. go-mysql-server passes a
// *mysql.SQLError to the client unchanged, code and all.
func NotSupported(format string, args ...any) error {
	return New(mysql.ERNotSupportedYet, format, args...)
}

// Conflict is MySQL error 1213 (ER_LOCK_DEADLOCK), the code clients retry on.
func Conflict(format string, args ...any) *mysql.SQLError {
	return New(mysql.ERLockDeadlock, format, args...)
}

// Annotated prefixes err's message with what was being done. Unlike
// fmt.Errorf it keeps the MySQL code of a coded error for wire clients:
// go-mysql-server's handler only recognises an unwrapped *mysql.SQLError.
func Annotated(err error, doing string) error {
	var coded *mysql.SQLError
	if errors.As(err, &coded) {
		return mysql.NewSQLError(coded.Num, coded.State, "%s: %s", doing, coded.Message)
	}
	if IsConflict(err) {
		return Conflict("%s: %v", doing, err)
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// IsConflict reports whether err is a commit that lost to a concurrent
// change, whatever wrapped it on the way up.
func IsConflict(err error) bool {
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
		return Conflict("%s", msg)
	}
	return nil
}

// CatalogError turns the catalog's sentinel errors about name into the
// go-mysql-server errors that carry the MySQL codes clients expect.
func CatalogError(err error, name string) error {
	var bad *storage.NameError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &bad):
		return NameError(bad)
	case errors.Is(err, catalog.ErrNoSuchTable):
		return sql.ErrTableNotFound.New(name)
	case errors.Is(err, catalog.ErrTableAlreadyExists):
		return sql.ErrTableAlreadyExists.New(name)
	case errors.Is(err, catalog.ErrNoSuchNamespace):
		return sql.ErrDatabaseNotFound.New(name)
	case errors.Is(err, catalog.ErrNamespaceAlreadyExists):
		return sql.ErrDatabaseExists.New(name)
	case errors.Is(err, storage.ErrPlacement):
		return NotSupported("%s", err.Error())
	}
	return err
}

// NameError is the MySQL error for a name that cannot be stored:
// ER_TOO_LONG_IDENT for its length, else ER_WRONG_DB_NAME or
// ER_WRONG_TABLE_NAME (views share the table's).
func NameError(e *storage.NameError) error {
	switch {
	case e.TooLong:
		return New(mysql.ERTooLongIdent, "%s", e.Error())
	case e.Kind == "database":
		return New(mysql.ERWrongDbName, "%s", e.Error())
	}
	return New(mysql.ERWrongTableName, "%s", e.Error())
}

// codedKind is a go-mysql-server error kind and the MySQL code it means.
type codedKind struct {
	kind *goerrors.Kind
	code int // its SQLSTATE is State(code)
	// match recognises the kind's message once flattened: by default the
	// kind's message with its verbs as wildcards.
	match *regexp.Regexp
}

// mysqlCodes lists the error kinds go-mysql-server reports as 1105
// (ER_UNKNOWN_ERROR) although MySQL has a code for them. Its server handler
// flattens every error to a *mysql.SQLError before an integrator can see the
// kind, so kinds are recognised by their message as well (see Coded).
var mysqlCodes = func() []codedKind {
	list := []codedKind{
		{kind: sql.ErrSyntaxError, code: mysql.ERParseError,
			match: regexp.MustCompile(`^syntax error (at position|near )`)}, // the kind's message is a bare %s; "near" is the planner's
		{kind: sql.ErrColumnNotFound, code: mysql.ERBadFieldError},
		{kind: sql.ErrTableColumnNotFound, code: mysql.ERBadFieldError},
		{kind: sql.ErrTableAlreadyExists, code: mysql.ERTableExists},
		{kind: sql.ErrTableNotFound, code: mysql.ERNoSuchTable},
		{kind: sql.ErrExistingView, code: mysql.ERTableExists},
		{kind: sql.ErrNoForeignKeySupport, code: mysql.ERNotSupportedYet}, // ddl/foreignkeys.go: only CREATE TABLE records them
		{kind: sql.ErrViewDoesNotExist, code: mysql.ERBadTable},
		{kind: sql.ErrDatabaseNotFound, code: mysql.ERBadDb},
		{kind: sql.ErrNoDatabaseSelected, code: mysql.ERNoDb},
		{kind: sql.ErrDuplicateColumn, code: mysql.ERDupFieldName},
		{kind: sql.ErrInvalidIdentifier, code: mysql.ERTooLongIdent}, // its one use: a name over 64 bytes
		{kind: analyzererrors.ErrValidationGroupBy, code: mysql.ERWrongFieldWithGroup},
		{kind: analyzererrors.ErrValidationGroupByOrderBy, code: mysql.ERWrongFieldWithGroup},
		{kind: sql.ErrNonAggregatedColumnWithoutGroupBy, code: mysql.ERMixOfGroupFuncAndFields},
		badTimeValue,
		truncatedNumber,
		{kind: sql.ErrInvalidValue, code: mysql.ERTruncatedWrongValueForField},
		{kind: types.ErrConvertingToTime, code: mysql.ERTruncatedWrongValue},
		{kind: types.ErrLengthBeyondLimit, code: mysql.ERDataTooLong},
		{kind: sql.ErrValueOutOfRange, code: mysql.ERWarnDataOutOfRange},
		{kind: types.ErrConvertToDecimalLimit, code: mysql.ERWarnDataOutOfRange},
		{kind: sql.ErrInsertIntoMismatchValueCount, code: mysql.ERWrongValueCountOnRow},
		{kind: sql.ErrUnknownTable, code: mysql.ERBadTable},
		{kind: sql.ErrStoredProcedureDoesNotExist, code: mysql.ERSPDoesNotExist},
		{kind: sql.ErrAmbiguousColumnName, code: mysql.ERNonUniq},
		{kind: sql.ErrDuplicateAliasOrTable, code: mysql.ERNonUniqTable},
		{kind: planbuilder.ErrSelectsDifferentLength, code: mysql.ERWrongNumberOfColumnsInSelect},
		{kind: ordinalOutOfRange, code: mysql.ERBadFieldError},
		{kind: invalidIntervalUnit, code: mysql.ERParseError},
		{kind: sql.ErrFunctionNotFound, code: mysql.ERSPDoesNotExist},       // MySQL: FUNCTION db.f does not exist
		{kind: plan.ErrTruncateNotSupported, code: mysql.ERNotSupportedYet}, // metadata tables
		{kind: sql.ErrPrivilegeCheckFailed, code: ErTableAccessDenied},      // ForStatement names the command
		{kind: sql.ErrTableAccessDeniedForUser, code: ErTableAccessDenied},
		{kind: sql.ErrDatabaseAccessDeniedForUser, code: mysql.ERDBAccessDenied},
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
var badTimeValue = codedKind{kind: sql.ErrInvalidValue, code: mysql.ERTruncatedWrongValue,
	match: regexp.MustCompile(`^error: '.*' is not a valid value for '(date|datetime|timestamp|time)(\(\d\))?'$`)}

// truncatedNumber is a number followed by other text ('12abc') for a
// numeric column: MySQL's strict mode refuses it as data truncated (1265),
// where text with no number in front is 1366.
var truncatedNumber = codedKind{kind: sql.ErrInvalidValue, code: mysql.ERWarnDataTruncated,
	match: regexp.MustCompile(`^error: '\s*[-+]?(\d|\.\d).*' is not a valid value for '(tinyint|smallint|mediumint|int|bigint|float|double|decimal)\b.*'$`)}

// narrowCodes pick out part of a kind that go-mysql-server itself codes.
var narrowCodes = []codedKind{badTimeValue, truncatedNumber}

// Coded is the error a client sees: a *mysql.SQLError with the code
// MySQL uses for the same mistake, and MySQL's SQLSTATE for that code.
func Coded(err error) *mysql.SQLError {
	return withMySQLState(codedError(err))
}

// withMySQLState gives se MySQL's SQLSTATE for its code when it carries
// the general HY000.
func withMySQLState(se *mysql.SQLError) *mysql.SQLError {
	if se == nil || (se.State != mysql.SSUnknownSQLState && se.State != "") {
		return se
	}
	if state, ok := states[se.Num]; ok {
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
	if IsConflict(err) {
		return Conflict("%s", err.Error())
	}
	if isNoMemory(err) {
		return OutOfMemory(false, 0) // go-mysql-server's caches refused: the limit is not at hand here
	}
	var coded *mysql.SQLError
	if errors.As(err, &coded) && coded.Num != mysql.ERUnknownError {
		// Already coded, maybe by go-mysql-server's handler with a code
		// broader than MySQL's (1366 for any bad value, where a bad date is 1292).
		for _, k := range narrowCodes {
			if k.match.MatchString(coded.Message) {
				return New(k.code, "%s", coded.Message)
			}
		}
		return coded
	}
	for _, k := range mysqlCodes {
		if inner := kindIn(k.kind, err); inner != nil && (k.match == nil || k.match.MatchString(inner.Error())) {
			return New(k.code, "%s", err.Error())
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
			return New(k.code, "%s", se.Message)
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

// ForStatement is Coded with the codes MySQL gives for the same
// cause depending on the statement: dropping a missing table is 1051, not
// 1146; dropping a missing database is 1008, not 1049.
func ForStatement(query string, err error) *mysql.SQLError {
	se := Coded(err)
	if se == nil {
		return nil
	}
	if se.Message == errInsertIntoViewGMS {
		return New(ErNonInsertableTable, "the target of the INSERT is a view; icesql views are read-only: insert into the tables it reads")
	}
	words := strings.Fields(strings.ToUpper(sqlparser.StripLeadingComments(query)))
	if se.Num == ErTableAccessDenied && strings.HasPrefix(se.Message, "command denied") && len(words) > 0 {
		// MySQL names the command: "INSERT command denied to user 'u'@'h'".
		return mysql.NewSQLError(se.Num, se.State, "%s %s", words[0], se.Message)
	}
	if isCreateView(words) && wrongColumnCount.MatchString(se.Message) {
		return New(ErViewWrongList, "View's SELECT and view's field list have different column counts: %s", se.Message)
	}
	if len(words) < 2 || words[0] != "DROP" {
		return se
	}
	switch {
	case se.Num == mysql.ERNoSuchTable && words[1] == "TABLE":
		return New(mysql.ERBadTable, "%s", se.Message)
	case se.Num == mysql.ERBadDb && (words[1] == "DATABASE" || words[1] == "SCHEMA" || words[1] == "NAMESPACE"):
		return New(mysql.ERDbDropExists, "%s", se.Message)
	}
	return se
}

// wrongColumnCount is go-mysql-server's sql.ErrInvalidColumnNumber, by its
// message since the wire handler flattens errors before icesql sees them.
var wrongColumnCount = regexp.MustCompile(`^tuple should contain \d+ column\(s\), but has \d+`)

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

// OutOfMemory is the error of a statement refused more memory; sort says
// whether it was sorting (MySQL's 1038) or building other state (1041).
// limit is the process's configured limit in bytes (memlimit.Configured),
// named in the message; 0 names none.
func OutOfMemory(sort bool, limit int64) *mysql.SQLError {
	code, what := ErOutOfResources, "the statement's state (hash tables, groups, rows held)"
	if sort {
		code, what = ErOutOfSortMemory, "the rows it sorts"
	}
	figure := ""
	if limit > 0 {
		figure = fmt.Sprintf(" (%d MiB)", limit>>20)
	}
	return New(code,
		"Out of memory: %s would take the server past its memory limit%s; "+
			"add a LIMIT or a narrower WHERE, or raise --memory-limit-mib", what, figure)
}

// isNoMemory reports whether err is go-mysql-server's refusal of a cache to
// grow past the budget, by kind or, once flattened by its wire handler, by
// message.
func isNoMemory(err error) bool {
	var coded *mysql.SQLError
	if errors.As(err, &coded) {
		return coded.Message == sql.ErrNoMemoryAvailable.Message
	}
	return sql.ErrNoMemoryAvailable.Is(err)
}
