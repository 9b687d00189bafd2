package sigv4auth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

var (
	testCreds = aws.Credentials{AccessKeyID: "alice", SecretAccessKey: "s3cret/pass"}
	testNow   = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
)

func testVerifier() *Verifier {
	return New(map[string]string{"alice": "s3cret/pass", "bob": "other"}, "s3", "s3tables").WithClock(func() time.Time { return testNow })
}

func payloadHash(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:])
}

// serverRequest turns a client request into what a server's handler sees.
func serverRequest(t *testing.T, c *http.Request, body string) *http.Request {
	t.Helper()
	r := httptest.NewRequest(c.Method, c.URL.RequestURI(), strings.NewReader(body))
	r.Host = c.URL.Host
	r.RemoteAddr = "192.0.2.1:1234"
	for k, v := range c.Header {
		r.Header[k] = v
	}
	return r
}

// signed builds a request as a client would send it, signed by the SDK.
func signedRequest(t *testing.T, method, target, body, service string, signedAt time.Time, hdr map[string]string, payload string) *http.Request {
	t.Helper()
	c, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		c.Header.Set(k, v)
	}
	if payload == "" {
		payload = payloadHash(body)
	}
	if service == "s3" {
		c.Header.Set("X-Amz-Content-Sha256", payload)
	}
	err = v4.NewSigner().SignHTTP(context.Background(), testCreds, c, payload, service, "us-east-1", signedAt, func(o *v4.SignerOptions) {
		o.DisableURIPathEscaping = service == "s3"
	})
	if err != nil {
		t.Fatal(err)
	}
	return serverRequest(t, c, body)
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v, want %s", err, code)
	}
	if e.Code != code {
		t.Fatalf("error code = %s (%s), want %s", e.Code, e.Message, code)
	}
}

func TestVerifyHeaderSignatures(t *testing.T) {
	v := testVerifier()
	cases := []struct {
		name, method, target, body, service string
		hdr                                 map[string]string
	}{
		{"plain GET", "GET", "http://127.0.0.1:8181/warehouse/db/t/metadata/v1.metadata.json", "", "s3", nil},
		{"query and range", "GET", "http://localhost:8181/warehouse?list-type=2&prefix=db%2Ft%2F&delimiter=%2F&max-keys=5", "", "s3",
			map[string]string{"Range": "bytes=0-9"}},
		{"odd key", "PUT", "http://localhost:8181/warehouse/db/a%20b%2Bc%3D%C3%A9~x.parquet", "hello", "s3",
			map[string]string{"If-None-Match": "*", "Content-Type": "application/octet-stream"}},
		{"REST catalog", "POST", "http://localhost:8181/_iceberg/v1/namespaces/db%1Fx/tables", `{"name":"t"}`, "s3tables",
			map[string]string{"Content-Type": "application/json"}},
		{"empty query value", "POST", "http://localhost:8181/warehouse?delete", "<Delete/>", "s3", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := signedRequest(t, c.method, c.target, c.body, c.service, testNow.Add(-time.Minute), c.hdr, "")
			id, err := v.Verify(r)
			if err != nil {
				t.Fatal(err)
			}
			if id.AccessKeyID != "alice" || id.Service != c.service || id.Region != "us-east-1" {
				t.Errorf("identity = %+v", id)
			}
			got, err := io.ReadAll(r.Body)
			if err != nil || string(got) != c.body {
				t.Errorf("body = %q, %v; want %q", got, err, c.body)
			}
		})
	}
}

func TestVerifyRefuses(t *testing.T) {
	v := testVerifier()
	get := func() *http.Request {
		return signedRequest(t, "GET", "http://localhost/warehouse/k?x-id=GetObject", "", "s3", testNow, map[string]string{"Range": "bytes=0-1"}, "")
	}
	t.Run("unsigned", func(t *testing.T) {
		_, err := v.Verify(httptest.NewRequest("GET", "/warehouse/k", nil))
		wantCode(t, err, "AccessDenied")
	})
	t.Run("wrong secret", func(t *testing.T) {
		r := get()
		r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "Credential=alice/", "Credential=bob/", 1))
		_, err := v.Verify(r)
		wantCode(t, err, "SignatureDoesNotMatch")
	})
	t.Run("unknown access key", func(t *testing.T) {
		r := get()
		r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "Credential=alice/", "Credential=mallory/", 1))
		_, err := v.Verify(r)
		wantCode(t, err, "InvalidAccessKeyId")
	})
	t.Run("signed header changed", func(t *testing.T) {
		r := get()
		r.Header.Set("Range", "bytes=0-100")
		_, err := v.Verify(r)
		wantCode(t, err, "SignatureDoesNotMatch")
	})
	t.Run("query changed", func(t *testing.T) {
		r := get()
		r.URL.RawQuery = "x-id=PutObject"
		_, err := v.Verify(r)
		wantCode(t, err, "SignatureDoesNotMatch")
	})
	t.Run("path changed", func(t *testing.T) {
		r := get()
		r.URL.Path, r.RequestURI = "/warehouse/other", "/warehouse/other?x-id=GetObject"
		_, err := v.Verify(r)
		wantCode(t, err, "SignatureDoesNotMatch")
	})
	t.Run("other signing name", func(t *testing.T) {
		r := signedRequest(t, "GET", "http://localhost/warehouse/k", "", "execute-api", testNow, nil, "")
		_, err := v.Verify(r)
		wantCode(t, err, "SignatureDoesNotMatch")
	})
	t.Run("clock skew", func(t *testing.T) {
		r := signedRequest(t, "GET", "http://localhost/warehouse/k", "", "s3", testNow.Add(-16*time.Minute), nil, "")
		_, err := v.Verify(r)
		wantCode(t, err, "RequestTimeTooSkewed")
		r = signedRequest(t, "GET", "http://localhost/warehouse/k", "", "s3", testNow.Add(14*time.Minute), nil, "")
		if _, err := v.Verify(r); err != nil {
			t.Errorf("14 minutes ahead: %v", err)
		}
	})
	t.Run("body not the signed one", func(t *testing.T) {
		r := signedRequest(t, "PUT", "http://localhost/warehouse/k", "abc", "s3", testNow, nil, payloadHash("abd"))
		if _, err := v.Verify(r); err != nil {
			t.Fatal(err)
		}
		_, err := io.ReadAll(r.Body)
		wantCode(t, err, "XAmzContentSHA256Mismatch")
	})
	t.Run("REST body not the signed one", func(t *testing.T) {
		// Checked before Verify returns: the caller may decode only a prefix.
		r := signedRequest(t, "POST", "http://localhost/v1/namespaces", `{"a":1} `, "s3tables", testNow,
			map[string]string{"X-Amz-Content-Sha256": payloadHash(`{"a":1}`)}, payloadHash(`{"a":1}`))
		_, err := v.Verify(r)
		wantCode(t, err, "XAmzContentSHA256Mismatch")
	})
	t.Run("REST body changed", func(t *testing.T) {
		r := signedRequest(t, "POST", "http://localhost/v1/namespaces", `{"a":1}`, "s3tables", testNow, nil, "")
		r.Body = io.NopCloser(strings.NewReader(`{"a":2}`))
		_, err := v.Verify(r)
		wantCode(t, err, "SignatureDoesNotMatch")
	})
	t.Run("SigV4a", func(t *testing.T) {
		r := httptest.NewRequest("GET", "/warehouse/k", nil)
		r.Header.Set("Authorization", "AWS4-ECDSA-P256-SHA256 Credential=alice/20261130/s3/aws4_request, SignedHeaders=host, Signature=00")
		_, err := v.Verify(r)
		wantCode(t, err, "NotImplemented")
	})
}

func TestVerifyPresigned(t *testing.T) {
	v := testVerifier()
	presign := func(method, target string, signedAt time.Time, expires time.Duration) *http.Request {
		c, _ := http.NewRequest(method, target, nil)
		q := c.URL.Query()
		q.Set("X-Amz-Expires", strconv.Itoa(int(expires/time.Second)))
		c.URL.RawQuery = q.Encode()
		u, hdr, err := v4.NewSigner().PresignHTTP(context.Background(), testCreds, c, UnsignedPayload, "s3", "us-east-1", signedAt,
			func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
		if err != nil {
			t.Fatal(err)
		}
		s, _ := http.NewRequest(method, u, nil)
		for k, vs := range hdr {
			if k != "Host" {
				s.Header[k] = vs
			}
		}
		return serverRequest(t, s, "")
	}
	if _, err := v.Verify(presign("GET", "http://localhost:8181/warehouse/db/a%20b.parquet", testNow.Add(-time.Hour), 2*time.Hour)); err != nil {
		t.Fatalf("valid presigned URL refused: %v", err)
	}
	_, err := v.Verify(presign("GET", "http://localhost:8181/warehouse/k", testNow.Add(-time.Hour), 30*time.Minute))
	wantCode(t, err, "AccessDenied")
	r := presign("GET", "http://localhost:8181/warehouse/k", testNow, time.Hour)
	r.URL.Path = "/warehouse/j"
	r.RequestURI = strings.Replace(r.RequestURI, "/k?", "/j?", 1)
	_, err = v.Verify(r)
	wantCode(t, err, "SignatureDoesNotMatch")
}

func TestLoopbackWithoutCredentials(t *testing.T) {
	v := New(nil, "s3")
	r := httptest.NewRequest("GET", "/warehouse/k", nil)
	r.RemoteAddr = "127.0.0.1:5000"
	if _, err := v.Verify(r); err != nil {
		t.Errorf("loopback refused: %v", err)
	}
	r.RemoteAddr = "[::1]:5000"
	if _, err := v.Verify(r); err != nil {
		t.Errorf("IPv6 loopback refused: %v", err)
	}
	r.RemoteAddr = "192.0.2.7:5000"
	_, err := v.Verify(r)
	wantCode(t, err, "AccessDenied")
}

// TestStreamingPayloadExample checks the worked example of AWS's
// documentation of STREAMING-AWS4-HMAC-SHA256-PAYLOAD ("Signature
// calculations for the Authorization header: Transferring payload in
// multiple chunks"): 66560 bytes of 'a' in chunks of 65536 and 1024 bytes.
func TestStreamingPayloadExample(t *testing.T) {
	v := New(map[string]string{"AKIAIOSFODNN7EXAMPLE": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}, "s3").
		WithClock(func() time.Time { return time.Date(2013, 5, 24, 0, 5, 0, 0, time.UTC) })
	build := func(chunk2Sig string) *http.Request {
		var body strings.Builder
		body.WriteString("10000;chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648\r\n")
		body.WriteString(strings.Repeat("a", 65536) + "\r\n")
		body.WriteString("400;chunk-signature=" + chunk2Sig + "\r\n")
		body.WriteString(strings.Repeat("a", 1024) + "\r\n")
		body.WriteString("0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9\r\n\r\n")
		r := httptest.NewRequest("PUT", "/examplebucket/chunkObject.txt", strings.NewReader(body.String()))
		r.Host = "s3.amazonaws.com"
		r.RemoteAddr = "192.0.2.1:1"
		r.Header.Set("X-Amz-Date", "20130524T000000Z")
		r.Header.Set("X-Amz-Storage-Class", "REDUCED_REDUNDANCY")
		r.Header.Set("Content-Encoding", "aws-chunked")
		r.Header.Set("X-Amz-Decoded-Content-Length", "66560")
		r.Header.Set("Content-Length", "66824")
		r.Header.Set("X-Amz-Content-Sha256", StreamingPayload)
		r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"+
			"SignedHeaders=content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class,"+
			"Signature=4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9")
		return r
	}
	r := build("0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497")
	if _, err := v.Verify(r); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != strings.Repeat("a", 66560) {
		t.Fatalf("decoded %d bytes, want 66560 bytes of 'a'", len(got))
	}
	r = build("1055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497")
	if _, err := v.Verify(r); err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(r.Body)
	wantCode(t, err, "SignatureDoesNotMatch")
}

// chunkedBody encodes data as aws-chunked with signed chunks and a signed
// crc32 trailer (STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER), as the Java
// SDK sends it over plain HTTP.
func chunkedBody(key []byte, s *signed, seed string, data []byte, chunk int, crc string) string {
	var b strings.Builder
	prev := seed
	sign := func(part []byte) string {
		sum := sha256.Sum256(part)
		toSign := "AWS4-HMAC-SHA256-PAYLOAD\n" + s.amzTime.Format(timeFormat) + "\n" + s.scope() + "\n" + prev + "\n" + emptySHA256 + "\n" + hex.EncodeToString(sum[:])
		prev = hex.EncodeToString(hmacSHA256(key, toSign))
		return prev
	}
	for len(data) > 0 {
		n := min(chunk, len(data))
		fmt.Fprintf(&b, "%x;chunk-signature=%s\r\n%s\r\n", n, sign(data[:n]), data[:n])
		data = data[n:]
	}
	fmt.Fprintf(&b, "0;chunk-signature=%s\r\n", sign(nil))
	trailer := "x-amz-checksum-crc32:" + crc + "\n"
	sum := sha256.Sum256([]byte(trailer))
	toSign := "AWS4-HMAC-SHA256-TRAILER\n" + s.amzTime.Format(timeFormat) + "\n" + s.scope() + "\n" + prev + "\n" + hex.EncodeToString(sum[:])
	fmt.Fprintf(&b, "x-amz-checksum-crc32:%s\r\nx-amz-trailer-signature:%s\r\n\r\n", crc, hex.EncodeToString(hmacSHA256(key, toSign)))
	return b.String()
}

func TestStreamingPayloadTrailer(t *testing.T) {
	v := testVerifier()
	data := []byte(strings.Repeat("0123456789abcdef", 10000))
	c := crc32.ChecksumIEEE(data)
	goodCRC := base64.StdEncoding.EncodeToString([]byte{byte(c >> 24), byte(c >> 16), byte(c >> 8), byte(c)})
	for _, tc := range []struct {
		name, crc, want string
	}{
		{"good", goodCRC, ""},
		{"bad checksum", base64.StdEncoding.EncodeToString([]byte{1, 2, 3, 4}), "BadDigest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{"Content-Encoding": "aws-chunked", "X-Amz-Decoded-Content-Length": strconv.Itoa(len(data)),
				"X-Amz-Trailer": "x-amz-checksum-crc32"}
			r := signedRequest(t, "PUT", "http://localhost/warehouse/big", "", "s3", testNow, hdr, StreamingPayloadTrailer)
			if _, err := v.Verify(r); err != nil {
				t.Fatal(err)
			}
			s, err := v.parseHeader(r)
			if err != nil {
				t.Fatal(err)
			}
			key := signingKey("s3cret/pass", s.date, s.region, s.service)
			r.Body = io.NopCloser(strings.NewReader(chunkedBody(key, s, s.signature, data, 8192, tc.crc)))
			if err := s.wrapBody(r, key); err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r.Body)
			if tc.want != "" {
				wantCode(t, err, tc.want)
				return
			}
			if err != nil || string(got) != string(data) {
				t.Fatalf("decoded %d bytes, err %v", len(got), err)
			}
		})
	}
}

func TestChecksums(t *testing.T) {
	// The check values of "123456789" (Rocksoft model catalogue).
	for name, want := range map[string]string{"crc32": "cbf43926", "crc32c": "e3069283", "crc64nvme": "ae8b14860a799888"} {
		h, ok := NewChecksum(name)
		if !ok {
			t.Fatalf("%s unknown", name)
		}
		h.Write([]byte("123456789"))
		if got := hex.EncodeToString(h.Sum(nil)); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
}

func TestSigned(t *testing.T) {
	r := signedRequest(t, "GET", "http://localhost/v1/config", "", "s3tables", testNow, nil, "")
	plain := httptest.NewRequest("GET", "/v1/config", nil)
	bearer := httptest.NewRequest("GET", "/v1/config", nil)
	bearer.Header.Set("Authorization", "Bearer u:p")
	presigned := httptest.NewRequest("GET", "/warehouse/k?X-Amz-Signature=00", nil)
	for _, c := range []struct {
		r    *http.Request
		want bool
	}{{r, true}, {plain, false}, {bearer, false}, {presigned, true}} {
		if got := Signed(c.r); got != c.want {
			t.Errorf("Signed(%s %v) = %v", c.r.URL, c.r.Header, got)
		}
	}
}

func TestChunkedMalformed(t *testing.T) {
	v := New(nil, "s3")
	for name, body := range map[string]string{
		"endless header":  strings.Repeat("f", 200<<10),
		"short chunk":     "10\r\nabc",
		"no CRLF":         "3\r\nabcX\r\n0\r\n\r\n",
		"bad size":        "zz\r\nabc\r\n",
		"missing trailer": "3\r\nabc\r\n0\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			r := httptest.NewRequest("PUT", "/warehouse/k", strings.NewReader(body))
			r.RemoteAddr = "127.0.0.1:1"
			r.Header.Set("X-Amz-Content-Sha256", StreamingUnsignedTrailer)
			r.Header.Set("X-Amz-Trailer", "x-amz-checksum-crc32")
			if _, err := v.Verify(r); err != nil {
				t.Fatal(err)
			}
			_, err := io.ReadAll(r.Body)
			wantCode(t, err, "IncompleteBody")
		})
	}
}

// TestBase64PayloadHeader is Iceberg's Java REST client (Spark, the RCK):
// x-amz-content-sha256 carries the body's SHA-256 in base64 and the
// signature covers its hex form. A body that does not match the header is
// refused.
func TestBase64PayloadHeader(t *testing.T) {
	v := testVerifier()
	body := `{"namespace":["tutorial"],"properties":{}}`
	sum := sha256.Sum256([]byte(body))
	hdr := map[string]string{"Content-Type": "application/json", "X-Amz-Content-Sha256": base64.StdEncoding.EncodeToString(sum[:])}
	r := signedRequest(t, "POST", "http://127.0.0.1:8181/_iceberg/v1/lakehouse/namespaces", body, "s3tables", testNow, hdr, "")
	if _, err := v.Verify(r); err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(r.Body); err != nil || string(got) != body {
		t.Fatalf("body = %q, %v", got, err)
	}
	other := sha256.Sum256([]byte(`{"namespace":["other"]}`))
	hdr["X-Amz-Content-Sha256"] = base64.StdEncoding.EncodeToString(other[:])
	r = signedRequest(t, "POST", "http://127.0.0.1:8181/_iceberg/v1/lakehouse/namespaces", body, "s3tables", testNow, hdr, payloadHash(`{"namespace":["other"]}`))
	r.Body = io.NopCloser(strings.NewReader(body))
	_, err := v.Verify(r)
	if err == nil {
		t.Fatal("a body that does not match its signed hash was admitted")
	}
}
