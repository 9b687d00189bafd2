package catalogs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// createWarehouse creates the warehouse a REST catalog is opened with, as
// AIStor Tables and S3 Tables expect before the first catalog call:
// POST <uri>/v1/warehouses {"name": ...}, SigV4-signed when
// rest.sigv4-enabled is set. A warehouse that exists (409) is fine. It runs
// when the icesql property rest.create-warehouse is true; the Iceberg REST
// specification has no such call, so other servers are never sent it.
func createWarehouse(ctx context.Context, p iceberg.Properties) error {
	name := p["warehouse"]
	if name == "" {
		return fmt.Errorf("rest.create-warehouse: no warehouse named")
	}
	body, err := json.Marshal(map[string]string{"name": name})
	if err != nil {
		return err
	}
	url := strings.TrimRight(p["uri"], "/") + "/v1/warehouses"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("create warehouse %s: %w", name, err)
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-amz-content-sha256", hash)
	if strings.EqualFold(p["rest.sigv4-enabled"], "true") {
		cfg, err := sigV4Config(ctx, p)
		if err != nil {
			return err
		}
		creds, err := cfg.Credentials.Retrieve(ctx)
		if err != nil {
			return fmt.Errorf("create warehouse %s: credentials: %w", name, err)
		}
		service := p["rest.signing-name"]
		if service == "" {
			service = "execute-api"
		}
		if err := v4.NewSigner().SignHTTP(ctx, creds, req, hash, service, cfg.Region, time.Now()); err != nil {
			return fmt.Errorf("create warehouse %s: sign: %w", name, err)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("create warehouse %s: %w", name, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode/100 == 2, resp.StatusCode == http.StatusConflict:
		return nil
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return fmt.Errorf("create warehouse %s: %s answered %s: %s", name, url, resp.Status, strings.TrimSpace(string(msg)))
}
