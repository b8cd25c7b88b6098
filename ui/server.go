package ui

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/loopback"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/report"
	"github.com/mcpdiag/mcpdiag/wire"
)

// DefaultMaxRecords is how many records a Server keeps for the pages that
// open later; past it the oldest are forgotten (and the pages told).
const DefaultMaxRecords = 200_000

// ServerOptions configure a live page.
type ServerOptions struct {
	// Title is the page's title ("mcpdiag ui" when empty).
	Title string
	// Token is the secret path segment of every URL; "" draws 128 random
	// bits. A request without it gets 404.
	Token string
	// MaxRecords bounds the records kept in memory (DefaultMaxRecords when
	// 0).
	MaxRecords int
	// Heartbeat is the interval of the event stream's keep-alive comment
	// (15 s when 0).
	Heartbeat time.Duration
	// Encoder encodes (and so redacts) every record before it is kept: a
	// producer's records reach the page as they would reach its record
	// file. Its zero value is the record package's default.
	Encoder record.Encoder
}

// Server serves the live page and its event stream under /u/TOKEN/, to
// direct loopback clients only (the rule of serve's admin API:
// loopback.CheckDirect, so a DNS-rebinding page or a proxy in front is
// refused). Records reach it by Publish or by Tail over a record file; each
// page receives every record kept, then each new one, as server-sent events
// (event "record", id = its position, so a reconnecting page resumes with
// Last-Event-ID). It is a record.Writer, so a producer can hand it its
// records as it writes them.
type Server struct {
	opts  ServerOptions
	token string

	mu     sync.Mutex
	recs   []event       // each record (and matrix case) kept
	base   int64         // event id of recs[0] minus 1
	notify chan struct{} // closed (and replaced) when a record or a note arrives
	notes  []string
	closed bool
	// published counts the records published (kept or not).
	published int64
	// links counts the records published by Publish and WriteLine (one
	// source) as mcpdiag report does, for the era fallbacks and the
	// answered challenges it links at read time (report.Accumulator's
	// TakeEraFallbacks and TakeChallengeLinks), which the page is told as
	// "fallback" and "challenge" events. Each Tail links the records of
	// its file with an Accumulator of its own, as mcpdiag report settles
	// each file apart (report.InputEnder): no record of one source is
	// linked to a record of another.
	links *report.Accumulator
}

// event is one server-sent event: a record, a matrix case, an era
// fallback (the JSON string of an exchange record's ID that mcpdiag report
// counts as one, see report.Accumulator.TakeEraFallbacks) or an answered
// challenge (a report.ChallengeLink's JSON, see
// report.Accumulator.TakeChallengeLinks).
type event struct {
	name string // "record", "case", "fallback", "challenge" or "resume" (a report.ResumeLink's JSON, see report.Accumulator.TakeResumeLinks)
	data []byte // one line of JSON
}

// NewServer returns a Server; it listens nowhere until its handler is
// served.
func NewServer(opts ServerOptions) (*Server, error) {
	if opts.Title == "" {
		opts.Title = "mcpdiag ui"
	}
	if opts.MaxRecords <= 0 {
		opts.MaxRecords = DefaultMaxRecords
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 15 * time.Second
	}
	tok := opts.Token
	if tok == "" {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("ui: token: %w", err)
		}
		tok = hex.EncodeToString(b)
	}
	if strings.ContainsAny(tok, "/?#% ") {
		return nil, errors.New("ui: the token must not hold /, ?, #, % or spaces")
	}
	return &Server{opts: opts, token: tok, notify: make(chan struct{}), links: newLinks()}, nil
}

// newLinks returns the Accumulator that links one source's records.
func newLinks() *report.Accumulator {
	return report.New(report.Options{KeepLinks: true})
}

// Path returns the page's path, "/u/TOKEN/".
func (s *Server) Path() string { return "/u/" + s.token + "/" }

// Publish adds one record and pushes it to every open page. The record is
// encoded first, redacted as in a record file (ServerOptions.Encoder); r
// is not modified or kept. The records published (by Publish and
// WriteLine) are one source: linked with each other, never with those of
// a file Tail reads.
func (s *Server) Publish(r *record.Record) error { return s.publish(r, s.links) }

// publish is Publish linking r among the records of links' source.
func (s *Server) publish(r *record.Record, links *report.Accumulator) error {
	b, err := s.opts.Encoder.Encode(r)
	if err != nil {
		return fmt.Errorf("ui: record %s: %w", r.ID, err)
	}
	line := bytes.TrimRight(b, "\n")
	// The era fallbacks are linked from the line as the page gets it:
	// the encoder may have filled in the ID and the time.
	rec, err := record.Decode(line)
	if err != nil {
		rec = nil
	}
	return s.push(event{"record", line}, rec, links)
}

// PublishCase adds one case of a matrix (a line of mcpdiag matrix --json,
// matrix.CaseJSON) to the page's grid; a case published again replaces its
// cell.
func (s *Server) PublishCase(jsonLine []byte) error {
	var c struct {
		Case    *string `json:"case"`
		Verdict *string `json:"verdict"`
	}
	line := bytes.TrimSpace(jsonLine)
	if err := json.Unmarshal(line, &c); err != nil || c.Case == nil || c.Verdict == nil {
		return errors.New("ui: not a matrix case (a line of mcpdiag matrix --json)")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, line); err != nil {
		return err
	}
	return s.push(event{"case", buf.Bytes()}, nil, nil)
}

// push keeps e for every page and wakes them. rec is e's record, when e is
// one (nil when it could not be decoded): it is counted in links, its
// source's Accumulator, for the era fallbacks and the answered challenges,
// and each one it settles is kept after it as a "fallback" or "challenge"
// event.
func (s *Server) push(e event, rec *record.Record, links *report.Accumulator) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return record.ErrClosed
	}
	s.keep(e)
	if e.name == "record" {
		s.published++
	}
	if rec != nil {
		links.Add(rec)
		s.keepLinks(links)
	}
	s.wake()
	return nil
}

// keepLinks keeps the era fallbacks and the answered challenges links
// settled since it was last asked, as "fallback" and "challenge" events.
func (s *Server) keepLinks(links *report.Accumulator) {
	for _, id := range links.TakeEraFallbacks() {
		b, err := json.Marshal(id)
		if err != nil {
			continue // a string always marshals
		}
		s.keep(event{"fallback", b})
	}
	for _, l := range links.TakeChallengeLinks() {
		b, err := json.Marshal(l)
		if err != nil {
			continue // strings and a number always marshal
		}
		s.keep(event{"challenge", b})
	}
	for _, l := range links.TakeResumeLinks() {
		b, err := json.Marshal(l)
		if err != nil {
			continue // strings always marshal
		}
		s.keep(event{"resume", b})
	}
}

// endInput ends links' source as mcpdiag report ends a file
// (report.InputEnder): what it still holds is settled (a failure), and no
// later record is linked to an earlier one.
func (s *Server) endInput(links *report.Accumulator) {
	s.mu.Lock()
	defer s.mu.Unlock()
	links.EndInput()
	s.keepLinks(links)
	s.wake()
}

// keep appends e to the events kept, forgetting the oldest past
// MaxRecords.
func (s *Server) keep(e event) {
	s.recs = append(s.recs, e)
	if over := len(s.recs) - s.opts.MaxRecords; over > 0 {
		s.recs = append(s.recs[:0:0], s.recs[over:]...)
		s.base += int64(over)
	}
}

// Write is Publish, so that a Server is a record.Writer.
func (s *Server) Write(r *record.Record) error { return s.Publish(r) }

// WriteLine publishes one record line as a producer encoded it (a
// record.LineWriter's input, such as mcpdiag serve's log line, or the
// lines a record.Sink wrote, through SinkOptions.Tee): the bytes are kept
// as they are, not encoded again. A line that is not one JSON object is
// refused.
func (s *Server) WriteLine(line []byte) error {
	line = bytes.TrimRight(line, "\r\n")
	if len(line) == 0 || line[0] != '{' || bytes.IndexByte(line, '\n') >= 0 || !wire.Valid(line) {
		return errors.New("ui: not a record line (one JSON object)")
	}
	// Decoded for the era fallbacks only: the page gets the bytes as
	// they are. A line that is no record (a serve log line of another
	// shape) is still shown.
	rec, err := record.Decode(line)
	if err != nil {
		rec = nil
	}
	return s.push(event{"record", append([]byte(nil), line...)}, rec, s.links)
}

// Close ends every open event stream; later records are refused.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		s.wake()
	}
	return nil
}

// Note shows a line on every page's status bar (a malformed line skipped,
// a file truncated).
func (s *Server) Note(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = append(s.notes, msg)
	if len(s.notes) > 100 {
		s.notes = s.notes[len(s.notes)-100:]
	}
	s.wake()
}

// Records returns how many records were published (kept or not); matrix
// cases and era fallback marks are not records.
func (s *Server) Records() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.published
}

func (s *Server) wake() {
	close(s.notify)
	s.notify = make(chan struct{})
}

// ServeHTTP serves the page (GET /u/TOKEN/) and its event stream (GET
// /u/TOKEN/events).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if ok, why := loopback.CheckDirect(r); !ok {
		http.Error(w, "mcpdiag ui answers only direct loopback clients: "+why, http.StatusForbidden)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/u/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	tok, sub, slash := strings.Cut(rest, "/")
	if subtle.ConstantTimeCompare([]byte(tok), []byte(s.token)) != 1 {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	switch {
	case !slash:
		http.Redirect(w, r, s.Path(), http.StatusFound)
	case sub == "":
		s.page(w)
	case sub == "events":
		s.events(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) page(w http.ResponseWriter) {
	var buf bytes.Buffer
	if err := writeHead(&buf, pageConfig{Mode: "live", Title: s.opts.Title, Events: "events", Meta: newMeta()}); err == nil {
		err = writeTail(&buf, nil, nil, nil, nil, nil)
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", contentSecurityPolicy(true)+"; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	_, _ = w.Write(buf.Bytes())
}

func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	next := int64(1)
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			next = n + 1
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: 1000\n\n")
	fl.Flush()
	notesSent := 0
	beat := time.NewTicker(s.opts.Heartbeat)
	defer beat.Stop()
	var buf bytes.Buffer
	for {
		s.mu.Lock()
		if next <= s.base {
			fmt.Fprintf(&buf, "event: note\ndata: %d older records were forgotten (the server keeps %d)\n\n", s.base-next+1, s.opts.MaxRecords)
			next = s.base + 1
		}
		for i := next - s.base - 1; i < int64(len(s.recs)); i++ {
			fmt.Fprintf(&buf, "id: %d\nevent: %s\ndata: %s\n\n", s.base+i+1, s.recs[i].name, s.recs[i].data)
			next = s.base + i + 2
			if buf.Len() > 1<<20 {
				break
			}
		}
		if notesSent > len(s.notes) {
			notesSent = 0
		}
		for _, n := range s.notes[notesSent:] {
			fmt.Fprintf(&buf, "event: note\ndata: %s\n\n", strings.ReplaceAll(n, "\n", " "))
		}
		notesSent = len(s.notes)
		wait, closed := s.notify, s.closed
		more := next-s.base-1 < int64(len(s.recs))
		s.mu.Unlock()
		if buf.Len() > 0 {
			if _, err := w.Write(buf.Bytes()); err != nil {
				return
			}
			buf.Reset()
			fl.Flush()
		}
		if more {
			continue
		}
		if closed {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-wait:
		case <-beat.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

// Tail publishes the records of the file at path, from its start, and then
// each line appended to it, until ctx ends: it checks for growth every
// poll (50 ms when 0). A line is read when its newline is there, so a line
// being written is never read half. A malformed line is skipped with a
// note; a file that shrinks, or is replaced (rotated), is read again from
// its start, with a note. The file is one source: its records are linked
// with each other only (never with another file's or the published ones),
// and a file read again from its start is a new input, as mcpdiag report
// settles each file it reads apart. Tail returns ctx's error, or the error
// that made the file unreadable.
func (s *Server) Tail(ctx context.Context, path string, poll time.Duration) error {
	if poll <= 0 {
		poll = 50 * time.Millisecond
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { f.Close() }()
	links := newLinks()
	var (
		pending []byte
		line    int64
		bad     int
		off     int64
		chunk   = make([]byte, 256<<10)
	)
	reopen := func(why string) error {
		nf, err := os.Open(path)
		if err != nil {
			return err
		}
		f.Close()
		f, pending, line, off = nf, pending[:0], 0, 0
		s.endInput(links)
		s.Note(fmt.Sprintf("%s %s: reading it again from its start", path, why))
		return nil
	}
	for {
		n, err := f.Read(chunk)
		if n > 0 {
			off += int64(n)
			pending = append(pending, chunk[:n]...)
			for {
				i := bytes.IndexByte(pending, '\n')
				if i < 0 {
					break
				}
				l := pending[:i]
				line++
				if len(bytes.TrimSpace(l)) > 0 {
					rec, derr := record.Decode(l)
					if derr != nil || rec.Kind == "" {
						// A line of matrix --json is a case of the grid.
						if s.PublishCase(l) == nil {
							pending = pending[i+1:]
							continue
						}
					}
					if derr != nil {
						bad++
						if bad <= 20 {
							s.Note(fmt.Sprintf("%s:%d: skipped malformed line: %v", path, line, derr))
						}
					} else if perr := s.publish(rec, links); perr != nil {
						return perr
					}
				}
				pending = pending[i+1:]
			}
			if len(pending) > record.DefaultMaxLineSize {
				s.Note(fmt.Sprintf("%s:%d: skipped a line longer than %d bytes", path, line+1, record.DefaultMaxLineSize))
				pending = pending[:0]
			}
			pending = append([]byte(nil), pending...)
			continue
		}
		if err != nil && err != io.EOF {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
		st, err := os.Stat(path)
		cur, ferr := f.Stat()
		switch {
		case err != nil:
			// Removed: keep reading what is open until it comes back.
		case ferr == nil && !os.SameFile(st, cur):
			if err := reopen("was replaced"); err != nil {
				return err
			}
		case st.Size() < off:
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return err
			}
			pending, line, off = pending[:0], 0, 0
			s.endInput(links)
			s.Note(path + " was truncated: reading it again from its start")
		}
	}
}
