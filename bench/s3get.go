package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/icesql/icesql/storage/s3serve"
	"github.com/icesql/icesql/storage/sigv4auth"
)

// runS3Get measures GET throughput of one object through icesql's S3 API
// (storage/s3serve, SigV4-verified, on a loopback port, read with the AWS
// SDK's S3 client) against reading the same file directly, both from the
// page cache; the target is at least 70% of the direct rate.
func runS3Get(ctx context.Context, work string, size int64, runs int) error {
	root := filepath.Join(work, "s3warehouse")
	if err := os.MkdirAll(filepath.Join(root, "db", "t", "data"), 0o755); err != nil {
		return err
	}
	file := filepath.Join(root, "db", "t", "data", "big.parquet")
	if err := writeRandom(file, size); err != nil {
		return err
	}
	const user, password = "bench", "bench-secret"
	srv, err := s3serve.New(root, "warehouse", sigv4auth.New(map[string]string{user: password}, "s3"))
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv}
	go hs.Serve(l)
	defer hs.Close()
	client := s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String("http://" + l.Addr().String()),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(user, password, ""),
	})

	direct := func() (int64, error) {
		f, err := os.Open(file)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		return drain(f)
	}
	viaS3 := func() (int64, error) {
		out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("warehouse"), Key: aws.String("db/t/data/big.parquet")})
		if err != nil {
			return 0, err
		}
		defer out.Body.Close()
		return drain(out.Body)
	}
	// The same GET without the SDK (a presigned URL read by net/http)
	// separates the server's cost from the SDK client's.
	pg, err := s3.NewPresignClient(client).PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("warehouse"), Key: aws.String("db/t/data/big.parquet")})
	if err != nil {
		return err
	}
	viaHTTP := func() (int64, error) {
		resp, err := http.Get(pg.URL)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("presigned GET: %s", resp.Status)
		}
		return drain(resp.Body)
	}
	// The floor of any server on loopback TCP: the file sent on a bare
	// connection with sendfile(2), no HTTP, read with the same loop.
	tcpFile, err := tcpSender(file)
	if err != nil {
		return err
	}
	defer tcpFile.Close()
	viaTCP := func() (int64, error) {
		c, err := net.Dial("tcp", tcpFile.Addr().String())
		if err != nil {
			return 0, err
		}
		defer c.Close()
		return drain(c)
	}
	d, err := measureRead(direct, size, runs)
	if err != nil {
		return fmt.Errorf("direct read: %w", err)
	}
	viaSDK, err := measureRead(viaS3, size, runs)
	if err != nil {
		return fmt.Errorf("S3 GET: %w", err)
	}
	plain, err := measureRead(viaHTTP, size, runs)
	if err != nil {
		return err
	}
	tcp, err := measureRead(viaTCP, size, runs)
	if err != nil {
		return fmt.Errorf("bare TCP: %w", err)
	}
	// CPU time counts client and server (one process) and is stabler than
	// wall time on a machine other processes share.
	// The bare TCP figures are what loopback itself costs: the S3 API's
	// own share is its distance from them (s3_http_vs_tcp).
	fmt.Printf("bench s3_get bytes=%d runs=%d direct_mib_s=%.0f s3_sdk_mib_s=%.0f s3_presigned_http_mib_s=%.0f tcp_sendfile_mib_s=%.0f s3_sdk_vs_direct=%.0f%% s3_http_vs_direct=%.0f%% tcp_vs_direct=%.0f%% s3_http_vs_tcp=%.0f%% direct_cpu_ms=%d s3_sdk_cpu_ms=%d s3_http_cpu_ms=%d tcp_cpu_ms=%d\n",
		size, runs, d.rate, viaSDK.rate, plain.rate, tcp.rate, 100*viaSDK.rate/d.rate, 100*plain.rate/d.rate, 100*tcp.rate/d.rate, 100*plain.rate/tcp.rate,
		d.cpu.Milliseconds(), viaSDK.cpu.Milliseconds(), plain.cpu.Milliseconds(), tcp.cpu.Milliseconds())
	return nil
}

// tcpSender listens on a loopback port and sends the file at path to each
// connection with sendfile(2) (net.TCPConn.ReadFrom of an *os.File).
func tcpSender(path string) (net.Listener, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				f, err := os.Open(path)
				if err != nil {
					return
				}
				defer f.Close()
				c.(*net.TCPConn).ReadFrom(f)
			}()
		}
	}()
	return l, nil
}

// drain reads r to its end in 1 MiB reads, the same loop for both sides.
func drain(r io.Reader) (int64, error) {
	return io.CopyBuffer(struct{ io.Writer }{io.Discard}, struct{ io.Reader }{r}, make([]byte, 1<<20))
}

type readFigures struct {
	rate float64       // MiB/s, median
	cpu  time.Duration // process CPU time of one read, median
}

// measureRead runs read once to warm up, then runs times, and returns the
// medians.
func measureRead(read func() (int64, error), size int64, runs int) (readFigures, error) {
	var rates []float64
	var cpus []time.Duration
	for i := range runs + 1 {
		start, c0 := time.Now(), cpuTime()
		n, err := read()
		if err != nil {
			return readFigures{}, err
		}
		if n != size {
			return readFigures{}, fmt.Errorf("read %d bytes, want %d", n, size)
		}
		if i > 0 {
			rates = append(rates, float64(size)/(1<<20)/time.Since(start).Seconds())
			cpus = append(cpus, cpuTime()-c0)
		}
	}
	slices.Sort(rates)
	slices.Sort(cpus)
	return readFigures{rate: rates[len(rates)/2], cpu: cpus[len(cpus)/2]}, nil
}

func writeRandom(path string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(f, rand.Reader, size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
