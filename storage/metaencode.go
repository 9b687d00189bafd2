package storage

import (
	"bytes"
	"encoding/json"
	"reflect"
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

// encodedSnapshot is one snapshot's JSON and what identifies the snapshot
// beyond its id, so a stale entry can never be used.
type encodedSnapshot struct {
	manifestList string
	seq          int64
	ts           int64
	json         []byte
}

// snapshotEncodings keeps the encoded snapshots of the tables committed
// through one warehouse, per table UUID. The zero value is ready to use.
type snapshotEncodings struct {
	mu     sync.Mutex
	tables map[uuid.UUID]map[int64]encodedSnapshot
}

// forget drops what is kept for a table, when it is dropped.
func (c *snapshotEncodings) forget(id uuid.UUID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.tables, id)
}

// encode returns the JSON of snaps, a table's snapshot list, as
// iceberg-go writes it in a metadata file: `[s1,s2,...]`.
func (c *snapshotEncodings) encode(id uuid.UUID, snaps []table.Snapshot) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tables == nil {
		c.tables = map[uuid.UUID]map[int64]encodedSnapshot{}
	}
	kept := c.tables[id]
	if kept == nil || len(kept) > 2*len(snaps)+16 {
		// New table, or many snapshots expired since: start over rather
		// than keep encodings no file needs.
		fresh := make(map[int64]encodedSnapshot, len(snaps))
		for _, s := range snaps {
			if e, ok := kept[s.SnapshotID]; ok {
				fresh[s.SnapshotID] = e
			}
		}
		kept = fresh
		c.tables[id] = kept
	}
	parts := make([][]byte, len(snaps))
	size := 2
	for i := range snaps {
		s := &snaps[i]
		e, ok := kept[s.SnapshotID]
		if !ok || e.manifestList != s.ManifestList || e.seq != s.SequenceNumber || e.ts != s.TimestampMs {
			data, err := s.MarshalJSON()
			if err != nil {
				return nil, err
			}
			e = encodedSnapshot{manifestList: s.ManifestList, seq: s.SequenceNumber, ts: s.TimestampMs, json: data}
			kept[s.SnapshotID] = e
		}
		parts[i] = e.json
		size += len(e.json) + 1
	}
	out := make([]byte, 0, size)
	out = append(out, '[')
	for i, p := range parts {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, p...)
	}
	return append(out, ']'), nil
}

// encodeSnapshotLog writes the snapshot-log as encoding/json would, by hand:
// it is two numbers per commit of the table's whole life.
func encodeSnapshotLog(log []table.SnapshotLogEntry) []byte {
	out := make([]byte, 0, 2+len(log)*56)
	out = append(out, '[')
	for i, e := range log {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"snapshot-id":`...)
		out = strconv.AppendInt(out, e.SnapshotID, 10)
		out = append(out, `,"timestamp-ms":`...)
		out = strconv.AppendInt(out, e.TimestampMs, 10)
		out = append(out, '}')
	}
	return append(out, ']')
}

// encodeMetadata returns the JSON iceberg-go's MarshalJSON gives for meta,
// reusing the kept encodings of its snapshots.
func (c *snapshotEncodings) encodeMetadata(meta table.Metadata) ([]byte, error) {
	if data, ok, err := c.assemble(meta); ok || err != nil {
		return data, err
	}
	return marshalMetadata(meta)
}

// assemble encodes meta from its parts; ok is false when meta is not laid
// out as this code expects, and the caller must encode it the plain way.
func (c *snapshotEncodings) assemble(meta table.Metadata) (data []byte, ok bool, err error) {
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
	if len(log) > 0 {
		at := bytes.Index(head, []byte(sentinelSnapshotLog))
		if at < 0 {
			return nil, false, nil
		}
		head = bytes.Join([][]byte{head[:at], encodeSnapshotLog(log), head[at+len(sentinelSnapshotLog):]}, nil)
	}
	if len(snaps) == 0 {
		return head, true, nil
	}
	list, err := c.encode(meta.TableUUID(), snaps)
	if err != nil {
		return nil, true, err
	}
	out := make([]byte, 0, len(head)+len(list)+16)
	out = append(out, head[:len(head)-1]...)
	out = append(out, `,"snapshots":`...)
	out = append(out, list...)
	return append(out, '}'), true, nil
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
