package pushdown

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
)

// encodeHybrid writes values as Parquet's RLE / bit-packing hybrid: runs of
// one value as RLE runs, the rest as bit-packed groups of eight.
func encodeHybrid(values []uint32, width int) []byte {
	var out []byte
	for i := 0; i < len(values); {
		run := 1
		for i+run < len(values) && values[i+run] == values[i] {
			run++
		}
		if run >= 8 || i+run == len(values) && len(values)-i < 8 {
			out = binary.AppendUvarint(out, uint64(run)<<1)
			for b := range (width + 7) / 8 {
				out = append(out, byte(values[i]>>(8*b)))
			}
			i += run
			continue
		}
		groups := min((len(values)-i+7)/8, 3)
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

func TestRLEHybrid(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for _, width := range []int{0, 1, 2, 3, 5, 7, 8, 9, 13, 16, 17, 24, 31, 32} {
		for _, n := range []int{1, 7, 8, 9, 63, 1000} {
			values := make([]uint32, n)
			for i := range values {
				if width > 0 {
					values[i] = uint32(rng.Uint64() & (1<<width - 1))
				}
				if rng.IntN(3) == 0 && i > 0 {
					values[i] = values[i-1] // runs
				}
			}
			enc := encodeHybrid(values, width)
			got := make([]uint32, n)
			if err := rleHybrid(enc, width, got); err != nil {
				t.Fatalf("width %d, %d values: %v", width, n, err)
			}
			if !slices.Equal(got, values) {
				t.Fatalf("width %d, %d values: got %v, want %v", width, n, got[:min(n, 20)], values[:min(n, 20)])
			}
			if n > 1 {
				if err := rleHybrid(enc[:len(enc)/2], width, got); err == nil && width > 0 && n >= 63 {
					t.Errorf("width %d, %d values: half the bytes decoded without error", width, n)
				}
			}
		}
	}
}
