package engine

import (
	"fmt"

	"github.com/dolthub/vitess/go/mysql"
)

// MySQL error numbers the vitess package has no constant for.
const (
	// erAlterOperationNotSupportedReason is ER_ALTER_OPERATION_NOT_SUPPORTED_REASON,
	// MySQL's answer to an ALTER TABLE the storage engine cannot do in place.
	erAlterOperationNotSupportedReason = 1846
	// erFieldTypeNotAllowedAsPartitionField is
	// ER_FIELD_TYPE_NOT_ALLOWED_AS_PARTITION_FIELD.
	erFieldTypeNotAllowedAsPartitionField = 1659
)

// alterNotSupported refuses a schema or table change Iceberg forbids
// without rewriting data; reason says why and what to do instead.
func alterNotSupported(change, reason string, args ...any) error {
	return mysql.NewSQLError(erAlterOperationNotSupportedReason, "0A000", "%s is not supported. Reason: %s", change, fmt.Sprintf(reason, args...))
}

// invalidPartition refuses a partition term that does not fit its column.
func invalidPartition(format string, args ...any) error {
	return mysql.NewSQLError(erFieldTypeNotAllowedAsPartitionField, "HY000", format, args...)
}

// unknownColumn is MySQL's 1054 for a column of tableName.
func unknownColumn(col, tableName string) error {
	return mysql.NewSQLError(mysql.ERBadFieldError, mysql.SSBadFieldError, "Unknown column '%s' in '%s'", col, tableName)
}

// cantDrop is MySQL's 1091 for DROP COLUMN of a column that does not exist.
func cantDrop(col string) error {
	return mysql.NewSQLError(mysql.ERCantDropFieldOrKey, "42000", "Can't DROP '%s'; check that column/key exists", col)
}

// duplicateColumn is MySQL's 1060.
func duplicateColumn(col string) error {
	return mysql.NewSQLError(mysql.ERDupFieldName, "42S21", "Duplicate column name '%s'", col)
}
