package tracing_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/proxy/tracing"
)

// TestExportNeverFollowsRedirect: an OTLP endpoint that answers 307 to
// another origin (a second 127.0.0.1 listener) does not get the spans, or
// the exporter's headers (OTEL_EXPORTER_OTLP_HEADERS often carries an API
// key), sent on to it.
func TestExportNeverFollowsRedirect(t *testing.T) {
	var otherHits, hits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer other.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Location", other.URL+"/v1/traces")
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=otlp-SECRET-0123456789")
	ctx := context.Background()
	tp, err := tracing.Setup(ctx, redirector.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, span := tp.Tracer("t").Start(ctx, "one")
	span.End()
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_ = tp.Shutdown(sctx) // the export fails: that is the point
	if hits.Load() == 0 {
		t.Fatal("the exporter never reached the endpoint: the test proves nothing")
	}
	if n := otherHits.Load(); n != 0 {
		t.Fatalf("the other origin received %d export request(s)", n)
	}
}
