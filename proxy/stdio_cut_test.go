package proxy_test

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// A line the client is in the middle of when the run ends (the server
// crashed; the client's next message has arrived up to no newline yet) has
// a record: NETWORK_ERROR, the message cut, how many bytes arrived, none
// passed on, its head as the body. Before, it was dropped without a record
// or a word (the run's end discards what clientToServer holds).
func TestStdioLineCutByTheRunsEnd(t *testing.T) {
	t.Parallel()
	run := startStdio(t, proxy.StdioOptions{Bodies: proxy.BodiesAll})
	conversation(t, run.in, run.out, []string{initLine, readyLine})
	partial := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ec`
	// One write: the crash request reaches the server, which exits in it,
	// while the proxy holds the partial line behind it.
	go func() { _, _ = io.WriteString(run.in, toolLine(2, "crash")+"\n"+partial) }()
	_, _ = io.Copy(io.Discard, run.out)
	run.wait(t)
	recs := run.sink.records(t)
	var cut int
	for _, r := range recs {
		if r.Note != "the client's line (client → server), cut by the run's end" {
			continue
		}
		cut++
		want := "the run ended (the server process exited (exit status 3) before responding) while the client was writing a line: 66 bytes of it had arrived, with no newline yet; none of it was passed on to the server (a message cut in the middle, not judged)"
		if r.Outcome != classify.NetworkError || r.Reason != want || r.RequestBytes != int64(len(partial)) {
			t.Errorf("cut line's record: %s %q %d bytes\nwant %s %q %d", r.Outcome, r.Reason, r.RequestBytes, classify.NetworkError, want, len(partial))
		}
		if r.RequestBody == nil || r.RequestBody.Text != partial || r.RequestBody.Truncated {
			t.Errorf("cut line's body %+v, want %q whole", r.RequestBody, partial)
		}
	}
	if cut != 1 {
		t.Errorf("%d records of the cut line, want 1; records:\n%s", cut, dumpRecords(recs))
	}
	if run.res.Exchanges != 2 {
		// initialize and the crash request; the cut line is no exchange.
		t.Errorf("%d exchanges, want 2", run.res.Exchanges)
	}
}

// A client that closes its stdin in the middle of a line: its record says
// the line was cut there, not only that it is not JSON.
func TestStdioLineCutByTheClientsEOF(t *testing.T) {
	t.Parallel()
	run := startStdio(t, proxy.StdioOptions{})
	conversation(t, run.in, run.out, []string{initLine, readyLine})
	partial := `{"jsonrpc":"2.0","id":3,"method":"tools/li`
	if _, err := io.WriteString(run.in, partial); err != nil {
		t.Fatal(err)
	}
	run.in.Close()
	_, _ = io.Copy(io.Discard, run.out)
	run.wait(t)
	recs := run.sink.records(t)
	want := "a line the client wrote to the server's stdin is not JSON: it is cut, the client closed its stdin 42 bytes into it, before its newline: a server answers it with an error of id null (JSON-RPC 2.0 §5) or ends"
	n := 0
	for _, r := range recs {
		if r.Outcome == classify.MalformedJSON {
			n++
			if r.Reason != want || r.RequestBytes != int64(len(partial)) {
				t.Errorf("record %q %d bytes, want %q %d", r.Reason, r.RequestBytes, want, len(partial))
			}
		}
	}
	if n != 1 {
		t.Errorf("%d MALFORMED_JSON records, want 1:\n%s", n, dumpRecords(recs))
	}
}

// dumpRecords lists records a line each: outcome, method, reason.
func dumpRecords(recs []*record.Record) string {
	var b strings.Builder
	for _, r := range recs {
		fmt.Fprintf(&b, "%s %s %q\n", r.Outcome, r.Method, r.Reason)
	}
	return b.String()
}

// A server that writes half a response line and exits (no newline before
// its stdout ends): the client never got a whole message, so the request's
// record is NETWORK_ERROR (phase body, the request sent), its id the
// request's, with JSON type, and its reason says the server exited in the
// middle of the line. Before, the half line was recorded as a server that
// wrote invalid JSON (MALFORMED_JSON "starts like JSON but is not valid
// JSON"), and the request's own record said the server exited before
// responding. A cut that hides the id (the result written first) is
// recorded apart with the same words, and the request as unanswered.
func TestStdioServerLineCutByItsExit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, id, tool string
		paired         bool // the cut line's id shows: it is the request's record
	}{
		{"number id", "2", "cut-exit", true},
		{"string id", `"2"`, "cut-exit", true},
		{"id after the cut", "2", "cut-exit-id-last", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			run := startStdio(t, proxy.StdioOptions{Env: append(os.Environ(), stdioScriptEnv+"=1"), Bodies: proxy.BodiesAll})
			conversation(t, run.in, run.out, []string{initLine, readyLine})
			if _, err := io.WriteString(run.in, scriptedCall(c.id, c.tool)+"\n"); err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(run.out)
			partial := cutAnswer(c.id, c.tool)
			if string(got) != partial {
				t.Fatalf("the client received %q, want %q", got, partial)
			}
			run.wait(t)
			recs := run.sink.records(t)
			cutWords := fmt.Sprintf("the server process exited (exit status 0) %d bytes into its response line, before the line's newline: the client never got a whole message (a message cut in the middle, not judged", len(partial))
			var call, apart int
			for _, r := range recs {
				if r.Outcome == classify.MalformedJSON {
					t.Errorf("the cut line recorded as MALFORMED_JSON: %q", r.Reason)
				}
				if r.Tool == c.tool {
					call++
					if string(r.JSONRPC.ID.Raw()) != c.id {
						t.Errorf("the call's record has id %s, want %s", r.JSONRPC.ID.Raw(), c.id)
					}
					if r.Outcome != classify.NetworkError || r.Network == nil || !r.Network.RequestSent {
						t.Errorf("the call's record: %s %+v, want NETWORK_ERROR with the request sent", r.Outcome, r.Network)
						continue
					}
					if c.paired {
						want := "the server's response line was cut: " + cutWords + "; the server may have processed the request)"
						if r.Reason != want || r.Network.Phase != "body" || r.ResponseBytes != int64(len(partial)) {
							t.Errorf("the call's record: %q phase %q %d bytes\nwant %q phase body %d bytes", r.Reason, r.Network.Phase, r.ResponseBytes, want, len(partial))
						}
						if r.ResponseBody == nil || r.ResponseBody.Text != partial {
							t.Errorf("the call's response body %+v, want %q", r.ResponseBody, partial)
						}
					} else if want := "no response line from the server after the request was sent (the server may have processed it): the server process exited (exit status 0) before responding"; r.Reason != want {
						t.Errorf("the call's record: %q, want %q", r.Reason, want)
					}
				}
				if r.Tool == "" && r.Method == "" && r.Outcome == classify.NetworkError {
					apart++
					want := "a line of the server's stdout was cut: " + strings.Replace(cutWords, "its response line, before the line's", "it, before its", 1) + "; no request's id shows before the cut)"
					if c.paired || r.Reason != want || r.ResponseBody == nil || r.ResponseBody.Text != partial {
						t.Errorf("record of the cut line apart: %q body %+v, want none when paired, else %q", r.Reason, r.ResponseBody, want)
					}
				}
			}
			if wantApart := map[bool]int{true: 0, false: 1}[c.paired]; call != 1 || apart != wantApart {
				t.Errorf("%d records of the call, %d of the cut line apart; want 1, %d:\n%s", call, apart, wantApart, dumpRecords(recs))
			}
		})
	}
}
