package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/storage"
)

// Users and grants live in go-mysql-server's own privilege system
// (mysql_db.MySQLDb: CREATE USER, GRANT, REVOKE, ALTER USER, DROP USER, SHOW
// GRANTS, the mysql.user tables, the privilege checks of every statement).
// icesql gives it a persister that keeps every change in the warehouse, so
// accounts survive a restart and travel with the warehouse:
//
//	<warehouse>/.icesql/privileges.db    go-mysql-server's serialized users, grants and roles
//
// The accounts of the command line are never written there; they are
// defined at every start (ephemeral in go-mysql-server's terms):
//
//   - root@localhost, the account of in-process sessions (database/sql and
//     `icesql sql`) and, on a server started without --user, of loopback
//     clients, without a password;
//   - on a server without --user (loopback only), the anonymous account
//     ''@localhost: any other name logs in without a password;
//   - the --user account of a server, at host '%', with the --password.

// privilegesFile is where the warehouse keeps its users and grants.
const privilegesFile = "privileges.db"

// rootAccount is the account of in-process sessions.
const rootUser, rootHost = "root", "localhost"

// privilegeStore persists go-mysql-server's privilege tables in the
// warehouse (it is the MySQLDb's persister).
type privilegeStore struct {
	mdb   *mysql_db.MySQLDb
	store storage.Store // nil when the engine serves an external catalog
	loc   string

	mu    sync.Mutex
	saved []byte // the bytes the warehouse holds; nil when it holds none
	// restoring counts restores of the saved state after a failed write.
	restoring sync.WaitGroup
}

var _ mysql_db.MySQLDbPersistence = (*privilegeStore)(nil)

// setupPrivileges loads the warehouse's users and grants into the engine's
// privilege system and makes every later change persist there. store is
// nil for an external catalog, whose warehouse icesql does not write to.
func (e *Engine) setupPrivileges(ctx context.Context, store storage.Store, root string) error {
	mdb := e.sqle.Analyzer.Catalog.MySQLDb
	p := &privilegeStore{mdb: mdb, store: store}
	if store != nil && root != "" {
		p.loc = storage.Join(root, ".icesql", privilegesFile)
		data, err := store.ReadFile(ctx, p.loc)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return fmt.Errorf("read users and grants %s: %w", p.loc, err)
		default:
			if err := mdb.LoadData(sql.NewEmptyContext(), data); err != nil {
				return fmt.Errorf("read users and grants %s: %w", p.loc, err)
			}
			p.saved = data
		}
	}
	mdb.SetPersister(p)
	e.privileges = p
	ed := mdb.Editor()
	defer ed.Close()
	putEphemeralSuperUser(mdb, ed, rootUser, rootHost, "")
	// Adding an account switches privilege checks on; they stay off until
	// the warehouse holds an account of its own (see accountStatement).
	mdb.SetEnabled(p.hasAccounts(ed))
	return nil
}

// putEphemeralSuperUser (re)defines an account with every privilege that
// is never persisted, replacing an account of the same name and host.
func putEphemeralSuperUser(mdb *mysql_db.MySQLDb, ed *mysql_db.Editor, user, host, password string) {
	ed.RemoveUser(mysql_db.UserPrimaryKey{User: user, Host: host})
	mdb.AddEphemeralSuperUser(ed, user, host, password)
}

// hasAccounts reports whether any account besides the ephemeral ones exists.
func (p *privilegeStore) hasAccounts(ed *mysql_db.Editor) bool {
	found := false
	ed.VisitUsers(func(u *mysql_db.User) { found = found || !u.IsEphemeral })
	return found
}

// Persist writes the privilege tables after a change (go-mysql-server calls
// it with its editor lock held, before the statement returns). A write
// that fails leaves the change in memory only; the saved state is then
// restored, so that memory agrees with the warehouse again.
func (p *privilegeStore) Persist(ctx *sql.Context, data []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var err error
	if p.store == nil || p.loc == "" {
		err = mysqlerr.NotSupported("users and grants are kept in the embedded warehouse (.icesql/%s); "+
			"a server over an external catalog has only its --user account", privilegesFile)
	} else if werr := p.store.WriteFile(ctx, p.loc, data); werr != nil {
		err = fmt.Errorf("save users and grants to %s: %w", p.loc, werr)
	}
	if err != nil {
		p.restoring.Add(1)
		go p.restore()
		return err
	}
	p.saved = append([]byte(nil), data...)
	return nil
}

// restore puts the saved state back in memory, keeping the ephemeral
// accounts. It waits for the editor of the failed statement to close.
func (p *privilegeStore) restore() {
	defer p.restoring.Done()
	ed := p.mdb.Editor()
	defer ed.Close()
	p.mu.Lock()
	saved := p.saved
	p.mu.Unlock()
	var ephemeral []*mysql_db.User
	ed.VisitUsers(func(u *mysql_db.User) {
		if u.IsEphemeral {
			ephemeral = append(ephemeral, u)
		}
	})
	if saved != nil {
		if err := p.mdb.OverwriteUsersAndGrantData(sql.NewEmptyContext(), ed, saved); err == nil {
			for _, u := range ephemeral {
				ed.PutUser(u)
			}
			return
		}
	}
	// Nothing saved yet: drop every account and role the failed statement
	// may have added.
	var drop []mysql_db.UserPrimaryKey
	ed.VisitUsers(func(u *mysql_db.User) {
		if !u.IsEphemeral {
			drop = append(drop, mysql_db.UserPrimaryKey{User: u.User, Host: u.Host})
		}
	})
	for _, pk := range drop {
		ed.RemoveUser(pk)
	}
	var edges []mysql_db.RoleEdgesPrimaryKey
	ed.VisitRoleEdges(func(r *mysql_db.RoleEdge) {
		edges = append(edges, mysql_db.RoleEdgesPrimaryKey{FromHost: r.FromHost, FromUser: r.FromUser, ToHost: r.ToHost, ToUser: r.ToUser})
	})
	for _, pk := range edges {
		ed.RemoveRoleEdge(pk)
	}
}

// serverAccounts defines the accounts of a server. Without a --user (a
// loopback server), the anonymous account ”@localhost with every
// privilege and no password admits any client under any name that is not
// an account, as the server always did; anyone on the machine may be
// root@localhost anyway. With a --user: that account at any host with its
// password, and root@localhost locked (no passwordless root next to a
// password-protected account) unless --user is root itself, whose
// password it then takes.
func (e *Engine) serverAccounts(user, password string) {
	mdb := e.sqle.Analyzer.Catalog.MySQLDb
	ed := mdb.Editor()
	defer ed.Close()
	if user == "" {
		on := mdb.Enabled()
		putEphemeralSuperUser(mdb, ed, rootUser, rootHost, "") // unlocked, if an earlier server locked it
		putEphemeralSuperUser(mdb, ed, "", rootHost, "")
		mdb.SetEnabled(on) // the account alone does not switch checks on (accountStatement)
		return
	}
	if anon, ok := ed.GetUser(mysql_db.UserPrimaryKey{Host: rootHost}); ok && anon.IsEphemeral {
		ed.RemoveUser(mysql_db.UserPrimaryKey{Host: rootHost}) // an earlier loopback server's
	}
	putEphemeralSuperUser(mdb, ed, user, "%", password)
	if user == rootUser {
		putEphemeralSuperUser(mdb, ed, rootUser, rootHost, password)
		return
	}
	if root, ok := ed.GetUser(mysql_db.UserPrimaryKey{User: rootUser, Host: rootHost}); ok && root.IsEphemeral {
		locked := *root
		locked.Locked = true
		ed.RemoveUser(mysql_db.UserPrimaryKey{User: rootUser, Host: rootHost}) // the set would hold both
		ed.PutUser(&locked)
	}
}

// accountStatement prepares the statements that manage accounts. Every
// account may SHOW GRANTS for itself, as in MySQL (the parser asks SELECT
// on the mysql schema, which only SHOW GRANTS FOR another account needs).
// And the first such statement switches go-mysql-server's privilege
// system on: until then it is off (every session has every privilege and
// the mysql schema does not resolve), which the loopback server without
// --user keeps for speed while the warehouse has no accounts; the
// anonymous loopback account (serverAccounts) keeps admitting its clients.
func (e *Engine) accountStatement(stmt ast.Statement) {
	switch s := stmt.(type) {
	case *ast.ShowGrants:
		if s.For == nil {
			s.Auth = ast.AuthInformation{AuthType: ast.AuthType_IGNORE}
		}
	case *ast.CreateUser, *ast.RenameUser, *ast.DropUser, *ast.CreateRole, *ast.DropRole,
		*ast.GrantPrivilege, *ast.GrantRole, *ast.GrantProxy, *ast.RevokePrivilege, *ast.RevokeRole, *ast.RevokeProxy:
	case *ast.DDL:
		if s.Auth.AuthType != ast.AuthType_ALTER_USER {
			return
		}
	default:
		return
	}
	e.sqle.Analyzer.Catalog.MySQLDb.SetEnabled(true)
}
