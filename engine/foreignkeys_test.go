package engine_test

import (
	"path/filepath"
	"testing"
)

// TestForeignKeysRecorded checks the table properties CREATE TABLE leaves
// for foreign keys, which other engines see as plain properties.
func TestForeignKeysRecorded(t *testing.T) {
	dir := t.TempDir()
	conn := openDB(t, "file://"+filepath.ToSlash(dir))
	mustExec(t, conn, "CREATE DATABASE fk", "USE fk",
		"CREATE TABLE customers (id INT PRIMARY KEY)",
		"CREATE TABLE items (id INT, order_id INT REFERENCES customers (id), "+
			"CONSTRAINT fk_order FOREIGN KEY (order_id) REFERENCES fk.customers (id) ON DELETE CASCADE ON UPDATE SET NULL) COMMENT 'order items'")
	props := loadWithIcebergGo(t, dir, "fk", "items").Properties()
	want := map[string]string{
		"icesql.foreign-key.items_ibfk_1": "FOREIGN KEY (`order_id`) REFERENCES `customers` (`id`)",
		"icesql.foreign-key.fk_order":     "FOREIGN KEY (`order_id`) REFERENCES `fk`.`customers` (`id`) ON DELETE CASCADE ON UPDATE SET NULL",
		"comment":                         "order items",
	}
	for k, v := range want {
		if props[k] != v {
			t.Errorf("property %s = %q, want %q", k, props[k], v)
		}
	}
}
