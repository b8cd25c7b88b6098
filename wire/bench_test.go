package wire_test

// Benchmarks of the raw-JSON walkers and the SSE reader, and the tests that
// keep their fast paths honest: wire.Valid must agree with json.Valid on
// every input, and the SSE reader must parse the same events whatever the
// read sizes and whether it reads from bytes or from a reader.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mcpdiag/mcpdiag/wire"
)

// benchValidCorpus holds inputs on which json.Valid and wire.Valid must agree:
// every rule of the grammar, each side of it.
var benchValidCorpus = []string{
	``, ` `, "\t\r\n ", `{}`, `[]`, ` {} `, "\n[]\n", `{`, `}`, `[`, `]`, `{]`, `[}`, `{}}`, `[]]`, `{}{}`, `[][]`,
	`null`, `true`, `false`, `nul`, `tru`, `fals`, `nulll`, `truex`, `falsey`, `NULL`, `True`, `n`, `t`, `f`,
	`0`, `-0`, `1`, `-1`, `01`, `-01`, `00`, `-`, `--1`, `+1`, `1.`, `1.0`, `.5`, `-.5`, `1.5e3`, `1e`, `1e+`, `1e-`, `1E5`,
	`1e+5`, `1e-5`, `1e05`, `0.0001`, `123456789012345678901234567890`, `1.2.3`, `1e2e3`, `0x10`, `1_000`, `Infinity`, `NaN`,
	`-Infinity`, `1 2`, `1,`, `[1,]`, `[,1]`, `[1,,2]`, `[1 2]`, `[1, 2]`, ` [ 1 , 2 ] `, `{"a":1}`, `{"a" : 1 }`,
	`{"a":1,}`, `{,"a":1}`, `{"a":1,"a":2}`, `{"a"}`, `{"a":}`, `{"a"1}`, `{a:1}`, `{'a':1}`, `{1:1}`, `{"a":1 "b":2}`,
	`{"a":[1,{"b":null}],"c":{"d":[]}}`, `[[[[[]]]]]`, `[[[[[]]]]`, `{"a":{"b":{"c":{}}}}`,
	`""`, `"`, `"a`, `"abc"`, `"a"b"`, `"\""`, `"\\"`, `"\/"`, `"\b\f\n\r\t"`, `"\a"`, `"\x41"`, `"\u0041"`, `"\u00e9"`,
	`"\uD834\uDD1E"`, `"\uD800"`, `"\u12"`, `"\u12G4"`, `"\uABCDEF"`, `"\U0041"`, `"\"`, `"\\\"`, `"\\\\"`, `"a\\"b"`,
	"\"\x00\"", "\"\x01\"", "\"\x1f\"", "\"\x20\"", "\"\x7f\"", "\"\x80\"", "\"\xff\"", "\"\xc3\xa9\"", "\"\xed\xa0\x80\"",
	"\"tab\there\"", "\"new\nline\"", "\"0123456789abcdef\x19\"", "\"0123456789abcdef\\\"\"", "\"01234567\"", "\"0123456\"",
	"\"012345678\"", "\"0123456789abcdef0123456789abcde\\\\\"", "\xef\xbb\xbf{}", "{}\x00", "\x00{}", "{}\v", "\f{}",
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}`,
	`[true,false,null,"x",1,-2.5e-3,{},[]]`, `[true false]`, `{"a":true"b":1}`, `[nulltrue]`,
}

// benchNested returns depth arrays (or objects) opened and closed.
func benchNested(depth int, obj bool) string {
	if obj {
		return strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
	}
	return strings.Repeat("[", depth) + strings.Repeat("]", depth)
}

func TestValidMatchesEncodingJSON(t *testing.T) {
	corpus := append([]string(nil), benchValidCorpus...)
	for _, d := range []int{63, 64, 65, 66, 127, 128, 129, 9999, 10000, 10001, 20000} {
		corpus = append(corpus, benchNested(d, false), benchNested(d, true),
			strings.Repeat("[", d/2)+benchNested(d-d/2, true)+strings.Repeat("]", d/2),
			strings.Repeat(`{"a":`, d/2)+benchNested(d-d/2, false)+strings.Repeat("}", d/2))
	}
	// Mismatched closers beyond depth 64, where the kinds live in a slice.
	corpus = append(corpus, strings.Repeat("[", 70)+strings.Repeat("]", 69)+"}",
		strings.Repeat(`{"a":`, 70)+"1"+strings.Repeat("}", 69)+"]")
	// Every prefix of a realistic message, and every single-byte change.
	msg := `{"jsonrpc":"2.0","id":"a\"b","result":{"content":[{"type":"text","text":"l\u00e9 \"q\"\n\t","n":-1.5E+3}],"isError":false,"x":[true,null]}}`
	for i := range len(msg) {
		corpus = append(corpus, msg[:i])
		for _, c := range []byte{'"', '\\', '{', '}', '[', ']', ':', ',', ' ', 'x', '0', '-', 0x01, 0x80} {
			b := []byte(msg)
			b[i] = c
			corpus = append(corpus, string(b))
		}
	}
	for _, s := range corpus {
		if got, want := wire.Valid([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("wire.Valid(%q) = %v, json.Valid = %v", benchAbbrev(s), got, want)
		}
	}
}

func benchAbbrev(s string) string {
	if len(s) > 80 {
		return s[:60] + "..." + s[len(s)-17:]
	}
	return s
}

func FuzzValid(f *testing.F) {
	for _, s := range benchValidCorpus {
		f.Add([]byte(s))
	}
	// Strings with runs longer than the word loop's (scanString hands
	// those to its vectorised search), with and without what ends a run.
	long := strings.Repeat("r", 300)
	for _, s := range []string{`"` + long + `"`, `{"a":"` + long + `\n` + long + `","b":"` + long[:140] + `\"x"}`, `["` + long + "\x1f" + long + `"]`, `"` + long + `\u00e9` + long + `"`, `"` + long} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := wire.Valid(b), json.Valid(b); got != want {
			t.Fatalf("wire.Valid(%q) = %v, json.Valid = %v", b, got, want)
		}
	})
}

// benchBody is a JSON-RPC response carrying a text tool result of about n
// bytes, with the escapes real tool output has.
func benchBody(n int) []byte {
	line := `2026-07-28T12:00:01Z INFO search q=\"mcp error layers\" hits=42 résumé took=12ms\n`
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"`)
	for b.Len() < n-40 {
		b.WriteString(line)
	}
	b.WriteString(`"}],"isError":false}}`)
	return b.Bytes()
}

var benchSinkBool bool

func BenchmarkValid(b *testing.B) {
	for _, n := range []int{128, 1 << 10, 64 << 10, 4 << 20} {
		body := benchBody(n)
		name := fmt.Sprintf("%dB", n)
		b.Run("wire/"+name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				benchSinkBool = wire.Valid(body)
			}
		})
		b.Run("encoding_json/"+name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				benchSinkBool = json.Valid(body)
			}
		})
	}
}

// BenchmarkWalk measures the walkers the classifier runs after validation:
// the envelope members, then every element of result.content.
func BenchmarkWalk(b *testing.B) {
	for _, n := range []int{1 << 10, 64 << 10, 4 << 20} {
		body := benchBody(n)
		b.Run(fmt.Sprintf("%dB", n), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				res, _ := wire.Field(body, "result")
				content, _ := wire.Field(res, "content")
				_ = wire.EachElement(content, func(_ int, v []byte) bool {
					_, ok := wire.Field(v, "text")
					benchSinkBool = ok
					return true
				})
			}
		})
	}
}

// benchSSECorpus holds streams on which every way of reading must agree.
var benchSSECorpus = []string{
	"", "\n", "\r\n", "\r", ":\n\n", "data\n\n", "data:\n\n", "data: x\n\n", "data:x\ndata: y\n\n", "data: x\n",
	"data: x", "data: x\r\n\r\n", "data: x\r\rdata: y\r\r", "data: x\r\n\rdata: y\n\r\n", "\xef\xbb\xbfdata: bom\n\n",
	"\xef\xbb\xbf\xef\xbb\xbfdata: two boms\n\n", "\xef\xbbdata: half bom\n\n", "\xef\xbb\xbf", "\xef\xbb", "ab", "a\n",
	"event: ping\ndata: 1\n\nevent:\ndata: 2\n\n", "id: 7\ndata: a\n\nid\ndata: b\n\nid: x\x00y\ndata: c\n\n",
	"retry: 1000\ndata: a\n\nretry: x\ndata: b\n\nretry: 99999999999999999999999\ndata: c\n\n",
	": keep-alive\n\n: again\n\ndata: {\"jsonrpc\":\"2.0\"}\n\n", "data: a\n\n\n\n\ndata: b\n\n", "field: x\ndata: y\n\n",
	"data: " + strings.Repeat("x", 40000) + "\n\n", "data: " + strings.Repeat("y", 70000) + "\r\ndata: z\r\n\r\n",
	"data: " + strings.Repeat("z", 33000) + "\rid: 1\r\r", ":" + strings.Repeat("c", 50000) + "\ndata: after\n\n",
	"data: " + strings.Repeat("u", 100000), "data: a\n\ndata: " + strings.Repeat("v", 65536) + "\n",
	"id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\nid: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
}

// benchSSETrace reads every event and returns a description of what the reader
// reported, error and counters included. Event lengths are left out unless
// withLength: a CRLF whose LF arrives in a later read than its CR is not
// counted in the event's Length (the reader does not wait for the LF), so
// Length alone depends on how the input was cut into reads.
func benchSSETrace(r *wire.SSEReader, withLength bool) string {
	var b strings.Builder
	for {
		ev, err := r.Next()
		if err != nil {
			var u *wire.UnterminatedEventError
			if errors.As(err, &u) {
				fmt.Fprintf(&b, "unterminated %q at %d; ", u.Data, u.Offset)
			} else {
				fmt.Fprintf(&b, "err %v; ", err)
			}
			break
		}
		fmt.Fprintf(&b, "event %q %q id=%q/%v retry=%d/%v at %d", ev.Type, ev.Data, ev.ID, ev.HasID, ev.Retry, ev.HasRetry, ev.Offset)
		if withLength {
			fmt.Fprintf(&b, "+%d", ev.Length)
		}
		b.WriteString("; ")
	}
	fmt.Fprintf(&b, "comments=%d bytes=%d bom=%v", r.Comments, r.Bytes, r.BOM)
	return b.String()
}

// benchOpaqueReader hides the concrete type of an in-memory reader, so the SSE
// reader uses its full-size buffer.
type benchOpaqueReader struct{ io.Reader }

// TestSSEReaderBufferSizing checks that sizing the read buffer to an
// in-memory body changes nothing: the events, offsets, lengths and counters
// are those of a full-size buffer. It also reads each stream through readers
// that return one byte, or half the buffer, at a time, which must agree on
// everything but Length (see benchSSETrace).
func TestSSEReaderBufferSizing(t *testing.T) {
	for _, s := range benchSSECorpus {
		for _, limit := range []int{0, 1000} {
			want := benchSSETrace(wire.NewSSEReader(benchOpaqueReader{strings.NewReader(s)}, limit), true)
			for name, r := range map[string]io.Reader{
				"bytes.Reader":   bytes.NewReader([]byte(s)),
				"bytes.Buffer":   bytes.NewBufferString(s),
				"strings.Reader": strings.NewReader(s),
			} {
				if got := benchSSETrace(wire.NewSSEReader(r, limit), true); got != want {
					t.Errorf("%s (limit %d) on %q:\n got %s\nwant %s", name, limit, benchAbbrev(s), benchAbbrev(got), benchAbbrev(want))
				}
			}
			want = benchSSETrace(wire.NewSSEReader(benchOpaqueReader{strings.NewReader(s)}, limit), false)
			for name, r := range map[string]io.Reader{
				"one-byte": iotest.OneByteReader(strings.NewReader(s)),
				"half":     iotest.HalfReader(strings.NewReader(s)),
				"data-err": iotest.DataErrReader(strings.NewReader(s)),
			} {
				if limit > 0 && len(s) > limit {
					continue // where a too-large event is noticed depends on the reads
				}
				if got := benchSSETrace(wire.NewSSEReader(r, limit), false); got != want {
					t.Errorf("%s reader (limit %d) on %q:\n got %s\nwant %s", name, limit, benchAbbrev(s), benchAbbrev(got), benchAbbrev(want))
				}
			}
		}
	}
}

// sseBenchStream is n bytes of stream: progress notifications, then one
// response event of about eventSize bytes.
func sseBenchStream(n, eventSize int) []byte {
	var b bytes.Buffer
	for b.Len() < n-eventSize {
		b.WriteString("id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n")
	}
	b.WriteString("data: ")
	b.Write(benchBody(eventSize))
	b.WriteString("\n\n")
	return b.Bytes()
}

func BenchmarkSSEReader(b *testing.B) {
	for _, tc := range []struct {
		name       string
		n, event   int
		oneByteRdr bool
	}{
		{"1KiB", 1 << 10, 700, false},
		{"64KiB", 64 << 10, 60 << 10, false},
		{"4MiB", 4 << 20, 4<<20 - 1<<10, false},
		{"4MiB-small-events", 4 << 20, 1 << 10, false},
	} {
		stream := sseBenchStream(tc.n, tc.event)
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			rd := bytes.NewReader(stream)
			for b.Loop() {
				rd.Reset(stream)
				r := wire.NewSSEReader(rd, 0)
				for {
					if _, err := r.Next(); err != nil {
						break
					}
				}
			}
		})
	}
}

// BenchmarkValidPlainText is Valid on the messages of proxybench's event
// stream: a notifications/message and a tool result whose text is one long
// run of plain bytes (no escape), 16 KiB each, and the same tool result of
// 1 KiB.
func BenchmarkValidPlainText(b *testing.B) {
	for _, tc := range []struct {
		name string
		body string
	}{
		{"notification/16KiB", `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"event 1 ` + strings.Repeat("x", 16<<10-100) + `","level":"info","logger":"proxybench"}}`},
		{"result/16KiB", `{"id":1,"jsonrpc":"2.0","result":{"content":[{"text":"result: ` + strings.Repeat("x", 16<<10-110) + `","type":"text"}],"isError":false,"resultType":"complete"}}`},
		{"result/1KiB", `{"id":1,"jsonrpc":"2.0","result":{"content":[{"text":"result: ` + strings.Repeat("x", 1<<10-110) + `","type":"text"}],"isError":false,"resultType":"complete"}}`},
	} {
		body := []byte(tc.body)
		if !wire.Valid(body) {
			b.Fatalf("%s: not valid", tc.name)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				benchSinkBool = wire.Valid(body)
			}
		})
	}
}

// FuzzValidValue: ValidValue validates one value as json.Valid would at
// its depth in a document, and Valid is ValidValue with nothing but
// whitespace after the value.
func FuzzValidValue(f *testing.F) {
	for _, s := range benchValidCorpus {
		f.Add([]byte(s), uint8(0))
	}
	f.Add([]byte(`[[1]] `), uint8(2))
	f.Add([]byte(`"a"x`), uint8(1))
	f.Add([]byte(` 12,`), uint8(3))
	f.Fuzz(func(t *testing.T, b []byte, d uint8) {
		depth := []int{0, 1, 2, 9998, 9999, 10000}[int(d)%6]
		end := wire.ValidValue(b, 0, depth)
		rest := len(bytes.TrimLeft(b[max(end, 0):], " \t\r\n"))
		if got, want := end >= 0 && rest == 0, wire.Valid(b); depth == 0 && got != want {
			t.Fatalf("ValidValue(%q, 0, 0) = %d, Valid = %v", b, end, want)
		}
		if end < 0 {
			if depth == 0 && json.Valid(b) {
				t.Fatalf("ValidValue(%q, 0, 0) = -1, json.Valid = true", b)
			}
			return
		}
		// The value alone, nested depth deep, is a valid document; and the
		// value ends where a byte that cannot continue it is.
		doc := strings.Repeat("[", depth) + string(b[:end]) + strings.Repeat("]", depth)
		if !json.Valid([]byte(doc)) {
			t.Fatalf("ValidValue(%q, 0, %d) = %d: %q nested %d deep is not valid JSON", b, depth, end, b[:end], depth)
		}
		if rest == 0 && !json.Valid([]byte(strings.Repeat("[", depth)+string(b)+strings.Repeat("]", depth))) {
			t.Fatalf("ValidValue(%q, 0, %d) = %d but the whole is not valid there", b, depth, end)
		}
	})
}

// benchCall is a ~1 KiB 2026-07-28 tools/call, as the proxy's benchmarks
// send.
var benchCall = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("y", 820) + `"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}`)

// BenchmarkParseMessage: the recorder's one parse of a request body.
//
//	go test ./wire -run '^$' -bench ParseMessage -benchmem
func BenchmarkParseMessage(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchCall)))
	for b.Loop() {
		m := wire.ParseMessage(benchCall)
		if m.Tool != "echo" || m.Client != "bench@1" || m.Protocol != "2026-07-28" {
			b.Fatalf("%+v", m)
		}
	}
}

// BenchmarkParseMessageManyMetaKeys: a request whose _meta holds n keys,
// as a hostile client may send. The walk is n log n: before, each key was
// checked against the keys so far, and 30,000 keys took 3.4 s of one
// parse (10,000: 0.37 s), on the proxy's and serve's path of every request.
//
//	go test ./wire -run '^$' -bench ParseMessageManyMetaKeys -benchmem
func BenchmarkParseMessageManyMetaKeys(b *testing.B) {
	for _, n := range []int{1000, 10000, 30000} {
		var body strings.Builder
		body.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{`)
		for i := range n {
			if i > 0 {
				body.WriteByte(',')
			}
			fmt.Fprintf(&body, `"k%06d":1,"k%06d":2`, i, i) // each twice: the repeats go
		}
		body.WriteString(`}}}`)
		in := []byte(body.String())
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if m := wire.ParseMessage(in); len(m.MetaKeys) != n {
					b.Fatalf("%d keys, want %d", len(m.MetaKeys), n)
				}
			}
		})
	}
}
