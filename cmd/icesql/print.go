package main

import (
	"database/sql"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// result is a fetched result set, ready to print.
type result struct {
	columns []string
	numeric []bool // right-aligned, as the mysql client does for numbers
	rows    [][]*string
}

// fetch reads all rows of a result set as text.
func fetch(rows *sql.Rows) (*result, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	res := &result{columns: cols, numeric: make([]bool, len(cols))}
	for i, t := range types {
		res.numeric[i] = isNumericType(t.DatabaseTypeName())
	}
	for rows.Next() {
		// NullString, not RawBytes: database/sql scans an empty value into
		// a nil RawBytes, which printed as NULL.
		vals := make([]sql.NullString, len(cols))
		dest := make([]any, len(cols))
		for i := range vals {
			dest[i] = &vals[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		row := make([]*string, len(cols))
		for i, v := range vals {
			if v.Valid {
				row[i] = &vals[i].String
			}
		}
		res.rows = append(res.rows, row)
	}
	return res, rows.Err()
}

func isNumericType(name string) bool {
	switch strings.ToUpper(name) {
	case "TINYINT", "SMALLINT", "MEDIUMINT", "INT", "INTEGER", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL", "YEAR",
		"UNSIGNED TINYINT", "UNSIGNED SMALLINT", "UNSIGNED INT", "UNSIGNED BIGINT":
		return true
	}
	return false
}

// printTable writes a result the way the mysql client does:
//
//	+---------+----------+
//	| country | COUNT(*) |
//	+---------+----------+
//	| USA     |        1 |
//	+---------+----------+
func printTable(w io.Writer, res *result) {
	widths := make([]int, len(res.columns))
	for i, c := range res.columns {
		widths[i] = utf8.RuneCountInString(c)
	}
	for _, row := range res.rows {
		for i, v := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell(v)))
		}
	}
	var rule strings.Builder
	rule.WriteString("+")
	for _, w := range widths {
		rule.WriteString(strings.Repeat("-", w+2) + "+")
	}
	line := func(values []string, right []bool) {
		var b strings.Builder
		b.WriteString("|")
		for i, v := range values {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(v))
			if right != nil && right[i] {
				b.WriteString(" " + pad + v + " |")
			} else {
				b.WriteString(" " + v + pad + " |")
			}
		}
		fmt.Fprintln(w, b.String())
	}
	fmt.Fprintln(w, rule.String())
	line(res.columns, nil)
	fmt.Fprintln(w, rule.String())
	for _, row := range res.rows {
		values := make([]string, len(row))
		right := make([]bool, len(row))
		for i, v := range row {
			values[i] = cell(v)
			right[i] = res.numeric[i] && v != nil
		}
		line(values, right)
	}
	fmt.Fprintln(w, rule.String())
}

// printVertical writes a result the way the mysql client does for \G:
//
//	*************************** 1. row ***************************
//	country: USA
//	  total: 1250
func printVertical(w io.Writer, res *result) {
	width := 0
	for _, c := range res.columns {
		width = max(width, utf8.RuneCountInString(c))
	}
	for n, row := range res.rows {
		fmt.Fprintf(w, "*************************** %d. row ***************************\n", n+1)
		for i, v := range row {
			c := res.columns[i]
			fmt.Fprintf(w, "%s%s: %s\n", strings.Repeat(" ", width-utf8.RuneCountInString(c)), c, cell(v))
		}
	}
}

func cell(v *string) string {
	if v == nil {
		return "NULL"
	}
	return *v
}

// plural is "1 row" or "N rows".
func plural(n int64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
