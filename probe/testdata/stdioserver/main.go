// Command stdioserver is a go-sdk v1.8.0 server over stdio for the probe's
// stdio tests: a typed read-only tool (go-sdk validates its arguments) and
// a destructive one that must never run. -noise writes a line that is not
// JSON-RPC on stdout before each answer to a tools/call of an unknown
// tool; -ran FILE appends the name of each tool that ran. -notification
// answer answers a notifications/cancelled with a JSON-RPC error line (a
// notification gets no response); -notification hang reads nothing after
// one (the request after it is never answered); -notification exit exits. -legacy speaks 2025-11-25
// only (go-sdk's SupportedProtocolVersions). -ask FILE writes a roots/list
// request on stdout before each tools/call is handled (without waiting for
// it) and appends each response to it that comes back on stdin to FILE.
// -banner TEXT writes TEXT on stdout at start, before any message.
// -notification-line LINE is the line -notification answer writes.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	noise := flag.Bool("noise", false, "write a non-JSON-RPC line on stdout at the first tools/call")
	noiseLine := flag.String("noise-line", "stdioserver: debug: about to answer", "the line -noise writes")
	ran := flag.String("ran", "", "append the name of each tool that ran to FILE")
	legacy := flag.Bool("legacy", false, "speak 2025-11-25 only")
	ask := flag.String("ask", "", "write a roots/list request on stdout at each tools/call; append the answers to FILE")
	notification := flag.String("notification", "", "answer: answer notifications/cancelled with an error line; hang: read nothing after one; exit: exit")
	notificationLine := flag.String("notification-line", `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"stdioserver: no such request to cancel"}}`, "the line -notification answer writes")
	banner := flag.String("banner", "", "write this line on stdout before anything else, as servers that print a banner there do")
	late := flag.Duration("late", 0, "write the answer to the first probe (the third message) this long after it, the later answers in their time")
	flag.Parse()
	if *banner != "" {
		fmt.Println(*banner)
	}
	mark := func(name string) {
		if *ran == "" {
			return
		}
		f, err := os.OpenFile(*ran, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, name)
			f.Close()
		}
	}
	var sopts *mcp.ServerOptions
	if *legacy {
		sopts = &mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "stdio-peer", Version: "1"}, sopts)
	type lookupIn struct {
		Q string `json:"q" jsonschema:"the word"`
		N int    `json:"n,omitempty" jsonschema:"how many"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "lookup", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in lookupIn) (*mcp.CallToolResult, any, error) {
			mark("lookup")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "found " + in.Q}}}, nil, nil
		})
	type dropIn struct {
		Table string `json:"table"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "drop_table", Annotations: &mcp.ToolAnnotations{DestructiveHint: new(bool)}},
		func(_ context.Context, _ *mcp.CallToolRequest, in dropIn) (*mcp.CallToolResult, any, error) {
			mark("drop_table")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "dropped"}}}, nil, nil
		})
	var t mcp.Transport = &mcp.StdioTransport{}
	switch {
	case *noise:
		t = &mcp.IOTransport{Reader: os.Stdin, Writer: &noisy{w: os.Stdout, line: *noiseLine}}
	case *late > 0:
		t = &mcp.IOTransport{Reader: os.Stdin, Writer: &tardy{w: os.Stdout, after: *late}}
	case *notification != "" || *ask != "":
		out := &locked{w: os.Stdout}
		t = &mcp.IOTransport{Reader: intercept(*notification, *notificationLine, *ask, out), Writer: out}
	}
	if err := s.Run(context.Background(), t); err != nil {
		log.Print(err)
	}
}

// noisy writes a line that is not JSON-RPC before the third message (the
// answer to the first probe, after initialize's and tools/list's).
type noisy struct {
	w    io.WriteCloser
	line string
	n    int
}

func (n *noisy) Write(p []byte) (int, error) {
	n.n++
	if n.n == 3 {
		fmt.Fprintln(n.w, n.line)
	}
	return n.w.Write(p)
}

func (n *noisy) Close() error { return n.w.Close() }

// tardy writes the third message (the answer to the first probe, after
// initialize's and tools/list's) after a delay, and holds the messages
// written meanwhile until it did, in their order: an answer that comes
// after the client stopped waiting for it, first in line when the client
// waits for the next one's.
type tardy struct {
	w     io.WriteCloser
	after time.Duration
	mu    sync.Mutex
	n     int
	held  [][]byte // written while the third message waits (nil: none waits)
}

func (t *tardy) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n++
	switch {
	case t.n == 3:
		t.held = [][]byte{bytes.Clone(p)}
		time.AfterFunc(t.after, func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			for _, m := range t.held {
				t.w.Write(m)
			}
			t.held = nil
		})
		return len(p), nil
	case t.held != nil:
		t.held = append(t.held, bytes.Clone(p))
		return len(p), nil
	}
	return t.w.Write(p)
}

func (t *tardy) Close() error { return t.w.Close() }

// locked serializes the writes of the server and of onNotification.
type locked struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *locked) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *locked) Close() error { return l.w.Close() }

// intercept passes stdin's lines on to the server and does what mode says
// at a notifications/cancelled: answer it on out (the line answer), or hang. With ask, it
// writes a roots/list request on out before each tools/call line and keeps
// the responses to those requests from the server, appending them to ask.
func intercept(mode, answer, ask string, out io.Writer) io.ReadCloser {
	r, w := io.Pipe()
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		n := 0
		for sc.Scan() {
			line := sc.Bytes()
			if ask != "" && bytes.Contains(line, []byte(`"id":"stdioserver-`)) && !bytes.Contains(line, []byte(`"method"`)) {
				if f, err := os.OpenFile(ask, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
					fmt.Fprintf(f, "%s\n", line)
					f.Close()
				}
				continue
			}
			if ask != "" && bytes.Contains(line, []byte(`"method":"tools/call"`)) {
				n++
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":"stdioserver-%d","method":"roots/list","params":{}}`+"\n", n)
			}
			if bytes.Contains(line, []byte(`"notifications/cancelled"`)) {
				switch mode {
				case "answer":
					fmt.Fprintln(out, answer)
				case "hang":
					time.Sleep(time.Hour) // a timer: not the runtime's "all goroutines are asleep"
				case "exit":
					os.Exit(0)
				}
			}
			w.Write(append(line, '\n'))
		}
		w.Close()
	}()
	return r
}
