package restserve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// S3 is the S3 API icesql serve serves over a local warehouse folder, as
// the REST catalog hands it to clients: one bucket whose key KEY is the
// file <warehouse>/KEY.
//
// The warehouse keeps its own file:// locations; the catalog translates
// them to s3://BUCKET/KEY in every table it sends (the metadata and its
// location), and back in the locations it receives. Storing s3:// locations
// instead would have changed every placement and containment check of the
// warehouse and the tables icesql already has; translating at the edge
// leaves them as they are. The files a client writes through the S3 API
// (manifest lists, manifests, data files) name each other by s3://
// locations, which icesql reads through storage.Warehouse.ServeBucket.
type S3 struct {
	Bucket string
	// Region is the region clients sign for (client.region).
	Region string
	// AccessKey and SecretKey are the credentials the S3 API accepts,
	// handed to the client in the table's configuration.
	AccessKey, SecretKey string
}

// toClient is a warehouse location as the S3 API names it.
func (s *S3) toClient(root, loc string) string {
	root = strings.TrimRight(root, "/")
	if loc == root {
		return "s3://" + s.Bucket
	}
	if rest, ok := strings.CutPrefix(loc, root+"/"); ok {
		return "s3://" + s.Bucket + "/" + rest
	}
	return loc
}

// toWarehouse is an S3 API location as the warehouse names it.
func (s *S3) toWarehouse(root, loc string) string {
	root = strings.TrimRight(root, "/")
	if loc == "s3://"+s.Bucket {
		return root
	}
	if rest, ok := strings.CutPrefix(loc, "s3://"+s.Bucket+"/"); ok {
		return root + "/" + rest
	}
	return loc
}

// config is what a client's S3 file IO needs: the endpoint the request
// came to (the S3 API shares the catalog's port), path-style addressing,
// the region and the credentials.
func (s *S3) config(r *http.Request) map[string]string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return map[string]string{
		"s3.endpoint":          scheme + "://" + r.Host,
		"s3.path-style-access": "true",
		"client.region":        s.Region,
		"s3.region":            s.Region,
		"s3.access-key-id":     s.AccessKey,
		"s3.secret-access-key": s.SecretKey,
	}
}

// result is a LoadTableResult out (metadata, metadata-location) with S3
// locations, the configuration and the storage credentials for the bucket.
func (s *S3) result(r *http.Request, root string, out map[string]any) (map[string]any, error) {
	raw := out["metadata"].(json.RawMessage)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // snapshot ids are 64-bit integers
	var meta any
	if err := dec.Decode(&meta); err != nil {
		return nil, fmt.Errorf("decode table metadata: %w", err)
	}
	meta = s.translate(root, meta)
	data, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("encode table metadata: %w", err)
	}
	out["metadata"] = json.RawMessage(data)
	if loc, ok := out["metadata-location"].(string); ok {
		out["metadata-location"] = s.toClient(root, loc)
	}
	cfg := s.config(r)
	out["config"] = cfg
	out["storage-credentials"] = []map[string]any{{"prefix": "s3://" + s.Bucket + "/", "config": cfg}}
	return out, nil
}

// translate rewrites every string of decoded JSON that is a location
// under root (the table's location, manifest lists, the metadata log,
// statistics files, write.*.path properties).
func (s *S3) translate(root string, v any) any {
	switch x := v.(type) {
	case string:
		return s.toClient(root, x)
	case []any:
		for i := range x {
			x[i] = s.translate(root, x[i])
		}
	case map[string]any:
		for k, e := range x {
			x[k] = s.translate(root, e)
		}
	}
	return v
}
