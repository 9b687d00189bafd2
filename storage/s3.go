package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // registers the s3:// file IO
	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/google/uuid"
)

// S3Config says how to reach an S3-compatible object store. Empty fields
// fall back to the standard AWS configuration chain (AWS_ACCESS_KEY_ID,
// AWS_REGION, ~/.aws/config, ...).
type S3Config struct {
	Endpoint        string // e.g. http://127.0.0.1:9000; empty for AWS S3
	Region          string
	PathStyle       bool // bucket in the path (most self-hosted stores) rather than the host name
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	// AllowUnsafeCommits lets icesql write to a store that ignores
	// conditional writes, where two writers can overwrite each other's commit.
	AllowUnsafeCommits bool
}

// S3Store is a Store on an S3-compatible object store. Its CreateExclusive
// is a PUT with If-None-Match: *, which AWS S3 and the common S3 servers
// honour; NewS3Store checks that the store does before writes are allowed.
type S3Store struct {
	client *s3.Client
	io     icebergio.IO
	// readOnly is set when the store ignores conditional writes and unsafe
	// commits were not allowed; every write then fails with this error.
	readOnly error
}

var _ Store = (*S3Store)(nil)

// ErrUnsafeStore is returned for writes to an object store that does not
// honour conditional writes, unless S3Config.AllowUnsafeCommits is set.
var ErrUnsafeStore = errors.New("object store does not honour conditional writes (If-None-Match: *)")

// NewS3Store connects to the store holding root (s3://bucket/prefix) and
// probes whether it honours conditional writes.
func NewS3Store(ctx context.Context, root string, cfg S3Config) (*S3Store, error) {
	st, err := connectS3(ctx, root, cfg)
	if err != nil {
		return nil, err
	}
	if err := st.probeConditionalWrites(ctx, root); err != nil {
		if !errors.Is(err, ErrUnsafeStore) {
			return nil, err
		}
		if !cfg.AllowUnsafeCommits {
			st.readOnly = fmt.Errorf("%w: icesql will not write to %s, because two writers could lose each other's "+
				"commits; use a store that supports conditional writes, or allow unsafe commits if only one writer exists", err, root)
		}
	}
	return st, nil
}

// connectS3 makes the client and file IO of the store holding root.
func connectS3(ctx context.Context, root string, cfg S3Config) (*S3Store, error) {
	awsCfg, err := awsConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.UsePathStyle = cfg.PathStyle
		// Self-hosted stores often send no response checksum; the SDK
		// would log a warning for every such read.
		o.DisableLogOutputChecksumValidationSkipped = true
	})
	props := map[string]string{icebergio.S3Region: awsCfg.Region}
	if cfg.Endpoint != "" {
		props[icebergio.S3EndpointURL] = cfg.Endpoint
		if !cfg.PathStyle {
			props[icebergio.S3ForceVirtualAddressing] = "true"
		}
	}
	if creds, err := awsCfg.Credentials.Retrieve(ctx); err == nil {
		props[icebergio.S3AccessKeyID] = creds.AccessKeyID
		props[icebergio.S3SecretAccessKey] = creds.SecretAccessKey
		if creds.SessionToken != "" {
			props[icebergio.S3SessionToken] = creds.SessionToken
		}
	}
	fileIO, err := icebergio.LoadFS(ctx, props, root)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", root, err)
	}
	return &S3Store{client: client, io: fileIO}, nil
}

func awsConfig(ctx context.Context, cfg S3Config) (aws.Config, error) {
	var opts []func(*awsconfig.LoadOptions) error
	if cfg.Region != "" {
		opts = append(opts, awsconfig.WithRegion(cfg.Region))
	}
	if cfg.AccessKeyID != "" {
		opts = append(opts, awsconfig.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken)))
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS configuration: %w", err)
	}
	if awsCfg.Region == "" {
		awsCfg.Region = "us-east-1" // self-hosted stores accept any region; AWS needs the bucket's
	}
	return awsCfg, nil
}

// probeConditionalWrites writes a probe object twice with If-None-Match: *.
// A store that honours it refuses the second write.
func (s *S3Store) probeConditionalWrites(ctx context.Context, root string) error {
	probe := Join(root, ".icesql", "probe-"+uuid.NewString())
	defer s.Remove(ctx, probe)
	if err := createOnce(ctx, s, probe, []byte(probe)); err != nil {
		return fmt.Errorf("write to %s: %w", root, err)
	}
	err := s.CreateExclusive(ctx, probe, []byte("2"))
	switch {
	case errors.Is(err, fs.ErrExist):
		return nil
	case err == nil:
		return ErrUnsafeStore
	}
	return fmt.Errorf("probe conditional writes on %s: %w", root, err)
}

// splitS3 splits s3://bucket/key (also s3a:// and s3n://). The key is the
// rest of the location as it is: a location is opaque (see osPath), so a key
// holding "%27" or '?' is read and written under that very name, as Java's
// S3FileIO and iceberg-go's blob IO do.
func splitS3(location string) (bucket, key string, err error) {
	scheme, rest, ok := strings.Cut(location, "://")
	switch {
	case !ok:
		return "", "", fmt.Errorf("location %q is not an s3:// location", location)
	case scheme != "s3" && scheme != "s3a" && scheme != "s3n":
		return "", "", fmt.Errorf("location %q is not an s3:// location", location)
	}
	bucket, key, _ = strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("location %q names no bucket", location)
	}
	return bucket, key, nil
}

func notFound(err error) bool {
	var nsk *s3types.NoSuchKey
	var nf *s3types.NotFound
	var re interface{ HTTPStatusCode() int }
	return errors.As(err, &nsk) || errors.As(err, &nf) || (errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound)
}

func (s *S3Store) ReadFile(ctx context.Context, location string) ([]byte, error) {
	bucket, key, err := splitS3(location)
	if err != nil {
		return nil, err
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		if notFound(err) {
			return nil, fmt.Errorf("read %s: %w", location, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("read %s: %w", location, err)
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}

func (s *S3Store) put(ctx context.Context, location string, data []byte, exclusive bool) error {
	if s.readOnly != nil {
		return s.readOnly
	}
	bucket, key, err := splitS3(location)
	if err != nil {
		return err
	}
	in := &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(data)}
	if exclusive {
		in.IfNoneMatch = aws.String("*")
	}
	_, err = s.client.PutObject(ctx, in)
	if err == nil {
		return nil
	}
	var api smithy.APIError
	if exclusive && errors.As(err, &api) {
		switch api.ErrorCode() {
		case "PreconditionFailed", "ConditionalRequestConflict":
			// 412: the object exists. 409: a concurrent conditional write
			// to the same key is in flight; one of them will win.
			return fmt.Errorf("create %s: %w", location, fs.ErrExist)
		}
	}
	return fmt.Errorf("write %s: %w", location, err)
}

func (s *S3Store) WriteFile(ctx context.Context, location string, data []byte) error {
	return s.put(ctx, location, data, false)
}

func (s *S3Store) CreateExclusive(ctx context.Context, location string, data []byte) error {
	return s.put(ctx, location, data, true)
}

func (s *S3Store) List(ctx context.Context, location string) ([]Entry, error) {
	bucket, key, err := splitS3(location)
	if err != nil {
		return nil, err
	}
	prefix := strings.TrimSuffix(key, "/") + "/"
	if key == "" {
		prefix = ""
	}
	var out []Entry
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: &prefix, Delimiter: aws.String("/")})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", location, err)
		}
		for _, cp := range page.CommonPrefixes {
			out = append(out, Entry{Name: strings.TrimSuffix(strings.TrimPrefix(aws.ToString(cp.Prefix), prefix), "/"), IsDir: true})
		}
		for _, obj := range page.Contents {
			out = append(out, Entry{Name: strings.TrimPrefix(aws.ToString(obj.Key), prefix)})
		}
	}
	return out, nil
}

// MakeFolder is a no-op: object stores have no folders, only key prefixes,
// which exist while an object under them does.
func (s *S3Store) MakeFolder(context.Context, string) error { return nil }

func (s *S3Store) Remove(ctx context.Context, location string) error {
	if s.readOnly != nil {
		return s.readOnly
	}
	bucket, key, err := splitS3(location)
	if err != nil {
		return err
	}
	if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: &key}); err != nil && !notFound(err) {
		return fmt.Errorf("delete %s: %w", location, err)
	}
	return nil
}

func (s *S3Store) RemoveAll(ctx context.Context, location string) error {
	if s.readOnly != nil {
		return s.readOnly
	}
	bucket, key, err := splitS3(location)
	if err != nil {
		return err
	}
	prefix := strings.TrimSuffix(key, "/") + "/"
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: &prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list %s: %w", location, err)
		}
		if len(page.Contents) == 0 {
			continue
		}
		ids := make([]s3types.ObjectIdentifier, len(page.Contents))
		for i, obj := range page.Contents {
			ids[i] = s3types.ObjectIdentifier{Key: obj.Key}
		}
		// A page holds at most 1,000 keys, DeleteObjects' limit.
		if _, err := s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: &bucket, Delete: &s3types.Delete{Objects: ids, Quiet: aws.Bool(true)}}); err != nil {
			return fmt.Errorf("delete under %s: %w", location, err)
		}
	}
	return nil
}

func (s *S3Store) IO() icebergio.IO { return s.io }
