// Command stdioserver is a go-sdk v1.8.0 server over stdio for the probe's
// stdio tests: a typed read-only tool (go-sdk validates its arguments) and
// a destructive one that must never run. -noise writes a line that is not
// JSON-RPC on stdout before each answer to a tools/call of an unknown
// tool; -ran FILE appends the name of each tool that ran. -notification
// answer answers a notifications/cancelled with a JSON-RPC error line (a
// notification gets no response); -notification hang reads nothing after
// one (the request after it is never answered). -legacy speaks 2025-11-25
// only (go-sdk's SupportedProtocolVersions).
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
	ran := flag.String("ran", "", "append the name of each tool that ran to FILE")
	legacy := flag.Bool("legacy", false, "speak 2025-11-25 only")
	notification := flag.String("notification", "", "answer: answer notifications/cancelled with an error line; hang: read nothing after one")
	flag.Parse()
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
		t = &mcp.IOTransport{Reader: os.Stdin, Writer: &noisy{w: os.Stdout}}
	case *notification != "":
		out := &locked{w: os.Stdout}
		t = &mcp.IOTransport{Reader: onNotification(*notification, out), Writer: out}
	}
	if err := s.Run(context.Background(), t); err != nil {
		log.Print(err)
	}
}

// noisy writes a line that is not JSON-RPC before the third message (the
// answer to the first probe, after initialize's and tools/list's).
type noisy struct {
	w io.WriteCloser
	n int
}

func (n *noisy) Write(p []byte) (int, error) {
	n.n++
	if n.n == 3 {
		fmt.Fprintln(n.w, "stdioserver: debug: about to answer")
	}
	return n.w.Write(p)
}

func (n *noisy) Close() error { return n.w.Close() }

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

// onNotification passes stdin's lines on to the server and does what mode
// says at a notifications/cancelled: answer it on out, or hang.
func onNotification(mode string, out io.Writer) io.ReadCloser {
	r, w := io.Pipe()
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			if bytes.Contains(line, []byte(`"notifications/cancelled"`)) {
				switch mode {
				case "answer":
					fmt.Fprintln(out, `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"stdioserver: no such request to cancel"}}`)
				case "hang":
					time.Sleep(time.Hour) // a timer: not the runtime's "all goroutines are asleep"
				}
			}
			w.Write(append(line, '\n'))
		}
		w.Close()
	}()
	return r
}
