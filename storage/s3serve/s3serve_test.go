package s3serve_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/storage"
	"github.com/icesql/icesql/storage/s3serve"
	"github.com/icesql/icesql/storage/sigv4auth"
)

const (
	bucket   = "warehouse"
	user     = "alice"
	password = "pa55/word"
)

type fixture struct {
	root     string
	endpoint string
	client   *s3.Client
	ts       *httptest.Server
}

// start serves a fresh warehouse folder; with creds, requests must be
// signed with them.
func start(t *testing.T, creds map[string]string) *fixture {
	t.Helper()
	root := t.TempDir()
	srv, err := s3serve.New(root, bucket, sigv4auth.New(creds, "s3"))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &fixture{root: root, endpoint: ts.URL, ts: ts, client: newClient(ts.URL, user, password, nil)}
}

func newClient(endpoint, key, secret string, hc *http.Client) *s3.Client {
	opts := s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(key, secret, ""),
	}
	if hc != nil {
		opts.HTTPClient = hc
	}
	return s3.New(opts)
}

func authed(t *testing.T) *fixture { return start(t, map[string]string{user: password}) }

func (f *fixture) put(t *testing.T, key, body string) {
	t.Helper()
	if _, err := f.client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body)}); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

func (f *fixture) get(t *testing.T, key string, rng string) (string, error) {
	t.Helper()
	in := &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
	if rng != "" {
		in.Range = aws.String(rng)
	}
	out, err := f.client.GetObject(context.Background(), in)
	if err != nil {
		return "", err
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	return string(b), err
}

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return fmt.Sprintf("not an API error: %v", err)
}

func wantAPIError(t *testing.T, err error, code string) {
	t.Helper()
	if got := apiCode(err); got != code {
		t.Fatalf("error = %v (code %s), want %s", err, got, code)
	}
}

func TestObjects(t *testing.T) {
	f := authed(t)
	ctx := context.Background()
	f.put(t, "db/t/data/a b+c=é.parquet", "0123456789")
	if b, err := os.ReadFile(filepath.Join(f.root, "db", "t", "data", "a b+c=é.parquet")); err != nil || string(b) != "0123456789" {
		t.Fatalf("the object is not the file: %q, %v", b, err)
	}
	for _, c := range []struct{ rng, want string }{
		{"", "0123456789"}, {"bytes=2-5", "2345"}, {"bytes=7-", "789"}, {"bytes=-3", "789"}, {"bytes=8-100", "89"},
	} {
		got, err := f.get(t, "db/t/data/a b+c=é.parquet", c.rng)
		if err != nil || got != c.want {
			t.Errorf("GET range %q = %q, %v; want %q", c.rng, got, err, c.want)
		}
	}
	_, err := f.get(t, "db/t/data/a b+c=é.parquet", "bytes=10-20")
	wantAPIError(t, err, "InvalidRange")

	head, err := f.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("db/t/data/a b+c=é.parquet")})
	if err != nil || aws.ToInt64(head.ContentLength) != 10 || aws.ToString(head.ETag) == "" || head.LastModified == nil {
		t.Fatalf("HEAD = %+v, %v", head, err)
	}

	_, err = f.get(t, "db/t/data/missing.parquet", "")
	var nsk *types.NoSuchKey
	if !errors.As(err, &nsk) {
		t.Errorf("GET missing: %v, want NoSuchKey", err)
	}
	_, err = f.get(t, "db/t/data", "")
	wantAPIError(t, err, "NoSuchKey") // a prefix is no object
	_, err = f.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("nope")})
	var nf *types.NotFound
	if !errors.As(err, &nf) {
		t.Errorf("HEAD missing: %v, want NotFound", err)
	}
	_, err = f.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("other"), Key: aws.String("k")})
	wantAPIError(t, err, "NoSuchBucket")

	// Overwrite replaces; If-None-Match: * refuses.
	f.put(t, "k", "one")
	f.put(t, "k", "two")
	_, err = f.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), Body: strings.NewReader("three"), IfNoneMatch: aws.String("*")})
	wantAPIError(t, err, "PreconditionFailed")
	if got, _ := f.get(t, "k", ""); got != "two" {
		t.Errorf("after a refused create the object is %q, want two", got)
	}
	if _, err := f.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("new/k"), Body: strings.NewReader("n"), IfNoneMatch: aws.String("*")}); err != nil {
		t.Errorf("create-if-absent of a new key: %v", err)
	}

	// Copy.
	cp, err := f.client.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucket), Key: aws.String("copies/k2"), CopySource: aws.String(bucket + "/db/t/data/a%20b%2Bc%3D%C3%A9.parquet")})
	if err != nil || cp.CopyObjectResult == nil || aws.ToString(cp.CopyObjectResult.ETag) == "" {
		t.Fatalf("copy: %+v, %v", cp, err)
	}
	if got, _ := f.get(t, "copies/k2", ""); got != "0123456789" {
		t.Errorf("copied object = %q", got)
	}
	_, err = f.client.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucket), Key: aws.String("copies/k3"), CopySource: aws.String(bucket + "/missing")})
	wantAPIError(t, err, "NoSuchKey")

	// Delete: present and absent keys both succeed.
	for _, k := range []string{"k", "k", "never-was"} {
		if _, err := f.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(k)}); err != nil {
			t.Errorf("delete %s: %v", k, err)
		}
	}
	if _, err := os.Stat(filepath.Join(f.root, "k")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("deleted object still on disk: %v", err)
	}

	// DeleteObjects: a batch with a key that would escape.
	for i := range 3 {
		f.put(t, fmt.Sprintf("batch/%d", i), "x")
	}
	out, err := f.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("batch/0")}, {Key: aws.String("batch/1")}, {Key: aws.String("batch/2")}, {Key: aws.String("absent")}, {Key: aws.String("../outside")},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	var deleted []string
	for _, d := range out.Deleted {
		deleted = append(deleted, aws.ToString(d.Key))
	}
	slices.Sort(deleted)
	if !slices.Equal(deleted, []string{"absent", "batch/0", "batch/1", "batch/2"}) || len(out.Errors) != 1 ||
		aws.ToString(out.Errors[0].Key) != "../outside" || aws.ToString(out.Errors[0].Code) != "AccessDenied" {
		t.Errorf("DeleteObjects: deleted %v, errors %+v", deleted, out.Errors)
	}
	if entries, _ := os.ReadDir(filepath.Join(f.root, "batch")); len(entries) != 0 {
		t.Errorf("batch delete left %d files", len(entries))
	}

	// The bucket itself.
	if _, err := f.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Errorf("HEAD bucket: %v", err)
	}
	_, err = f.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)})
	wantAPIError(t, err, "BucketAlreadyOwnedByYou")
	lb, err := f.client.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil || len(lb.Buckets) != 1 || aws.ToString(lb.Buckets[0].Name) != bucket {
		t.Errorf("ListBuckets = %+v, %v", lb, err)
	}
	_, err = f.client.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: aws.String(bucket), Key: aws.String("copies/k2")})
	wantAPIError(t, err, "NotImplemented")
	_, err = f.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("locked"), Body: strings.NewReader("x"),
		ObjectLockMode: types.ObjectLockModeCompliance, ObjectLockRetainUntilDate: aws.Time(time.Now().Add(time.Hour))})
	wantAPIError(t, err, "NotImplemented")
	_, err = f.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("kms"), Body: strings.NewReader("x"),
		ServerSideEncryption: types.ServerSideEncryptionAwsKms})
	wantAPIError(t, err, "NotImplemented")
	if _, err := f.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("sse-s3"), Body: strings.NewReader("x"),
		ServerSideEncryption: types.ServerSideEncryptionAes256}); err != nil {
		t.Errorf("SSE-S3 PUT: %v", err)
	}
}

func TestConcurrentCreateOneWins(t *testing.T) {
	f := authed(t)
	ctx := context.Background()
	const writers = 8
	for round := range 10 {
		key := fmt.Sprintf("db/t/metadata/v%d.metadata.json", round)
		var wins, refused atomic.Int32
		var winner atomic.Value
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := fmt.Sprintf("writer %d %s", w, strings.Repeat("x", w*1000))
				_, err := f.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body), IfNoneMatch: aws.String("*")})
				switch {
				case err == nil:
					wins.Add(1)
					winner.Store(body)
				case apiCode(err) == "PreconditionFailed":
					refused.Add(1)
				default:
					t.Errorf("writer %d: %v", w, err)
				}
			}()
		}
		wg.Wait()
		if wins.Load() != 1 || refused.Load() != writers-1 {
			t.Fatalf("round %d: %d creates won, %d refused; want exactly 1 and %d", round, wins.Load(), refused.Load(), writers-1)
		}
		if got, _ := f.get(t, key, ""); got != winner.Load() {
			t.Fatalf("round %d: the object is not the winner's content", round)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(f.root, ".icesql-s3")); len(entries) != 1 {
		t.Errorf("staging folder holds %d entries after the writes, want only uploads/", len(entries))
	}
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMultipart(t *testing.T) {
	f := authed(t)
	ctx := context.Background()
	key := "db/t/data/big.parquet"
	parts := [][]byte{randomBytes(t, 5<<20), randomBytes(t, 5<<20), randomBytes(t, 123)}
	upload := func(key string, parts [][]byte) (string, []types.CompletedPart) {
		cr, err := f.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		var done []types.CompletedPart
		for i, p := range parts {
			up, err := f.client.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: cr.UploadId,
				PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p)})
			if err != nil {
				t.Fatal(err)
			}
			done = append(done, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: up.ETag})
		}
		return aws.ToString(cr.UploadId), done
	}
	complete := func(key, id string, done []types.CompletedPart, ifNoneMatch *string) error {
		_, err := f.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key),
			UploadId: aws.String(id), MultipartUpload: &types.CompletedMultipartUpload{Parts: done}, IfNoneMatch: ifNoneMatch})
		return err
	}

	id, done := upload(key, parts)
	// A wrong ETag and a missing part are refused; the upload stays.
	bad := slices.Clone(done)
	bad[1].ETag = aws.String(`"0000"`)
	wantAPIError(t, complete(key, id, bad, nil), "InvalidPart")
	wantAPIError(t, complete(key, id, append(slices.Clone(done), types.CompletedPart{PartNumber: aws.Int32(9), ETag: aws.String(`"x"`)}), nil), "InvalidPart")
	if err := complete(key, id, done, aws.String("*")); err != nil {
		t.Fatal(err)
	}
	got, err := f.get(t, key, "")
	if err != nil || got != string(bytes.Join(parts, nil)) {
		t.Fatalf("completed object: %d bytes, %v; want %d", len(got), err, len(bytes.Join(parts, nil)))
	}
	wantAPIError(t, complete(key, id, done, nil), "NoSuchUpload")

	// Create-if-absent on completion refuses an existing key.
	id2, done2 := upload(key, parts[2:])
	wantAPIError(t, complete(key, id2, done2, aws.String("*")), "PreconditionFailed")

	// Parts below 5 MiB but the last are refused.
	id3, done3 := upload("small", [][]byte{[]byte("a"), []byte("b")})
	wantAPIError(t, complete("small", id3, done3, nil), "EntityTooSmall")

	// Abort removes the upload; its id is then unknown.
	if _, err := f.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("small"), UploadId: aws.String(id3)}); err != nil {
		t.Fatal(err)
	}
	_, err = f.client.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String("small"), UploadId: aws.String(id3), PartNumber: aws.Int32(1), Body: strings.NewReader("x")})
	wantAPIError(t, err, "NoSuchUpload")
	// An upload id does not serve another key.
	_, err = f.client.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String("other"), UploadId: aws.String(id2), PartNumber: aws.Int32(1), Body: strings.NewReader("x")})
	wantAPIError(t, err, "NoSuchUpload")
	_, err = f.client.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String("small"), UploadId: aws.String("../../x"), PartNumber: aws.Int32(1), Body: strings.NewReader("x")})
	wantAPIError(t, err, "NoSuchUpload")
}

func TestListObjectsV2(t *testing.T) {
	f := authed(t)
	ctx := context.Background()
	keys := []string{"a-y", "a/b/c1", "a/b/c2", "a/b/c3", "a/b/d/e", "a/x", "a0", "b", "db/t/metadata/v1.metadata.json",
		"db/t/metadata/v2.metadata.json", "db/t/data/p=1/f.parquet", "db/u/metadata/v1.metadata.json"}
	for _, k := range keys {
		f.put(t, k, k)
	}
	if err := os.MkdirAll(filepath.Join(f.root, "empty", "folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	list := func(prefix, delim, startAfter string, maxKeys int32) (objects, prefixes []string) {
		t.Helper()
		in := &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix), MaxKeys: aws.Int32(maxKeys)}
		if delim != "" {
			in.Delimiter = aws.String(delim)
		}
		if startAfter != "" {
			in.StartAfter = aws.String(startAfter)
		}
		pages := 0
		for p := s3.NewListObjectsV2Paginator(f.client, in); p.HasMorePages(); pages++ {
			out, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(out.Contents) + len(out.CommonPrefixes); n > int(maxKeys) || int(aws.ToInt32(out.KeyCount)) != n {
				t.Fatalf("a page of max-keys %d holds %d entries, KeyCount %d", maxKeys, n, aws.ToInt32(out.KeyCount))
			}
			for _, o := range out.Contents {
				objects = append(objects, aws.ToString(o.Key))
				if aws.ToInt64(o.Size) != int64(len(aws.ToString(o.Key))) {
					t.Errorf("%s: size %d", aws.ToString(o.Key), aws.ToInt64(o.Size))
				}
			}
			for _, c := range out.CommonPrefixes {
				prefixes = append(prefixes, aws.ToString(c.Prefix))
			}
		}
		return objects, prefixes
	}
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	for _, mk := range []int32{1, 2, 5, 1000} {
		if got, _ := list("", "", "", mk); !slices.Equal(got, sorted) {
			t.Errorf("max-keys %d: all keys = %v, want %v", mk, got, sorted)
		}
	}
	objs, prefs := list("", "/", "", 2)
	if !slices.Equal(objs, []string{"a-y", "a0", "b"}) || !slices.Equal(prefs, []string{"a/", "db/"}) {
		t.Errorf("root with delimiter: %v %v", objs, prefs)
	}
	objs, prefs = list("a/", "/", "", 1)
	if !slices.Equal(objs, []string{"a/x"}) || !slices.Equal(prefs, []string{"a/b/"}) {
		t.Errorf("a/ with delimiter: %v %v", objs, prefs)
	}
	objs, prefs = list("db/t/meta", "/", "", 10)
	if len(objs) != 0 || !slices.Equal(prefs, []string{"db/t/metadata/"}) {
		t.Errorf("partial name prefix: %v %v", objs, prefs)
	}
	objs, _ = list("db/t/metadata/", "", "", 10)
	if !slices.Equal(objs, []string{"db/t/metadata/v1.metadata.json", "db/t/metadata/v2.metadata.json"}) {
		t.Errorf("metadata listing: %v", objs)
	}
	objs, _ = list("a/", "", "a/b/c2", 10)
	if !slices.Equal(objs, []string{"a/b/c3", "a/b/d/e", "a/x"}) {
		t.Errorf("start-after: %v", objs)
	}
	objs, prefs = list("a", "b", "", 10)
	if !slices.Equal(objs, []string{"a-y", "a/x", "a0"}) || !slices.Equal(prefs, []string{"a/b"}) {
		t.Errorf("delimiter b: %v %v", objs, prefs)
	}
	if objs, prefs = list("nothing/", "/", "", 10); len(objs)+len(prefs) != 0 {
		t.Errorf("missing prefix: %v %v", objs, prefs)
	}
	// ListObjects (v1) with a marker.
	out, err := f.client.ListObjects(ctx, &s3.ListObjectsInput{Bucket: aws.String(bucket), Prefix: aws.String("a/b/"), Marker: aws.String("a/b/c1"), MaxKeys: aws.Int32(2)})
	if err != nil || len(out.Contents) != 2 || aws.ToString(out.Contents[0].Key) != "a/b/c2" || !aws.ToBool(out.IsTruncated) {
		t.Errorf("ListObjects v1: %+v, %v", out, err)
	}
}

// raw sends a request to an open (loopback, no credentials) server.
func raw(t *testing.T, method, url string, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestKeysStayInside(t *testing.T) {
	f := start(t, nil)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(f.root, "link")); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(f.root, outside)
	for _, path := range []string{
		"/warehouse/..%2F" + strings.ReplaceAll(rel, "/", "%2F") + "%2Fsecret",
		"/warehouse/a/%2E%2E/%2E%2E/" + rel + "/secret",
		"/warehouse/link/secret",
		"/warehouse/%2F" + strings.ReplaceAll(strings.TrimPrefix(outside, "/"), "/", "%2F") + "%2Fsecret",
		"/warehouse/a%00b",
		"/warehouse/.icesql-s3/uploads",
	} {
		for _, method := range []string{"GET", "PUT", "DELETE"} {
			resp, body := raw(t, method, f.endpoint+path, "overwritten")
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "<Code>AccessDenied</Code>") {
				t.Errorf("%s %s: %d %s, want 403 AccessDenied", method, path, resp.StatusCode, body)
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(outside, "secret")); err != nil || string(b) != "secret" {
		t.Fatalf("the file outside was changed: %q, %v", b, err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("files were created outside: %d entries", len(entries))
	}
	// A listing neither follows the link out nor shows the staging folder.
	out, err := f.client.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil || len(out.Contents) != 0 {
		t.Errorf("listing: %+v, %v", out, err)
	}
}

func TestAuth(t *testing.T) {
	f := authed(t)
	ctx := context.Background()
	f.put(t, "k", "value")
	for _, c := range []struct {
		name, key, secret, code string
	}{
		{"wrong password", user, "guess", "SignatureDoesNotMatch"},
		{"unknown user", "mallory", password, "InvalidAccessKeyId"},
	} {
		_, err := newClient(f.endpoint, c.key, c.secret, nil).GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("k")})
		wantAPIError(t, err, c.code)
		var re interface{ HTTPStatusCode() int }
		if !errors.As(err, &re) || re.HTTPStatusCode() != http.StatusForbidden {
			t.Errorf("%s: status %v, want 403", c.name, err)
		}
	}
	anon := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(f.endpoint), UsePathStyle: true, Credentials: aws.AnonymousCredentials{}})
	_, err := anon.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("k")})
	wantAPIError(t, err, "AccessDenied")
	_, err = newClient(f.endpoint, user, "guess", nil).PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k2"), Body: strings.NewReader("x")})
	wantAPIError(t, err, "SignatureDoesNotMatch")
	if _, err := os.Stat(filepath.Join(f.root, "k2")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused PUT wrote its object")
	}

	// Presigned URLs: GET and PUT work, a changed URL does not.
	pc := s3.NewPresignClient(f.client)
	pg, err := pc.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("k")}, s3.WithPresignExpires(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if resp, body := raw(t, "GET", pg.URL, ""); resp.StatusCode != 200 || body != "value" {
		t.Errorf("presigned GET: %d %q", resp.StatusCode, body)
	}
	if resp, body := raw(t, "GET", strings.Replace(pg.URL, "/k?", "/j?", 1), ""); resp.StatusCode != 403 || !strings.Contains(body, "SignatureDoesNotMatch") {
		t.Errorf("changed presigned GET: %d %q", resp.StatusCode, body)
	}
	pp, err := pc.PresignPutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("up")}, s3.WithPresignExpires(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(pp.Method, pp.URL, strings.NewReader("uploaded"))
	for k, v := range pp.SignedHeader {
		if k != "Host" {
			req.Header[k] = v
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("presigned PUT: %v %v", resp, err)
	}
	resp.Body.Close()
	if got, _ := f.get(t, "up", ""); got != "uploaded" {
		t.Errorf("presigned PUT stored %q", got)
	}
}

// TestChecksummedUploads sends PUTs with each checksum the SDK offers,
// over plain HTTP (the SDK sends the checksum as a header) and over TLS
// (it streams the body as aws-chunked with a trailing checksum,
// STREAMING-UNSIGNED-PAYLOAD-TRAILER).
func TestChecksummedUploads(t *testing.T) {
	for _, tls := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", tls), func(t *testing.T) {
			root := t.TempDir()
			srv, err := s3serve.New(root, bucket, sigv4auth.New(map[string]string{user: password}, "s3"))
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			seen := map[string]bool{}
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen[r.Header.Get("X-Amz-Content-Sha256")] = true
				for k := range r.Header {
					if strings.HasPrefix(strings.ToLower(k), "x-amz-checksum-") {
						seen[strings.ToLower(k)] = true
					}
				}
				mu.Unlock()
				srv.ServeHTTP(w, r)
			})
			var client *s3.Client
			if tls {
				ts := httptest.NewTLSServer(h)
				defer ts.Close()
				client = newClient(ts.URL, user, password, ts.Client())
			} else {
				ts := httptest.NewServer(h)
				defer ts.Close()
				client = newClient(ts.URL, user, password, nil)
			}
			ctx := context.Background()
			data := randomBytes(t, 300<<10)
			for _, algo := range []types.ChecksumAlgorithm{types.ChecksumAlgorithmCrc32, types.ChecksumAlgorithmCrc32c,
				types.ChecksumAlgorithmCrc64nvme, types.ChecksumAlgorithmSha1, types.ChecksumAlgorithmSha256} {
				key := "sum/" + string(algo)
				// Over TLS, a reader that is not seekable, as a streamed
				// upload is; over plain HTTP the SDK needs to seek.
				var body io.Reader = bytes.NewReader(data)
				if tls {
					body = io.MultiReader(body)
				}
				_, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
					Body: body, ContentLength: aws.Int64(int64(len(data))), ChecksumAlgorithm: algo})
				if err != nil {
					t.Fatalf("%s: %v", algo, err)
				}
				if b, err := os.ReadFile(filepath.Join(root, "sum", string(algo))); err != nil || !bytes.Equal(b, data) {
					t.Fatalf("%s: stored %d bytes, %v", algo, len(b), err)
				}
			}
			if tls && !seen[sigv4auth.StreamingUnsignedTrailer] {
				t.Errorf("the SDK sent no streaming upload (%v): the aws-chunked path was not tested", seen)
			}
			if !tls && !seen["x-amz-checksum-crc64nvme"] {
				t.Errorf("the SDK sent no checksum header (%v): their check was not tested", seen)
			}
		})
	}
}

func TestBadDigestRefused(t *testing.T) {
	f := start(t, nil)
	for header, value := range map[string]string{
		"X-Amz-Checksum-Crc32":  "AAAAAA==",
		"Content-MD5":           "AAAAAAAAAAAAAAAAAAAAAA==",
		"X-Amz-Checksum-Sha256": "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", // of nothing
	} {
		req, _ := http.NewRequest("PUT", f.endpoint+"/warehouse/digest", strings.NewReader("content"))
		req.Header.Set(header, value)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(b), "<Code>BadDigest</Code>") {
			t.Errorf("%s: %d %s, want 400 BadDigest", header, resp.StatusCode, b)
		}
		if _, err := os.Stat(filepath.Join(f.root, "digest")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: a PUT with a wrong digest stored its object", header)
		}
	}
}

// TestWarehouseThroughS3 points icesql's own S3 file IO (storage.S3Store
// and iceberg-go's S3 IO, path-style) at the S3 API: tables are created,
// written and read through it, and land in the served folder.
func TestWarehouseThroughS3(t *testing.T) {
	f := authed(t)
	ctx := context.Background()
	cfg := engine.Config{Warehouse: "s3://" + bucket + "/wh", S3: storage.S3Config{
		Endpoint: f.endpoint, Region: "us-east-1", PathStyle: true, AccessKeyID: user, SecretAccessKey: password}}
	e, err := engine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db := sql.OpenDB(e.Connector())
	defer db.Close()
	for _, stmt := range []string{
		"CREATE DATABASE lake",
		"CREATE TABLE lake.orders (id BIGINT, note TEXT, day DATE) PARTITIONED BY (days(day))",
		"INSERT INTO lake.orders VALUES (1, 'a', '2024-01-15'), (2, 'b', '2024-01-16')",
		"INSERT INTO lake.orders VALUES (3, 'c', '2024-01-16')",
		"DELETE FROM lake.orders WHERE id = 2",
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	var n, sum int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*), SUM(id) FROM lake.orders WHERE day >= '2024-01-15'").Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	if n != 2 || sum != 4 {
		t.Errorf("count, sum = %d, %d; want 2, 4", n, sum)
	}
	metas, _ := filepath.Glob(filepath.Join(f.root, "wh", "lake", "orders", "metadata", "*.metadata.json"))
	datas, _ := filepath.Glob(filepath.Join(f.root, "wh", "lake", "orders", "data", "*", "*.parquet"))
	if len(metas) < 4 || len(datas) < 2 {
		t.Errorf("the served folder holds %d metadata and %d data files; want at least 4 and 2", len(metas), len(datas))
	}

	// A second engine on the same endpoint sees the commits.
	e2, err := engine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	db2 := sql.OpenDB(e2.Connector())
	defer db2.Close()
	if err := db2.QueryRowContext(ctx, "SELECT COUNT(*) FROM lake.orders").Scan(&n); err != nil || n != 2 {
		t.Errorf("second engine: count %d, %v", n, err)
	}
}

// interopPython is the interpreter of the interop virtualenv
// (interop/setup.sh), which has PyArrow; "" when it is not installed.
func interopPython() string {
	if p := os.Getenv("ICESQL_INTEROP_PYTHON"); p != "" {
		return p
	}
	home, _ := os.UserHomeDir()
	p := filepath.Join(home, ".cache", "icesql-interop", "venv", "bin", "python")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

func TestPyArrowS3(t *testing.T) {
	python := interopPython()
	if python == "" {
		t.Skip("PyArrow comes with the interop virtualenv, which is not installed: `make interop` (interop/setup.sh) installs it")
	}
	f := authed(t)
	out, err := exec.Command(python, "testdata/pyarrow_s3.py", strings.TrimPrefix(f.endpoint, "http://"), user, password).CombinedOutput()
	if err != nil {
		t.Fatalf("pyarrow_s3.py: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(f.root, "py", "nested", "t.parquet")); err != nil || len(b) == 0 {
		t.Errorf("PyArrow's Parquet file is not in the folder: %v", err)
	}
	var metas []string
	filepath.WalkDir(filepath.Join(f.root, "pyiceberg"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".metadata.json") {
			metas = append(metas, p)
		}
		return nil
	})
	if len(metas) < 3 {
		t.Errorf("PyIceberg's table has %d metadata files in the folder, want 3 or more: %v", len(metas), metas)
	}
}

// TestStaleStagingRemoved: a server starting on a folder removes what a
// crashed PUT and an abandoned multipart upload left, and keeps fresh ones.
func TestStaleStagingRemoved(t *testing.T) {
	f := authed(t)
	ctx := context.Background()
	staging := filepath.Join(f.root, ".icesql-s3")
	old := time.Now().Add(-8 * 24 * time.Hour)
	for _, name := range []string{"put-stale", "put-fresh"} {
		if err := os.WriteFile(filepath.Join(staging, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.Chtimes(filepath.Join(staging, "put-stale"), old, old)
	var ids []string
	for range 2 {
		cr, err := f.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("k")})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, aws.ToString(cr.UploadId))
	}
	os.Chtimes(filepath.Join(staging, "uploads", ids[0]), old, old)
	if _, err := s3serve.New(f.root, bucket, sigv4auth.New(nil, "s3")); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"put-stale": false, "put-fresh": true, "uploads/" + ids[0]: false, "uploads/" + ids[1]: true} {
		if _, err := os.Stat(filepath.Join(staging, name)); (err == nil) != want {
			t.Errorf("%s: exists = %v, want %v", name, err == nil, want)
		}
	}
}

// awsBundleJar is iceberg-aws-bundle (the AWS SDK for Java v2 that
// Iceberg's S3FileIO uses) in the local Maven repository; "" if absent.
func awsBundleJar() string {
	home, _ := os.UserHomeDir()
	p := filepath.Join(home, ".m2", "repository", "org", "apache", "iceberg", "iceberg-aws-bundle", "1.10.1", "iceberg-aws-bundle-1.10.1.jar")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

func TestJavaSDK(t *testing.T) {
	jar := awsBundleJar()
	if jar == "" {
		t.Skip("the AWS SDK for Java comes with org.apache.iceberg:iceberg-aws-bundle:1.10.1, which is not in ~/.m2 (mvn dependency:get fetches it)")
	}
	home, _ := os.UserHomeDir()
	slf4js, _ := filepath.Glob(filepath.Join(home, ".m2", "repository", "org", "slf4j", "slf4j-api", "2.*", "slf4j-api-2.*.jar"))
	if len(slf4js) == 0 {
		t.Skip("the AWS SDK for Java logs through org.slf4j:slf4j-api (2.x), which is not in ~/.m2")
	}
	slf4j := slf4js[len(slf4js)-1]
	if _, err := exec.LookPath("javac"); err != nil {
		t.Skip("running JavaS3Check.java needs a JDK (javac), not only a JRE")
	}
	root := t.TempDir()
	srv, err := s3serve.New(root, bucket, sigv4auth.New(map[string]string{user: password}, "s3"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	payloads := map[string]bool{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		payloads[r.Header.Get("X-Amz-Content-Sha256")] = true
		mu.Unlock()
		srv.ServeHTTP(w, r)
	}))
	defer ts.Close()
	out, err := exec.Command("java", "-cp", jar+string(os.PathListSeparator)+slf4j, "testdata/JavaS3Check.java", ts.URL, user, password).CombinedOutput()
	if err != nil {
		t.Fatalf("JavaS3Check: %v\n%s", err, out)
	}
	t.Logf("payload hashes the Java SDK sent: %v", payloads)
	if !payloads[sigv4auth.StreamingPayload] && !payloads[sigv4auth.StreamingPayloadTrailer] {
		t.Errorf("the Java SDK sent no signed aws-chunked body (%v): that path was not tested", payloads)
	}
}

func TestForWarehouse(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	wh, err := storage.OpenWarehouse(ctx, root, storage.LocalStore{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := s3serve.ForWarehouse(wh, "lake", map[string]string{user: password})
	if err != nil || srv == nil {
		t.Fatalf("local warehouse: %v, %v", srv, err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c := newClient(ts.URL, user, password, nil)
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("lake"), Key: aws.String("ns/f"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "ns", "f")); err != nil {
		t.Errorf("the object is not in the warehouse folder: %v", err)
	}
	if _, err := s3serve.ForWarehouse(wh, "Not_A_Bucket", nil); err == nil {
		t.Errorf("an invalid bucket name was accepted")
	}

	// A warehouse on S3 (here: on another S3 API) gets none.
	f := authed(t)
	st, err := storage.NewS3Store(ctx, "s3://"+bucket+"/wh", storage.S3Config{Endpoint: f.endpoint, Region: "us-east-1", PathStyle: true, AccessKeyID: user, SecretAccessKey: password})
	if err != nil {
		t.Fatal(err)
	}
	remote, err := storage.OpenWarehouse(ctx, "s3://"+bucket+"/wh", st)
	if err != nil {
		t.Fatal(err)
	}
	if srv, err := s3serve.ForWarehouse(remote, bucket, nil); srv != nil || err != nil {
		t.Errorf("S3 warehouse: %v, %v; want no S3 API", srv, err)
	}
}
