package reliability

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
)

// SignalConfig is one signal experiment: a load of quick calls and long
// streams, and the signals sent to the proxy in the middle of it.
type SignalConfig struct {
	// Name says what is sent ("SIGTERM", "SIGINT twice", "kill -9").
	Name string
	// Signals are sent in turn; the second once the proxy said it is
	// shutting down.
	Signals []syscall.Signal
	// Quick is the number of clients that make short calls in a loop until
	// the proxy is gone; Long the number that each hold a 100 s stream.
	Quick, Long int
	// Before is how many short calls complete before the first signal.
	Before int
	// ShutdownTimeout is the proxy's --shutdown-timeout.
	ShutdownTimeout string
}

// SignalResult is what one signal experiment saw.
type SignalResult struct {
	Config SignalConfig
	// What the clients saw.
	Sent       int // calls made (including those refused)
	Complete   int // responses read to their end
	Cut        int // responses that began and were cut
	NoResponse int // calls that got no response at all (not refused)
	Refused    int // connections refused: the proxy had stopped listening
	// What was written.
	Forwarded     int // tools/call requests in serve's log
	Records       int // complete record lines
	ShutdownNotes int // records that say the proxy's shutdown cut them
	DCNotes       int // records that say the client left
	Unrecorded    int // forwarded calls with no record
	Partial       bool
	Summary       Summary
	HasSummary    bool
	Exit          int
	Truths        Truths
}

// Signal runs one signal experiment. A graceful stop (one SIGTERM or
// SIGINT, or a second one that cuts the wait short) must leave a record
// for every call the upstream received and for every call whose client
// saw a response begin, the streams it cut saying the shutdown cut them,
// and a summary that counts the file; kill -9 leaves what was written,
// every line whole but maybe the last, no duplicates, nothing invented.
func (e *Env) Signal(cfg SignalConfig) (*SignalResult, error) {
	res := &SignalResult{Config: cfg}
	name := strings.NewReplacer(" ", "-", "×", "x").Replace(cfg.Name)
	up, err := e.StartServe("signal-" + name)
	if err != nil {
		return nil, err
	}
	defer up.Kill()
	px, err := e.StartProxy("signal-"+name, up, "", nil, "--shutdown-timeout", cfg.ShutdownTimeout)
	if err != nil {
		return nil, err
	}
	defer px.Kill()

	hc := newClient(cfg.Quick + cfg.Long)
	var (
		mu       sync.Mutex
		results  []Result
		nextID   atomic.Int64
		complete atomic.Int64
		gone     atomic.Bool
		wg       sync.WaitGroup
	)
	add := func(r Result) {
		mu.Lock()
		results = append(results, r)
		mu.Unlock()
	}
	var streaming atomic.Int64
	for range cfg.Long {
		wg.Go(func() {
			add(doStarted(context.Background(), hc, px.Base, int(nextID.Add(1)), kindLong, false, func() { streaming.Add(1) }))
		})
	}
	for range cfg.Quick {
		wg.Go(func() {
			for !gone.Load() {
				r := do(context.Background(), hc, px.Base, int(nextID.Add(1)), kindOK, false)
				add(r)
				if r.Complete {
					complete.Add(1)
				}
				if r.Refused {
					return
				}
			}
		})
	}
	// The first signal when Before calls have completed and every long
	// stream has delivered its first event.
	deadline := time.Now().Add(stopLimit)
	for (complete.Load() < int64(cfg.Before) || streaming.Load() < int64(cfg.Long)) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	_ = px.Signal(cfg.Signals[0])
	if len(cfg.Signals) > 1 {
		if _, err := px.WaitLine(shuttingDown, stopLimit); err != nil {
			return nil, err
		}
		_ = px.Signal(cfg.Signals[1])
	}
	res.Exit, err = px.Wait(stopLimit)
	gone.Store(true)
	if err != nil {
		return nil, err
	}
	// The clients end: the long streams are cut, the quick loops are
	// refused. A kill -9 leaves serve's side of the streams to notice.
	wg.Wait()
	if _, err := up.Stop(); err != nil {
		return nil, err
	}

	recs, err := ReadLines(px.RecordPath)
	if err != nil {
		return nil, err
	}
	logs, err := ReadLines(up.LogPath)
	if err != nil {
		return nil, err
	}
	forwarded := toolCallIDs(logs)
	res.Forwarded, res.Records, res.Partial = len(forwarded), recs.Complete, recs.Partial
	res.Summary, res.HasSummary = px.Summary()
	sent := map[string]Result{}
	for _, r := range results {
		res.Sent++
		sent[strconv.Itoa(r.ID)] = r
		switch {
		case r.Complete:
			res.Complete++
		case r.Headers:
			res.Cut++
		case r.Refused:
			res.Refused++
		default:
			res.NoResponse++
		}
	}
	for id := range forwarded {
		if len(recs.ByID[id]) == 0 {
			res.Unrecorded++
		}
	}
	for _, r := range recs.Records {
		if strings.Contains(r.Note, "the proxy shut down") {
			res.ShutdownNotes++
		}
		if strings.Contains(r.Note, "(DC)") {
			res.DCNotes++
		}
	}

	t := &res.Truths
	t.Check(recs.Bad == 0, "%d record lines do not decode", recs.Bad)
	for id, rs := range recs.ByID {
		t.Check(len(rs) == 1, "call %s has %d records", id, len(rs))
		_, ok := sent[id]
		t.Check(ok, "a record for id %s, which no client sent", id)
		t.Check(forwarded[id] || rs[0].Status == 0 || rs[0].Outcome == classify.NetworkError,
			"call %s is recorded %s %d but serve never received it", id, rs[0].Outcome, rs[0].Status)
	}
	if cfg.Signals[0] == syscall.SIGKILL {
		t.Check(res.Exit == 128+int(syscall.SIGKILL), "exit %d after kill -9, want 137", res.Exit)
		t.Check(!res.HasSummary, "a summary after kill -9: %q", res.Summary.Line)
		return res, nil
	}
	want := 0
	if len(cfg.Signals) > 1 {
		want = 128 + int(cfg.Signals[1])
	}
	t.Check(res.Exit == want, "exit %d, want %d; stderr:\n%s", res.Exit, want, px.Stderr())
	t.Check(!recs.Partial, "the record file ends in a partial line")
	t.Check(res.HasSummary && res.Summary.Exchanges == res.Records && res.Summary.Written == res.Records && res.Summary.Lost == 0,
		"summary %q: want %d exchanges, %d written, 0 lost", res.Summary.Line, res.Records, res.Records)
	t.Check(res.Summary.ClientGone == res.DCNotes, "summary %q counts %d left by the client; the file has %d DC records (and %d cut by the shutdown)",
		res.Summary.Line, res.Summary.ClientGone, res.DCNotes, res.ShutdownNotes)
	t.Check(res.Unrecorded == 0, "%d calls reached serve and have no record", res.Unrecorded)
	var noRecord []string
	for id, r := range sent {
		if r.Headers && len(recs.ByID[id]) == 0 {
			noRecord = append(noRecord, id)
		}
		if r.Kind == kindLong.name && len(recs.ByID[id]) == 1 {
			rec := recs.ByID[id][0]
			t.Check(rec.Outcome == classify.StreamIncomplete && strings.Contains(rec.Note, "the proxy shut down") && !strings.Contains(rec.Note, "(DC)"),
				"long stream %s: recorded %s, note %q: want the shutdown named as the cut", id, rec.Outcome, rec.Note)
		}
		if r.Complete && len(recs.ByID[id]) == 1 {
			t.Check(recs.ByID[id][0].Outcome == classify.ToolSuccess, "call %s: the client read it whole, the record says %s", id, recs.ByID[id][0].Outcome)
		}
	}
	t.Check(len(noRecord) == 0, "%d calls whose client saw a response have no record: %s", len(noRecord), firstN(noRecord, 5))
	// The long streams, and any short call open at the cut.
	t.Check(res.ShutdownNotes >= cfg.Long, "%d records name the shutdown as the cut, want at least the %d long streams", res.ShutdownNotes, cfg.Long)
	return res, nil
}

func (r *SignalResult) String() string {
	s := fmt.Sprintf("%s: clients made %d calls (%d complete, %d cut, %d no response, %d refused); serve received %d; %d records (%d cut by the shutdown, %d DC); %d received calls without a record; exit %d",
		r.Config.Name, r.Sent, r.Complete, r.Cut, r.NoResponse, r.Refused, r.Forwarded, r.Records, r.ShutdownNotes, r.DCNotes, r.Unrecorded, r.Exit)
	if r.HasSummary {
		s += "; " + strings.TrimPrefix(r.Summary.Line, "mcpdiag proxy: ")
	} else {
		s += "; no summary"
	}
	if r.Partial {
		s += "; the file ends in a partial line"
	}
	return s
}
