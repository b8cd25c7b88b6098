package ui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

// TestFollowRefusesBadInput: what the caller got wrong is an *InputError
// naming it, before anything is served.
func TestFollowRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "r.jsonl")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		o    FollowOptions
		want string
	}{
		{"no file", FollowOptions{}, "name at least one record file"},
		{"missing file", FollowOptions{Files: []string{filepath.Join(dir, "nope")}}, "cannot open"},
		{"directory", FollowOptions{Files: []string{dir}}, "is a directory"},
		{"foreign address", FollowOptions{Files: []string{file}, Addr: "0.0.0.0:0"}, "loopback only"},
		{"bad address", FollowOptions{Files: []string{file}, Addr: "127.0.0.1"}, "--listen"},
		{"negative poll", FollowOptions{Files: []string{file}, Poll: -1}, "--poll"},
	} {
		err := Follow(context.Background(), c.o)
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(ie.Msg, c.want) || strings.Contains(ie.Msg, "\n") {
			t.Errorf("%s: Follow = %v, want one-line InputError containing %q", c.name, err, c.want)
		}
	}
}

// TestFollowServesUntilCancelled: Follow calls Ready with the page's URL
// (token path included) and returns nil when its context ends.
func TestFollowServesUntilCancelled(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.jsonl")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- Follow(ctx, FollowOptions{Files: []string{file}, Ready: func(u string) { urls <- u }}) }()
	var u string
	select {
	case u = <-urls:
	case err := <-done:
		t.Fatalf("Follow ended before serving: %v", err)
	case <-time.After(testwait.Bound):
		t.Fatalf("Follow neither gave its URL nor ended within %s", testwait.Bound)
	}
	if !strings.HasPrefix(u, "http://127.0.0.1:") || !strings.Contains(u, "/u/") {
		t.Errorf("Ready got %q, want a loopback URL with the token path", u)
	}
	cancel()
	if err := testwait.Recv(t, done, "Follow to end after its context was cancelled"); err != nil {
		t.Errorf("Follow after cancel = %v, want nil", err)
	}
}
