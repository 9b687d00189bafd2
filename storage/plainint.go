package storage

import (
	"bytes"
	"encoding/binary"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	icebergio "github.com/apache/iceberg-go/io"
)

// Parquet files written through iceberg-go carry arrow-go's annotation
// INT(32, signed) on every INT32 column and INT(64, signed) on every INT64
// one. That is valid Parquet, but Java Iceberg writes Iceberg int and long
// as plain INT32 and INT64, and Spark 3.5's vectorized reader (Iceberg
// 1.10.1) throws ClassCastException on an annotated INT32 column once the
// column was widened to long (apache/iceberg#16341).
//
// plainIntWriter drops those annotations from the footer as the file is
// written. The footer is the file's last write but two (the Thrift
// FileMetaData, then its length, then "PAR1"), so the writer holds back its
// last three writes and rewrites them at Close. The file's size must not
// change: iceberg-go has already counted the bytes it wrote and records that
// count as the data file's size, and readers find the footer from it. The
// bytes the annotations took go into a key-value entry
// (plainIntPaddingKey...) sized to fill them exactly. A footer it cannot
// rewrite to the same size (or an encrypted one) is written as it came.
type plainIntWriter struct {
	target icebergio.FileWriter
	held   [][]byte // the last writes, oldest first
}

const plainIntPaddingKey = "icesql.padding"

func isParquet(location string) bool { return strings.HasSuffix(location, ".parquet") }

func (w *plainIntWriter) Write(p []byte) (int, error) {
	if len(w.held) == 3 {
		if _, err := w.target.Write(w.held[0]); err != nil {
			return 0, err
		}
		w.held = w.held[1:]
	}
	w.held = append(w.held, bytes.Clone(p))
	return len(p), nil
}

func (w *plainIntWriter) ReadFrom(r io.Reader) (int64, error) { return io.Copy(writerOnly{w}, r) }

// writerOnly hides ReadFrom from io.Copy, which would otherwise call it back.
type writerOnly struct{ io.Writer }

func (w *plainIntWriter) Close() error {
	tail := bytes.Join(w.held, nil)
	if _, err := w.target.Write(plainIntFooter(tail)); err != nil {
		w.target.Close()
		return err
	}
	return w.target.Close()
}

// plainIntFooter returns tail, the end of a Parquet file, with the footer it
// ends with rewritten as described above, or tail itself.
func plainIntFooter(tail []byte) []byte {
	n := len(tail)
	if n < 8 || string(tail[n-4:]) != "PAR1" {
		return tail
	}
	size := int(binary.LittleEndian.Uint32(tail[n-8 : n-4]))
	if size <= 0 || size > n-8 {
		return tail
	}
	start := n - 8 - size
	md, err := metadata.NewFileMetaData(tail[start:n-8], nil)
	if err != nil || len(md.FileMetaData.KeyValueMetadata) == 0 {
		return tail
	}
	changed := false
	for _, el := range md.FileMetaData.Schema {
		if el.Type == nil || el.LogicalType == nil || el.LogicalType.INTEGER == nil || !el.LogicalType.INTEGER.IsSigned {
			continue
		}
		width, phys := el.LogicalType.INTEGER.BitWidth, parquet.Type(*el.Type)
		if (width == 32 && phys == parquet.Types.Int32) || (width == 64 && phys == parquet.Types.Int64) {
			el.LogicalType, el.ConvertedType = nil, nil
			changed = true
		}
	}
	if !changed {
		return tail
	}
	// Pad with a key-only entry; its key length makes up the difference.
	pad := *md.FileMetaData.KeyValueMetadata[0]
	pad.Value = nil
	md.FileMetaData.KeyValueMetadata = append(md.FileMetaData.KeyValueMetadata, &pad)
	keyLen := 1
	for range 4 {
		pad.Key = paddingKey(keyLen)
		var buf bytes.Buffer
		if _, err := md.WriteTo(&buf, nil); err != nil {
			return tail
		}
		switch diff := size - buf.Len(); {
		case diff == 0:
			out := append(bytes.Clone(tail[:start]), buf.Bytes()...)
			return append(out, tail[n-8:]...)
		case keyLen+diff < 1:
			return tail // the annotations took fewer bytes than the smallest entry
		default:
			keyLen += diff
		}
	}
	return tail
}

// paddingKey is a key of n bytes that says what it is for.
func paddingKey(n int) string {
	if n <= len(plainIntPaddingKey) {
		return plainIntPaddingKey[:n]
	}
	return plainIntPaddingKey + strings.Repeat(".", n-len(plainIntPaddingKey))
}
