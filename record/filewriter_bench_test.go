//go:build unix

package record

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkFileWriterBatch is the record file's writer (FileWriter.writeLines:
// one writev(2) per batch, the Async writer goroutine's write) appending
// batches of the proxy's two exchange records, as encoded (bench/proxybench's
// JSON and 64 KiB SSE exchanges in the default body mode), k lines a batch:
// the cost of a write per record at the batch sizes the proxy's 2 ms linger
// makes (docs/benchmarks.md, sse16: 8 records per writev at sse/8, 10 to 14
// at json/8). The file is in the benchmark's temporary directory (the
// machine's file system, as proxybench's record files are); ns/op is per
// record and the bytes/s are the records' bytes; cpu-ns/record is the
// process's user and system time per record (getrusage), which the
// machine's other load moves less than the wall time.
func BenchmarkFileWriterBatch(b *testing.B) {
	for _, shape := range []struct {
		name string
		rec  *Record
	}{{"json", benchProxyJSONRecord()}, {"sse", benchProxySSERecord()}} {
		var e Encoder
		line, err := e.Encode(shape.rec)
		if err != nil {
			b.Fatal(err)
		}
		line = append([]byte(nil), line...)
		for _, k := range []int{1, 4, 8, 13} {
			b.Run(fmt.Sprintf("%s/%dB/k=%d", shape.name, len(line), k), func(b *testing.B) {
				w, err := OpenFile(filepath.Join(b.TempDir(), "records.jsonl"), FileOptions{})
				if err != nil {
					b.Fatal(err)
				}
				defer w.Close()
				lines := make([][]byte, k)
				for i := range lines {
					lines[i] = line
				}
				b.SetBytes(int64(len(line)))
				b.ResetTimer()
				before := cpuTime(b)
				for i := 0; i < b.N; i += k {
					if n, err := w.writeLines(lines); err != nil || n != k {
						b.Fatalf("wrote %d of %d lines: %v", n, k, err)
					}
				}
				b.ReportMetric(float64(cpuTime(b)-before)/float64(b.N), "cpu-ns/record")
			})
		}
	}
}

// cpuTime is the process's user and system time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
