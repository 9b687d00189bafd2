package history

import (
	"context"
	gosql "database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Kept is what a history leaves for other engines to read (HISTORY_KEEP,
// `make interop`): its warehouse, and the rows the oracle holds at the
// end in every table and branch, which a reader of the warehouse must
// return.
type Kept struct {
	Seed      uint64      `json:"seed"`
	Warehouse string      `json:"warehouse"`
	Tables    []KeptTable `json:"tables"`
}

// KeptTable is one table's (or one branch's) expected rows. Values are
// JSON null, booleans, numbers for DOUBLE and FLOAT (exact: every value
// generated is a binary fraction) and strings for the rest: integers and
// decimals as digits (a decimal with its scale), dates as YYYY-MM-DD,
// timestamps as YYYY-MM-DD hh:mm:ss.ffffff.
type KeptTable struct {
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	Ref       string   `json:"ref"` // "main" or a branch
	Columns   []string `json:"columns"`
	Types     []string `json:"types"`
	Rows      [][]any  `json:"rows"`
}

// keep writes the oracle's rows of every table and branch to
// dir/expected.json, beside the warehouse the session wrote in
// dir/warehouse.
func (h *history) keep(dir string) error {
	kept := Kept{Seed: h.seed, Warehouse: "warehouse"}
	for _, t := range h.tables {
		refs := append([]string{"main"}, t.Branches...)
		for _, ref := range refs {
			if ref != "main" && h.sess.table(t.Name).branches[ref] == nil {
				continue
			}
			src := t.Name
			if ref != "main" {
				src = branchTable(t.Name, ref)
			}
			kt, err := h.sess.keptRows(h.ctx, t, src)
			if err != nil {
				return fmt.Errorf("rows of %s: %w", src, err)
			}
			kt.Ref = ref
			kept.Tables = append(kept.Tables, kt)
		}
	}
	out, err := json.MarshalIndent(kept, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "expected.json"), out, 0o644)
}

// keptRows reads the oracle's rows of a MariaDB table holding t's columns.
func (s *session) keptRows(ctx context.Context, t *Table, src string) (KeptTable, error) {
	kt := KeptTable{Namespace: "h", Name: t.Name, Rows: [][]any{}}
	for _, c := range t.Cols {
		kt.Columns = append(kt.Columns, c.Name)
		kt.Types = append(kt.Types, c.IceType())
	}
	rows, err := s.mc.QueryContext(ctx, fmt.Sprintf("SELECT %s FROM %s", t.colNames(), src))
	if err != nil {
		return kt, err
	}
	defer rows.Close()
	vals := make([]gosql.NullString, len(t.Cols))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return kt, err
		}
		row := make([]any, len(vals))
		for i, v := range vals {
			if row[i], err = keptValue(t.Cols[i], v); err != nil {
				return kt, fmt.Errorf("column %s: %w", t.Cols[i].Name, err)
			}
		}
		kt.Rows = append(kt.Rows, row)
	}
	return kt, rows.Err()
}

// keptValue is a MariaDB value (as its text) in KeptTable's form.
func keptValue(c Column, v gosql.NullString) (any, error) {
	if !v.Valid {
		return nil, nil
	}
	switch c.Kind {
	case KBool:
		return v.String != "0", nil
	case KDouble, KFloat:
		return strconv.ParseFloat(v.String, 64)
	case KTimestamp:
		ts := v.String
		if !strings.Contains(ts, ".") {
			ts += "."
		}
		whole, frac, _ := strings.Cut(ts, ".")
		return whole + "." + (frac + "000000")[:6], nil
	default:
		return v.String, nil
	}
}
