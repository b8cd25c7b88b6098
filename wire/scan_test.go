package wire

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// scanAll feeds the scanner what r returns and describes the tokens, a
// line's pieces joined into one: "data=\"a\"@0-7" for a field line with
// its span, "end@0-9+data" for a blank line that ends an event. It checks
// the properties every token must have against the input s.
func scanAll(t *testing.T, s string, r io.Reader) []string {
	t.Helper()
	var sc SSEScanner
	var out []string
	var val strings.Builder
	var lastEnd int64 = -1
	buf := make([]byte, 64)
	closed := false
	for {
		tok := sc.Next()
		if tok == nil {
			if closed {
				break
			}
			n, err := r.Read(buf)
			if n > 0 {
				sc.Feed(buf[:n])
			}
			if err != nil {
				sc.Close()
				closed = true
			}
			continue
		}
		if tok.Line < 0 || tok.End > int64(len(s)) || tok.Line > tok.End {
			t.Fatalf("token %+v outside the %d-byte input", tok, len(s))
		}
		if tok.Kind == SSEEnd {
			end := tok.End
			if s[end-1] == '\r' && end < int64(len(s)) && s[end] == '\n' {
				end++ // the LF of a split CRLF arrives later
			}
			out = append(out, fmt.Sprintf("end@%d-%d+%v", tok.Line, end, tok.HasData))
			continue
		}
		if v := string(tok.Value); s[tok.End-int64(len(v)):tok.End] != v {
			t.Fatalf("piece %q does not end at %d in %q", v, tok.End, s)
		}
		if tok.First != (lastEnd < 0) || !tok.First && int64(len(tok.Value)) != tok.End-lastEnd {
			t.Fatalf("piece %+v does not follow the last one (end %d)", tok, lastEnd)
		}
		val.Write(tok.Value)
		lastEnd = tok.End
		if !tok.Last {
			continue
		}
		kind := [...]string{FieldOther: "other", FieldData: "data", FieldEvent: "event", FieldID: "id", FieldRetry: "retry"}[tok.Field]
		if tok.Kind == SSEComment {
			kind = "comment"
		}
		cut := ""
		if tok.Unterminated {
			cut = " cut"
		}
		out = append(out, fmt.Sprintf("%s=%q@%d-%d%s", kind, val.String(), tok.Line, tok.End, cut))
		val.Reset()
		lastEnd = -1
	}
	if sc.Offset() != int64(len(s)) {
		t.Fatalf("scanned %d of %d bytes", sc.Offset(), len(s))
	}
	return out
}

// TestSSEScanner: the tokens of each case, the same whatever the chunking
// (whole, one byte at a time, 3-byte and random reads), so a CRLF, a BOM
// or the space after a colon split across Feeds are what they are whole.
func TestSSEScanner(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"LF", "data: a\n\n", []string{`data="a"@0-7`, "end@0-9+true"}},
		{"CRLF", "data: a\r\n\r\n", []string{`data="a"@0-7`, "end@0-11+true"}},
		{"CR only", "data: a\r\rdata: b\r\r", []string{`data="a"@0-7`, "end@0-9+true", `data="b"@9-16`, "end@9-18+true"}},
		{"CR then LF is one line end", "data: a\r\ndata: b\r\n\n", []string{`data="a"@0-7`, `data="b"@9-16`, "end@0-19+true"}},
		{"BOM", "\xef\xbb\xbfdata:x\n\n", []string{`data="x"@3-9`, "end@3-11+true"}},
		{"second BOM is part of the name", "\xef\xbb\xbf\xef\xbb\xbfdata:x\n\n", []string{`other="x"@3-12`, "end@3-14+false"}},
		{"half a BOM starts the line", "\xef\xbbdata:x\n\n", []string{`other="x"@0-8`, "end@0-10+false"}},
		{"one space removed", "data:  x\n\n", []string{`data=" x"@0-8`, "end@0-10+true"}},
		{"no colon", "data\nid\n\n", []string{`data=""@0-4`, `id=""@5-7`, "end@0-9+true"}},
		{"fields", "event: e\nid: 1\nretry: 5\nfoo: bar\n\n", []string{`event="e"@0-8`, `id="1"@9-14`, `retry="5"@15-23`, `other="bar"@24-32`, "end@0-34+false"}},
		{"name longer than any field", "datadata: x\n\n", []string{`other="x"@0-11`, "end@0-13+false"}},
		{"comment", ": ping\n\n", []string{`comment=" ping"@0-6`, "end@0-8+false"}},
		{"blank lines that end nothing", "\n\r\n\rdata: a\n\n\n\n", []string{`data="a"@4-11`, "end@4-13+true"}},
		{"cut inside a line", "data: a\n\ndata: b", []string{`data="a"@0-7`, "end@0-9+true", `data="b"@9-16 cut`}},
		{"cut after the colon", "data:", []string{`data=""@0-5 cut`}},
		{"cut inside the name", "dat", []string{`other=""@0-3 cut`}},
		{"cut inside a BOM", "\xef\xbb", []string{`other=""@0-2 cut`}},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		for rname, mk := range chunkings(5) {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				got := scanAll(t, tt.in, mk(tt.in))
				if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
					t.Fatalf("tokens\n got %q\nwant %q", got, tt.want)
				}
			})
		}
	}
}

// TestSSEScannerSplitCRLF: a blank line's CR at the end of one Feed and
// its LF at the start of the next are one line end: the event ends at the
// CR (End stops there), and the LF starts no line of its own (no second,
// empty line that would end a block or count as a line of the next event).
func TestSSEScannerSplitCRLF(t *testing.T) {
	var sc SSEScanner
	var got []string
	for _, chunk := range []string{"data: a\r", "\n\r", "\ndata: b\r", "\n\r", "\n"} {
		sc.Feed([]byte(chunk))
		for {
			tok := sc.Next()
			if tok == nil {
				break
			}
			got = append(got, fmt.Sprintf("%d %q %d-%d", tok.Kind, tok.Value, tok.Line, tok.End))
		}
	}
	want := []string{`1 "a" 0-7`, `3 "" 0-10`, `1 "b" 11-18`, `3 "" 11-21`}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) || sc.Offset() != 22 {
		t.Fatalf("tokens %q offset %d, want %q offset 22", got, sc.Offset(), want)
	}
}

// FuzzSSEScanner: on any input, every token lies inside it, a piece's
// value is the input's bytes just before its End, pieces of a line follow
// each other, the whole input is scanned, and the tokens (a line's pieces
// joined) are the same however the input is cut into Feeds.
func FuzzSSEScanner(f *testing.F) {
	for _, s := range diffCorpus {
		f.Add(s, uint64(1))
	}
	f.Fuzz(func(t *testing.T, s string, seed uint64) {
		var ref []string
		for name, mk := range chunkings(seed) {
			got := scanAll(t, s, mk(s))
			if ref == nil {
				ref = got
			} else if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", ref) {
				t.Fatalf("%s feeds differ on %q:\n%q\n%q", name, s, got, ref)
			}
		}
	})
}
