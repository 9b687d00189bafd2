package sigv4auth

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// crc64NVME is CRC-64/NVME (reflected polynomial of 0xad93d23594c93659),
// the x-amz-checksum-crc64nvme algorithm; Go's crc64 applies its initial
// and final inversion.
var crc64NVME = crc64.MakeTable(0x9a6c9329ac4bc9b5)

// NewChecksum returns the hash of an S3 checksum algorithm, named as in
// its header x-amz-checksum-NAME (crc32, crc32c, crc64nvme, sha1, sha256);
// the header's value is the base64 of its sum.
func NewChecksum(name string) (hash.Hash, bool) {
	switch strings.ToLower(name) {
	case "crc32":
		return crc32.NewIEEE(), true
	case "crc32c":
		return crc32.New(crc32.MakeTable(crc32.Castagnoli)), true
	case "crc64nvme":
		return crc64.New(crc64NVME), true
	case "sha1":
		return sha1.New(), true
	case "sha256":
		return sha256.New(), true
	}
	return nil, false
}

// ChecksumMismatch is the error for a body whose x-amz-checksum-* does
// not match it.
func ChecksumMismatch(name string) *Error {
	return refuse(http.StatusBadRequest, "BadDigest", "the x-amz-checksum-%s sent does not match the body", name)
}

const checksumPrefix = "x-amz-checksum-"

// wrapBody replaces r.Body by a reader that checks the payload against the
// hash or chunk signatures the request was signed with (key nil: decode
// the aws-chunked encoding without checking signatures).
func (s *signed) wrapBody(r *http.Request, key []byte) error {
	switch p := s.payloadHash; {
	case p == "" || p == UnsignedPayload:
		return nil
	case p == StreamingPayload || p == StreamingPayloadTrailer || p == StreamingUnsignedTrailer:
		c := &chunkReader{
			br:      bufio.NewReaderSize(r.Body, 64<<10),
			closer:  r.Body,
			s:       s,
			key:     key,
			prevSig: s.signature,
			signed:  p != StreamingUnsignedTrailer,
			trailer: p != StreamingPayload,
			decoded: -1,
		}
		if d := r.Header.Get("X-Amz-Decoded-Content-Length"); d != "" {
			n, err := strconv.ParseInt(d, 10, 64)
			if err != nil || n < 0 {
				return refuse(http.StatusBadRequest, "InvalidArgument", "x-amz-decoded-content-length %q is not a length", d)
			}
			c.decoded = n
		}
		if c.trailer {
			name := strings.ToLower(strings.TrimSpace(r.Header.Get("X-Amz-Trailer")))
			if name != "" {
				algo, ok := strings.CutPrefix(name, checksumPrefix)
				h, known := NewChecksum(algo)
				if !ok || !known {
					return refuse(http.StatusNotImplemented, "NotImplemented", "the trailer %q is not supported; send one of x-amz-checksum-crc32, crc32c, crc64nvme, sha1, sha256", name)
				}
				c.checksum, c.checksumName = h, name
			}
		}
		r.Body = c
		if c.decoded >= 0 {
			r.ContentLength = c.decoded
		} else {
			r.ContentLength = -1
		}
		return nil
	case strings.HasPrefix(p, "STREAMING-"):
		return refuse(http.StatusNotImplemented, "NotImplemented", "payload signing %s is not supported (SigV4a); sign with SigV4", p)
	case len(p) == 64 && isHex(p):
		if key == nil {
			return nil
		}
		r.Body = &hashReader{r: r.Body, h: sha256.New(), want: strings.ToLower(p)}
		return nil
	}
	return refuse(http.StatusBadRequest, "InvalidArgument", "x-amz-content-sha256 %q is neither a SHA-256 hex digest nor one of %s, %s", s.payloadHash, UnsignedPayload, StreamingPayload)
}

// unwrapUnverified decodes an aws-chunked body of a request admitted
// without credentials; there is no key to check its signatures with.
func (v *Verifier) unwrapUnverified(r *http.Request) error {
	return (&signed{payloadHash: r.Header.Get("X-Amz-Content-Sha256")}).wrapBody(r, nil)
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

// hashReader fails at the end of the body if its SHA-256 is not want.
type hashReader struct {
	r    io.ReadCloser
	h    hash.Hash
	want string
}

func (h *hashReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.h.Write(p[:n])
	if errors.Is(err, io.EOF) && hex.EncodeToString(h.h.Sum(nil)) != h.want {
		return n, refuse(http.StatusBadRequest, "XAmzContentSHA256Mismatch", "the body's SHA-256 does not match x-amz-content-sha256")
	}
	return n, err
}

func (h *hashReader) Close() error { return h.r.Close() }

// chunkReader decodes Content-Encoding aws-chunked: frames of
// "hex-size[;chunk-signature=SIG]\r\n" data "\r\n", a final frame of size
// 0, then trailing headers (with x-amz-trailer-signature when signed) and
// an empty line. Each chunk signature chains on the previous one, starting
// from the request's signature.
type chunkReader struct {
	br           *bufio.Reader
	closer       io.Closer
	s            *signed
	key          []byte // nil: signatures are not checked
	prevSig      string
	signed       bool
	trailer      bool
	decoded      int64 // x-amz-decoded-content-length, -1 if not sent
	total        int64
	left         int64
	chunkSig     string
	chunkHash    hash.Hash
	checksum     hash.Hash
	checksumName string
	err          error
}

func (c *chunkReader) Close() error { return c.closer.Close() }

func (c *chunkReader) checking() bool { return c.key != nil && c.signed }

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	for c.left == 0 {
		final, err := c.nextChunk()
		if err != nil {
			c.err = err
			return 0, err
		}
		if final {
			c.err = c.finish()
			if c.err == nil {
				c.err = io.EOF
			}
			return 0, c.err
		}
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.br.Read(p)
	c.left -= int64(n)
	c.total += int64(n)
	if c.chunkHash != nil {
		c.chunkHash.Write(p[:n])
	}
	if c.checksum != nil {
		c.checksum.Write(p[:n])
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		c.err = refuse(http.StatusBadRequest, "IncompleteBody", "the aws-chunked body ended inside a chunk: %v", err)
		return n, c.err
	}
	if c.left == 0 {
		if err := c.endChunk(); err != nil {
			c.err = err
			return n, err
		}
	}
	return n, nil
}

func malformed(format string, args ...any) *Error {
	return refuse(http.StatusBadRequest, "IncompleteBody", "malformed aws-chunked body: "+format, args...)
}

// line reads a chunk header or trailer line; one longer than the reader's
// buffer (64 KiB) is refused rather than accumulated.
func (c *chunkReader) line() (string, error) {
	l, err := c.br.ReadSlice('\n')
	if err != nil {
		return "", malformed("%v", err)
	}
	if !bytes.HasSuffix(l, []byte("\r\n")) {
		return "", malformed("a line does not end in CRLF")
	}
	return string(l[:len(l)-2]), nil
}

// nextChunk reads a chunk header; a final chunk (size 0) is checked here.
func (c *chunkReader) nextChunk() (final bool, err error) {
	l, err := c.line()
	if err != nil {
		return false, err
	}
	size, ext, _ := strings.Cut(l, ";")
	n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
	if err != nil || n < 0 {
		return false, malformed("chunk size %q", size)
	}
	c.chunkSig = ""
	if c.signed {
		sig, ok := strings.CutPrefix(ext, "chunk-signature=")
		if !ok {
			return false, malformed("a chunk has no chunk-signature")
		}
		c.chunkSig = sig
	}
	c.left = n
	c.chunkHash = nil
	if c.checking() {
		c.chunkHash = sha256.New()
	}
	if n == 0 {
		return true, c.verifyChunk()
	}
	return false, nil
}

// endChunk reads the CRLF after a chunk's data and checks its signature.
func (c *chunkReader) endChunk() error {
	l, err := c.line()
	if err != nil || l != "" {
		return malformed("chunk data is not followed by CRLF")
	}
	return c.verifyChunk()
}

func (c *chunkReader) verifyChunk() error {
	if !c.checking() {
		return nil
	}
	toSign := "AWS4-HMAC-SHA256-PAYLOAD\n" + c.s.amzTime.Format(timeFormat) + "\n" + c.s.scope() + "\n" +
		c.prevSig + "\n" + emptySHA256 + "\n" + hex.EncodeToString(c.chunkHash.Sum(nil))
	want := hex.EncodeToString(hmacSHA256(c.key, toSign))
	if want != c.chunkSig {
		return refuse(http.StatusForbidden, "SignatureDoesNotMatch", "a chunk signature of the aws-chunked body does not match")
	}
	c.prevSig = want
	return nil
}

// finish reads the trailer after the final chunk and checks its signature,
// the trailing checksum and the decoded length.
func (c *chunkReader) finish() error {
	var canonical strings.Builder
	trailerSig := ""
	got := map[string]string{}
	for {
		l, err := c.line()
		if err != nil {
			// Some writers end the body without the last empty line.
			if len(got) > 0 || !c.trailer {
				break
			}
			return err
		}
		if l == "" {
			break
		}
		if !c.trailer {
			return malformed("unexpected trailing header %q", l)
		}
		name, value, ok := strings.Cut(l, ":")
		if !ok {
			return malformed("trailing header %q", l)
		}
		name, value = strings.ToLower(strings.TrimSpace(name)), strings.TrimSpace(value)
		if name == "x-amz-trailer-signature" {
			trailerSig = value
			continue
		}
		got[name] = value
		canonical.WriteString(name + ":" + value + "\n")
	}
	if c.trailer && c.checking() {
		sum := sha256.Sum256([]byte(canonical.String()))
		toSign := "AWS4-HMAC-SHA256-TRAILER\n" + c.s.amzTime.Format(timeFormat) + "\n" + c.s.scope() + "\n" +
			c.prevSig + "\n" + hex.EncodeToString(sum[:])
		if hex.EncodeToString(hmacSHA256(c.key, toSign)) != trailerSig {
			return refuse(http.StatusForbidden, "SignatureDoesNotMatch", "the trailer signature of the aws-chunked body does not match")
		}
	}
	if c.checksum != nil {
		want, ok := got[c.checksumName]
		if !ok {
			return malformed("the trailer %s announced in x-amz-trailer is missing", c.checksumName)
		}
		if base64.StdEncoding.EncodeToString(c.checksum.Sum(nil)) != want {
			return ChecksumMismatch(strings.TrimPrefix(c.checksumName, checksumPrefix))
		}
	}
	if c.decoded >= 0 && c.total != c.decoded {
		return refuse(http.StatusBadRequest, "IncompleteBody", "the body holds %d bytes, x-amz-decoded-content-length says %d", c.total, c.decoded)
	}
	return nil
}
