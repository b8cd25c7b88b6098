package record

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestReaderSkipsMalformedLines(t *testing.T) {
	t.Parallel()
	in := "\xef\xbb\xbf" + `{"v":1,"kind":"exchange","seq":1}` + "\n" +
		`{"v":1,"kind":"exch` + "\n" + // cut
		`{"v":1,"kind":"call","exchanges":2,"someFutureField":{"x":[1]}}` + "\r\n" +
		`[1,2]` + "\n" +
		"\n   \n" +
		`{"postCount":"two"}` + "\n" + // wrong type
		`null` + "\n" +
		`{"v":1,"kind":"exchange","seq":3}` // last line without "\n"
	rd := NewReader(strings.NewReader(in))
	var recs []*Record
	var bad []int64
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		var le *LineError
		if errors.As(err, &le) {
			bad = append(bad, le.Line)
			if !strings.HasPrefix(le.Error(), fmt.Sprintf("line %d: ", le.Line)) {
				t.Errorf("error text %q", le.Error())
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if fmt.Sprint(bad) != "[2 4 7 8]" {
		t.Errorf("bad lines %v, want [2 4 7 8]", bad)
	}
	if len(recs) != 3 || recs[0].Seq != 1 || recs[1].Exchanges != 2 || recs[2].Seq != 3 {
		t.Errorf("records: %+v", recs)
	}
	if rd.Line() != 9 {
		t.Errorf("Line() = %d, want 9", rd.Line())
	}
	if _, err := rd.Next(); err != io.EOF {
		t.Errorf("Next after EOF = %v", err)
	}
}

func TestReaderOversizeLine(t *testing.T) {
	t.Parallel()
	long := `{"note":"` + strings.Repeat("x", 300_000) + `"}`
	in := `{"seq":1}` + "\n" + long + "\n" + `{"seq":3}` + "\n" + long // the last one without "\n"
	rd := NewReader(strings.NewReader(in))
	rd.MaxLineSize = 1000
	var got []string
	for rec, err := range rd.All() {
		var le *LineError
		switch {
		case errors.As(err, &le):
			if !errors.Is(err, ErrLineTooLong) {
				t.Errorf("line %d: %v", le.Line, err)
			}
			got = append(got, fmt.Sprintf("long@%d", le.Line))
		case err != nil:
			t.Fatal(err)
		default:
			got = append(got, fmt.Sprintf("seq%d", rec.Seq))
		}
	}
	if want := "[seq1 long@2 seq3 long@4]"; fmt.Sprint(got) != want {
		t.Errorf("got %v, want %s", got, want)
	}
	// A line exactly at the limit is accepted.
	exact := `{"note":"` + strings.Repeat("y", 1000-len(`{"note":""}`)) + `"}`
	rd = NewReader(strings.NewReader(exact + "\n"))
	rd.MaxLineSize = 1000
	if rec, err := rd.Next(); err != nil || len(rec.Note) != 1000-len(`{"note":""}`) {
		t.Errorf("line at the limit: %v", err)
	}
}

// TestReaderStreamsLargeInput reads many records through a pipe, so the
// input is never in memory as a whole.
func TestReaderStreamsLargeInput(t *testing.T) {
	t.Parallel()
	const n = 20_000
	pr, pw := io.Pipe()
	go func() {
		w := NewStreamWriter(pw, Encoder{})
		for i := range n {
			rec := &Record{ID: fmt.Sprint(i), Kind: KindExchange, Seq: i, HTTPStatuses: []int{200}}
			if err := w.Write(rec); err != nil {
				pw.CloseWithError(err)
				return
			}
			if i == n/2 {
				_, _ = pw.Write([]byte("garbage in the middle\n"))
			}
		}
		pw.Close()
	}()
	rd := NewReader(pr)
	rd.MaxLineSize = 4096
	count, bad := 0, 0
	for rec, err := range rd.All() {
		if err != nil {
			var le *LineError
			if !errors.As(err, &le) || le.Line != n/2+2 {
				t.Fatalf("unexpected error %v", err)
			}
			bad++
			continue
		}
		if rec.Seq != count {
			t.Fatalf("record %d has seq %d", count, rec.Seq)
		}
		count++
	}
	if count != n || bad != 1 {
		t.Errorf("read %d records and %d bad lines, want %d and 1", count, bad, n)
	}
}

type failingReader struct{ n int }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		f.n++
		return copy(p, "{\"seq\":1}\n"), nil
	}
	return 0, errors.New("disk on fire")
}

func TestReaderFatalError(t *testing.T) {
	t.Parallel()
	rd := NewReader(&failingReader{})
	if rec, err := rd.Next(); err != nil || rec.Seq != 1 {
		t.Fatalf("first record: %v", err)
	}
	_, err := rd.Next()
	var le *LineError
	if err == nil || err == io.EOF || errors.As(err, &le) {
		t.Fatalf("Next = %v, want the read error", err)
	}
	if _, err2 := rd.Next(); err2 != err {
		t.Errorf("the fatal error is not sticky: %v", err2)
	}
	n := 0
	for _, err := range NewReader(&failingReader{}).All() {
		n++
		_ = err
	}
	if n != 2 {
		t.Errorf("All yielded %d values, want the record and the error", n)
	}
}

func FuzzReader(f *testing.F) {
	line, _ := Marshal(&Record{Kind: KindExchange, Client: "c", HTTPStatuses: []int{503, 200}})
	f.Add(string(line))
	f.Add(string(line) + "{bad\n" + string(line))
	f.Add("\xef\xbb\xbf{}\r\n\n[]\nnull\n{\"jsonrpc\":{\"id\":\"x\",\"errorCode\":1e400}}")
	f.Add(`{"timings":{"totalMs":-1e308},"resultType":null,"jsonrpc":{"id":[1]}}`)
	f.Fuzz(func(t *testing.T, in string) {
		rd := NewReader(strings.NewReader(in))
		rd.MaxLineSize = 256
		last := int64(0)
		for {
			rec, err := rd.Next()
			if err == io.EOF {
				break
			}
			if rd.Line() <= last {
				t.Fatalf("line number did not advance: %d after %d", rd.Line(), last)
			}
			last = rd.Line()
			if err != nil {
				var le *LineError
				if !errors.As(err, &le) || le.Line != rd.Line() {
					t.Fatalf("error %v is not a LineError for line %d", err, rd.Line())
				}
				continue
			}
			// Whatever was read can be written again.
			if _, err := Marshal(rec); err != nil && !errors.Is(err, ErrRecordTooLarge) {
				t.Fatalf("re-encoding %+v: %v", rec, err)
			}
		}
		if last > int64(strings.Count(in, "\n")+1) {
			t.Fatalf("%d lines reported for %d", last, strings.Count(in, "\n")+1)
		}
	})
}

// TestReaderUnfinishedLastLine: a last line without its newline that is
// no record (a file read while a producer writes it) says so; the same
// cut inside the file, and a whole last line without a newline, do not.
func TestReaderUnfinishedLastLine(t *testing.T) {
	t.Parallel()
	const hint = "is the file still being written?"
	for _, c := range []struct {
		name, in string
		hint     []bool // per malformed line
		records  int
	}{
		{"cut at the end", `{"v":2,"kind":"exchange","seq":1}` + "\n" + `{"v":2,"kind":"exch`, []bool{true}, 1},
		{"cut inside", `{"v":2,"kind":"exch` + "\n" + `{"v":2,"kind":"exchange","seq":1}`, []bool{false}, 1},
		{"whole last line without a newline", `{"v":2,"kind":"exchange","seq":1}`, nil, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			rd := NewReader(strings.NewReader(c.in))
			var hints []bool
			n := 0
			for rec, err := range rd.All() {
				var le *LineError
				switch {
				case errors.As(err, &le):
					hints = append(hints, strings.Contains(le.Error(), hint))
				case err != nil:
					t.Fatal(err)
				case rec != nil:
					n++
				}
			}
			if fmt.Sprint(hints) != fmt.Sprint(c.hint) || n != c.records {
				t.Errorf("malformed lines with the hint %v, %d records; want %v, %d", hints, n, c.hint, c.records)
			}
		})
	}
}
