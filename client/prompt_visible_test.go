package client

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpdiag/mcpdiag/internal/visible"
)

// TestPromptShowsTheServersWordsEscaped (term15): an elicitation's message,
// its URL and its field titles are the server's words, printed on the
// user's terminal at the prompt: a control or bidi character in them is
// shown as an escape, so that the server cannot rewrite the screen (or the
// prompt's own question) under the person answering.
func TestPromptShowsTheServersWordsEscaped(t *testing.T) {
	bad := "\x1b[2J\x1b]52;c;ZXZpbA==\x07\rApprove?\u202e"
	params, _ := json.Marshal(map[string]any{
		"message":         "msg" + bad,
		"requestedSchema": map[string]any{"properties": map[string]any{"ok": map[string]any{"type": "boolean", "title": "title" + bad}}},
	})
	var out strings.Builder
	p := &PromptInputs{In: strings.NewReader("a\nyes\n"), Out: &out}
	ans, err := p.Answer(context.Background(), InputRequest{Key: "key" + bad, Method: "elicitation/create", Params: params})
	if err != nil || !strings.Contains(string(ans), `"ok":true`) {
		t.Fatalf("answer %s, %v", ans, err)
	}
	for _, r := range out.String() {
		if r != '\n' && (visible.Escaped(r) || r == utf8.RuneError) {
			t.Fatalf("the prompt holds %U raw: %q", r, out.String())
		}
	}
	for _, want := range []string{"key" + bad, "msg" + bad, "title" + bad} {
		if !strings.Contains(out.String(), visible.String(want)) {
			t.Errorf("the prompt does not show %q escaped: %q", want, out.String())
		}
	}
}
