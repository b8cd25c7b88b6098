package proxy

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/recorder"
	"github.com/mcpdiag/mcpdiag/wire"
)

// cancelMemory is how many notifications/cancelled the HTTP proxy keeps
// for the records of the requests they cancel: the oldest is forgotten
// first, so memory stays bounded whatever a client sends.
const cancelMemory = 256

// cancelTracker remembers the notifications/cancelled a client POSTed
// (2025-11-25: the way an HTTP client cancels a request in a session), so
// that the record of the request it cancelled says so, as proxy --stdio's
// does: without it, a request its client cancelled, whose stream its
// server then ended without a response (as MCP asks of a cancelled
// request), read as a stream cut for no reason. The hot path pays nothing:
// a cancel is noted when one arrives, looked up when a request's record is
// finished and some cancel was ever seen.
type cancelTracker struct {
	any   atomic.Bool // some cancel was noted: most sessions never cancel
	mu    sync.Mutex
	marks [cancelMemory]cancelMark
	next  int // where the next mark goes
	n     int // marks held
}

// cancelMark is one notifications/cancelled: the request it names (its
// session and id, see cancelKey) and when it arrived.
type cancelMark struct {
	key string
	at  time.Time
}

// cancelKey names a request within its upstream path and session: the
// Mcp-Session-Id the client sent (empty without a session) and the id's
// pairing key.
func cancelKey(path, session string, id wire.ID) string {
	return path + "\x00" + session + "\x00" + idKey(id)
}

// note remembers a notifications/cancelled exchange at its begin.
func (c *cancelTracker) note(path string, ex *recorder.Exchange) {
	id := ex.Cancelled()
	if id.IsZero() {
		return
	}
	c.add(cancelKey(path, ex.Request().Header.Get("Mcp-Session-Id"), id), ex.Start())
}

// add keeps one cancel, in place of the oldest when cancelMemory are held.
func (c *cancelTracker) add(key string, at time.Time) {
	c.mu.Lock()
	c.marks[c.next] = cancelMark{key: key, at: at}
	c.next = (c.next + 1) % cancelMemory
	if c.n < cancelMemory {
		c.n++
	}
	c.mu.Unlock()
	c.any.Store(true)
}

// cancelledAt returns when the client cancelled the request key names
// between start and end (the request's own exchange), the latest such
// cancel when it sent several.
func (c *cancelTracker) cancelledAt(key string, start, end time.Time) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var at time.Time
	for i := 0; i < c.n; i++ {
		m := c.marks[i]
		if m.key == key && !m.at.Before(start) && !m.at.After(end) && m.at.After(at) {
			at = m.at
		}
	}
	return at, !at.IsZero()
}

// seen reports whether any cancel was noted, without a lock: the finish
// hook asks it of every exchange.
func (c *cancelTracker) seen() bool { return c.any.Load() }

// annotate adds to rec, the record of a request, the note proxy --stdio
// writes when its client cancelled it: "the client cancelled the request
// (notifications/cancelled) after D", D from the request's start.
func (c *cancelTracker) annotate(path string, ex *recorder.Exchange, rec *record.Record) {
	if rec.JSONRPC.ID.IsZero() || rec.Method == "" {
		return
	}
	end := ex.End()
	if end.IsZero() {
		end = time.Now()
	}
	at, ok := c.cancelledAt(cancelKey(path, ex.Request().Header.Get("Mcp-Session-Id"), rec.JSONRPC.ID), ex.Start(), end)
	if !ok {
		return
	}
	n := fmt.Sprintf("the client cancelled the request (notifications/cancelled) after %s", at.Sub(ex.Start()).Round(time.Millisecond))
	if rec.Note == "" {
		rec.Note = n
	} else {
		rec.Note = n + "; " + rec.Note
	}
}
