package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClassifyMasksWhatItReads (reread9): mcpdiag classify quotes the
// response it reads (a JSON-RPC error's message and data) in its verdict;
// a credential there, or the response's own cookie quoted in its body, is
// masked in the JSON verdict, the --text one and the error line.
func TestClassifyMasksWhatItReads(t *testing.T) {
	secrets := []string{"XclsMsg1234abcd", "XclsData5678efgh", "XclsCookie9abc0def"}
	body := `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"bad password: \"` + secrets[0] +
		`\" for session ` + secrets[2] + `","data":{"api_key":"` + secrets[1] + `"}}}`
	resp := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nSet-Cookie: sid=" + secrets[2] + "; Path=/\r\n\r\n" + body
	file := filepath.Join(t.TempDir(), "resp.http")
	if err := os.WriteFile(file, []byte(resp), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range [][]string{nil, {"--text"}} {
		var stdout, stderr bytes.Buffer
		args := append(append([]string{"classify", "--method", "tools/call", "--id", "1"}, mode...), file)
		if code := run(args, nil, &stdout, &stderr); code != 0 {
			t.Fatalf("classify %v: exit %d: %s", mode, code, stderr.String())
		}
		if !strings.Contains(stdout.String(), "JSONRPC_ERROR") || !strings.Contains(stdout.String(), "[redacted:len=") {
			t.Errorf("classify %v: no verdict or no mask: the test proves nothing\n%s", mode, stdout.String())
		}
		for _, sec := range secrets {
			if strings.Contains(stdout.String()+stderr.String(), sec) {
				t.Errorf("classify %v prints %s:\n%s", mode, sec, stdout.String())
			}
		}
	}
}
