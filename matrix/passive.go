package matrix

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/internal/visible"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/retry"
)

// MaxRecordLine bounds one line of a record file read by FromRecords.
const MaxRecordLine = 16 << 20

// Passive is the result of judging captured records: one trace per client
// and session, with the verdicts of the rules that need no injected fault.
type Passive struct {
	// Source names the records (a file name).
	Source string `json:"source"`
	// Lines counts the lines read, Used the exchange and server lines
	// judged, Skipped the lines that were not records.
	Lines   int `json:"lines"`
	Used    int `json:"used"`
	Skipped int `json:"skipped"`
	// Traces are the judged traces, in order of their first request.
	Traces []*PassiveTrace `json:"traces"`
	// Notes say what the records lack (bodies, tools/list), which makes
	// some rules not applicable.
	Notes []string `json:"notes,omitempty"`
}

// PassiveTrace is one client's requests in the records, and the verdicts.
type PassiveTrace struct {
	Trace  *judge.Trace  `json:"-"`
	Checks []judge.Check `json:"checks"`
}

// Verdict is Fail when a check failed.
func (p *PassiveTrace) Verdict() judge.Verdict { return judge.Worst(p.Checks) }

// Failed reports whether any trace failed.
func (p *Passive) Failed() bool {
	for _, t := range p.Traces {
		if t.Verdict() == judge.Fail {
			return true
		}
	}
	return false
}

// FromRecords reads a record file (JSONL: "exchange" lines from mcpdiag
// proxy or mcpdiag call, or "server" lines from mcpdiag serve; other kinds
// are ignored), groups the requests by client and session (server lines by
// endpoint, sessionless records with a call id by call), and applies the passive rules to each group.
//
// The MRTR rules need the request bodies (mcpdiag proxy --record-bodies
// all) or server lines; the unsafe-repeat rule needs the tools/list
// answer (its body) to know which tools are destructive. Without them those
// rules are not applicable, and Notes say so.
func FromRecords(r io.Reader, source string, limits Limits) (*Passive, error) {
	p := &Passive{Source: source}
	type group struct {
		name string
		recs []*record.Record
	}
	groups := map[string]*group{}
	var order []string
	safety := map[string]retry.Safety{}
	bodies, lists := false, false
	conns := &connLanes{}
	probes := 0
	br := bufio.NewReaderSize(r, 64<<10)
	var parsed []*serverLine
	timed := true
	for {
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			p.Lines++
			if l, perr := parseServerLine(bytes.TrimSpace(line)); perr != nil {
				p.Skipped++
			} else {
				l.sum = hashLine(l.raw)
				l.raw = nil // the record is what is judged
				parsed = append(parsed, l)
				timed = timed && !l.rec.Time.IsZero()
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", source, err)
		}
	}
	if timed {
		// The order the lines were written in is not a fact: a record
		// is written when its exchange ends (the matrix writes a run's
		// lines when the run ends), so exchanges that overlapped come in
		// either order, and the traces a client's connections make
		// (connLanes) and their order followed it (repeat10: a
		// tools/list still closing on one connection while the tools/call
		// was refused on another was one trace or two). They are read in
		// the order the requests came, ties broken by the lines' facts.
		slices.SortStableFunc(parsed, compareLines)
	}
	for _, l := range parsed {
		if !use(l, safety, &bodies, &lists, &probes, conns, func(key, name string, r *record.Record) {
			g := groups[key]
			if g == nil {
				g = &group{name: name}
				groups[key] = g
				order = append(order, key)
			}
			g.recs = append(g.recs, r)
		}) {
			p.Skipped++
		}
	}
	for _, k := range order {
		g := groups[k]
		t := judge.NewPassiveTrace(g.name, g.recs, firedExpected)
		if len(t.Exchanges) == 0 {
			continue
		}
		p.Used += len(t.Exchanges)
		t.Safety, t.Limits, t.Passive = safety, limits, true
		p.Traces = append(p.Traces, &PassiveTrace{Trace: t, Checks: judge.Judge(t)})
	}
	if probes > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d request(s) of mcpdiag probe's probes left out: they break the client rules on purpose (mcpdiag probe judges the server's answers to them)", probes))
	}
	if p.Used > 0 && !bodies {
		p.Notes = append(p.Notes, "no request bodies in the records: the MRTR and _meta checks could not read requestState or _meta (record with mcpdiag proxy --record-bodies all)")
	}
	if p.Used > 0 && !lists {
		p.Notes = append(p.Notes, "no tools/list answer in the records: the tools' safety is unknown, so safety.unsafe-repeat could not apply (record with --record-bodies all)")
	}
	return p, nil
}

// compareLines orders two records by the time their request came, then
// by the facts that number requests (the fault endpoint's count, the
// call's sequence), then by their id and content: any order of the same lines
// sorts to one.
func compareLines(a, b *serverLine) int {
	x, y := a.rec, b.rec
	if c := x.Time.Compare(y.Time); c != 0 {
		return c
	}
	if c := cmp.Compare(x.Seq, y.Seq); c != 0 {
		return c
	}
	if x.Fault != nil && y.Fault != nil && x.Fault.Count != nil && y.Fault.Count != nil {
		if c := cmp.Compare(x.Fault.Count.Post, y.Fault.Count.Post); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(x.ID, y.ID); c != 0 {
		return c
	}
	return cmp.Compare(a.sum, b.sum)
}

// hashLine is a line's FNV-1a hash: the last tie-breaker of compareLines.
func hashLine(b []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}

// readLine reads one line of at most MaxRecordLine bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > MaxRecordLine {
			return nil, fmt.Errorf("a line longer than %d bytes", MaxRecordLine)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// use files one record line; it reports false for a line that is not a
// record this reader judges. A fault server's lines (a fault endpoint that
// is a path: mcpdiag serve's) are one trace per endpoint and client (its
// session, else its name and connection: several clients may call one endpoint;
// lines without either, from older servers, one per endpoint); other exchange
// records one per client and session, or per call when they have no
// session but a call id, and else per client, endpoint and connection
// (connLanes).
func use(l *serverLine, safety map[string]retry.Safety, bodies, lists *bool, probes *int, conns *connLanes, add func(key, name string, r *record.Record)) bool {
	r := l.rec
	kind := r.Kind
	if kind == record.KindExchange && r.Fault != nil && r.Fault.Count != nil {
		// An exchange line of the fault server (mcpdiag serve): the
		// endpoint counted the request, so it is judged as the server
		// saw it, per endpoint, like a version-1 server line.
		kind = record.KindServer
	}
	if r.Probe != nil && (kind == record.KindServer || kind == record.KindExchange) {
		// A probe of mcpdiag probe: a request that breaks the rules on
		// purpose, to see how the server answers. The probe's own
		// records say so, and so do the fault server's lines of it (the
		// Mcpdiag-Probe header), which are read as server lines.
		*probes++
		return true
	}
	switch kind {
	case record.KindServer:
		if l.endpoint() == "" || r.HTTPMethod == "" {
			return true // an admin line: read, not a request
		}
		*bodies = true
		ep := conns.instance(l.endpoint(), r)
		key, name := "server "+ep, "endpoint "+ep
		switch {
		case r.Session != "":
			// Within the endpoint, one trace per client, as for the
			// proxy's records: a 2025-11-25 session, else the
			// connection (serve's lines carry it; older ones do not,
			// and stay one trace per endpoint).
			key, name = key+" "+r.Session, name+" ("+r.Session+")"
		case r.Conn != "":
			// The client too, as for the proxy's records: another
			// client's first request after a 503 is not this one's
			// retry, even when it is the same call.
			var label string
			base := key
			if r.Client != "" {
				base, name = base+" "+r.Client, name+" "+r.Client
			}
			key, label = conns.trace(base, r)
			name += " (no session" + label + ")"
		}
		add(key, name, r)
		return true
	case record.KindExchange:
		if a := r.Auth; a != nil && a.Step != client.StepChallenge && a.Step != client.StepRequest {
			// An exchange of the client's authorization chain (metadata,
			// registration, token: mcpdiag call's records): not a
			// request to the MCP server, which the rules judge.
			return true
		}
		if r.RequestBody != nil {
			*bodies = true
		}
		if judge.ReadSafety(r, safety) {
			*lists = true
		}
		name := r.Client
		if name == "" {
			name = "unknown client"
		}
		sess := r.Session
		switch {
		case sess == "" && r.CallID != "":
			// No session (2026-07-28 is sessionless): the call the
			// record belongs to (mcpdiag call, the matrix's built-in
			// client) tells one run from the next.
			sess = "call " + r.CallID
		case sess == "":
			key, label := conns.trace(name+" "+r.URL, r)
			add(key, name+" (no session"+label+")", r)
			return true
		}
		add(name+" "+sess, name+" ("+sess+")", r)
		return true
	case record.KindCall, "dropped", "warning":
		return true
	}
	return false
}

// WriteTable writes the passive verdicts: a line per trace, then each
// failed verdict with its evidence. A trace's name (a client's name and
// version from its initialize), the notes and the evidence come from the
// records: they are rendered with visible.String.
func (p *Passive) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "mcpdiag matrix --from-records %s: %d lines, %d requests judged in %d trace(s)", visible.String(p.Source), p.Lines, p.Used, len(p.Traces))
	if p.Skipped > 0 {
		fmt.Fprintf(&b, ", %d line(s) skipped", p.Skipped)
	}
	b.WriteString("\n\n")
	// The name column is as wide as the longest name (up to
	// maxTraceColumn): traces of one client differ only at their end
	// (the session or connection).
	width := 44
	for _, t := range p.Traces {
		width = max(width, utf8.RuneCountInString(visible.String(t.Trace.Name)))
	}
	width = min(width, maxTraceColumn)
	fmt.Fprintf(&b, "%-*s %5s %5s %4s %s\n", width, "TRACE (CLIENT, SESSION)", "POSTS", "PASS", "N/A", "VERDICT")
	for _, t := range p.Traces {
		pass, na := 0, 0
		var failed []string
		for _, c := range t.Checks {
			switch c.Verdict {
			case judge.Pass:
				pass++
			case judge.NotApplicable:
				na++
			default:
				failed = append(failed, c.Rule)
			}
		}
		v := "pass"
		if len(failed) > 0 {
			v = "FAIL " + strings.Join(failed, ", ")
		}
		fmt.Fprintf(&b, "%s %5d %5d %4d %s\n", fitMiddle(visible.String(t.Trace.Name), width), len(t.Trace.Exchanges), pass, na, v)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(&b, "\nnote: %s", visible.String(n))
	}
	if len(p.Notes) > 0 {
		b.WriteString("\n")
	}
	for _, t := range p.Traces {
		for _, c := range t.Checks {
			if c.Verdict != judge.Fail {
				continue
			}
			rule, _ := judge.RuleByID(c.Rule)
			fmt.Fprintf(&b, "\nFAIL %s: %s\n  evidence: %s\n  rule:     %s\n  cites:    %s\n", visible.String(t.Trace.Name), c.Rule, visible.String(c.Evidence), rule.Title, rule.Cite)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// TraceJSON is the --json object of one passive trace.
type TraceJSON struct {
	Trace   string         `json:"trace"`
	Posts   int            `json:"posts"`
	Verdict judge.Verdict  `json:"verdict"`
	Checks  []CheckJSON    `json:"checks"`
	Calls   []ExchangeJSON `json:"requests"`
}

// WriteJSON writes one JSON object per trace (JSON Lines).
func (p *Passive) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, t := range p.Traces {
		o := TraceJSON{Trace: t.Trace.Name, Posts: len(t.Trace.Exchanges), Verdict: t.Verdict(), Calls: exchangesJSON(t.Trace)}
		for _, c := range t.Checks {
			r, _ := judge.RuleByID(c.Rule)
			o.Checks = append(o.Checks, CheckJSON{Check: c, Title: r.Title, Cite: r.Cite})
		}
		if err := enc.Encode(o); err != nil {
			return err
		}
	}
	return nil
}

// WriteJUnit writes JUnit XML: a testsuite per trace, a testcase per rule.
func (p *Passive) WriteJUnit(w io.Writer) error {
	var suites []junitSuite
	for _, t := range p.Traces {
		var d time.Duration
		if xs := t.Trace.Exchanges; len(xs) > 0 {
			d = xs[len(xs)-1].End.Sub(xs[0].Start)
		}
		suites = append(suites, suite(t.Trace.Name, []junitProperty{{"source", p.Source}}, t.Checks, d, "", ""))
	}
	return writeJUnit(w, "mcpdiag matrix --from-records", 0, suites)
}

// connLanes tells apart the traces of sessionless records without a call
// id (a 2026-07-28 client's requests through mcpdiag proxy): nothing in
// such a request names the client's run, so two runs of one client, or
// two instances of it, would be one trace and the rules would see one
// client repeating the other's calls. The connection a request came on
// (record.Record.Conn) is what tells them apart: a client's requests on
// one connection are one trace. A client also opens a new connection when
// its connection failed (a cut response, a dropped connection) and then
// retries on it, so a connection whose first request comes right after an
// exchange of the same client and endpoint that a client retries
// (retriedElsewhere), and is that request again (the same method, tool and
// arguments: sameRequest), continues that exchange's trace; after any other
// answer, or with another request first, a new connection starts a new
// trace. An input_required answer is followed by the same request again
// (an MRTR round, with the same method, tool and arguments), so it is
// continued as a retried failure is. Another request first is more likely another run of the client
// (a client's long-lived stream, such as subscriptions/listen, is cut when
// it exits, and the next run starts with server/discover): joined to the
// first run's trace, its requests, which repeat the first run's ids, read
// as re-sent requests. Records without a connection (written before Conn existed)
// are one trace per client and endpoint, as they were. An MRTR round that
// echoes a requestState an answer issued joins that answer's trace, on
// whatever connection it came: a client with a pool of connections sends
// the rounds of one call on connections that already carried other
// requests (the TypeScript SDK: its server/discover's), and split by
// connection the rounds read as states never issued, and issued states
// never echoed, differently from one run to the next.
type connLanes struct {
	byConn map[string]string         // client, endpoint and connection → trace key
	issued map[string]string         // client, endpoint and an issued requestState's hash → trace key
	last   map[string]string         // client and endpoint → the trace of its latest record
	failed map[string]*record.Record // client and endpoint → its latest record, when a client retries it
	labels map[string]string         // trace key → its label

	// refused holds, per client and endpoint, its latest request refused
	// with 400, 401, 403 or 404 and refusedKey that request's trace: the
	// request sent again, and an initialize, tools/list or
	// server/discover before it, join that trace on whatever connection
	// they come. safety.4xx-unchanged reads a repeat against what changed
	// in between; a client with a pool of connections (the TypeScript SDK)
	// re-reads tools/list and repeats on connections the pool hands out,
	// and cut by connection the rule failed or passed from one identical
	// run to the next (newuser8: 4 failures in 5 runs of
	// errors.header_mismatch).
	refused    map[string]*record.Record
	refusedKey map[string]string

	// runs counts, per fault endpoint, the first requests (count.post 1)
	// seen: another one is another server's endpoint of the same name
	// (matrix --record appends, and every matrix run names its endpoints
	// alike).
	runs map[string]int
}

// instance returns the fault endpoint ep as the trace names it: ep for the
// first server's requests, "ep [server N]" for the Nth server's, a new one
// beginning at each request its endpoint counted first. Two matrix runs
// appended to one --record file were one trace per endpoint and
// connection, whose second run's first request read as a retry of the
// first run's failed last one: spec.reissue-new-id and
// safety.4xx-unchanged failed ("POST 1 re-sent the request of POST 1 with
// the same id") where each run alone passed (repeat10).
func (c *connLanes) instance(ep string, r *record.Record) string {
	if c.runs == nil {
		c.runs = map[string]int{}
	}
	if f := r.Fault; f != nil && f.Count != nil && f.Count.Post == 1 {
		c.runs[ep]++
	}
	if n := c.runs[ep]; n > 1 {
		return fmt.Sprintf("%s [server %d]", ep, n)
	}
	return ep
}

// trace returns the trace key and the label (", conn ID", or ", URL" without a connection) of r, a
// record of the client and endpoint base.
func (c *connLanes) trace(base string, r *record.Record) (key, label string) {
	if c.byConn == nil {
		c.byConn, c.last, c.failed, c.labels = map[string]string{}, map[string]string{}, map[string]*record.Record{}, map[string]string{}
		c.issued, c.refused, c.refusedKey = map[string]string{}, map[string]*record.Record{}, map[string]string{}
	}
	x := judge.FromRecord(r, "")
	defer func() {
		c.last[base] = key
		c.failed[base] = nil
		if retriedElsewhere(r) {
			c.failed[base] = r
		}
		if r.Conn != "" && r.Method != "" && x.Failed && refusedStatus(r.Status) {
			c.refused[base], c.refusedKey[base] = r, key
		}
		if x.Issued != "" && r.Conn != "" {
			c.issued[base+" "+x.Issued] = key
		}
	}()
	if r.Conn == "" {
		if r.URL == "" {
			return base + " no session", ""
		}
		return base + " no session", ", " + r.URL
	}
	if x.State != "" {
		if key, ok := c.issued[base+" "+x.State]; ok {
			// An MRTR round: the trace of the answer that issued its
			// state, whatever the connection.
			if _, seen := c.byConn[base+" "+r.Conn]; !seen {
				c.byConn[base+" "+r.Conn] = key
			}
			return key, c.labels[key]
		}
	}
	if f := c.refused[base]; f != nil {
		join := false
		switch {
		case sameRequest(f, r):
			c.refused[base], join = nil, true
		case r.Method == "initialize" || r.Method == "tools/list" || r.Method == "server/discover":
			join = true
		}
		if key := c.refusedKey[base]; join {
			if _, seen := c.byConn[base+" "+r.Conn]; !seen {
				c.byConn[base+" "+r.Conn] = key
			}
			return key, c.labels[key]
		}
	}
	if key, ok := c.byConn[base+" "+r.Conn]; ok {
		return key, c.labels[key]
	}
	key = base + " conn " + r.Conn
	if prev, ok := c.last[base]; ok && sameRequest(c.failed[base], r) && prev != base+" no session" {
		key = prev // a new connection after a failure: the client's retry
	}
	c.byConn[base+" "+r.Conn] = key
	if _, ok := c.labels[key]; !ok {
		c.labels[key] = ", conn " + r.Conn
	}
	return key, c.labels[key]
}

// sameRequest reports whether r sends the request of failed again: the
// same method, tool and arguments (its id may differ, and should). Arguments
// not read (no hash: a body over the parse limit) are the same as none.
func sameRequest(failed, r *record.Record) bool {
	return failed != nil && r.Method == failed.Method && r.Tool == failed.Tool && r.ArgsHash == failed.ArgsHash && (r.ArgsHash != "" || r.Method == "")
}

// refusedStatus reports the statuses safety.4xx-unchanged reads as a
// refusal to repeat only after a change.
func refusedStatus(status int) bool {
	return status == http.StatusBadRequest || status == http.StatusUnauthorized || status == http.StatusForbidden ||
		status == http.StatusNotFound
}

// retriedElsewhere reports an exchange after which a client is expected to
// retry, possibly on a new connection: the answer was cut or never came,
// the connection was dropped, or the status is one a client retries.
func retriedElsewhere(r *record.Record) bool {
	if r.Outcome == classify.InputRequired {
		return true // the next round is the same request again
	}
	x := judge.FromRecord(r, "")
	if !x.Failed {
		return false
	}
	switch x.Tag {
	case "cut", "gone", "drop":
		return true
	}
	switch r.Status {
	case http.StatusRequestTimeout, http.StatusTooEarly, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// firedExpected is the outcome the scenarios that fired on r make, from
// the catalogue: the outermost's that the catalogue knows ("" when none
// fired). Only unclassified 2xx lines read it (judge.NewPassiveTrace).
func firedExpected(r *record.Record) classify.Outcome {
	fired := r.Scenario
	if r.Fault != nil {
		fired = r.Fault.FiredString()
	}
	for _, id := range strings.Split(fired, "+") {
		if e, ok := faults.Lookup(id); ok && e.ExpectedOutcome != "" {
			return e.ExpectedOutcome
		}
	}
	return ""
}

// maxTraceColumn is the widest the table's trace column gets.
const maxTraceColumn = 96

// fitMiddle pads s to n runes, or cuts its middle to fit, keeping its
// start (the client) and its end (the session or connection).
func fitMiddle(s string, n int) string {
	rs := []rune(s)
	if len(rs) <= n {
		return s + strings.Repeat(" ", n-len(rs))
	}
	tail := (n - 1) / 2
	return string(rs[:n-1-tail]) + "…" + string(rs[len(rs)-tail:])
}
