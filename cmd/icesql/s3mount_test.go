package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/metrics"
)

// TestServeS3API: serve's --http port serves the S3 API at / over the
// warehouse folder, with the account's SigV4 credentials, beside the REST
// catalog, which accepts SigV4 (s3tables) too.
func TestServeS3API(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root := t.TempDir()
	e, err := engine.Open(ctx, engine.Config{Warehouse: root})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var out bytes.Buffer
	if err := serveHTTP(ctx, e, "127.0.0.1:0", servedS3{"lake", true}, true, engine.ServerConfig{User: "ann", Password: "s3cret"}, metrics.New().Handler(), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	addr := regexp.MustCompile(`http://[0-9.:]+`).FindString(out.String())
	if !strings.Contains(out.String(), `S3 API on `+addr+`, bucket "lake"`) {
		t.Errorf("serve does not say where the S3 API is: %s", out.String())
	}
	// The REST catalog's warehouse name is the bucket's.
	req, _ := http.NewRequest("GET", addr+"/v1/config?warehouse=lake", nil)
	req.Header.Set("Authorization", "Bearer ann:s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(cfg), `"lake"`) {
		t.Errorf("config of warehouse lake: %d %s", resp.StatusCode, cfg)
	}
	c := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(addr), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider("ann", "s3cret", "")})
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("lake"), Key: aws.String("ns/f.txt"), Body: strings.NewReader("hi")}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "ns", "f.txt")); err != nil || string(b) != "hi" {
		t.Fatalf("object not in the warehouse: %q %v", b, err)
	}
	bad := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(addr), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider("ann", "wrong", "")})
	if _, err := bad.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("lake"), Key: aws.String("ns/f.txt")}); err == nil {
		t.Fatal("a wrong password was admitted")
	}
	for _, c := range []struct {
		secret string
		status int
	}{{"s3cret", 200}, {"wrong", 401}} {
		req, _ := http.NewRequest("GET", addr+"/_iceberg/v1/config", nil)
		v4.NewSigner().SignHTTP(ctx, aws.Credentials{AccessKeyID: "ann", SecretAccessKey: c.secret}, req,
			"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "s3tables", "us-east-1", time.Now())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("REST with SigV4 secret %q: %d %s, want %d", c.secret, resp.StatusCode, b, c.status)
		}
	}
}
