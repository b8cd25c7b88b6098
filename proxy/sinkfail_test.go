package proxy_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// failAfter is an io.Writer that accepts n bytes, then fails every write:
// a pipe whose reader left, a disk that filled up.
type failAfter struct {
	mu   sync.Mutex
	n    int
	seen bytes.Buffer
}

var errFull = errors.New("no space left on device")

func (f *failAfter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen.Len()+len(p) > f.n {
		room := f.n - f.seen.Len()
		f.seen.Write(p[:room])
		return room, errFull
	}
	f.seen.Write(p)
	return len(p), nil
}

// TestProxyRecordSinkFailures: through a real proxy on a real socket, a
// record sink that fails — a writer that fails after N bytes behind the real
// StreamWriter and Async, and the real encoder refusing records too large
// for its line limit — loses the records it must and no other; every loss is
// counted and named, Close reports it, and every response reaches its client
// unchanged.
func TestProxyRecordSinkFailures(t *testing.T) {
	up := serve(t, bothEras(mcpServer(), true))
	const calls = 10
	padded := map[int]bool{2: true, 5: true, 6: true} // requests whose records are too large
	for _, tc := range []struct {
		name string
		sink func(enc record.Encoder) (record.LineWriter, func() []byte)
		enc  record.Encoder
	}{
		{
			name: "writer fails after 3000 bytes",
			sink: func(enc record.Encoder) (record.LineWriter, func() []byte) {
				w := &failAfter{n: 3000}
				return record.NewStreamWriter(w, enc), func() []byte { return w.seen.Bytes() }
			},
		},
		{
			name: "encoder refuses oversized records",
			enc:  record.Encoder{MaxLineSize: 6000},
			sink: func(enc record.Encoder) (record.LineWriter, func() []byte) {
				path := filepath.Join(t.TempDir(), "rec.jsonl")
				fw, err := record.OpenFile(path, record.FileOptions{Encoder: enc})
				if err != nil {
					t.Fatal(err)
				}
				return fw, func() []byte { b, _ := os.ReadFile(path); return b }
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lw, contents := tc.sink(tc.enc)
			var mu sync.Mutex
			var reported []record.Loss
			async := record.NewAsync(lw, record.AsyncOptions{QueueSize: 2, Encoder: tc.enc, OnLoss: func(l record.Loss) {
				mu.Lock()
				reported = append(reported, l)
				mu.Unlock()
			}})
			u, p, _, stop := startProxy(t, up, proxy.Options{Records: async, Bodies: proxy.BodiesNone})
			c := &http.Client{Timeout: 10 * time.Second}
			for i := range calls {
				hdr := modernHeaders("echo")
				if padded[i] {
					hdr["X-Pad"] = strings.Repeat("p", 8000)
				}
				status, _, body, err := post(t, c, u, callBody(i+1, "echo", fmt.Sprintf(`{"text":"call %d"}`, i)), hdr)
				if err != nil || status != http.StatusOK || !bytes.Contains(body, []byte(fmt.Sprintf(`"echo: call %d"`, i))) {
					t.Fatalf("call %d: %d %v %s", i, status, err, body)
				}
			}
			stop()
			cerr := async.Close()
			st := async.Stats()
			var lost *record.LostError
			if !errors.As(cerr, &lost) || st.Lost() == 0 {
				t.Fatalf("Close = %v with stats %+v: the loss is not reported", cerr, st)
			}
			if st.Written+st.Lost() != calls {
				t.Errorf("stats %+v: %d records accounted for, want %d", st, st.Written+st.Lost(), calls)
			}
			lines := bytes.Count(contents(), []byte("\n"))
			if int64(lines) != st.Written {
				t.Errorf("%d complete lines in the sink, stats say %d written", lines, st.Written)
			}
			mu.Lock()
			defer mu.Unlock()
			if tc.enc.MaxLineSize > 0 {
				if st.Unencodable != int64(len(padded)) || st.Written != calls-int64(len(padded)) || p.Stats().RecordErrors != int64(len(padded)) || len(reported) != 0 {
					t.Errorf("stats %+v, proxy %+v, %d reported: want the %d padded records refused at Write", st, p.Stats(), len(reported), len(padded))
				}
				return
			}
			if st.Failed != int64(len(reported)) || st.Failed == 0 || st.Written == 0 {
				t.Errorf("stats %+v, %d reported: want a prefix written and each failure reported", st, len(reported))
			}
			for _, l := range reported {
				if l.Reason != record.LostWrite || !errors.Is(l.Err, errFull) || l.Ref.ID == "" || l.Ref.Method != "tools/call" || l.Ref.Tool != "echo" {
					t.Errorf("loss %+v does not name its exchange and cause", l)
				}
			}
		})
	}
}
