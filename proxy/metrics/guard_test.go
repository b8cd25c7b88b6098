package metrics_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/proxy/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

// TestServerRefusesForeignHost: the metrics server, on a 127.0.0.1
// listener its user opened, refuses a foreign Host or Origin (DNS
// rebinding) and serves /metrics to a loopback one; the check is the
// handler's, so no wrapper is needed.
func TestServerRefusesForeignHost(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := metrics.New(reg, metrics.Options{}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := metrics.NewServer(reg)
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	u := "http://" + ln.Addr().String() + "/metrics"
	for _, tc := range []struct {
		host, origin string
		want         int
	}{
		{"", "", http.StatusOK},
		{"localhost", "http://127.0.0.1:3000", http.StatusOK},
		{"evil.example", "", http.StatusForbidden},
		{"evil.example:9464", "", http.StatusForbidden},
		{"", "http://evil.example", http.StatusForbidden},
	} {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("Host %q Origin %q: %d %.100s, want %d", tc.host, tc.origin, resp.StatusCode, body, tc.want)
		}
		if tc.want == http.StatusOK && !strings.Contains(string(body), "mcpdiag_proxy") {
			t.Errorf("Host %q: no metrics in %.200s", tc.host, body)
		}
	}
}
