package pushdown

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// packLong writes values as bit-packed runs of up to 63 groups, as
// arrow-go's encoder does.
func packLong(values []uint32, width int) []byte {
	var out []byte
	for i := 0; i < len(values); {
		groups := min((len(values)-i+7)/8, 63)
		out = binary.AppendUvarint(out, uint64(groups)<<1|1)
		packed := make([]byte, groups*width)
		for j := range groups * 8 {
			var v uint32
			if i+j < len(values) {
				v = values[i+j]
			}
			for b := range width {
				if v>>b&1 == 1 {
					bit := j*width + b
					packed[bit/8] |= 1 << (bit % 8)
				}
			}
		}
		out = append(out, packed...)
		i += min(groups*8, len(values)-i)
	}
	return out
}

// TestRLEHybridLongRuns decodes bit-packed runs as long as writers make
// them, at every width, values ending right at the data's end or not.
func TestRLEHybridLongRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for width := 1; width <= 32; width++ {
		for _, n := range []int{8, 500, 504, 1001, 4096} {
			values := make([]uint32, n)
			for i := range values {
				values[i] = uint32(rng.Uint64() & (1<<width - 1))
			}
			enc := packLong(values, width)
			got := make([]uint32, n)
			if err := rleHybrid(enc, width, got); err != nil {
				t.Fatalf("width %d, %d values: %v", width, n, err)
			}
			for i := range values {
				if got[i] != values[i] {
					t.Fatalf("width %d, %d values: value %d is %d, want %d", width, n, i, got[i], values[i])
				}
			}
		}
	}
}

func benchRLE(b *testing.B, width int) {
	rng := rand.New(rand.NewPCG(1, 1))
	values := make([]uint32, 131072)
	for i := range values {
		values[i] = uint32(rng.Uint64() & (1<<width - 1))
	}
	enc := packLong(values, width)
	out := make([]uint32, len(values))
	b.SetBytes(int64(len(values)))
	for b.Loop() {
		if err := rleHybrid(enc, width, out); err != nil {
			b.Fatal(err)
		}
	}
}

// The widths of TPC-H lineitem's flags, dates and prices; "bytes" are
// values.
func BenchmarkRLEHybrid2(b *testing.B)  { benchRLE(b, 2) }
func BenchmarkRLEHybrid12(b *testing.B) { benchRLE(b, 12) }
func BenchmarkRLEHybrid17(b *testing.B) { benchRLE(b, 17) }
