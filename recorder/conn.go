package recorder

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
)

// connKey is the context key of a client connection's id.
type connKey struct{}

// connRun tells this process's connection ids from another run's in the
// same record file; connCount numbers the connections.
var (
	connRun   = newConnRun()
	connCount atomic.Int64
)

func newConnRun() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ConnContext is an http.Server's ConnContext: it gives each client
// connection an id ("RUN-N": RUN a random id of this process, N the
// connection's number from 1), which the records of the exchanges on it
// carry (record.Record.Conn). Without it a record carries the connection's
// remote address instead, which a later connection may reuse.
func ConnContext(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, NewConnID())
}

// NewConnID returns a new connection id of this process, as ConnContext
// gives one: for a transport with one client connection per run (the
// stdio proxy's pipe).
func NewConnID() string {
	return connRun + "-" + strconv.FormatInt(connCount.Add(1), 10)
}

// connOf is the id of the connection r came on.
func connOf(r *http.Request) string {
	if id, ok := r.Context().Value(connKey{}).(string); ok {
		return id
	}
	return r.RemoteAddr
}
