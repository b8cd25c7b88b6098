package main

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// exitMidRequest sends the request line of the case's tools/call and
// exits; a child in its own session, which the matrix's kill of the
// client's process group does not reach, holds the connection and sends
// the headers and body 200 ms later. The server sees a request that arrives
// after its client exited.
func exitMidRequest(c *mini) {
	u, body, conn := dialCall(c)
	line := fmt.Sprintf("POST %s HTTP/1.1\r\n", u.RequestURI())
	rest := fmt.Sprintf("Host: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: %s\r\nContent-Length: %d\r\n\r\n%s", u.Host, c.tool, len(body), body)
	if c.mode == "exit-late-body" {
		// The whole head now (the server's handler starts and waits for
		// the body), the body 3.5 s later.
		line += fmt.Sprintf("Host: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
			"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: %s\r\nContent-Length: %d\r\n\r\n", u.Host, c.tool, len(body))
		rest = string(body)
	}
	if _, err := io.WriteString(conn, line); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	f, err := conn.(*net.TCPConn).File()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	self, _ := os.Executable()
	cmd := exec.Command(self)
	delay := "200ms"
	if c.mode == "exit-late-request" || c.mode == "exit-late-body" {
		delay = "3500ms"
	}
	cmd.Env = append(os.Environ(), "BADCLIENT_TAIL="+rest, "BADCLIENT_DELAY="+delay)
	cmd.ExtraFiles = []*os.File{f}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0) // printing no outcome: the answer is not read here
}

// exitUnread sends the case's whole tools/call on a connection of its own
// and closes it without reading the answer (mode exit-unread), or reads the
// answer to its end first (mode read-then-exit): the server's line of the
// first says no response or 200, by whether the close or the answer came
// first; the client did the same either way.
func exitUnread(c *mini) {
	u, body, conn := dialCall(c)
	req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: %s\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
		u.RequestURI(), u.Host, c.tool, len(body), body)
	if _, err := io.WriteString(conn, req); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if c.mode == "read-then-exit" {
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _ = io.Copy(io.Discard, conn)
	}
	_ = conn.Close()
	os.Exit(0) // printing no outcome
}

// sendTail is the child of exitMidRequest: it sends the rest on the
// connection it got (fd 3) BADCLIENT_DELAY later and reads the answer.
func sendTail() {
	conn := os.NewFile(3, "conn")
	d, err := time.ParseDuration(os.Getenv("BADCLIENT_DELAY"))
	if err != nil {
		d = 200 * time.Millisecond
	}
	time.Sleep(d)
	_, _ = io.WriteString(conn, os.Getenv("BADCLIENT_TAIL"))
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _ = io.Copy(io.Discard, conn)
}

// dialCall returns the case's URL, the body of its 2026-07-28 tools/call,
// and a connection of its own to the server; it exits on an error.
func dialCall(c *mini) (*url.URL, string, net.Conn) {
	u, err := url.Parse(c.url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{`+
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"badclient","version":"0"},`+
		`"io.modelcontextprotocol/clientCapabilities":{}}}}`, c.tool, c.args)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return u, body, conn
}
