package s3serve_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"golang.org/x/sys/unix"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/storage"
	"github.com/icesql/icesql/storage/s3serve"
	"github.com/icesql/icesql/storage/sigv4auth"
)

func md5Tag(parts ...[]byte) string {
	sum := md5.Sum(bytes.Join(parts, nil))
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

// multipartTag is S3's ETag of an object uploaded in these parts.
func multipartTag(parts ...[]byte) string {
	h := md5.New()
	for _, p := range parts {
		sum := md5.Sum(p)
		h.Write(sum[:])
	}
	return fmt.Sprintf(`"%s-%d"`, hex.EncodeToString(h.Sum(nil)), len(parts))
}

// etags are the ETags HEAD, GET and ListObjectsV2 give the key.
func (f *fixture) etags(t *testing.T, key string) [3]string {
	t.Helper()
	ctx := context.Background()
	head, err := f.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("HEAD %s: %v", key, err)
	}
	get, err := f.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("GET %s: %v", key, err)
	}
	get.Body.Close()
	list, err := f.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(key)})
	if err != nil || len(list.Contents) != 1 {
		t.Fatalf("LIST %s: %v, %d objects", key, err, len(list.Contents))
	}
	return [3]string{aws.ToString(head.ETag), aws.ToString(get.ETag), aws.ToString(list.Contents[0].ETag)}
}

func (f *fixture) wantETag(t *testing.T, key, want string) {
	t.Helper()
	if got := f.etags(t, key); got != [3]string{want, want, want} {
		t.Errorf("%s: ETags of HEAD, GET, LIST %v, want %s", key, got, want)
	}
}

// TestMD5ETags: an object's ETag is the MD5 of its content (S3's, which
// clients compare with their own digests), whether it came through a PUT,
// a copy, or was written into the folder directly; an object a multipart
// upload made has S3's md5-of-md5s-N form, after a restart too; a rewrite
// of the file changes it.
func TestMD5ETags(t *testing.T) {
	f := authed(t)
	ctx := context.Background()
	body := []byte("the content of an object")
	put, err := f.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("db/a"), Body: bytes.NewReader(body)})
	if err != nil || aws.ToString(put.ETag) != md5Tag(body) {
		t.Fatalf("PUT: ETag %s, %v; want %s", aws.ToString(put.ETag), err, md5Tag(body))
	}
	f.wantETag(t, "db/a", md5Tag(body))

	cp, err := f.client.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucket), Key: aws.String("db/b"), CopySource: aws.String(bucket + "/db/a")})
	if err != nil || aws.ToString(cp.CopyObjectResult.ETag) != md5Tag(body) {
		t.Fatalf("COPY: %v, %v; want ETag %s", cp, err, md5Tag(body))
	}
	f.wantETag(t, "db/b", md5Tag(body))

	// Written into the folder directly (icesql's own writes), then
	// rewritten with as many bytes: each time the MD5 of what is there.
	direct := filepath.Join(f.root, "db", "direct")
	if err := os.WriteFile(direct, []byte("written by icesql"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.wantETag(t, "db/direct", md5Tag([]byte("written by icesql")))
	if err := os.WriteFile(direct, []byte("WRITTEN BY ICESQL"), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	os.Chtimes(direct, later, later) // a coarse clock could keep the time
	f.wantETag(t, "db/direct", md5Tag([]byte("WRITTEN BY ICESQL")))

	// Multipart: each part's ETag is its MD5; the object's the md5 of md5s.
	parts := [][]byte{randomBytes(t, 5<<20), randomBytes(t, 5<<20), randomBytes(t, 77)}
	cr, err := f.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("db/big")})
	if err != nil {
		t.Fatal(err)
	}
	var done []types.CompletedPart
	for i, p := range parts {
		up, err := f.client.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String("db/big"), UploadId: cr.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p)})
		if err != nil || aws.ToString(up.ETag) != md5Tag(p) {
			t.Fatalf("part %d: ETag %s, %v; want %s", i+1, aws.ToString(up.ETag), err, md5Tag(p))
		}
		done = append(done, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: up.ETag})
	}
	out, err := f.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("db/big"),
		UploadId: cr.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
	if err != nil || aws.ToString(out.ETag) != multipartTag(parts...) {
		t.Fatalf("complete: ETag %s, %v; want %s", aws.ToString(out.ETag), err, multipartTag(parts...))
	}
	f.wantETag(t, "db/big", multipartTag(parts...))

	// A new server on the folder finds the ETags the folder keeps.
	if err := unix.Setxattr(direct, "user.icesql.probe", []byte("x"), 0); err != nil {
		t.Logf("the temporary folder keeps no extended attributes (%v): ETags live in memory, and a restart is not tested", err)
		return
	}
	srv, err := s3serve.New(f.root, bucket, sigv4auth.New(map[string]string{user: password}, "s3"))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	again := &fixture{root: f.root, client: newClient(ts.URL, user, password, nil)}
	again.wantETag(t, "db/big", multipartTag(parts...))
	again.wantETag(t, "db/a", md5Tag(body))
}

// TestRecordedETagsAreServed: a file whose ETag was recorded as it was
// written (icesql's own writes into a served warehouse, storage.RecordETag)
// is answered with that ETag, without being read to compute it; a rewrite
// of the file outdates the record.
func TestRecordedETagsAreServed(t *testing.T) {
	f := authed(t)
	p := filepath.Join(f.root, "db", "written")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte("data icesql wrote"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A recorded tag that is not the content's MD5 shows that it is not
	// computed again.
	recorded := "0123456789abcdef0123456789abcdef"
	storage.RecordETag(p, recorded)
	f.wantETag(t, "db/written", `"`+recorded+`"`)
	if err := os.WriteFile(p, []byte("data icesql WROTE"), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	os.Chtimes(p, later, later)
	f.wantETag(t, "db/written", md5Tag([]byte("data icesql WROTE")))
}

// TestVirtualHostStyle: requests addressed to BUCKET.host (the SDKs'
// default) are served as path-style ones are, signatures included; another
// bucket's host name is not this bucket.
func TestVirtualHostStyle(t *testing.T) {
	f := authed(t)
	ctx := context.Background()
	addr := f.ts.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	// Every host name reaches the test server, as DNS would send
	// BUCKET.s3.example.test to it.
	var hosts []string
	hc := &http.Client{Transport: hostRecorder{&hosts, &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}}}
	vhost := s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String("http://s3.example.test:" + port),
		Credentials:  credentials.NewStaticCredentialsProvider(user, password, ""),
		HTTPClient:   hc,
	})
	body := []byte("virtual host")
	if _, err := vhost.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("v/k 1"), Body: bytes.NewReader(body)}); err != nil {
		t.Fatalf("PUT: %v", err)
	}
	if len(hosts) == 0 || hosts[0] != bucket+".s3.example.test:"+port {
		t.Fatalf("the client sent Host %v, not virtual-host style", hosts)
	}
	if b, err := os.ReadFile(filepath.Join(f.root, "v", "k 1")); err != nil || !bytes.Equal(b, body) {
		t.Fatalf("the object is not the file: %q, %v", b, err)
	}
	got, err := vhost.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("v/k 1")})
	if err != nil || aws.ToString(got.ETag) != md5Tag(body) {
		t.Fatalf("GET: %v", err)
	}
	got.Body.Close()
	list, err := vhost.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("v/")})
	if err != nil || len(list.Contents) != 1 || aws.ToString(list.Contents[0].Key) != "v/k 1" {
		t.Fatalf("LIST: %+v, %v", list, err)
	}
	if _, err := vhost.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("v/k 1")}); err != nil {
		t.Fatalf("DELETE: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.root, "v", "k 1")); !os.IsNotExist(err) {
		t.Fatalf("the object is still there: %v", err)
	}
	// Path style still works beside it.
	f.put(t, "p/k", "path style")
	if s, err := f.get(t, "p/k", ""); err != nil || s != "path style" {
		t.Errorf("path style: %q, %v", s, err)
	}
	// Another bucket's host name does not reach this bucket's objects.
	_, err = vhost.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("other"), Key: aws.String("p/k")})
	wantAPIError(t, err, "NoSuchBucket")
}

// hostRecorder notes the host of every request it sends.
type hostRecorder struct {
	hosts *[]string
	next  http.RoundTripper
}

func (h hostRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	*h.hosts = append(*h.hosts, r.URL.Host)
	return h.next.RoundTrip(r)
}

// TestSQLWritesCarryETags: a table icesql writes with SQL into a served
// warehouse has every file's ETag recorded as it was written (the data
// files, manifests, manifest lists and metadata files), and the S3 API
// answers with it: the MD5 of the content, without a first read to
// compute it.
func TestSQLWritesCarryETags(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	e, err := engine.Open(ctx, engine.Config{Warehouse: root})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	wh := e.Catalog().(*storage.Warehouse)
	if err := wh.ServeBucket(ctx, bucket, false); err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(e.Connector())
	defer db.Close()
	for _, stmt := range []string{
		"CREATE DATABASE lake",
		"CREATE TABLE lake.t (id BIGINT, note TEXT)",
		"INSERT INTO lake.t VALUES (1, 'a'), (2, 'b')",
		"DELETE FROM lake.t WHERE id = 1",
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	srv, err := s3serve.ForWarehouse(wh, bucket, map[string]string{user: password})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	f := &fixture{root: root, client: newClient(ts.URL, user, password, nil)}
	exts := map[string]int{}
	err = filepath.WalkDir(filepath.Join(root, "lake", "t"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		exts[filepath.Ext(p)]++
		recorded, ok := storage.RecordedETag(p, fi)
		if want := md5Tag(data); !ok || `"`+recorded+`"` != want {
			t.Errorf("%s: recorded ETag %q (%v), want %s", p, recorded, ok, want)
		}
		key, _ := filepath.Rel(root, p)
		f.wantETag(t, filepath.ToSlash(key), md5Tag(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if exts[".parquet"] == 0 || exts[".avro"] == 0 || exts[".json"] == 0 {
		t.Errorf("the table's files by extension: %v", exts)
	}
}
