package proxy

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// Warning codes of tool-definition drift. They appear in the warnings of the
// tools/list exchange that showed the change and of the KindWarning record
// written for it.
const (
	// WarnToolChanged: a tool's definition differs from the one an earlier
	// tools/list returned.
	WarnToolChanged = "tool-definition-changed"
	// WarnToolBecameDestructive: a tool that was read-only (or declared
	// non-destructive) is now destructive. Retry decisions trust these
	// annotations, so a client may now repeat a call that is no longer safe.
	WarnToolBecameDestructive = "tool-became-destructive"
)

// KindWarning is the record kind of a drift warning: one record per changed
// tool, besides the exchange record of the tools/list that showed it.
const KindWarning record.Kind = "warning"

// maxTrackedTools bounds the drift tracker's memory: past it, new tool names
// are not tracked (changes to the tracked ones still are).
const maxTrackedTools = 10000

// Drift describes one tool whose definition changed.
type Drift struct {
	// Tool is the tool's name.
	Tool string
	// Changes are the members that changed: top-level member names
	// ("description", "inputSchema") and, for annotations, one level deeper
	// ("annotations.readOnlyHint").
	Changes []string
	// BecameDestructive reports a tool that was read-only or declared
	// non-destructive and now is destructive.
	BecameDestructive bool
	// Code is WarnToolBecameDestructive or WarnToolChanged.
	Code string
	// Message says what changed, in one line.
	Message string
}

type toolDef struct {
	at          time.Time // when the response that carried it ended
	hash        string
	members     map[string]string // member path → canonical JSON
	readOnly    bool
	destructive bool // effective: not read-only and destructiveHint not false
	idempotent  bool
}

// driftTracker remembers the hash of every tool definition seen per
// upstream.
type driftTracker struct {
	mu    sync.Mutex
	tools map[string]*toolDef // upstream + "\x00" + tool name
	// lists holds, per upstream, the tool names of its last tools/list
	// read whole, and of listings still being paged (see listed).
	lists map[string]*toolListing
	// inflight are the tools/list exchanges not finished yet, per
	// upstream.
	inflight map[string]map[*listingToken]bool

	// keys are the server keys of the request paths told apart (see key).
	keysMu sync.Mutex
	keys   map[string]string
	// upstream is the URL the proxy was given, upstreamKey its string (the
	// key of its own target path, defPath), set once by New.
	upstream             *url.URL
	upstreamKey, defPath string
}

// maxDriftPaths bounds the request paths the tracker tells apart: a client
// chooses them. Past it, the requests to a new path share the upstream
// URL's key, as all did before paths were told apart.
const maxDriftPaths = 64

// key names the MCP server a request to the target path goes to, for the
// tracker's maps: "upstream" is the URL the proxy was given, and a request
// to another path (forwarded as it is: mcpdiag serve's /s/{id}/mcp, a
// gateway's /servers/{name}/mcp) reaches another server on the same host,
// whose tools are its own.
func (d *driftTracker) key(path string) string {
	if path == d.defPath {
		return d.upstreamKey
	}
	d.keysMu.Lock()
	defer d.keysMu.Unlock()
	if k, ok := d.keys[path]; ok {
		return k
	}
	if len(d.keys) >= maxDriftPaths {
		return d.upstreamKey
	}
	if d.keys == nil {
		d.keys = map[string]string{}
	}
	k := (&url.URL{Scheme: d.upstream.Scheme, Host: d.upstream.Host, Path: path}).String()
	d.keys[path] = k
	return k
}

// listingToken is a tools/list exchange in flight: its response may have
// reached the client (which then sends tools/call) before the proxy's own
// record of it is done.
type listingToken struct {
	upstream string
	start    time.Time
	done     chan struct{}
}

// maxListingWait bounds how long a tools/call's record waits for the
// tools/list exchanges that started before it; past it no unknown-tool
// warning is given (nothing is claimed on a listing not seen).
const maxListingWait = 5 * time.Second

// listingStarted notes a tools/list exchange that began at start.
func (d *driftTracker) listingStarted(upstream string, start time.Time) *listingToken {
	t := &listingToken{upstream: upstream, start: start, done: make(chan struct{})}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inflight == nil {
		d.inflight = map[string]map[*listingToken]bool{}
	}
	if d.inflight[upstream] == nil {
		d.inflight[upstream] = map[*listingToken]bool{}
	}
	d.inflight[upstream][t] = true
	return t
}

// listingEnded notes that the tools/list exchange of t is recorded (after
// listed); t may be nil.
func (d *driftTracker) listingEnded(t *listingToken) {
	if t == nil {
		return
	}
	d.mu.Lock()
	delete(d.inflight[t.upstream], t)
	d.mu.Unlock()
	close(t.done)
}

// awaitListings waits, at most maxListingWait, for the tools/list exchanges
// of upstream that started before before; it reports whether they all
// ended.
func (d *driftTracker) awaitListings(upstream string, before time.Time) bool {
	d.mu.Lock()
	var wait []chan struct{}
	for t := range d.inflight[upstream] {
		if t.start.Before(before) {
			wait = append(wait, t.done)
		}
	}
	d.mu.Unlock()
	if len(wait) == 0 {
		return true
	}
	timer := time.NewTimer(maxListingWait)
	defer timer.Stop()
	for _, c := range wait {
		select {
		case <-c:
		case <-timer.C:
			return false
		}
	}
	return true
}

// toolListing is one upstream's tools/list as the proxy saw it.
type toolListing struct {
	// complete are the last listings seen whole, oldest first, each with
	// the start of the exchange of its last page: a tools/call is judged by
	// the last listing whose last page started before the call did, not by
	// one that ended while the call's record was being finished.
	complete []completeListing
	// pending are listings being paged, by the nextCursor of their last
	// page: a page requested with that cursor continues one.
	pending map[string]map[string]bool
}

// completeListing is a tools/list read whole.
type completeListing struct {
	start time.Time // the start of its last page's exchange
	names map[string]bool
}

// maxCompleteListings bounds the whole listings kept per upstream.
const maxCompleteListings = 8

// before returns the names of the last whole listing whose last page
// started before t, or nil.
func (l *toolListing) before(t time.Time) map[string]bool {
	for i := len(l.complete) - 1; i >= 0; i-- {
		if l.complete[i].start.Before(t) {
			return l.complete[i].names
		}
	}
	return nil
}

// maxPendingListings bounds the listings being paged at once per upstream.
const maxPendingListings = 64

// listed notes the tool names of one tools/list exchange. A page requested
// without a cursor starts a listing; a page requested with a cursor
// continues the listing whose last page gave that nextCursor (pages of
// other chains are ignored, so concurrent clients do not mix); a page
// without nextCursor ends its listing, which becomes the upstream's
// complete one.
func (d *driftTracker) listed(upstream string, start time.Time, request, response []byte) {
	result, ok := wire.Field(response, "result")
	if !ok || wire.Kind(result) != '{' {
		return
	}
	tools, ok := wire.Field(result, "tools")
	if !ok || wire.Kind(tools) != '[' {
		return
	}
	cursor, hasCursor := "", false
	if params, ok := wire.Field(request, "params"); ok && wire.Kind(params) == '{' {
		if c, ok := wire.Field(params, "cursor"); ok {
			cursor, hasCursor = wire.StringValue(c)
		}
	}
	next, _ := wire.Field(result, "nextCursor")
	nextCursor, more := wire.StringValue(next)
	more = more && nextCursor != ""

	d.mu.Lock()
	defer d.mu.Unlock()
	if d.lists == nil {
		d.lists = map[string]*toolListing{}
	}
	l := d.lists[upstream]
	if l == nil {
		l = &toolListing{pending: map[string]map[string]bool{}}
		d.lists[upstream] = l
	}
	names := map[string]bool{}
	if hasCursor {
		prev, ok := l.pending[cursor]
		if !ok {
			return
		}
		delete(l.pending, cursor)
		names = prev
	}
	_ = wire.EachElement(tools, func(_ int, tool []byte) bool {
		if n, ok := wire.Field(tool, "name"); ok {
			if name, ok := wire.StringValue(n); ok && len(names) < maxTrackedTools {
				names[name] = true
			}
		}
		return true
	})
	if !more {
		c := completeListing{start: start, names: names}
		i := len(l.complete)
		for i > 0 && l.complete[i-1].start.After(start) {
			i--
		}
		l.complete = slices.Insert(l.complete, i, c)
		if len(l.complete) > maxCompleteListings {
			l.complete = l.complete[len(l.complete)-maxCompleteListings:]
		}
		return
	}
	if len(l.pending) >= maxPendingListings {
		for k := range l.pending {
			delete(l.pending, k)
			break
		}
	}
	l.pending[nextCursor] = names
}

// listedInOrder is listed after the tools/list exchanges of upstream that
// started before start have been recorded: records are finished in
// goroutines, and a page read before the page whose nextCursor it follows
// would be dropped, leaving the listing never whole.
func (d *driftTracker) listedInOrder(upstream string, start time.Time, request, response []byte) {
	d.awaitListings(upstream, start)
	d.listed(upstream, start, request, response)
}

// unknownTool adds the protocol-error-as-tool-error warning to the record
// of a tools/call that ended in a tool error (isError) for a tool absent
// from the upstream's last complete tools/list whose last page started
// before the call did (a listing completed later cannot have informed the
// call, even when its record was done first): the spec makes a call of an
// unknown tool a protocol error, and the Python SDK answers one with
// isError "Unknown tool: X". Nothing is added without a complete listing,
// or when the record already carries the warning. A tools/list that
// started before the tools/call (started at start) is waited for: its
// response reached the client, which then called, possibly before the
// proxy finished recording the listing.
func (d *driftTracker) unknownTool(upstream string, rec *record.Record, start time.Time) {
	if rec.Method != "tools/call" || rec.Outcome != classify.ToolError || rec.Tool == "" {
		return
	}
	for _, w := range rec.Warnings {
		if w.Code == classify.WarnProtocolErrorAsTool {
			return
		}
	}
	if !d.awaitListings(upstream, start) {
		return
	}
	d.mu.Lock()
	l := d.lists[upstream]
	var n int
	known := true
	if l != nil {
		if names := l.before(start); names != nil {
			n, known = len(names), names[rec.Tool]
		}
	}
	d.mu.Unlock()
	if known {
		return
	}
	rec.Warnings = append(rec.Warnings, record.Warning{Code: classify.WarnProtocolErrorAsTool, Message: fmt.Sprintf(
		"tool %q is not in the tools/list the proxy saw whole (%d tools), yet the server answered with a tool result (isError) instead of a JSON-RPC error: an unknown tool is a protocol error (-32602 Invalid params)", rec.Tool, n)})
}

// observe compares the tools of a tools/list response message, whose
// response ended at at, with the definitions seen before and returns the
// changes. Exchanges finish on their own goroutines, so an observation may
// come in after a later one: it is then compared as the older definition.
func (d *driftTracker) observe(upstream string, response []byte, at time.Time) []Drift {
	result, ok := wire.Field(response, "result")
	if !ok || wire.Kind(result) != '{' {
		return nil
	}
	tools, ok := wire.Field(result, "tools")
	if !ok || wire.Kind(tools) != '[' {
		return nil
	}
	var out []Drift
	_ = wire.EachElement(tools, func(_ int, tool []byte) bool {
		name, def := toolDefinition(tool)
		if def != nil {
			def.at = at
		}
		if name == "" {
			return true
		}
		if dr := d.update(upstream+"\x00"+name, name, def); dr != nil {
			out = append(out, *dr)
		}
		return true
	})
	return out
}

func (d *driftTracker) update(key, name string, def *toolDef) *Drift {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.tools == nil {
		d.tools = map[string]*toolDef{}
	}
	old, seen := d.tools[key]
	if !seen {
		if len(d.tools) < maxTrackedTools {
			d.tools[key] = def
		}
		return nil
	}
	if old.hash == def.hash {
		if def.at.After(old.at) {
			old.at = def.at
		}
		return nil
	}
	if def.at.Before(old.at) {
		return diffTools(name, def, old)
	}
	d.tools[key] = def
	return diffTools(name, old, def)
}

// toolDefinition hashes a tool object and splits it into members.
func toolDefinition(tool []byte) (string, *toolDef) {
	if wire.Kind(tool) != '{' {
		return "", nil
	}
	canon, err := record.CanonicalJSON(tool)
	if err != nil {
		return "", nil
	}
	sum := sha256.Sum256(canon)
	def := &toolDef{hash: hex.EncodeToString(sum[:]), members: map[string]string{}}
	var name string
	var readOnly, destructive, idempotent []byte
	_ = wire.EachField(tool, func(k, v []byte) bool {
		key, _ := wire.StringValue(k)
		if key == "name" {
			name, _ = wire.StringValue(v)
		}
		if key == "annotations" && wire.Kind(v) == '{' {
			_ = wire.EachField(v, func(ak, av []byte) bool {
				akey, _ := wire.StringValue(ak)
				def.members["annotations."+akey] = canonical(av)
				switch akey {
				case "readOnlyHint":
					readOnly = av
				case "destructiveHint":
					destructive = av
				case "idempotentHint":
					idempotent = av
				}
				return true
			})
			return true
		}
		def.members[key] = canonical(v)
		return true
	})
	def.readOnly = wire.Kind(readOnly) == 't'
	def.destructive = !def.readOnly && wire.Kind(destructive) != 'f'
	def.idempotent = wire.Kind(idempotent) == 't'
	return name, def
}

func canonical(v []byte) string {
	c, err := record.CanonicalJSON(v)
	if err != nil {
		return string(v)
	}
	return string(c)
}

// diffTools names what changed between two definitions of a tool.
func diffTools(name string, old, cur *toolDef) *Drift {
	dr := &Drift{Tool: name, Code: WarnToolChanged}
	var details []string
	keys := make([]string, 0, len(old.members)+len(cur.members))
	for k := range old.members {
		keys = append(keys, k)
	}
	for k := range cur.members {
		if _, ok := old.members[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		was, hadOld := old.members[k]
		now, hasNew := cur.members[k]
		if hadOld && hasNew && was == now {
			continue
		}
		dr.Changes = append(dr.Changes, k)
		if strings.HasPrefix(k, "annotations.") {
			details = append(details, fmt.Sprintf("%s (%s → %s)", k, shortValue(was, hadOld), shortValue(now, hasNew)))
		} else {
			details = append(details, fmt.Sprintf("%s (%s)", k, changeKind(hadOld, hasNew)))
		}
	}
	if !old.destructive && cur.destructive {
		dr.BecameDestructive = true
		dr.Code = WarnToolBecameDestructive
		was := "declared non-destructive"
		if old.readOnly {
			was = "read-only"
		}
		dr.Message = fmt.Sprintf("TOOL BECAME DESTRUCTIVE: tool %q was %s and is now destructive; a client that retries it as safe would now repeat a destructive call; changed: %s",
			name, was, strings.Join(details, ", "))
		return dr
	}
	dr.Message = fmt.Sprintf("tool %q changed its definition: %s", name, strings.Join(details, ", "))
	if old.idempotent && !cur.idempotent {
		dr.Message += "; it is no longer declared idempotent"
	}
	return dr
}

func shortValue(v string, present bool) string {
	if !present {
		return "absent"
	}
	if len(v) > 40 {
		return v[:40] + "…"
	}
	return v
}

func changeKind(hadOld, hasNew bool) string {
	switch {
	case !hadOld:
		return "added"
	case !hasNew:
		return "removed"
	}
	return "changed"
}
