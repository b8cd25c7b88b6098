// Command stdioserver is a go-sdk v1.8.0 server over stdio for the probe's
// stdio tests: a typed read-only tool (go-sdk validates its arguments) and
// a destructive one that must never run. -noise writes a line that is not
// JSON-RPC on stdout before each answer to a tools/call of an unknown
// tool; -ran FILE appends the name of each tool that ran.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	noise := flag.Bool("noise", false, "write a non-JSON-RPC line on stdout at the first tools/call")
	ran := flag.String("ran", "", "append the name of each tool that ran to FILE")
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
	s := mcp.NewServer(&mcp.Implementation{Name: "stdio-peer", Version: "1"}, nil)
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
	if *noise {
		t = &mcp.IOTransport{Reader: os.Stdin, Writer: &noisy{w: os.Stdout}}
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
