package main

import (
	"context"
	"runtime/debug"
	"testing"

	"github.com/icesql/icesql/engine"
)

// TestOpenEngineSetsRuntimeLimit checks that the binary, which owns the
// process, sets the Go runtime's soft memory limit from --memory-limit-mib
// (the library no longer does), and leaves it alone without one.
func TestOpenEngineSetsRuntimeLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	for _, limit := range []int64{512 << 20, 0} {
		e, err := openEngine(context.Background(), engine.Config{Warehouse: t.TempDir(), MemoryLimit: limit})
		if err != nil {
			t.Fatal(err)
		}
		e.Close()
		if got, want := debug.SetMemoryLimit(-1), engine.RuntimeMemoryLimit(512<<20); got != want {
			t.Errorf("limit %d: runtime limit %d, want %d", limit, got, want)
		}
	}
}
