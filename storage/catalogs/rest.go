package catalogs

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// openREST builds the REST client from the properties itself rather than
// through iceberg-go's registry, because the registry has no way to take
// static SigV4 keys (rest.access-key-id and rest.secret-access-key, as Spark
// and the AIStor Tables tutorial configure them).
func openREST(ctx context.Context, name string, p iceberg.Properties) (catalog.Catalog, error) {
	if strings.EqualFold(p["rest.create-warehouse"], "true") {
		if err := createWarehouse(ctx, p); err != nil {
			return nil, err
		}
	}
	opts, err := restOptions(ctx, p)
	if err != nil {
		return nil, err
	}
	return rest.NewCatalog(ctx, name, p["uri"], opts...)
}

// restKeys are the properties restOptions consumes; the rest reach the
// client (and the file IO of its tables) as additional properties.
var restKeys = map[string]bool{
	"type": true, "uri": true, "warehouse": true, "token": true, "credential": true,
	"scope": true, "audience": true, "resource": true, "prefix": true,
	"oauth2-server-uri": true, "rest.authorization-url": true, "rest.tls.skip-verify": true,
	"rest.sigv4-enabled": true, "rest.signing-name": true, "rest.signing-region": true,
	"rest.access-key-id": true, "rest.secret-access-key": true, "rest.session-token": true,
	"rest.create-warehouse": true,
}

func restOptions(ctx context.Context, p iceberg.Properties) ([]rest.Option, error) {
	var opts []rest.Option
	add := func(key string, f func(string) rest.Option) {
		if v := p[key]; v != "" {
			opts = append(opts, f(v))
		}
	}
	add("warehouse", rest.WithWarehouseLocation)
	add("token", rest.WithOAuthToken)
	add("credential", rest.WithCredential)
	add("scope", rest.WithScope)
	add("audience", rest.WithAudience)
	add("resource", rest.WithResource)
	add("prefix", rest.WithPrefix)
	authURI := p["oauth2-server-uri"]
	if authURI == "" {
		authURI = p["rest.authorization-url"]
	}
	if authURI != "" {
		u, err := url.Parse(authURI)
		if err != nil {
			return nil, fmt.Errorf("oauth2-server-uri %q: %w", authURI, err)
		}
		opts = append(opts, rest.WithAuthURI(u))
	}
	if strings.EqualFold(p["rest.tls.skip-verify"], "true") {
		opts = append(opts, rest.WithTLSConfig(&tls.Config{InsecureSkipVerify: true}))
	}
	if strings.EqualFold(p["rest.sigv4-enabled"], "true") {
		cfg, err := sigV4Config(ctx, p)
		if err != nil {
			return nil, err
		}
		service := p["rest.signing-name"]
		if service == "" {
			service = "execute-api" // Java's and iceberg-go's default
		}
		opts = append(opts, rest.WithAwsConfig(cfg), rest.WithSigV4RegionSvc(cfg.Region, service))
	}
	extra := iceberg.Properties{}
	for k, v := range p {
		if !restKeys[k] && v != "" {
			extra[k] = v
		}
	}
	if len(extra) > 0 {
		opts = append(opts, rest.WithAdditionalProps(extra))
	}
	return opts, nil
}

// sigV4Config is the AWS configuration requests are signed with: static
// keys from rest.access-key-id/rest.secret-access-key when given, else the
// standard AWS chain (environment, profile, instance role).
func sigV4Config(ctx context.Context, p iceberg.Properties) (aws.Config, error) {
	var load []func(*awsconfig.LoadOptions) error
	if r := p["rest.signing-region"]; r != "" {
		load = append(load, awsconfig.WithRegion(r))
	}
	if id := p["rest.access-key-id"]; id != "" {
		load = append(load, awsconfig.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(id, p["rest.secret-access-key"], p["rest.session-token"])))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("rest.sigv4-enabled: load AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return aws.Config{}, fmt.Errorf("rest.sigv4-enabled: no signing region: set rest.signing-region (or AWS_REGION)")
	}
	return cfg, nil
}
