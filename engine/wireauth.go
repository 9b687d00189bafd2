package engine

import (
	"net"

	"github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/vitess/go/mysql"
)

// listenerFactory builds go-mysql-server's vitess listener with icesql's
// authentication methods in place of go-mysql-server's.
func listenerFactory(cfg server.Config, lc mysql.ListenerConfig, sel server.ServerEventListener) (server.ProtocolListener, error) {
	lc.AuthServer = newAuthServer(lc.AuthServer)
	return server.MySQLProtocolListenerFactory(cfg, lc, sel)
}

// authServer is go-mysql-server's authentication (its users, grants and
// plugins), with the client's authentication data checked before it
// reaches a plugin that would index past its end.
type authServer struct {
	mysql.AuthServer
	methods []mysql.AuthMethod
}

func newAuthServer(as mysql.AuthServer) *authServer {
	a := &authServer{AuthServer: as}
	for _, m := range as.AuthMethods() {
		if m.Name() == mysql.MysqlNativePassword {
			// go-mysql-server XORs 20 bytes of the reply: a shorter one
			// crashed the connection before login.
			m = scrambleLength{AuthMethod: m, size: 20}
		}
		a.methods = append(a.methods, m)
	}
	return a
}

func (a *authServer) AuthMethods() []mysql.AuthMethod { return a.methods }

// scrambleLength refuses a scramble of the wrong length as a wrong
// password (an empty one stands for no password).
type scrambleLength struct {
	mysql.AuthMethod
	size int
}

func (m scrambleLength) HandleAuthPluginData(c *mysql.Conn, user string, serverData, clientData []byte, addr net.Addr) (mysql.Getter, error) {
	if n := len(clientData); n != 0 && n != m.size {
		return nil, mysql.NewSQLError(mysql.ERAccessDeniedError, mysql.SSAccessDeniedError,
			"Access denied for user '%v'@'%v' (using password: YES)", user, hostOf(addr))
	}
	return m.AuthMethod.HandleAuthPluginData(c, user, serverData, clientData, addr)
}
