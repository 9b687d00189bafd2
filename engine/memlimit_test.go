package engine_test

import (
	"context"
	"runtime/debug"
	"testing"

	"github.com/icesql/icesql/engine"
)

// TestMemoryLimit checks that Config.MemoryLimit sets the process's soft
// memory limit (80% of it: the rest is for memory the Go runtime does not
// count) and that zero leaves the limit as it was.
func TestMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Warehouse: t.TempDir(), MemoryLimit: 3 << 30})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	want := int64(3<<30) / 100 * 80
	if got := debug.SetMemoryLimit(-1); got != want {
		t.Errorf("memory limit %d after Open, want %d", got, want)
	}
	e, err = engine.Open(ctx, engine.Config{Warehouse: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	if got := debug.SetMemoryLimit(-1); got != want {
		t.Errorf("memory limit %d after Open without one, want it kept at %d", got, want)
	}
}
