package reliability

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proc is a running mcpdiag (or a shell around it) with its stdout and
// stderr collected line by line.
type Proc struct {
	name string
	cmd  *exec.Cmd

	mu     sync.Mutex
	stdout bytes.Buffer
	stderr bytes.Buffer
	seen   []string // every line, both streams, as they came
	more   chan struct{}

	done chan struct{}
	err  error
}

// Start runs argv. The process is its own process group's leader, so that
// a test's Ctrl-C does not reach it before the harness stops it.
func Start(name string, argv ...string) (*Proc, error) {
	p := &Proc{name: name, cmd: exec.Command(argv[0], argv[1:]...), more: make(chan struct{}, 1), done: make(chan struct{})}
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	outR, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	errR, err := p.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var wg sync.WaitGroup
	for _, s := range []struct {
		r   io.Reader
		buf *bytes.Buffer
	}{{outR, &p.stdout}, {errR, &p.stderr}} {
		wg.Go(func() {
			br := bufio.NewReader(s.r)
			for {
				line, err := br.ReadString('\n')
				if line != "" {
					p.mu.Lock()
					s.buf.WriteString(line)
					p.seen = append(p.seen, strings.TrimRight(line, "\n"))
					p.mu.Unlock()
					select {
					case p.more <- struct{}{}:
					default:
					}
				}
				if err != nil {
					return
				}
			}
		})
	}
	go func() {
		wg.Wait()
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// PID is the process id.
func (p *Proc) PID() int { return p.cmd.Process.Pid }

// Stderr returns what the process wrote to stderr so far.
func (p *Proc) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// WaitLine returns the submatches of the first line (stdout or stderr)
// that matches re, waiting up to limit.
func (p *Proc) WaitLine(re *regexp.Regexp, limit time.Duration) ([]string, error) {
	deadline := time.After(limit)
	for next := 0; ; {
		p.mu.Lock()
		lines := p.seen[next:]
		next = len(p.seen)
		p.mu.Unlock()
		for _, l := range lines {
			if m := re.FindStringSubmatch(l); m != nil {
				return m, nil
			}
		}
		select {
		case <-p.more:
		case <-p.done:
			p.mu.Lock()
			n := len(p.seen)
			p.mu.Unlock()
			if n == next {
				return nil, fmt.Errorf("%s ended (%v) before printing %s; stderr:\n%s", p.name, p.err, re, p.Stderr())
			}
		case <-deadline:
			return nil, fmt.Errorf("%s printed no line %s in %s; stderr:\n%s", p.name, re, limit, p.Stderr())
		}
	}
}

// Signal sends sig to the process.
func (p *Proc) Signal(sig syscall.Signal) error { return p.cmd.Process.Signal(sig) }

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits up to limit for the process to end and returns its exit
// code, 128+N when signal N ended it (as a shell reports it).
func (p *Proc) Wait(limit time.Duration) (int, error) {
	select {
	case <-p.done:
	case <-time.After(limit):
		return -1, fmt.Errorf("%s still running after %s; stderr:\n%s", p.name, limit, p.Stderr())
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	if p.err != nil {
		return -1, p.err
	}
	return 0, nil
}

// Kill ends the process (if it still runs) and waits for it.
func (p *Proc) Kill() {
	if !p.Exited() {
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Memory is a process's resident memory and open descriptors, from /proc.
type Memory struct {
	RSSKiB  int64 // VmRSS
	PeakKiB int64 // VmHWM: the most it was resident
	FDs     int   // entries of /proc/PID/fd
}

func (m Memory) String() string {
	return fmt.Sprintf("RSS %.1f MiB (peak %.1f MiB), %d descriptors", float64(m.RSSKiB)/1024, float64(m.PeakKiB)/1024, m.FDs)
}

// Memory reads /proc/PID/status and /proc/PID/fd (Linux; zero elsewhere).
func (p *Proc) Memory() Memory {
	var m Memory
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID()))
	if err != nil {
		return m
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			m.RSSKiB = n
		case "VmHWM:":
			m.PeakKiB = n
		}
	}
	if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.PID())); err == nil {
		m.FDs = len(ents)
	}
	return m
}
