package record

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

// The canaries of the record's credential tests, beside canaryJWT: a secret
// registered with the redactor (canaryRedactor), and a Bearer token known
// only by its shape.
const (
	canarySecret = "reg1stered-S3CRET-value"
	canaryBearer = "bEaReR-CANARY-tok-0123"
)

// canaryRedactor is a redactor that knows canarySecret.
func canaryRedactor(t *testing.T) *Redactor {
	t.Helper()
	red := NewRedactor()
	if err := red.AddSecret(canarySecret); err != nil {
		t.Fatal(err)
	}
	return red
}

// refusingSink refuses every line.
type refusingSink struct{}

func (refusingSink) WriteLine([]byte) error { return errors.New("disk full") }
func (refusingSink) Close() error           { return nil }

// TestLossReportHasNoCredential: a record that is lost is named in the loss
// report (OnLoss, the first loss of Close's error, a write after Close) by
// its method, tool and id, which a caller chose: a credential there is
// masked as it is in the line, with the encoder's own registered secrets.
// Each loss still names the exchange (its HTTP method and kind).
func TestLossReportHasNoCredential(t *testing.T) {
	const secret, jwt, bearer = canarySecret, canaryJWT, canaryBearer
	red := canaryRedactor(t)
	fields := map[string]func(r *Record, v string){
		"tool":      func(r *Record, v string) { r.Tool = v },
		"method":    func(r *Record, v string) { r.Method = v },
		"record id": func(r *Record, v string) { r.ID = v },
	}
	creds := []struct{ value, secret string }{
		{secret, secret},
		{"token " + jwt, jwt},
		{"Bearer " + bearer, bearer},
	}
	for name, set := range fields {
		for _, c := range creds {
			newRec := func() *Record {
				rec := &Record{Kind: KindExchange, Method: "tools/call", HTTPMethod: "POST", Tool: "echo"}
				set(rec, c.value)
				return rec
			}
			var mu sync.Mutex
			var reports []string
			onLoss := func(l Loss) {
				mu.Lock()
				defer mu.Unlock()
				reports = append(reports, l.String())
			}
			// A sink that refuses the line, with and without Async.
			a := NewAsync(refusingSink{}, AsyncOptions{Encoder: Encoder{Redactor: red}, Linger: -1, OnLoss: onLoss})
			if err := a.Write(newRec()); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			err := a.Close()
			var lost *LostError
			if !errors.As(err, &lost) {
				t.Fatalf("%s: Close: %v, want a *LostError", name, err)
			}
			reports = append(reports, err.Error())
			_ = a.Write(newRec()) // after Close: counted, not written
			reports = append(reports, a.tally.Err().Error())

			s := &Sink{enc: Encoder{Redactor: red}, lines: refusingSink{}, tally: &Tally{onLoss: onLoss, red: red}}
			if err := s.Write(newRec()); err == nil {
				t.Fatalf("%s: the refusing sink wrote", name)
			}
			reports = append(reports, s.tally.Err().Error())

			if len(reports) != 5 {
				t.Fatalf("%s: %d reports, want 5: %q", name, len(reports), reports)
			}
			for _, r := range reports {
				if strings.Contains(r, c.secret) {
					t.Errorf("%s holding %q: the loss report has the credential: %s", name, c.value, r)
				}
				if !strings.Contains(r, "exchange") || !strings.Contains(r, "POST") {
					t.Errorf("%s: the loss report does not name the exchange: %s", name, r)
				}
			}
		}
	}
}
