package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestInitHeap: the initialization of mcpdiag's own packages allocates
// under 64 KiB in the real binary (GODEBUG=inittrace=1). Under the
// runtime's 4 MB minimum heap goal every byte that stays live is a byte
// less between two GC cycles of the proxy: the redaction patterns (605 KB
// allocated at init, ~150 KB live), judge's error words and matrix's and
// classify's patterns are compiled on first use instead (697 KB over our
// packages before, 50 KB now; docs/benchmarks.md, liveheap).
func TestInitHeap(t *testing.T) {
	bin := testBinary(t)
	cmd := exec.Command(bin, "--help")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcpdiag --help: %v\n%s", err, stderr.Bytes())
	}
	// init github.com/mcpdiag/mcpdiag/judge @90 ms, 0.41 ms clock, 16560 bytes, 45 allocs
	total, pkgs := 0, 0
	var lines []string
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[0] != "init" || !strings.HasPrefix(f[1], "github.com/mcpdiag/mcpdiag/") || f[len(f)-3] != "bytes," {
			continue
		}
		n, err := strconv.Atoi(f[len(f)-4])
		if err != nil {
			t.Fatalf("inittrace line %q: %v", sc.Text(), err)
		}
		total += n
		pkgs++
		lines = append(lines, sc.Text())
	}
	if pkgs == 0 {
		t.Fatalf("no inittrace line of mcpdiag's packages in\n%s", stderr.Bytes())
	}
	if total > 64<<10 {
		t.Errorf("mcpdiag's packages allocate %d bytes at init, want at most 64 KiB:\n%s", total, strings.Join(lines, "\n"))
	}
}
