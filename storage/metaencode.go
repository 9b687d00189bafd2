package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"sync"

	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// Every commit writes the whole metadata JSON, and the two lists in it that
// grow with every commit, snapshots and snapshot-log, were most of a small
// commit's CPU once a table had some history: iceberg-go encodes every
// snapshot (and its summary map) anew each time. A snapshot never changes
// once committed, so its encoding is kept per table and the file is
// assembled from the kept encodings plus the parts that did change.
//
// The assembly relies on how iceberg-go's MarshalJSON lays the document out
// (snapshots last, snapshot-log an ordinary field) and reads the two lists
// through reflection, as encoding/json itself does. When the metadata does not
// look as expected, encodeMetadata falls back to MarshalJSON, and a test
// checks that both give the same bytes.

// sentinelSnapshotID marks where the snapshot-log goes: a one-entry log with
// it stands in for the real log while the rest of the document is encoded,
// and its encoding is then replaced by the real one.
const (
	sentinelSnapshotID  = -7318014508357911003
	sentinelSnapshotLog = `[{"snapshot-id":-7318014508357911003,"timestamp-ms":-1}]`
)

// snapshotKey tells a snapshot from any other of its table, even one a
// failed commit built with the same id.
type snapshotKey struct {
	id           int64
	manifestList string
	seq, ts      int64
}

func keyOf(s *table.Snapshot) snapshotKey {
	return snapshotKey{id: s.SnapshotID, manifestList: s.ManifestList, seq: s.SequenceNumber, ts: s.TimestampMs}
}

// keptBody is the encoding of a list of JSON values a table's last metadata
// file was written with, without its brackets: body is `v0,v1,...`, keys[i]
// tells value i from any other, and ends[i] is where it ends in body. The
// next file's list usually starts with the same values. gz holds the
// compressed form of body's leading gzipChunkSize-byte pieces, once a
// compressed file was written (metagzip.go).
type keptBody[K comparable] struct {
	keys []K
	ends []int
	body []byte
	gz   []gzipChunk
}

// encode returns the encoding of the list of n values whose keys key
// gives, reusing the longest prefix it shares with the kept list; enc
// encodes value i. The
// slice returned is never modified afterwards: a list that drops kept
// values starts a new buffer, and appends go past the end of every slice
// handed out before.
func (b *keptBody[K]) encode(count int, key func(i int) K, enc func(i int) ([]byte, error)) ([]byte, error) {
	n := 0
	for n < count && n < len(b.keys) && b.keys[n] == key(n) {
		n++
	}
	end := 0
	if n > 0 {
		end = b.ends[n-1]
	}
	if end < len(b.body) {
		b.body = slices.Clone(b.body[:end])
		b.gz = b.gz[:min(len(b.gz), end/gzipChunkSize)]
	}
	b.keys, b.ends = b.keys[:n], b.ends[:n]
	for i := n; i < count; i++ {
		data, err := enc(i)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.body = append(b.body, ',')
		}
		b.body = append(b.body, data...)
		b.keys = append(b.keys, key(i))
		b.ends = append(b.ends, len(b.body))
	}
	return b.body[:len(b.body):len(b.body)], nil
}

// keptList holds a table's two lists that grow with every commit: the
// snapshots and the snapshot-log.
type keptList struct {
	snaps keptBody[snapshotKey]
	log   keptBody[table.SnapshotLogEntry]
}

// snapshotEncodings keeps, per table UUID, the encoded snapshot list and
// snapshot-log of the last metadata file written through one warehouse.
// The zero value is ready to use.
type snapshotEncodings struct {
	mu     sync.Mutex
	tables map[uuid.UUID]*keptList
	gz     gzipWriters // metagzip.go
}

// forget drops what is kept for a table, when it is dropped.
func (c *snapshotEncodings) forget(id uuid.UUID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.tables, id)
}

// lists returns the JSON of a table's snapshot list and snapshot-log as
// iceberg-go writes them in a metadata file, without their brackets
// (keptBody.encode).
func (c *snapshotEncodings) lists(id uuid.UUID, snaps []table.Snapshot, log []table.SnapshotLogEntry) (snapList, logList []byte, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tables == nil {
		c.tables = map[uuid.UUID]*keptList{}
	}
	k := c.tables[id]
	if k == nil {
		k = &keptList{}
		c.tables[id] = k
	}
	snapList, err = k.snaps.encode(len(snaps), func(i int) snapshotKey { return keyOf(&snaps[i]) },
		func(i int) ([]byte, error) { return snaps[i].MarshalJSON() })
	if err == nil {
		logList, err = k.log.encode(len(log), func(i int) table.SnapshotLogEntry { return log[i] },
			func(i int) ([]byte, error) { return encodeLogEntry(log[i]), nil })
	}
	if err != nil {
		delete(c.tables, id)
		return nil, nil, err
	}
	return snapList, logList, nil
}

// encodeLogEntry writes a snapshot-log entry as encoding/json would, by
// hand: the log has two numbers per commit of the table's whole life.
func encodeLogEntry(e table.SnapshotLogEntry) []byte {
	out := make([]byte, 0, 56)
	out = append(out, `{"snapshot-id":`...)
	out = strconv.AppendInt(out, e.SnapshotID, 10)
	out = append(out, `,"timestamp-ms":`...)
	out = strconv.AppendInt(out, e.TimestampMs, 10)
	return append(out, '}')
}

// encodeMetadata returns the JSON iceberg-go's MarshalJSON gives for meta,
// in parts to be written one after the other, reusing the kept encodings of
// its snapshots (one part: a long-lived table's snapshot list is most of
// its file, and is neither copied nor scanned). fix is applied to the part
// before the snapshot list (to all of it when meta cannot be assembled): it
// rewrites what is in the schemas.
func (c *snapshotEncodings) encodeMetadata(meta table.Metadata, fix func([]byte) ([]byte, error)) ([][]byte, error) {
	if parts, ok, err := c.assembleParts(meta, fix); ok || err != nil {
		return parts, err
	}
	data, err := marshalMetadata(meta)
	if err != nil {
		return nil, err
	}
	data, err = fix(data)
	return [][]byte{data}, err
}

// assemble encodes meta from its parts; ok is false when meta is not laid
// out as this code expects, and the caller must encode it the plain way.
func (c *snapshotEncodings) assemble(meta table.Metadata) (data []byte, ok bool, err error) {
	parts, ok, err := c.assembleParts(meta, func(head []byte) ([]byte, error) { return head, nil })
	return bytes.Join(parts, nil), ok, err
}

// assembleParts is assemble with fix applied to the document before the
// snapshot list is added, giving the document in parts.
func (c *snapshotEncodings) assembleParts(meta table.Metadata, fix func([]byte) ([]byte, error)) (parts [][]byte, ok bool, err error) {
	meta = unshared(meta)
	rv := reflect.ValueOf(meta)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return nil, false, nil
	}
	src := rv.Elem()
	snapsV, logV := src.FieldByName("SnapshotList"), src.FieldByName("SnapshotLog")
	deferred := src.FieldByName("deferredSnapshots")
	if !snapsV.IsValid() || snapsV.Type() != reflect.TypeFor[[]table.Snapshot]() ||
		!logV.IsValid() || logV.Type() != reflect.TypeFor[[]table.SnapshotLogEntry]() ||
		(deferred.IsValid() && (deferred.Kind() != reflect.Pointer || !deferred.IsNil())) {
		return nil, false, nil
	}
	snaps := snapsV.Interface().([]table.Snapshot)
	log := logV.Interface().([]table.SnapshotLogEntry)

	// A shallow copy without the two lists encodes in time independent of
	// the table's history; nothing it shares with meta is modified.
	cp := reflect.New(src.Type())
	cp.Elem().Set(src)
	cpSnaps, cpLog := cp.Elem().FieldByName("SnapshotList"), cp.Elem().FieldByName("SnapshotLog")
	if !cpSnaps.CanSet() || !cpLog.CanSet() {
		return nil, false, nil
	}
	cpSnaps.Set(reflect.Zero(cpSnaps.Type()))
	if len(log) > 0 {
		cpLog.Set(reflect.ValueOf([]table.SnapshotLogEntry{{SnapshotID: sentinelSnapshotID, TimestampMs: -1}}))
	}
	m, isMarshaler := cp.Interface().(json.Marshaler)
	if !isMarshaler {
		return nil, false, nil
	}
	head, err := m.MarshalJSON()
	if err != nil {
		return nil, true, err
	}
	if len(head) < 2 || head[len(head)-1] != '}' {
		return nil, false, nil
	}
	// fix reads the schemas: it is given the document while the log, as
	// long as the table's history, is still the sentinel.
	if head, err = fix(head); err != nil {
		return nil, true, err
	}
	if len(head) < 2 || head[len(head)-1] != '}' {
		return nil, true, errors.New("encode table metadata: the document does not end its object")
	}
	snapList, logList, err := c.lists(meta.TableUUID(), snaps, log)
	if err != nil {
		return nil, true, err
	}
	// The parts: the document up to the log's entries, the entries, the
	// rest up to the snapshot entries, the entries, the end. The two lists
	// are the kept slices themselves (gzipParts recognises them).
	parts = make([][]byte, 0, 5)
	if len(log) > 0 {
		at := bytes.Index(head, []byte(sentinelSnapshotLog))
		if at < 0 {
			return nil, false, nil
		}
		parts = append(parts, head[:at+1], logList)
		head = head[at+len(sentinelSnapshotLog)-1:]
	}
	if len(snaps) == 0 {
		return append(parts, head), true, nil
	}
	head = append(head[:len(head)-1:len(head)-1], `,"snapshots":[`...)
	return append(parts, head, snapList, []byte("]}")), true, nil
}

// marshalMetadata is json.Marshal(meta) without its last pass: json.Marshal
// re-validates and compacts a Marshaler's output. iceberg-go's MarshalJSON
// already returns compact JSON from json.Marshal.
func marshalMetadata(meta table.Metadata) ([]byte, error) {
	if m, ok := meta.(json.Marshaler); ok {
		return m.MarshalJSON()
	}
	return json.Marshal(meta)
}
