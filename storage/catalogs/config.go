package catalogs

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/goccy/go-yaml"
)

// ParseList parses "type=rest,uri=http://host:8181,warehouse=lakehouse"
// into properties. A value holding a comma needs its own key=value
// (ParseProperty, the CLI's --catalog-property).
func ParseList(list string) (iceberg.Properties, error) {
	p := iceberg.Properties{}
	for _, kv := range strings.Split(list, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		if err := ParseProperty(p, kv); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// ParseProperty adds one "key=value" to p.
func ParseProperty(p iceberg.Properties, kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return fmt.Errorf("catalog property %q: want key=value", kv)
	}
	p[k] = strings.TrimSpace(v)
	return nil
}

// configFile is PyIceberg's .pyiceberg.yaml layout (also iceberg-go's
// .iceberg-go.yaml): catalogs by name, each a map of properties.
type configFile struct {
	Catalog map[string]map[string]any `yaml:"catalog"`
}

// LoadFile reads the properties of catalog name from a YAML file in
// PyIceberg's layout:
//
//	catalog:
//	  lakehouse:
//	    type: rest
//	    uri: http://localhost:9000/_iceberg
//	    rest.sigv4-enabled: true
//
// With name "" the file must hold exactly one catalog.
func LoadFile(path, name string) (iceberg.Properties, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("catalog config: %w", err)
	}
	var f configFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("catalog config %s: %w", path, err)
	}
	names := make([]string, 0, len(f.Catalog))
	for n := range f.Catalog {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("catalog config %s: no catalog: section", path)
	}
	if name == "" {
		if len(names) > 1 {
			return nil, fmt.Errorf("catalog config %s holds catalogs %s: choose one with --catalog-name", path, strings.Join(names, ", "))
		}
		name = names[0]
	}
	entry, ok := f.Catalog[name]
	if !ok {
		return nil, fmt.Errorf("catalog config %s: no catalog %q (it holds %s)", path, name, strings.Join(names, ", "))
	}
	p := iceberg.Properties{}
	for k, v := range entry {
		p[k] = fmt.Sprint(v) // YAML booleans and numbers become their text
	}
	return p, nil
}
