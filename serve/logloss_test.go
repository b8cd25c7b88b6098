package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/serve"
)

// flakyLog is a log file that refuses the lines numbered 2 and 3.
type flakyLog struct {
	mu    sync.Mutex
	n     int
	lines [][]byte
}

func (f *flakyLog) WriteLine(line []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	if f.n == 2 || f.n == 3 {
		return errors.New("no space left on device")
	}
	f.lines = append(f.lines, bytes.Clone(line))
	return nil
}

func (f *flakyLog) Close() error { return nil }

// TestServeLogLossCountedAndNamed: log lines that the log file refuses, and
// records the encoder refuses, are each reported by name and counted; the
// lines after a failure are still written; every request is still answered.
func TestServeLogLossCountedAndNamed(t *testing.T) {
	file := &flakyLog{}
	var mu sync.Mutex
	var losses []record.Loss
	s, base := start(t, serve.Options{
		LogFile: file,
		// Small enough that a request with a large header cannot be
		// encoded, large enough for the others.
		Encoder: &record.Encoder{MaxLineSize: 6000},
		OnLogLoss: func(l record.Loss) {
			mu.Lock()
			losses = append(losses, l)
			mu.Unlock()
		},
	})
	for i := range 4 {
		opts := client.Options{URL: base + serve.MainPath, Timeout: 10 * time.Second}
		if i == 3 {
			opts.Header = map[string][]string{"X-Pad": {strings.Repeat("p", 8000)}}
		}
		c, err := client.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		call, err := c.CallTool(context.Background(), "echo", json.RawMessage(`{"text":"hi"}`))
		if err != nil || call.Outcome != classify.ToolSuccess {
			t.Fatalf("call %d: %v %v", i, err, call.Outcome)
		}
		// A request's log line is written as its handler ends, which may
		// be just after the client has its response: wait for this
		// call's two lines, so that the next call's lines come after
		// them in the file (the file fails its third and fourth write).
		waitLogged(t, s, int64(2*(i+1)))
	}
	st := s.LogStats()
	mu.Lock()
	defer mu.Unlock()
	// 4 calls of 2 POSTs: 6 written, 2 refused by the file, and the last
	// call's 2 refused by the encoder (each replaced by a short line).
	if st != (record.SinkStats{Written: 4, Failed: 2, Unencodable: 2}) {
		t.Errorf("stats %+v", st)
	}
	if len(losses) != 4 {
		t.Fatalf("%d losses reported, want 4: %v", len(losses), losses)
	}
	for i, l := range losses {
		want := record.LostWrite
		if i >= 2 {
			want = record.LostUnencodable
		}
		if l.Reason != want || l.Ref.Kind != record.KindExchange || l.Ref.HTTPMethod != "POST" || l.Ref.Method == "" {
			t.Errorf("loss %d: %+v (%s)", i, l, l)
		}
	}
	file.mu.Lock()
	defer file.mu.Unlock()
	if len(file.lines) != 6 || !bytes.Contains(file.lines[5], []byte("the log line could not be encoded")) {
		t.Errorf("%d lines in the file; the lines after a failure must still be written, and a short line for each record that could not be encoded", len(file.lines))
	}
	var lost *record.LostError
	if err := s.LogLost(); !errors.As(err, &lost) || lost.Stats.Lost() != 4 {
		t.Errorf("LogLost = %v", err)
	}
}

// waitLogged waits until n log records were written or lost.
func waitLogged(t *testing.T, s *serve.Server, n int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if st := s.LogStats(); st.Written+st.Lost() >= n {
			return
		}
	}
	t.Fatalf("%d log records after 10s, want %d: %+v", s.LogStats().Written+s.LogStats().Lost(), n, s.LogStats())
}
