package reliability

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
)

// LoadConfig sizes the load experiment.
type LoadConfig struct {
	Workers   int // concurrent clients
	PerWorker int // calls each
}

// LoadResult is what the load experiment saw.
type LoadResult struct {
	Sent      int                       // calls the clients made
	ByKind    map[string]int            // of which, per kind
	Forwarded int                       // tools/call requests in serve's log
	Records   int                       // complete record lines
	Outcomes  map[string]map[string]int // kind → outcome → records
	Summary   Summary
	Exit      int
	Proxy     Memory // at the end of the load
	Elapsed   time.Duration
	Truths    Truths
}

// loadKinds is the mix, in turn, with the outcome each must be recorded
// with (and, for the client that leaves, the note).
var loadKinds = []struct {
	k     kind
	want  classify.Outcome
	note  string
	leave bool
}{
	{kindOK, classify.ToolSuccess, "", false},
	{kindToolError, classify.ToolError, "", false},
	{kindReset, classify.NetworkError, "", false},
	{kindCut, classify.StreamIncomplete, "", false},
	{kind503, classify.HTTPError, "", false},
	{kindLeave, classify.StreamIncomplete, "client disconnected (DC)", true},
}

// Load sends Workers × PerWorker tool calls through the proxy to serve:
// healthy ones, tool errors, connections the upstream resets, streams it
// cuts, 503s, and streams whose client leaves after the first event. Then
// SIGTERM. Truths: one record per call, with the outcome of its kind;
// every call serve received has its record; the summary counts what the
// file holds; exit 0.
func (e *Env) Load(cfg LoadConfig) (*LoadResult, error) {
	res := &LoadResult{ByKind: map[string]int{}, Outcomes: map[string]map[string]int{}}
	up, err := e.StartServe("load")
	if err != nil {
		return nil, err
	}
	defer up.Kill()
	px, err := e.StartProxy("load", up, "", nil)
	if err != nil {
		return nil, err
	}
	defer px.Kill()

	hc := newClient(cfg.Workers)
	var mu sync.Mutex
	var results []Result
	start := time.Now()
	var wg sync.WaitGroup
	for w := range cfg.Workers {
		wg.Go(func() {
			for i := range cfg.PerWorker {
				n := w*cfg.PerWorker + i
				lk := loadKinds[n%len(loadKinds)]
				r := do(context.Background(), hc, px.Base, n+1, lk.k, lk.leave)
				mu.Lock()
				results = append(results, r)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	res.Sent = len(results)
	// The proxy notices a client that left when the connection closes;
	// wait for that before the signal, so that no exchange is open.
	if _, err := px.WaitInFlight(func(n int) bool { return n == 0 }, stopLimit); err != nil {
		res.Truths.Check(false, "%v", err)
	}
	res.Proxy = px.Memory()
	_ = px.Signal(syscall.SIGTERM)
	if res.Exit, err = px.Wait(stopLimit); err != nil {
		return nil, err
	}
	if _, err := up.Stop(); err != nil {
		return nil, err
	}

	kindOf := map[string]int{}
	for _, r := range results {
		res.ByKind[r.Kind]++
		kindOf[fmt.Sprint(r.ID)] = indexOfKind(r.Kind)
		// The clients see their faults: a healthy call is complete.
		if r.Kind == kindOK.name || r.Kind == kindToolError.name {
			res.Truths.Check(r.Complete && r.Status == 200, "call %d (%s): client saw %d %v", r.ID, r.Kind, r.Status, r.Err)
		}
	}
	recs, err := ReadLines(px.RecordPath)
	if err != nil {
		return nil, err
	}
	logs, err := ReadLines(up.LogPath)
	if err != nil {
		return nil, err
	}
	res.Records = recs.Complete
	forwarded := toolCallIDs(logs)
	res.Forwarded = len(forwarded)
	res.Summary, _ = px.Summary()
	t := &res.Truths
	t.Check(res.Exit == 0, "proxy exit %d after SIGTERM, want 0; stderr:\n%s", res.Exit, px.Stderr())
	t.Check(recs.Bad == 0 && !recs.Partial, "record file: %d bad lines, partial tail %v", recs.Bad, recs.Partial)
	t.Check(res.Records == res.Sent, "%d records for %d calls sent", res.Records, res.Sent)
	t.Check(res.Summary.Exchanges == res.Sent && res.Summary.Written == res.Records && res.Summary.Lost == 0,
		"summary %q: want %d exchanges, %d written, 0 lost", res.Summary.Line, res.Sent, res.Records)
	t.Check(res.Forwarded == res.Sent, "serve received %d of the %d calls", res.Forwarded, res.Sent)
	for id := range forwarded {
		t.Check(len(recs.ByID[id]) == 1, "call %s reached serve; %d records", id, len(recs.ByID[id]))
	}
	for id, rs := range recs.ByID {
		ki, ok := kindOf[id]
		if !ok {
			t.Check(false, "a record for id %s, which no client sent", id)
			continue
		}
		lk := loadKinds[ki]
		for _, r := range rs {
			o := res.Outcomes[lk.k.name]
			if o == nil {
				o = map[string]int{}
				res.Outcomes[lk.k.name] = o
			}
			o[string(r.Outcome)]++
			t.Check(r.Outcome == lk.want && strings.Contains(r.Note, lk.note),
				"call %s (%s): recorded %s, note %q; want %s %q", id, lk.k.name, r.Outcome, r.Note, lk.want, lk.note)
		}
	}
	return res, nil
}

func indexOfKind(name string) int {
	for i, lk := range loadKinds {
		if lk.k.name == name {
			return i
		}
	}
	return -1
}
