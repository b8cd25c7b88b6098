package record

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a bytes.Buffer safe for the writer goroutine of an Async.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestOpenSink: each way to open a sink writes every record, one line each,
// where its name says, counts them, and (a file) keeps what was there.
func TestOpenSink(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stdio bool
		async bool
	}{
		{"file", false, false},
		{"file, async", false, true},
		{"stdout", true, false},
		{"stdout, async", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rec.jsonl")
			if err := os.WriteFile(path, []byte(`{"v":2,"kind":"call","id":"OLD"}`+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			name, out := path, &syncBuffer{}
			if tc.stdio {
				name = "-"
			}
			s, err := OpenSink(name, SinkOptions{Stdout: out, Async: tc.async})
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]string{true: StdoutName, false: path}[tc.stdio]; s.Name() != want {
				t.Errorf("Name %q, want %q", s.Name(), want)
			}
			for i := range 3 {
				if err := s.Write(&Record{Kind: KindExchange, ID: fmt.Sprintf("R%d", i)}); err != nil {
					t.Fatal(err)
				}
			}
			line, _ := (&Encoder{}).Encode(&Record{Kind: KindServer, ID: "L"})
			if err := s.WriteLine(line); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if st := s.Stats(); st.Written != 4 || st.Lost() != 0 {
				t.Errorf("stats %s, want 4 written", st)
			}
			got := out.String()
			if !tc.stdio {
				b, _ := os.ReadFile(path)
				got = string(b)
			}
			var ids []string
			for _, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
				r, err := Decode([]byte(l))
				if err != nil {
					t.Fatalf("line %q: %v", l, err)
				}
				ids = append(ids, r.ID)
			}
			want := "[R0 R1 R2 L]"
			if !tc.stdio {
				want = "[OLD R0 R1 R2 L]" // appended, not truncated
			}
			if fmt.Sprint(ids) != want {
				t.Errorf("ids %v, want %s", ids, want)
			}
		})
	}
}

// TestOpenSinkFileMode: a new record file is 0600 (records can hold tool
// arguments), unless Perm says otherwise; an existing file keeps its mode.
func TestOpenSinkFileMode(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		perm os.FileMode
		want os.FileMode
	}{{0, 0o600}, {0o640, 0o640}} {
		path := filepath.Join(dir, fmt.Sprintf("rec-%o.jsonl", tc.perm))
		s, err := OpenSink(path, SinkOptions{Perm: tc.perm})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if st, _ := os.Stat(path); st.Mode().Perm() != tc.want&^umask(t) {
			t.Errorf("Perm %o: mode %o, want %o", tc.perm, st.Mode().Perm(), tc.want)
		}
	}
}

// umask reads the process's umask by creating a 0777 file.
func umask(t *testing.T) os.FileMode {
	path := filepath.Join(t.TempDir(), "umask")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o777)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	st, _ := os.Stat(path)
	return 0o777 &^ st.Mode().Perm()
}

// TestOpenSinkRefusesWhatItCannotOpen: one error naming the path.
func TestOpenSinkRefusesWhatItCannotOpen(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "no-such-dir", "rec.jsonl")
	if _, err := OpenSink(bad, SinkOptions{}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("OpenSink(%s): %v, want an error naming it", bad, err)
	}
	if _, err := OpenSink("", SinkOptions{}); err == nil {
		t.Error("OpenSink(\"\"): no error")
	}
}

// TestSinkOnAFullDevice: every record is lost, each one named by
// PrintLosses (the first MaxNamedLosses, then one line), the writer goes on
// after each failure, and Close returns a *LostError with the counts.
func TestSinkOnAFullDevice(t *testing.T) {
	const dev = "/dev/full"
	if _, err := os.Stat(dev); err != nil {
		t.Skipf("no %s: %v", dev, err)
	}
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			var out syncBuffer
			s, err := OpenSink(dev, SinkOptions{Async: async, OnLoss: PrintLosses(&out, "test: ")})
			if err != nil {
				t.Fatal(err)
			}
			const n = MaxNamedLosses + 5
			for i := range n {
				err := s.Write(&Record{Kind: KindExchange, ID: fmt.Sprintf("R%d", i), Method: "tools/call"})
				if !async && err == nil {
					t.Errorf("record %d: Write on a full device returned nil", i)
				}
			}
			err = s.Close()
			var lost *LostError
			if !errors.As(err, &lost) || lost.Stats.Failed != n || lost.Stats.Written != 0 {
				t.Fatalf("Close: %v, want a *LostError with %d failed", err, n)
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if len(lines) != MaxNamedLosses+1 {
				t.Fatalf("%d loss lines, want %d:\n%s", len(lines), MaxNamedLosses+1, out.String())
			}
			for i, l := range lines[:MaxNamedLosses] {
				if want := fmt.Sprintf("test: record lost: exchange R%d (tools/call", i); !strings.HasPrefix(l, want) || !strings.Contains(l, "no space left on device") {
					t.Errorf("line %d %q: want %q… naming the cause", i, l, want)
				}
			}
			if last := lines[MaxNamedLosses]; !strings.Contains(last, "later losses are counted, not named") {
				t.Errorf("last line %q", last)
			}
		})
	}
}

// TestSinkUnencodable: a record the encoder refuses is counted and named
// (without Async; with Async the caller of Write gets the error) and the
// next one is written.
func TestSinkUnencodable(t *testing.T) {
	var out syncBuffer
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	s, err := OpenSink(path, SinkOptions{Encoder: Encoder{MaxLineSize: 600}, OnLoss: PrintLosses(&out, "")})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(&Record{Kind: KindExchange, ID: "BIG", Note: strings.Repeat("x", 1000)}); err == nil {
		t.Error("an over-long record was written")
	}
	if err := s.Write(&Record{Kind: KindExchange, ID: "OK"}); err != nil {
		t.Fatal(err)
	}
	var lost *LostError
	if err := s.Close(); !errors.As(err, &lost) || lost.Stats.Unencodable != 1 || lost.Stats.Written != 1 {
		t.Errorf("Close: %v", err)
	}
	if !strings.Contains(out.String(), "record lost: exchange BIG could not be encoded") {
		t.Errorf("loss not named: %q", out.String())
	}
}
