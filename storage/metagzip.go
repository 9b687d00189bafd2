package storage

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"hash/crc32"
	"io"
	"strings"

	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// A table whose property write.metadata.compression-codec is gzip has its
// metadata files written gzip-compressed, named v<N>.gz.metadata.json as
// Iceberg's Hadoop catalog names them (Java's HadoopTableOperations,
// iceberg-go and PyIceberg read the codec from the name; DuckDB's
// iceberg_scan needs metadata_compression_codec='gzip' to find them through
// version-hint.text).
//
// The name of version N+1 is chosen by version N's properties, the base
// every writer of N+1 validated against: writers racing to create N+1 all
// try the same name, and the create-if-absent still picks one winner. A
// commit that sets the property therefore takes effect from the next one.
//
// A table with a long history has a metadata file of several megabytes, the
// snapshot list nearly all of it, and compressing it whole would cost more
// than writing it. A deflate stream may be cut into pieces that each end
// with a sync flush (byte-aligned, not final) and compress on their own,
// and a gzip member's trailer needs only the CRC-32 and length of the
// whole, which combine from the pieces'. So the snapshot list and the
// snapshot-log (kept encodings, metaencode.go) are compressed once per
// gzipChunkSize bytes and kept; a commit compresses only the rest: the
// document around them and their unfinished last chunks.

// gzipChunkSize is the length of the kept compressed pieces of a list.
const gzipChunkSize = 16 << 10

// gzipChunk is one compressed piece of a kept list: a flushed deflate
// stream of gzipChunkSize bytes, and the CRC-32 of those bytes.
type gzipChunk struct {
	data []byte
	crc  uint32
}

// gzipMetadataFile says the metadata file at location is written
// gzip-compressed (by its name, as every reader decides).
func gzipMetadataFile(location string) bool {
	return strings.HasSuffix(location, ".gz.metadata.json")
}

// gzipCodec says props ask for gzip-compressed metadata files.
func gzipCodec(meta table.Metadata) bool {
	return meta != nil && strings.EqualFold(meta.Properties()[table.MetadataCompressionKey], table.MetadataCompressionCodecGzip)
}

// gzipped says data is a gzip stream: JSON never starts with its magic.
func gzipped(data []byte) bool {
	return len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b
}

// gunzip returns the content of a gzip stream.
func gunzip(data []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(r)
	if err == nil {
		err = r.Close()
	}
	return out, err
}

// gzipWriters are the compressors of one warehouse's metadata files, used
// under snapshotEncodings' lock: a flate writer costs a megabyte to make.
// The kept chunks are compressed once and written by every later commit:
// they get the default level. The rest is compressed anew by each commit
// and is a few kilobytes: it gets the fastest.
type gzipWriters struct {
	chunk, loose *flate.Writer
}

func (g *gzipWriters) get() (chunk, loose *flate.Writer) {
	if g.chunk == nil {
		g.chunk, _ = flate.NewWriter(io.Discard, flate.DefaultCompression)
		g.loose, _ = flate.NewWriter(io.Discard, flate.BestSpeed)
	}
	return g.chunk, g.loose
}

// gzipParts returns the gzip stream of the document parts (as
// encodeMetadata gives them) in parts to be written one after the other.
// A part that is one of the table's kept lists reuses, and adds to, the
// list's compressed chunks.
func (c *snapshotEncodings) gzipParts(id uuid.UUID, parts [][]byte) [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	chunk, loose := c.gz.get()
	d := gzipDoc{chunkW: chunk, looseW: loose, out: [][]byte{{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}}}
	k := c.tables[id]
	for _, p := range parts {
		switch {
		case k != nil && prefixOf(p, k.snaps.body):
			d.kept(p, &k.snaps.gz)
		case k != nil && prefixOf(p, k.log.body):
			d.kept(p, &k.log.gz)
		default:
			d.loose(p)
		}
	}
	return d.finish()
}

// prefixOf says p is a leading part of the same buffer as body: the bytes
// of a kept body never change once handed out (keptBody.encode).
func prefixOf(p, body []byte) bool {
	return len(p) > 0 && len(p) <= len(body) && &p[0] == &body[0]
}

// gzipDoc assembles one gzip member from compressed pieces.
type gzipDoc struct {
	chunkW  *flate.Writer // for kept chunks
	looseW  *flate.Writer // for the rest
	out     [][]byte
	pending []byte // bytes not yet compressed
	crc     uint32
	size    uint32 // mod 2^32, as the trailer has it
}

// loose adds bytes compressed with the next piece.
func (d *gzipDoc) loose(p []byte) {
	d.pending = append(d.pending, p...)
	d.crc = crc32.Update(d.crc, crc32.IEEETable, p)
	d.size += uint32(len(p))
}

// kept adds p, a prefix of a kept list whose compressed chunks are
// *chunks: its whole chunks are taken from there (those missing are
// compressed and kept), the rest is loose.
func (d *gzipDoc) kept(p []byte, chunks *[]gzipChunk) {
	whole := len(p) / gzipChunkSize
	for i := len(*chunks); i < whole; i++ {
		raw := p[i*gzipChunkSize : (i+1)*gzipChunkSize]
		*chunks = append(*chunks, gzipChunk{data: deflate(d.chunkW, raw, false), crc: crc32.ChecksumIEEE(raw)})
	}
	if whole > 0 {
		d.flush()
	}
	for _, ch := range (*chunks)[:whole] {
		d.out = append(d.out, ch.data)
		d.crc = crc32Combine(d.crc, ch.crc, gzipChunkSize)
		d.size += gzipChunkSize
	}
	d.loose(p[whole*gzipChunkSize:])
}

// flush compresses the pending bytes as a piece of their own.
func (d *gzipDoc) flush() {
	if len(d.pending) > 0 {
		d.out = append(d.out, deflate(d.looseW, d.pending, false))
		d.pending = d.pending[:0]
	}
}

// deflate compresses raw with fw as a piece that starts a fresh deflate
// stream and ends byte-aligned: with a sync flush, or the final block when
// last.
func deflate(fw *flate.Writer, raw []byte, last bool) []byte {
	var buf bytes.Buffer
	fw.Reset(&buf)
	// Writes to a bytes.Buffer do not fail.
	_, _ = fw.Write(raw)
	if last {
		_ = fw.Close()
	} else {
		_ = fw.Flush()
	}
	return buf.Bytes()
}

// finish ends the member: the last piece and the trailer.
func (d *gzipDoc) finish() [][]byte {
	d.out = append(d.out, deflate(d.looseW, d.pending, true))
	return append(d.out, binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, d.crc), d.size))
}

// CRC-32 of a concatenation from the CRCs of its parts, as zlib's
// crc32_combine computes it: polynomials over GF(2) in the reflected bit
// order of the IEEE CRC, multiplied modulo the CRC's polynomial.

// multModP returns a*b modulo the CRC polynomial.
func multModP(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		if b&1 != 0 {
			b = b>>1 ^ crc32.IEEE
		} else {
			b >>= 1
		}
	}
	return p
}

// xPow8N returns x^(8n) modulo the CRC polynomial: the factor that moves a
// CRC past n zero bytes.
func xPow8N(n int64) uint32 {
	p := uint32(1) << 31  // x^0
	sq := uint32(1) << 23 // x^8
	for ; n > 0; n >>= 1 {
		if n&1 != 0 {
			p = multModP(p, sq)
		}
		sq = multModP(sq, sq)
	}
	return p
}

// gzipChunkShift is xPow8N(gzipChunkSize), the one length combined often.
var gzipChunkShift = xPow8N(gzipChunkSize)

// crc32Combine returns the CRC-32 (IEEE) of a‖b from crcA, crcB and len(b).
func crc32Combine(crcA, crcB uint32, lenB int64) uint32 {
	shift := gzipChunkShift
	if lenB != gzipChunkSize {
		shift = xPow8N(lenB)
	}
	return multModP(shift, crcA) ^ crcB
}
