package storage

import (
	"context"
	"errors"
	"fmt"
)

// OpenS3ReadOnly connects to the store holding root for reading only, as
// a source of files to import: it writes nothing (no probe of conditional
// writes), and every write through it fails.
func OpenS3ReadOnly(ctx context.Context, root string, cfg S3Config) (*S3Store, error) {
	st, err := connectS3(ctx, root, cfg)
	if err != nil {
		return nil, err
	}
	st.readOnly = fmt.Errorf("%s: %w", root, errReadOnlySource)
	return st, nil
}

var errReadOnlySource = errors.New("opened for reading only")
