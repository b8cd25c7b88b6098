package loopback

import (
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
