package catalogs_test

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/icesql/icesql/storage/catalogs"
)

func TestTranslate(t *testing.T) {
	abs, _ := filepath.Abs("wh")
	cases := []struct {
		name string
		in   iceberg.Properties
		want iceberg.Properties // keys to check
		err  string
	}{
		{"path style on a custom endpoint is iceberg-go's default",
			iceberg.Properties{"type": "rest", "uri": "http://h", "s3.endpoint": "http://minio:9000", "s3.path-style-access": "true"},
			iceberg.Properties{"s3.path-style-access": "", "s3.force-virtual-addressing": ""}, ""},
		{"virtual hosts",
			iceberg.Properties{"type": "rest", "uri": "http://h", "s3.path-style-access": "false"},
			iceberg.Properties{"s3.force-virtual-addressing": "true"}, ""},
		{"path style needs an endpoint",
			iceberg.Properties{"type": "rest", "uri": "http://h", "s3.path-style-access": "true"}, nil, "needs s3.endpoint"},
		{"region from the catalog's",
			iceberg.Properties{"type": "glue", "glue.region": "eu-west-1"}, iceberg.Properties{"s3.region": "eu-west-1"}, ""},
		{"jdbc is sql; JDBC URL and user",
			iceberg.Properties{"type": "jdbc", "uri": "jdbc:postgresql://db:5432/ice", "jdbc.user": "u", "jdbc.password": "p", "warehouse": "s3://b/w"},
			iceberg.Properties{"type": "sql", "sql.driver": "pgx", "sql.dialect": "postgres", "uri": "postgres://u:p@db:5432/ice"}, ""},
		{"SQLAlchemy URL",
			iceberg.Properties{"type": "sql", "uri": "postgresql+psycopg2://u:p@db/ice", "warehouse": "s3://b/w"},
			iceberg.Properties{"sql.driver": "pgx", "uri": "postgres://u:p@db/ice"}, ""},
		{"SQLite, relative and absolute",
			iceberg.Properties{"type": "sql", "uri": "sqlite:////tmp/c.db", "warehouse": "wh"},
			iceberg.Properties{"sql.driver": "sqliteshim", "sql.dialect": "sqlite", "uri": "file:/tmp/c.db?_pragma=busy_timeout(10000)", "warehouse": abs}, ""},
		{"SQLite relative",
			iceberg.Properties{"type": "sql", "uri": "sqlite:///c.db", "warehouse": "wh"},
			iceberg.Properties{"uri": "file:c.db?_pragma=busy_timeout(10000)"}, ""},
		{"sql needs a warehouse", iceberg.Properties{"type": "sql", "uri": "sqlite:///c.db"}, nil, "needs warehouse"},
		{"rest needs a uri", iceberg.Properties{"type": "rest"}, nil, "needs uri"},
		{"type required", iceberg.Properties{"uri": "http://h"}, nil, "type is required"},
		{"unknown type", iceberg.Properties{"type": "hive"}, nil, `"hive" is not supported`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := catalogs.Translate(c.in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, %v; want error %q", got, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q (all: %v)", k, got[k], v, got)
				}
			}
		})
	}
}

func TestParseList(t *testing.T) {
	got, err := catalogs.ParseList("type=rest, uri=http://h:8181/api?x=1 ,rest.sigv4-enabled=true")
	if err != nil {
		t.Fatal(err)
	}
	want := iceberg.Properties{"type": "rest", "uri": "http://h:8181/api?x=1", "rest.sigv4-enabled": "true"}
	if !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := catalogs.ParseList("type=rest,oops"); err == nil {
		t.Error("a pair without = was accepted")
	}
}
