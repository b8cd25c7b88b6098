package matrix

import (
	"time"

	"github.com/mcpdiag/mcpdiag/judge"
)

// Limits are the bounds the rules enforce and the runner keeps (a client's
// run and start-up time); see judge.Limits.
type Limits = judge.Limits

// The defaults of Limits.
const (
	DefaultMaxRetries      = judge.DefaultMaxRetries
	DefaultMinBackoff      = judge.DefaultMinBackoff
	DefaultRetryAfterSlack = judge.DefaultRetryAfterSlack
	DefaultLoopThreshold   = judge.DefaultLoopThreshold
	DefaultRunTimeout      = judge.DefaultRunTimeout
	DefaultStartTimeout    = judge.DefaultStartTimeout
	DefaultLivenessGrace   = judge.DefaultLivenessGrace
	DefaultMaxStepUps      = judge.DefaultMaxStepUps
)

// ms formats a duration for tables and messages as the evidence does.
func ms(d time.Duration) string { return judge.FormatDuration(d) }
