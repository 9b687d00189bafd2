package restserve

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/storage"
)

// Error is an error response of the specification: the HTTP status, the
// name of the Java exception clients map it to, and the message.
type Error struct {
	Code    int
	Type    string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Code, e.Type, e.Message) }

func apiError(code int, typ, format string, args ...any) *Error {
	return &Error{Code: code, Type: typ, Message: fmt.Sprintf(format, args...)}
}

// badRequest is a 400 for input the catalog cannot apply.
func badRequest(format string, args ...any) *Error {
	return apiError(http.StatusBadRequest, "BadRequestException", format, args...)
}

// classes map the warehouse's sentinel errors to the status and exception
// type Java's ErrorHandlers switch on; the first match wins.
var classes = []struct {
	err  error
	code int
	typ  string
}{
	{catalog.ErrNoSuchTable, http.StatusNotFound, "NoSuchTableException"},
	{catalog.ErrNoSuchView, http.StatusNotFound, "NoSuchViewException"},
	{catalog.ErrNoSuchNamespace, http.StatusNotFound, "NoSuchNamespaceException"},
	{catalog.ErrTableAlreadyExists, http.StatusConflict, "AlreadyExistsException"},
	{catalog.ErrViewAlreadyExists, http.StatusConflict, "AlreadyExistsException"},
	{catalog.ErrNamespaceAlreadyExists, http.StatusConflict, "AlreadyExistsException"},
	{catalog.ErrNamespaceNotEmpty, http.StatusConflict, "NamespaceNotEmptyException"},
	{table.ErrCommitFailed, http.StatusConflict, "CommitFailedException"},
	{storage.ErrConflict, http.StatusConflict, "CommitFailedException"},
	{storage.ErrOutside, http.StatusBadRequest, "BadRequestException"},
	{storage.ErrInvalidName, http.StatusBadRequest, "BadRequestException"},
	{storage.ErrPlacement, http.StatusBadRequest, "BadRequestException"},
	{storage.ErrNoMetadata, http.StatusBadRequest, "BadRequestException"},
	{iceberg.ErrInvalidArgument, http.StatusBadRequest, "BadRequestException"},
	{iceberg.ErrInvalidSchema, http.StatusBadRequest, "BadRequestException"},
}

// writeError writes err as the specification's error response.
func writeError(w http.ResponseWriter, err error) {
	e, ok := errors.AsType[*Error](err)
	if !ok {
		e = &Error{Code: http.StatusInternalServerError, Type: "ServerErrorException", Message: err.Error()}
		for _, c := range classes {
			if errors.Is(err, c.err) {
				e.Code, e.Type = c.code, c.typ
				// "table does not exist: ns.t" becomes Java's "Table does
				// not exist: ns.t", which Java clients and tests match.
				if rest, ok := strings.CutPrefix(e.Message, c.err.Error()); ok {
					e.Message = strings.ToUpper(e.Message[:1]) + c.err.Error()[1:] + rest
				}
				break
			}
		}
	}
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"message": e.Message, "type": e.Type, "code": e.Code}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Code)
	w.Write(body)
}
