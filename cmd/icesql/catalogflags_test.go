package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCatalogFlags opens one SQL catalog three ways: --catalog, repeated
// --catalog-property, and a PyIceberg-style --catalog-config file. Each
// process sees what the previous one wrote.
func TestCatalogFlags(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	uri := "sqlite:///" + filepath.Join(dir, "catalog.db")
	warehouse := filepath.Join(dir, "warehouse")
	config := filepath.Join(dir, "catalogs.yaml")
	yaml := "catalog:\n  other:\n    type: rest\n    uri: http://127.0.0.1:1\n  lake:\n    type: sql\n    uri: " + uri + "\n    warehouse: " + warehouse + "\n"
	if err := os.WriteFile(config, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, append([]string{"sql"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("icesql sql %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	// The SQL catalog keys its rows by catalog name, as Java's and
	// PyIceberg's do: every run names the catalog lake.
	run("--catalog-name", "lake", "--catalog", "type=sql,uri="+uri+",warehouse="+warehouse, "-e", "CREATE DATABASE db; CREATE TABLE db.t (id INT); INSERT INTO db.t VALUES (1)")
	// --warehouse fills the catalog's warehouse property.
	run("--catalog-name", "lake", "--warehouse", warehouse, "--catalog-property", "type=sql", "--catalog-property", "uri="+uri,
		"-e", "INSERT INTO db.t VALUES (2)")
	out := run("--catalog-config", config, "--catalog-name", "lake", "-e", "SELECT COUNT(*) FROM lake.db.t")
	if !strings.Contains(out, "|        2 |") {
		t.Errorf("the config file's catalog lake sees:\n%s", out)
	}

	bad, err := exec.Command(bin, "sql", "--catalog-config", config, "-e", "SELECT 1").CombinedOutput()
	if err == nil || !strings.Contains(string(bad), "choose one with --catalog-name") {
		t.Errorf("a file of two catalogs without --catalog-name: %v\n%s", err, bad)
	}
	bad, err = exec.Command(bin, "sql", "--catalog", "uri="+uri, "-e", "SELECT 1").CombinedOutput()
	if err == nil || !strings.Contains(string(bad), "without type=") {
		t.Errorf("properties without type: %v\n%s", err, bad)
	}
}
