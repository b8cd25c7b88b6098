package loopback

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		host, origin string
		ok           bool
	}{
		{"127.0.0.1:8080", "", true},
		{"localhost:8080", "http://localhost:3000", true},
		{"[::1]:8080", "http://127.0.0.1", true},
		{"evil.example:8080", "", false},
		{"127.0.0.1:8080", "http://evil.example", false},
		{"127.0.0.1:8080", "not a url", false},
		{"10.0.0.1:8080", "", false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "/admin/log", nil)
		r.Host = tt.host
		if tt.origin != "" {
			r.Header.Set("Origin", tt.origin)
		}
		if ok, why := Check(r); ok != tt.ok {
			t.Errorf("Host %q Origin %q: ok=%v (%s), want %v", tt.host, tt.origin, ok, why, tt.ok)
		}
	}
}

func TestCheckDirect(t *testing.T) {
	tests := []struct {
		remote string
		header map[string]string
		ok     bool
	}{
		{"127.0.0.1:5000", nil, true},
		{"[::1]:5000", nil, true},
		{"192.0.2.1:5000", nil, false},
		{"127.0.0.1:5000", map[string]string{"Via": "1.1 mcpdiag"}, false},
		{"127.0.0.1:5000", map[string]string{"Forwarded": "for=192.0.2.1"}, false},
		{"127.0.0.1:5000", map[string]string{"X-Forwarded-For": "192.0.2.1"}, false},
		{"127.0.0.1:5000", map[string]string{"X-Forwarded-Prefix": "/x"}, false},
		{"127.0.0.1:5000", map[string]string{"X-Real-Ip": "192.0.2.1"}, false},
		{"127.0.0.1:5000", map[string]string{"X-Request-Id": "1"}, true},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "/admin/log", nil)
		r.Host, r.RemoteAddr = "127.0.0.1:8080", tt.remote
		for k, v := range tt.header {
			r.Header.Set(k, v)
		}
		if ok, why := CheckDirect(r); ok != tt.ok {
			t.Errorf("peer %s headers %v: ok=%v (%s), want %v", tt.remote, tt.header, ok, why, tt.ok)
		}
	}
}

func TestDefaultHost(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{":8080", "127.0.0.1:8080"},
		{":0", "127.0.0.1:0"},
		{"0.0.0.0:80", "0.0.0.0:80"},
		{"[::1]:80", "[::1]:80"},
		{"example.com:80", "example.com:80"},
		{"8080", ""},
		{"", ""},
		// A port no listener can have is bad input, refused here (a usage
		// error, exit 2), not at the listen (exit 1, as for a port in use).
		{"127.0.0.1:99999", ""},
		{":65536", ""},
		{"127.0.0.1:-1", ""},
		{"127.0.0.1:65535", "127.0.0.1:65535"},
		{"127.0.0.1:http", "127.0.0.1:http"},
	} {
		got, err := DefaultHost(tc.in)
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("DefaultHost(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestGuardLoopback: on a real 127.0.0.1 listener a foreign Host is
// refused and a loopback one served; a request that arrived at another
// address (its connection's local address, as net/http puts it in the
// context) is served whatever its Host, since the check is the loopback
// listener's.
func TestGuardLoopback(t *testing.T) {
	h := GuardLoopback("test", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, tc := range []struct {
		host string
		want int
	}{{"evil.example", http.StatusForbidden}, {"127.0.0.1", http.StatusOK}, {"localhost:1", http.StatusOK}} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Host = tc.host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("loopback listener, Host %s: %d, want %d", tc.host, resp.StatusCode, tc.want)
		}
	}
	req := httptest.NewRequest(http.MethodGet, "http://evil.example/", nil)
	req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 80}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Errorf("arrived at 192.0.2.1, Host evil.example: %d, want 200", rec.Code)
	}
}
