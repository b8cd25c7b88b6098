package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
	"testing"
)

func TestReadRawResponse(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		wantStatus int
		wantBody   string
		wantNotes  int
		wantErr    string
	}{
		{"HTTP/1.1 CRLF", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{}", 200, "{}", 0, ""},
		{"HTTP/2 LF", "HTTP/2 404\ncontent-type: text/plain\n\nnope", 404, "nope", 0, ""},
		{"interim 100 skipped", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\n\r\nx", 201, "x", 1, ""},
		{"CONNECT preamble skipped", "HTTP/1.1 200 Connection established\r\n\r\nHTTP/2 503\r\n\r\n", 503, "", 1, ""},
		{"chunked decoded", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", 200, "abcde", 0, ""},
		{"chunked header over decoded body", "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n{\"a\":1}", 200, "{\"a\":1}", 1, ""},
		{"no headers, no body", "HTTP/1.1 204 No Content\r\n\r\n", 204, "", 0, ""},
		{"leading blank lines", "\r\n\nHTTP/1.1 200 OK\n\nbody", 200, "body", 0, ""},
		{"not HTTP", "{\"jsonrpc\":\"2.0\"}", 0, "", 0, "not a raw HTTP response"},
		{"empty", "", 0, "", 0, "empty"},
		{"bad status", "HTTP/1.1 2000 OK\r\n\r\n", 0, "", 0, "malformed status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ReadRawResponse(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(r.Body)
			if r.Status != tt.wantStatus || string(body) != tt.wantBody || len(r.Notes) != tt.wantNotes {
				t.Fatalf("status %d body %q notes %v", r.Status, body, r.Notes)
			}
		})
	}
	_, err := ReadRawResponse(strings.NewReader("hello"))
	if !errors.Is(err, ErrNotHTTPResponse) {
		t.Fatalf("err %v is not ErrNotHTTPResponse", err)
	}
}

// rawResult is the comparable outcome of ReadRawResponseLimit.
func rawResult(r io.Reader, limit int) string {
	resp, err := ReadRawResponseLimit(r, limit)
	if err != nil {
		return "error: " + err.Error()
	}
	body, berr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return fmt.Sprintf("%s %d %v %q body %q %v", resp.Proto, resp.Status, resp.Header, resp.Notes, body, berr)
}

// FuzzReadRawResponse, the header block reader: arbitrary captures never
// panic; a parsed response has a status in range, written in its status
// line; the chunking of the input is invisible (one read, 1-byte reads,
// seeded random chunks); and the head cap only ever refuses: with a small
// cap the result is the uncapped one or ErrHeaderTooLarge, and an input no
// longer than the cap is never refused.
func FuzzReadRawResponse(f *testing.F) {
	f.Add("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{}", uint64(1))
	f.Add("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", uint64(2))
	f.Add("HTTP/2 100\n\nHTTP/2 204\n\n", uint64(3))
	f.Add("\r\n\nHTTP/1.1 200 Connection established\r\n\r\nHTTP/1.1 503 x\r\nRetry-After: 1\r\n X-Fold: y\r\n\r\nbody", uint64(4))
	f.Add("HTTP/1.1 200 OK\r\nX-Big: "+strings.Repeat("a", 200)+"\r\n\r\n{}", uint64(5))
	f.Fuzz(func(t *testing.T, s string, seed uint64) {
		const small = 96
		full := rawResult(strings.NewReader(s), 0)
		for name, mk := range chunkings(seed) {
			if got := rawResult(mk(s), 0); got != full {
				t.Fatalf("%s reads differ:\n%s\n%s", name, got, full)
			}
		}
		capped := rawResult(strings.NewReader(s), small)
		refused := strings.HasPrefix(capped, "error: "+ErrHeaderTooLarge.Error())
		if !refused && capped != full {
			t.Fatalf("the cap changed the result:\n%s\n%s", capped, full)
		}
		if refused && len(s) <= small {
			t.Fatalf("a %d-byte input refused by a %d-byte cap", len(s), small)
		}
		r, err := ReadRawResponse(strings.NewReader(s))
		if err != nil {
			return
		}
		if r.Status < 100 || r.Status > 999 || !strings.Contains(s, strconv.Itoa(r.Status)) {
			t.Fatalf("status %d", r.Status)
		}
	})
}

func TestIDEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"7", "7", true}, {"7", `"7"`, false}, {`"a"`, `"a"`, true}, {`"\u0061"`, `"a"`, true},
		{"7", "7.0", true}, {"1e1", "10", true}, {"7", "8", false}, {`"7 "`, `"7"`, false},
		// Numbers compare by exact value, not as float64: a server that
		// decodes ids into a double answers 2^53+1 with 2^53.
		{"9007199254740993", "9007199254740992", false},
		{"12345678901234567890123", "-9223372036854775808", false},
		{"12345678901234567890123", "12345678901234567890122", false},
		{"123456789012345678901230", "12345678901234567890123e1", true},
		{"100", "1e2", true}, {"100", "1E+2", true}, {"0.1e1", "1", true}, {"1.50", "1.5", true},
		{"0", "-0", true}, {"0", "0.0e5", true}, {"-1", "1", false}, {"1e400", "1e401", false},
		{"1e400", "10e399", true}, {"0.000001", "1e-6", true}, {"1e-400", "0", false},
	}
	for _, tt := range tests {
		a, err := ParseID(tt.a)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ParseID(tt.b)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Equal(b); got != tt.want {
			t.Errorf("%s == %s: %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
	for _, bad := range []string{"", "null", "true", "{}", "[1]", "abc"} {
		if _, err := ParseID(bad); err == nil {
			t.Errorf("ParseID(%q) accepted", bad)
		}
	}
	if !bytes.Equal(IntID(3).Raw(), []byte("3")) || StringID("x").String() != `"x"` {
		t.Fatal("constructors")
	}
}

func TestEachFieldAndElement(t *testing.T) {
	obj := []byte(` { "a" : [1, {"x":"}"}, "\"]"] , "b\u0063":true,"d":{} } `)
	var keys []string
	if err := EachField(obj, func(k, v []byte) bool { keys = append(keys, string(k)+"="+string(v)); return true }); err != nil {
		t.Fatal(err)
	}
	want := `"a"=[1, {"x":"}"}, "\"]"]|"b\u0063"=true|"d"={}`
	if strings.Join(keys, "|") != want {
		t.Fatalf("fields %q", keys)
	}
	if !KeyIs([]byte(`"b\u0063"`), "bc") {
		t.Fatal("escaped key")
	}
	var n int
	_ = EachElement([]byte(`[1, {"x":"}"}, "\"]"]`), func(i int, v []byte) bool { n++; return true })
	if n != 3 {
		t.Fatalf("%d elements", n)
	}
	for _, bad := range []string{`{"a" 1}`, `{"a":1,}`, `[1 2]`, `{"a":"x`} {
		err1 := EachField([]byte(bad), func(k, v []byte) bool { return true })
		err2 := EachElement([]byte(bad), func(int, []byte) bool { return true })
		if err1 == nil && err2 == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// FuzzIDEqualNumbers checks that two numeric ids are equal exactly when
// their values are (math/big's reading of the text as the oracle), and that
// equality is symmetric.
func FuzzIDEqualNumbers(f *testing.F) {
	for _, s := range [][2]string{{"9007199254740993", "9007199254740992"}, {"1e2", "100"}, {"-0", "0"}, {"1.50", "15e-1"}, {"7", "7.0"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 64 || len(b) > 64 {
			return
		}
		ida, erra := ParseID(a)
		idb, errb := ParseID(b)
		if erra != nil || errb != nil || !ida.IsNumber() || !idb.IsNumber() {
			return
		}
		if ida.Equal(idb) != idb.Equal(ida) {
			t.Fatalf("%s == %s is not symmetric", a, b)
		}
		x, okx := new(big.Rat).SetString(strings.TrimSpace(a))
		y, oky := new(big.Rat).SetString(strings.TrimSpace(b))
		if !okx || !oky {
			return
		}
		if want := x.Cmp(y) == 0; ida.Equal(idb) != want {
			t.Fatalf("%s == %s: %v, want %v", a, b, ida.Equal(idb), want)
		}
	})
}
