package faults

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mcpdiag/mcpdiag/wire"
)

// Injection modes.
const (
	InjectAppendBlock = "append_block"
	InjectAppendText  = "append_text"
)

// ContentInjection lets the tool run and appends adversarial instructions to
// its result, for testing what a client shows its model.
type ContentInjection struct {
	Rules
	Text string `json:"text"`
	// Mode is append_block (a new text block) or append_text (added to
	// the last text block).
	Mode string `json:"mode"`
}

// Validate implements Scenario.
func (s *ContentInjection) Validate() error {
	if s.Text == "" {
		return fmt.Errorf("param text: empty")
	}
	switch s.Mode {
	case InjectAppendBlock, InjectAppendText:
		return nil
	}
	return fmt.Errorf("param mode: %q: want append_block or append_text", s.Mode)
}

// Wrap implements Scenario.
func (s *ContentInjection) Wrap(next http.Handler, env *Env) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		editResult(w, r, next, env, func(res map[string]json.RawMessage) error {
			var blocks []map[string]json.RawMessage
			if err := json.Unmarshal(res["content"], &blocks); err != nil {
				return fmt.Errorf("the result's content is not an array of blocks")
			}
			last := -1
			for i, b := range blocks {
				if wire.StringIs(b["type"], "text") {
					last = i
				}
			}
			if s.Mode == InjectAppendText && last >= 0 {
				var t string
				_ = json.Unmarshal(blocks[last]["text"], &t)
				blocks[last]["text"] = mustJSON(t + "\n\n" + s.Text)
			} else {
				blocks = append(blocks, map[string]json.RawMessage{"type": json.RawMessage(`"text"`), "text": mustJSON(s.Text)})
			}
			res["content"] = mustJSON(blocks)
			return nil
		})
	})
}
