// Package s3test runs a real S3 server for tests: moto's (PyPI
// moto[server], which .ci/run installs). moto honours conditional writes
// (If-None-Match: *), which the embedded catalog's commits rely on.
package s3test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/uuid"
)

// StartServer runs moto's S3 server on a free loopback port for the
// duration of the test and returns its endpoint.
func StartServer(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("moto_server")
	if err != nil {
		t.Fatal("the S3 tests need moto's S3 server: pip install 'moto[server]' (.ci/run does)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(path, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(endpoint); err == nil {
			resp.Body.Close()
			return endpoint
		}
	}
	t.Fatal("moto_server did not start")
	return ""
}

// The credentials and region the test server accepts.
const (
	AccessKeyID     = "test"
	SecretAccessKey = "test"
	Region          = "us-east-1"
)

// NewBucket creates a fresh bucket and returns a warehouse root in it.
func NewBucket(t testing.TB, endpoint string) string {
	t.Helper()
	client := s3.New(s3.Options{
		Region:       Region,
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(AccessKeyID, SecretAccessKey, ""),
	})
	bucket := "icesql-" + uuid.NewString()[:8]
	if _, err := client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	return "s3://" + bucket + "/warehouse"
}
