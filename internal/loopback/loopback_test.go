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
