package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"

	"github.com/icesql/icesql/engine/internal/memlimit"
	"github.com/icesql/icesql/engine/internal/planrules"
	"github.com/icesql/icesql/engine/internal/sqlfunc"
	"github.com/icesql/icesql/engine/internal/vecexec"
	"github.com/icesql/icesql/engine/internal/wire"
	"github.com/icesql/icesql/planner"
	"github.com/icesql/icesql/procedures"
	"github.com/icesql/icesql/pushdown"
	"github.com/icesql/icesql/storage"
)

// Version is icesql's release, shown by `icesql version` and SELECT VERSION().
var Version = "0.1.0-dev"

// Config says where the tables live and how they are named.
type Config struct {
	// Warehouse is a local folder (or file:// URI) holding the embedded catalog.
	Warehouse string
	// CatalogName is the catalog prefix accepted in three-part names such as
	// icesql.db.table; "icesql" when empty.
	CatalogName string
	// S3 configures the object store of an s3:// warehouse.
	S3 storage.S3Config
	// Store holds the warehouse's files; when nil, the local file system or
	// the S3 store the warehouse URI names.
	Store storage.Store
	// Catalog, when set, is served instead of the embedded warehouse (which
	// S3 and Store then do not configure; Warehouse, when given, names the
	// catalog's folder, to which server-side file access is confined).
	Catalog catalog.Catalog
	// CatalogProperties, when set, name a catalog to open and serve instead
	// of the embedded warehouse, with the properties Spark and PyIceberg
	// use: type=rest|glue|sql|hadoop, uri, warehouse, ... (see package
	// catalogs).
	CatalogProperties iceberg.Properties
	// Log receives the progress lines of long maintenance procedures
	// (expire_snapshots, rewrite_data_files, ...), for the server log;
	// nil discards them.
	Log func(format string, args ...any)
	// MemoryLimit, when positive, is the memory in bytes the engine's
	// statements may take: one that would grow past its budget fails with
	// 1038 or 1041 (memlimit/memlimit.go). The program should also set the Go
	// runtime's soft limit to RuntimeMemoryLimit of it, so that the
	// collector runs more often as the heap nears it; Open leaves the
	// process's limit alone. Zero sets no budget.
	MemoryLimit int64
	// NoLocalInfile refuses LOAD DATA LOCAL INFILE (error 3948), which is
	// accepted by default: the file is the client's own, sent over its
	// connection, so it grants the client nothing it could not INSERT.
	NoLocalInfile bool
	// ManifestCacheBytes bounds the decoded manifests kept for planning
	// scans (pushdown/manifestcache.go): zero keeps up to 64 MiB, a
	// negative value none (every scan decodes its manifests again).
	ManifestCacheBytes int64
}

// Engine runs SQL over the Iceberg tables of one catalog. It is safe for
// concurrent use by many sessions.
type Engine struct {
	cfg      Config
	catalog  catalog.Catalog
	provider *provider
	sqle     *sqle.Engine
	// procedures are the CALL system.* procedures.
	procedures *procedures.Registry
	// deletePaths caches what position delete files name (deletepaths.go).
	deletePaths deletePathCache
	// root is the warehouse location ("" when unknown): procedures read
	// server-side files only under it.
	root string
	// budget is what statements may keep live under Config.MemoryLimit;
	// nil without a limit (memlimit/memlimit.go).
	budget *memlimit.Budget
	// privileges keeps users and grants in the warehouse (auth.go).
	privileges *privilegeStore
	// caches keep scan plans and Parquet footers between statements.
	caches *pushdown.Caches
	// manifests keeps decoded manifests for planning scans
	// (pushdown/manifestcache.go).
	manifests *pushdown.ManifestCache
}

// defaultManifestCacheBytes bounds the decoded manifests an engine keeps
// by default: a single-row file's entry is about 3 KB on a narrow table, so
// 64 MiB holds some 20,000 files' entries.
const defaultManifestCacheBytes = 64 << 20

// newManifestCache is the manifest cache cfg asks for, nil for none.
func newManifestCache(cfg Config) *pushdown.ManifestCache {
	switch {
	case cfg.ManifestCacheBytes < 0:
		return nil
	case cfg.ManifestCacheBytes == 0:
		return pushdown.NewManifestCache(defaultManifestCacheBytes)
	}
	return pushdown.NewManifestCache(cfg.ManifestCacheBytes)
}

// Open opens the warehouse (creating its folder when absent) and builds the
// SQL engine over it.
func Open(ctx context.Context, cfg Config) (*Engine, error) {
	if cfg.CatalogName == "" {
		cfg.CatalogName = "icesql"
	}
	if cfg.useExternalCatalog() {
		cat, root, err := openExternalCatalog(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return newEngine(ctx, cfg, cat, root)
	}
	if cfg.Warehouse == "" {
		return nil, fmt.Errorf("open engine: no warehouse given")
	}
	root, store, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Store == nil {
		cfg.Store = store
	}
	wh, err := storage.OpenWarehouse(ctx, root, cfg.Store)
	if err != nil {
		return nil, err
	}
	return newEngine(ctx, cfg, wh, root)
}

// newEngine builds the SQL engine over cat; root is the warehouse location
// ("" when unknown).
// newEngineMu serializes go-mysql-server's engine construction.
var newEngineMu sync.Mutex

func newEngine(ctx context.Context, cfg Config, cat catalog.Catalog, root string) (*Engine, error) {
	vecexec.AddVectorizeVar()
	addDecorrelateVar()           // groupedsubquery.go
	addFileCacheVar()             // filecache.go
	wire.AddMaxStatementTimeVar() // wire/limits.go
	sqlfunc.RegisterWindowValueFuncs()
	e := &Engine{cfg: cfg, catalog: cat, procedures: procedures.Builtin(), root: root,
		caches: pushdown.NewCaches(), manifests: newManifestCache(cfg)}
	registerSessionVariables()
	e.provider = newProvider(e)
	a := analyzer.NewBuilder(e.provider).
		AddPreAnalyzeRule(planrules.StopIfCancelledID, planrules.StopIfCancelled).
		AddPreAnalyzeRule(planrules.DropHavingColumnsID, planrules.DropHavingColumns). // planrules/havingjoin.go
		AddPreAnalyzeRule(rememberCTASOptionsID, rememberCTASOptions).
		AddPreAnalyzeRule(viewStatementsID, viewStatements).
		AddPreAnalyzeRule(markFullAnalysisID, markFullAnalysis).
		AddPreAnalyzeRule(bindScanIDsID, vecexec.BindScanIDs).
		AddPreAnalyzeRule(resolveQuantifiedID, sqlfunc.ResolveQuantified).
		AddPreAnalyzeRule(orderLargeJoinsID, planrules.OrderLargeJoins).
		AddPreAnalyzeRule(planrules.KeepRootColumnsID, planrules.KeepRootColumns).
		AddPreAnalyzeRule(planrules.UniqueDerivedColumnsID, planrules.UniqueDerivedColumns). // planrules/derivedcolumns.go
		AddPostAnalyzeRule(planrules.StopIfCancelledID, planrules.StopIfCancelled).
		AddPreAnalyzeRule(innerOuterJoinsID, planrules.InnerOuterJoins).
		AddPreAnalyzeRule(filterOuterJoinsID, planrules.FilterOuterJoins).  // planrules/crossjoins.go
		AddPostAnalyzeRule(sqlfunc.CheckOverflowID, sqlfunc.CheckOverflow). // sqlfunc/overflow.go
		AddPostAnalyzeRule(pushRowFiltersID, pushRowFilters).
		AddPostAnalyzeRule(countFromMetadataID, vecexec.CountFromMetadata).
		AddPostAnalyzeRule(minMaxFromMetadataID, vecexec.MinMaxFromMetadata).
		AddPostAnalyzeRule(vectorizeID, vecexec.Vectorize).
		AddPostAnalyzeRule(keyCorrelatedSubqueriesID, planrules.KeyCorrelatedSubqueries). // planrules/correlated.go
		AddPostAnalyzeRule(fixSetOpsID, sqlfunc.FixSetOps).
		AddPostAnalyzeRule(bulkLoadID, bulkLoads). // loaddata.go
		AddPostAnalyzeRule(fixWindowsID, sqlfunc.FixWindows).
		AddOverrides(sql.EngineOverrides{Builder: sql.BuilderOverrides{Parser: parser{Parser: planner.NewParser(cfg.CatalogName), e: e}}}).
		Build()
	if err := replaceRule(a, "replaceCrossJoins", func(analyzer.RuleFunc) analyzer.RuleFunc { return planrules.CrossJoinConditions }); err != nil { // planrules/crossjoins.go
		return nil, err
	}
	if err := replaceRule(a, "optimizeJoins", planrules.GroupedJoinSides); err != nil { // planrules/semijoins.go
		return nil, err
	}
	if err := replaceRule(a, "validateGroupBy", planrules.ValidateGroupByView); err != nil { // planrules/groupbycheck.go
		return nil, err
	}
	if err := replaceRule(a, "unnestInSubqueries", sqlfunc.ScalarSubqueriesStay); err != nil { // sqlfunc/scalarsubquery.go
		return nil, err
	}
	if err := replaceRule(a, "assignExecIndexes", thenGroupCorrelatedSubqueries); err != nil { // groupedsubquery.go
		return nil, err
	}
	a.Coster = newJoinCoster() // joincost.go
	// sqle.New initializes, then resets, go-mysql-server's process-wide
	// status variables (sql.StatusVariables): engines opened at once in one
	// process would race on them.
	newEngineMu.Lock()
	e.sqle = sqle.New(a, nil)
	newEngineMu.Unlock()
	if err := tableConstraintsEnforcement(sql.NewEmptyContext(), a.Catalog.InfoSchema); err != nil { // keys.go
		return nil, err
	}
	e.budget = memlimit.NewBudget(cfg.MemoryLimit)          // memlimit/budget.go
	a.ExecBuilder.PriorityBuilder = sqlfunc.CheckedBuilder{ // sqlfunc/overflow.go
		Next: serverFileBuilder{dir: serverFilesDir(root), // serverfiles.go
			next: planrules.HashJoinBuilder{ // planrules/hashlookup.go
				Next: planrules.SortBuilder{ // planrules/sortlimit.go
					Next: vecexec.VectorBuilder{
						Next: planrules.GroupByBuilder{ // planrules/groupby.go
							Next: explainBuilder{next: sqlfunc.NullFirstBuilder{Base: a.ExecBuilder}, base: a.ExecBuilder}, // sqlfunc/nullcompare.go
							Base: a.ExecBuilder,
						},
						Base:        a.ExecBuilder,
						ChangedRows: withChangedRowSelection, // rowselect.go
					},
					Base:   a.ExecBuilder,
					Budget: e.budget,
				},
				Base: a.ExecBuilder,
			},
		},
		Base: a.ExecBuilder,
	}
	if e.budget != nil {
		e.sqle.MemoryManager = sql.NewMemoryManager(e.budget)
		e.limitDecodedFiles() // filecache.go
	}
	if err := setServerVariables(root, !cfg.NoLocalInfile); err != nil {
		return nil, err
	}
	registerWapVariables()
	store := cfg.Store
	if cfg.useExternalCatalog() {
		store = nil // the warehouse belongs to the catalog (auth.go)
	}
	if err := e.setupPrivileges(ctx, store, root); err != nil {
		return nil, err
	}
	return e, nil
}

// setServerVariables sets the global variables clients read to identify
// the server, and confines server-side file access (LOAD DATA INFILE,
// SELECT ... INTO OUTFILE) to <warehouse>/.icesql/files: go-mysql-server's
// default lets any client read every file the process can. The variables
// are process-wide in go-mysql-server.
func setServerVariables(root string, localInfile bool) error {
	files := serverFilesDir(root) // serverfiles.go
	if files == "" {
		files = "/nonexistent/icesql-server-file-access-disabled" // object stores: no server files
	}
	return sql.SystemVariables.AssignValues(map[string]any{
		"version":          "8.0.33-icesql-" + Version,
		"version_comment":  "icesql " + Version,
		"secure_file_priv": files,
		"local_infile":     localInfile,
		// MySQL 8's default; go-mysql-server's is 1 GiB (sqlfunc/packetlimit.go).
		"max_allowed_packet": sqlfunc.DefaultMaxAllowedPacket,
	})
}

// openStore resolves the warehouse to a location URI and the store holding it.
func openStore(ctx context.Context, cfg Config) (string, storage.Store, error) {
	root := cfg.Warehouse
	scheme, _, hasScheme := strings.Cut(root, "://")
	switch {
	case !hasScheme:
		loc, err := storage.LocalLocation(root)
		return loc, storage.NewLocalStore(), err
	case cfg.Store != nil:
		return root, cfg.Store, nil
	case scheme == "file":
		return root, storage.NewLocalStore(), nil
	case scheme == "s3" || scheme == "s3a" || scheme == "s3n":
		st, err := storage.NewS3Store(ctx, root, cfg.S3)
		return root, st, err
	}
	return "", nil, fmt.Errorf("warehouse %s: unsupported scheme %q (use a local path, file:// or s3://)", root, scheme)
}

// Catalog is the Iceberg catalog the engine serves.
func (e *Engine) Catalog() catalog.Catalog { return e.catalog }

// Close releases the engine.
func (e *Engine) Close() error { return errors.Join(e.sqle.Close(), e.closeCatalog()) }

// newContext makes the go-mysql-server context for one statement of sess.
func (e *Engine) newContext(ctx context.Context, sess *Session) *sql.Context {
	return sql.NewContext(ctx, sql.WithSession(sess), sql.WithProcessList(e.sqle.ProcessList), sql.WithMemoryManager(e.sqle.MemoryManager))
}

// ManifestCacheStats reports how often planning found a manifest or
// manifest list decoded already, and how often it decoded one
// (Config.ManifestCacheBytes).
func (e *Engine) ManifestCacheStats() (hits, misses int64) {
	if e.manifests == nil {
		return 0, 0
	}
	return e.manifests.Stats()
}

// RuntimeMemoryLimit is the Go runtime soft memory limit
// (runtime/debug.SetMemoryLimit) for a process that holds an engine to
// Config.MemoryLimit limit (memlimit.Runtime says why it is less). The limit
// is the process's, so the program sets it (cmd/icesql does), not Open: two
// engines in one process must not fight over it.
func RuntimeMemoryLimit(limit int64) int64 { return memlimit.Runtime(limit) }
