package engine

import (
	"database/sql"
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
