package engine

import (
	"database/sql"
	"maps"
	"testing"
	"time"
)

// TestDriverParseTime checks the database/sql driver's DSN options: by
// default DATE, DATETIME and TIMESTAMP values scan into time.Time (as
// go-sql-driver/mysql's parseTime=true gives them) in the zone loc names,
// time.Time arguments round-trip, parseTime=false gives their text, and
// both DSNs share one engine.
func TestDriverParseTime(t *testing.T) {
	wh := t.TempDir()
	db, err := sql.Open(DriverName, wh+"?loc=America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ny, _ := time.LoadLocation("America/New_York")
	for _, q := range []string{
		"CREATE DATABASE d",
		"CREATE TABLE d.t (id INT, d DATE, dt DATETIME(6), ts TIMESTAMP, tm TIME)",
		"INSERT INTO d.t VALUES (1, '2024-02-29', '2024-03-01 12:34:56.123456', '2024-03-01 01:02:03', '10:11:12'), (2, NULL, NULL, NULL, NULL)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var d, dt, ts sql.NullTime
	var tm string
	if err := db.QueryRow("SELECT d, dt, ts, tm FROM d.t WHERE id = 1").Scan(&d, &dt, &ts, &tm); err != nil {
		t.Fatal(err)
	}
	want := []time.Time{
		time.Date(2024, 2, 29, 0, 0, 0, 0, ny),
		time.Date(2024, 3, 1, 12, 34, 56, 123456000, ny),
		time.Date(2024, 3, 1, 1, 2, 3, 0, ny),
	}
	for i, got := range []sql.NullTime{d, dt, ts} {
		if !got.Valid || !got.Time.Equal(want[i]) || got.Time.Location().String() != ny.String() {
			t.Errorf("column %d: got %v, want %v", i, got, want[i])
		}
	}
	if tm != "10:11:12.000000" { // icesql's TIME is time(6)
		t.Errorf("TIME: got %q, want its text", tm)
	}
	if err := db.QueryRow("SELECT d, dt FROM d.t WHERE id = 2").Scan(&d, &dt); err != nil || d.Valid || dt.Valid {
		t.Errorf("NULLs: %v %v %v", d, dt, err)
	}
	// A time.Time argument is sent as its wall clock in loc.
	var id int
	arg := time.Date(2024, 3, 1, 17, 34, 56, 123456000, time.UTC) // 12:34:56.123456 in New York
	if err := db.QueryRow("SELECT id FROM d.t WHERE dt = ?", arg).Scan(&id); err != nil || id != 1 {
		t.Errorf("time.Time argument: id %d, %v", id, err)
	}

	text, err := sql.Open(DriverName, wh+"?parseTime=false")
	if err != nil {
		t.Fatal(err)
	}
	defer text.Close()
	var s string
	if err := text.QueryRow("SELECT dt FROM d.t WHERE id = 1").Scan(&s); err != nil || s != "2024-03-01 12:34:56.123456" {
		t.Errorf("parseTime=false: %q, %v", s, err)
	}
	if _, err := sql.Open(DriverName, wh+"?parseTime=maybe"); err == nil {
		t.Error("a bad parseTime value was accepted")
	}
}

// TestDriverClosesEngineWithLastDB checks that sql.DBs of one warehouse
// share an engine that stays open while one of them is, is closed with the
// last, and is opened again by a later sql.Open (the driver kept every
// engine, with its caches, for the life of the process).
func TestDriverClosesEngineWithLastDB(t *testing.T) {
	wh := t.TempDir()
	open := func() *sql.DB {
		db, err := sql.Open(DriverName, wh)
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	engines := func(db *sql.DB) map[string]*sharedEngine {
		d := db.Driver().(*Driver)
		d.mu.Lock()
		defer d.mu.Unlock()
		return maps.Clone(d.engines)
	}
	key := wh + "\x00"
	first, second := open(), open()
	if _, err := first.Exec("CREATE DATABASE d"); err != nil {
		t.Fatal(err)
	}
	shared := engines(first)[key]
	if shared == nil || shared.refs != 2 || engines(second)[key] != shared {
		t.Fatalf("two sql.DBs of one warehouse: %+v", engines(first))
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := second.Exec("CREATE TABLE d.t (id INT)"); err != nil {
		t.Fatalf("the engine closed with the first of two sql.DBs: %v", err)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := engines(second)[key]; ok {
		t.Fatal("the engine outlived the last sql.DB of its warehouse")
	}
	third := open()
	defer third.Close()
	var n int
	if err := third.QueryRow("SELECT COUNT(*) FROM d.t").Scan(&n); err != nil || n != 0 {
		t.Fatalf("reopened: %d, %v", n, err)
	}
	if engines(third)[key] == shared {
		t.Fatal("reopened on the closed engine")
	}
}

// TestDriverEmptyIsNotNull: an empty string or BLOB reaches database/sql as
// an empty value, not as NULL (a nil []byte, which database/sql reads as
// NULL, was handed over for every empty text value).
func TestDriverEmptyIsNotNull(t *testing.T) {
	db, err := sql.Open(DriverName, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		"CREATE DATABASE d",
		"CREATE TABLE d.t (id INT, s STRING, v VARBINARY(10))",
		"INSERT INTO d.t VALUES (1, '', ''), (2, NULL, NULL)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var lit, s sql.NullString
	var v []byte
	rows, err := db.Query("SELECT '', s, v FROM d.t ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for i := 0; rows.Next(); i++ {
		if err := rows.Scan(&lit, &s, &v); err != nil {
			t.Fatal(err)
		}
		wantValid := i == 0
		if !lit.Valid || lit.String != "" || s.Valid != wantValid || (v != nil) != wantValid {
			t.Errorf("row %d: '' = %+v, s = %+v, v = %q (nil: %v); want '' valid and the columns valid = %v", i+1, lit, s, v, v == nil, wantValid)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}
