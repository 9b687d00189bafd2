package main

import (
	"flag"
	"fmt"
	"maps"

	"github.com/apache/iceberg-go"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/storage/catalogs"
)

const catalogUsage = `  --catalog type=T,key=value,...
                        serve a catalog other than the embedded one, with Spark/PyIceberg
                        property names: type=rest|glue|sql|hadoop, uri, warehouse, ...
                        (see README "Choosing a catalog")
  --catalog-property key=value
                        one more catalog property (repeatable; for values holding commas)
  --catalog-config FILE catalog properties from a PyIceberg-style YAML file (catalog: NAME: ...);
                        NAME is --catalog-name when the file holds several
`

// catalogFlags collects --catalog, --catalog-property and --catalog-config;
// finish merges them into the engine configuration once all flags are read
// (the config file's entry is chosen by --catalog-name, wherever it stands).
type catalogFlags struct {
	file  string
	props iceberg.Properties
}

func addCatalogFlags(fs *flag.FlagSet) *catalogFlags {
	cf := &catalogFlags{props: iceberg.Properties{}}
	fs.Func("catalog", "catalog properties type=rest|glue|sql|hadoop,uri=...,warehouse=...", func(s string) error {
		p, err := catalogs.ParseList(s)
		if err != nil {
			return err
		}
		maps.Copy(cf.props, p)
		return nil
	})
	fs.Func("catalog-property", "one catalog property key=value (repeatable)", func(s string) error {
		return catalogs.ParseProperty(cf.props, s)
	})
	fs.Var(cf, "catalog-config", "YAML file of catalog properties (PyIceberg layout)")
	return cf
}

// String and Set make catalogFlags the flag.Value of --catalog-config, so
// that finishCatalogFlags finds it through the flag set.
func (cf *catalogFlags) String() string {
	if cf == nil {
		return ""
	}
	return cf.file
}

func (cf *catalogFlags) Set(path string) error { cf.file = path; return nil }

// finishCatalogFlags completes cfg from the catalog flags fs parsed.
func finishCatalogFlags(fs *flag.FlagSet, cfg *engine.Config) error {
	f := fs.Lookup("catalog-config")
	if f == nil {
		return nil
	}
	return f.Value.(*catalogFlags).finish(fs, cfg)
}

// servedCatalog describes what the server serves, for its start-up line.
func servedCatalog(cfg *engine.Config) string {
	p := cfg.CatalogProperties
	if len(p) == 0 {
		return "warehouse " + cfg.Warehouse
	}
	where := p["uri"]
	if where == "" {
		where = p["warehouse"]
	}
	if where == "" {
		return p["type"] + " catalog"
	}
	return p["type"] + " catalog " + where
}

// finish sets cfg.CatalogProperties: the file's entry, overridden by the
// properties given on the command line.
func (cf *catalogFlags) finish(fs *flag.FlagSet, cfg *engine.Config) error {
	props := iceberg.Properties{}
	if cf.file != "" {
		name := ""
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "catalog-name" {
				name = cfg.CatalogName
			}
		})
		p, err := catalogs.LoadFile(cf.file, name)
		if err != nil {
			return err
		}
		maps.Copy(props, p)
	}
	maps.Copy(props, cf.props)
	if len(props) == 0 {
		return nil
	}
	if _, ok := props["type"]; !ok {
		return fmt.Errorf("catalog properties given without type=rest|glue|sql|hadoop")
	}
	// The warehouse and S3 flags given explicitly fill the catalog's
	// properties they name, unless the catalog properties set them.
	fs.Visit(func(f *flag.Flag) {
		key := map[string]string{
			"warehouse": "warehouse", "s3-endpoint": "s3.endpoint", "s3-region": "s3.region",
			"s3-access-key-id": "s3.access-key-id", "s3-secret-access-key": "s3.secret-access-key",
			"s3-path-style": "s3.path-style-access",
		}[f.Name]
		if _, set := props[key]; key != "" && !set {
			props[key] = f.Value.String()
		}
	})
	cfg.CatalogProperties = props
	return nil
}
