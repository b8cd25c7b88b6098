package record

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// SinkOptions.Tee sees exactly the lines the file got, once each.
func TestSinkTeeSeesTheWrittenLines(t *testing.T) {
	for _, async := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "r.jsonl")
		var mu sync.Mutex
		var teed bytes.Buffer
		s, err := OpenSink(path, SinkOptions{Async: async, Tee: func(line []byte) {
			mu.Lock()
			defer mu.Unlock()
			teed.Write(line)
		}})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"A", "B", "C"} {
			if err := s.Write(&Record{Kind: KindExchange, ID: id}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		file, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(file, teed.Bytes()) || bytes.Count(file, []byte("\n")) != 3 {
			t.Errorf("async=%v: the file holds\n%s\nthe tee saw\n%s", async, file, teed.Bytes())
		}
	}
}
