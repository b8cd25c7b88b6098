package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The stdio fault kinds.
const (
	// StdioDelay holds the response of a matching request for Delay.
	StdioDelay = "delay"
	// StdioDrop never passes the response of a matching request on.
	StdioDrop = "drop"
	// StdioGarbage writes a non-JSON line to the client just before the
	// response of a matching request.
	StdioGarbage = "garbage"
	// StdioExit kills the server right after passing a matching request to
	// it: the server dies in the middle of the request.
	StdioExit = "exit"
)

// DefaultGarbage is the line StdioGarbage writes: a typical stray print.
const DefaultGarbage = "Server started on stdio (debug mode)"

// StdioFault is a fault applied to a stdio server's traffic. Faults that
// make sense without HTTP: a slow response, a lost one, a stray print, a
// crash in the middle of a request.
type StdioFault struct {
	// Kind is StdioDelay, StdioDrop, StdioGarbage or StdioExit.
	Kind string
	// Method selects the requests it applies to ("" = tools/call).
	Method string
	// Tool, for tools/call, selects one tool ("" = any).
	Tool string
	// Delay is how long StdioDelay holds a response.
	Delay time.Duration
	// Garbage is the line StdioGarbage writes (DefaultGarbage when "").
	Garbage string
	// Times is how many matching requests it applies to (0 = every one).
	Times int
}

// ParseStdioFault reads a --stdio-fault value: a kind, then optional
// comma-separated key=value settings: "delay=500ms", "drop,tool=echo",
// "garbage,line=hello", "exit,times=1", "drop,method=tools/list".
func ParseStdioFault(spec string) (*StdioFault, error) {
	parts := strings.Split(spec, ",")
	f := &StdioFault{}
	for i, part := range parts {
		k, v, hasValue := strings.Cut(strings.TrimSpace(part), "=")
		if i == 0 {
			f.Kind = k
			switch k {
			case StdioDelay:
				if !hasValue {
					return nil, errors.New("proxy: stdio fault delay needs a duration: delay=500ms")
				}
				d, err := time.ParseDuration(v)
				if err != nil || d <= 0 {
					return nil, fmt.Errorf("proxy: stdio fault delay=%q: want a positive duration", v)
				}
				f.Delay = d
			case StdioDrop, StdioGarbage, StdioExit:
				if hasValue {
					return nil, fmt.Errorf("proxy: stdio fault %s takes no value", k)
				}
			default:
				return nil, fmt.Errorf("proxy: stdio fault %q: want delay=DURATION, drop, garbage or exit", k)
			}
			continue
		}
		switch k {
		case "tool":
			f.Tool = v
		case "method":
			f.Method = v
		case "line":
			if f.Kind != StdioGarbage {
				return nil, errors.New("proxy: line= applies to the garbage fault only")
			}
			if strings.ContainsAny(v, "\r\n") {
				return nil, errors.New("proxy: the garbage line must be one line")
			}
			f.Garbage = v
		case "times":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("proxy: times=%q: want a count", v)
			}
			f.Times = n
		default:
			return nil, fmt.Errorf("proxy: stdio fault setting %q: want tool=, method=, line= or times=", k)
		}
	}
	return f, nil
}

// String is the fault as it is noted in records' scenario field:
// "stdio.delay", "stdio.drop", ….
func (f *StdioFault) String() string { return "stdio." + f.Kind }

func (f *StdioFault) matches(m message) bool {
	method := f.Method
	if method == "" {
		method = "tools/call"
	}
	if m.method != method {
		return false
	}
	if f.Tool == "" {
		return true
	}
	return m.tool == f.Tool
}

// faultExit reports (once) that the server must be killed now.
func (s *stdioProxy) faultExit() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.killAfter
	s.killAfter = false
	if k {
		s.killed = true
	}
	return k
}

// isKilled reports whether the exit fault fired.
func (s *stdioProxy) isKilled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.killed
}

// applyFault acts on a server line before it is forwarded and reports
// whether to forward it.
func (s *stdioProxy) applyFault(line []byte, whole bool) bool {
	f := s.opts.Fault
	if !whole || f.Kind == StdioExit {
		return true
	}
	trimmed := bytes.TrimSpace(line)
	m := parseMessage(trimmed)
	if m.kind != kindResponse {
		return true
	}
	s.mu.Lock()
	p := s.pending[idKey(m.id)]
	if p == nil || !p.fault {
		s.mu.Unlock()
		return true
	}
	if f.Kind == StdioDrop {
		delete(s.pending, idKey(m.id))
	}
	s.mu.Unlock()
	switch f.Kind {
	case StdioDelay:
		time.Sleep(f.Delay)
	case StdioDrop:
		s.finish(p, nil, time.Now(), errors.New("the response was dropped by the fault (FI): the client never receives it"), false)
		return false
	case StdioGarbage:
		g := f.Garbage
		if g == "" {
			g = DefaultGarbage
		}
		_, _ = s.opts.Stdout.Write([]byte(g + "\n"))
		s.onNoise([]byte(g), 0, "injected by the fault (FI)")
	}
	return true
}
