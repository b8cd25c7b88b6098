package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// StoredAuth is what a TokenStore keeps for one resource and authorization
// server: the client registration and the token.
type StoredAuth struct {
	Resource     string        `json:"resource"`
	Issuer       string        `json:"issuer"`
	Registration *registration `json:"registration,omitempty"`
	Token        *oauth2.Token `json:"token,omitempty"`
	Granted      []string      `json:"granted,omitempty"`
	Saved        time.Time     `json:"saved"`
}

// TokenStore keeps registrations and tokens between runs.
type TokenStore interface {
	// Load returns the entries kept (any order).
	Load() ([]StoredAuth, error)
	// Save keeps e, replacing the entry for the same resource and issuer.
	Save(e StoredAuth) error
}

// FileStore is a TokenStore in one JSON file, created with mode 0600 (its
// directory 0700): it holds access and refresh tokens and client secrets.
type FileStore struct {
	Path string
	mu   sync.Mutex
}

// DefaultTokenCache is the token cache file under the user's config
// directory (for example ~/.config/mcpdiag/tokens.json).
func DefaultTokenCache() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "mcpdiag", "tokens.json"), nil
}

type storeFile struct {
	V       int          `json:"v"`
	Entries []StoredAuth `json:"entries"`
}

// Load implements TokenStore. A missing file is an empty store; a file
// that others than its owner may read is refused.
func (s *FileStore) Load() ([]StoredAuth, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.load()
}

func (s *FileStore) load() ([]StoredAuth, error) {
	st, err := os.Stat(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("token cache %s has mode %v: it holds tokens and must be readable by its owner only (chmod 600)", s.Path, st.Mode().Perm())
	}
	b, err := os.ReadFile(s.Path)
	if err != nil {
		return nil, err
	}
	var f storeFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("token cache %s: %w", s.Path, err)
	}
	return f.Entries, nil
}

// Save implements TokenStore: the file is rewritten through a temporary
// file in the same directory and renamed, so a crash leaves the old one.
func (s *FileStore) Save(e StoredAuth) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	entries, err := s.load()
	if err != nil {
		return err
	}
	out := entries[:0]
	for _, old := range entries {
		if old.Resource != e.Resource || old.Issuer != e.Issuer {
			out = append(out, old)
		}
	}
	out = append(out, e)
	sort.Slice(out, func(i, j int) bool { return out[i].Resource+" "+out[i].Issuer < out[j].Resource+" "+out[j].Issuer })
	b, err := json.MarshalIndent(storeFile{V: 1, Entries: out}, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(s.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tokens-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.Path)
}

// covers reports whether a token for resource may be sent to u: the same
// origin, and u's path is the resource's path or below it.
func covers(resource, u string) bool {
	r, err1 := url.Parse(resource)
	t, err2 := url.Parse(u)
	if err1 != nil || err2 != nil {
		return false
	}
	if !strings.EqualFold(r.Scheme, t.Scheme) || !strings.EqualFold(r.Host, t.Host) {
		return false
	}
	rp, tp := strings.TrimSuffix(r.Path, "/"), t.Path
	return rp == "" || tp == rp || strings.HasPrefix(tp, rp+"/")
}

// load reads the store for the registration and token of this server.
func (a *authState) load() {
	if a.opts.Store == nil {
		return
	}
	entries, err := a.opts.Store.Load()
	if err != nil {
		a.storeErr = err
		return
	}
	var best *StoredAuth
	for i := range entries {
		e := &entries[i]
		if !covers(e.Resource, a.c.opts.URL) {
			continue
		}
		if best == nil || e.Saved.After(best.Saved) {
			best = e
		}
	}
	for i := range entries {
		e := &entries[i]
		if e.Registration != nil && e.Registration.Method != "pre-registered" && covers(e.Resource, a.c.opts.URL) {
			if _, ok := a.regs[e.Issuer]; !ok {
				a.regs[e.Issuer] = e.Registration
				a.secret(e.Registration.ClientSecret)
			}
		}
	}
	if best != nil && best.Token != nil && best.Token.AccessToken != "" {
		a.secret(best.Token.AccessToken)
		a.secret(best.Token.RefreshToken)
		a.tok, a.tokIssuer, a.tokResource, a.granted = best.Token, best.Issuer, best.Resource, best.Granted
		a.loaded = true
	}
}

// save keeps the registration and token for issuer and resource.
func (a *authState) save(issuer, resource string) {
	if a.opts.Store == nil {
		return
	}
	a.tokMu.RLock()
	e := StoredAuth{Resource: resource, Issuer: issuer, Registration: a.regs[issuer], Token: a.tok, Granted: a.granted, Saved: time.Now().UTC()}
	a.tokMu.RUnlock()
	if e.Registration != nil && e.Registration.Method == "pre-registered" {
		// The caller gives a pre-registered client each time; its
		// secret is not copied into the cache.
		cp := *e.Registration
		cp.ClientSecret = ""
		e.Registration = &cp
	}
	if err := a.opts.Store.Save(e); err != nil {
		a.storeErr = err
	}
}

// StoreError returns the last error of the token store (loading or saving),
// or nil.
func (c *Client) StoreError() error {
	if c.auth == nil {
		return nil
	}
	return c.auth.storeErr
}
