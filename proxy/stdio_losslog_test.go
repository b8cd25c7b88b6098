package proxy_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// refusingSink refuses every record.
type refusingSink struct{}

func (refusingSink) Write(*record.Record) error { return errors.New("sink refused") }

// lockedBuffer is a bytes.Buffer safe for the proxy's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestStdioLossLogHasNoCredential: the stdio proxy's 'record lost:' log
// line names the lost record with its method, tool and id scrubbed, as the
// HTTP recorder's does: a credential the client put in a tool name does not
// reach the log, which the record line itself would have masked.
func TestStdioLossLogHasNoCredential(t *testing.T) {
	t.Parallel()
	const jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJjYW5hcnkifQ.c2lnbmF0dXJlLWNhbmFyeS0wMDA5"
	var log lockedBuffer
	run := startStdio(t, proxy.StdioOptions{Records: refusingSink{}, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	got := conversation(t, run.in, run.out, []string{initLine, readyLine, toolLine(2, jwt)})
	if len(got) == 0 {
		t.Fatal("no answer from the server")
	}
	run.in.Close()
	run.wait(t)
	out := log.String()
	if !strings.Contains(out, "record lost:") {
		t.Fatalf("no loss logged:\n%s", out)
	}
	if strings.Contains(out, jwt) || strings.Contains(out, "eyJzdWIiOiJjYW5hcnkifQ") {
		t.Errorf("the loss log carries the credential:\n%s", out)
	}
}
