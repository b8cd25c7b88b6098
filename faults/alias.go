package faults

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseStdioAlias reads the old --stdio-fault syntax, kept as an alias of
// --scenario for stdio servers: a kind, then optional comma-separated
// key=value settings. It returns the selection the same fault has in the
// catalogue:
//
//	delay=500ms         stdio.delay  {"delay":{"ms":500}}
//	drop                stdio.drop
//	garbage             stdio.garbage
//	exit                stdio.exit
//	…,tool=echo         "match":{"method":"tools/call","tool":"echo"}
//	…,method=M          "match":{"method":"M"}
//	…,times=N           "schedule":{"first":N} (0: every matching request)
//	garbage,line=TEXT   {"line":"TEXT"}
//
// As before, the fault applies to tools/call unless method= says otherwise,
// and tool= and method= name one tool and one method exactly (glob
// characters in them are escaped).
// A delay longer than DefaultMaxDelayMs raises the delay's cap with it, so
// that the alias waits as long as it says.
func ParseStdioAlias(spec string) (Selection, error) {
	parts := strings.Split(spec, ",")
	kind, value, hasValue := strings.Cut(strings.TrimSpace(parts[0]), "=")
	params := map[string]any{}
	match := map[string]any{"method": "tools/call"}
	switch kind {
	case "delay":
		if !hasValue {
			return nil, errors.New("stdio fault delay needs a duration: delay=500ms")
		}
		d, err := time.ParseDuration(value)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("stdio fault delay=%q: want a positive duration", value)
		}
		ms := float64(d) / float64(time.Millisecond)
		delay := map[string]any{"ms": ms}
		if ms > DefaultMaxDelayMs {
			delay["capMs"] = ms
		}
		params["delay"] = delay
	case "drop", "garbage", "exit":
		if hasValue {
			return nil, fmt.Errorf("stdio fault %s takes no value", kind)
		}
	default:
		return nil, fmt.Errorf("stdio fault %q: want delay=DURATION, drop, garbage or exit", kind)
	}
	for _, part := range parts[1:] {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "tool":
			if v != "" {
				match["tool"] = exactGlob(v)
			}
		case "method":
			if v != "" {
				match["method"] = exactGlob(v)
			}
		case "line":
			if kind != "garbage" {
				return nil, errors.New("line= applies to the garbage fault only")
			}
			if strings.ContainsAny(v, "\r\n") {
				return nil, errors.New("the garbage line must be one line")
			}
			if v != "" { // an empty line= meant the default line
				params["line"] = v
			}
		case "times":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("times=%q: want a count", v)
			}
			if n > 0 {
				params["schedule"] = map[string]any{"first": n}
			} else {
				delete(params, "schedule")
			}
		default:
			return nil, fmt.Errorf("stdio fault setting %q: want tool=, method=, line= or times=", k)
		}
	}
	params["match"] = match
	b, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	c, err := configure(TransportStdio, "stdio."+kind, b)
	if err != nil {
		return nil, err
	}
	return Selection{c}, nil
}

// exactGlob escapes the glob characters of s, so that it matches only
// itself.
func exactGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
