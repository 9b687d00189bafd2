package engine_test

import (
	"context"
	"runtime/debug"
	"testing"

	"github.com/icesql/icesql/engine"
)

// TestMemoryLimit checks that Open leaves the process's soft memory limit
// alone (it is the program's: two engines in one process must not fight
// over it) and that RuntimeMemoryLimit is 80% of a limit (the rest is for
// memory the Go runtime does not count).
func TestMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	e, err := engine.Open(context.Background(), engine.Config{Warehouse: t.TempDir(), MemoryLimit: 3 << 30})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("memory limit %d after Open, want it left at %d", got, before)
	}
	if got, want := engine.RuntimeMemoryLimit(3<<30), int64(3<<30)/100*80; got != want {
		t.Errorf("RuntimeMemoryLimit(3 GiB) = %d, want %d", got, want)
	}
}
