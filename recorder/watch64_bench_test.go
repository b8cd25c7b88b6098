package recorder

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// watchBenchStream is proxybench's 64 KiB event stream (bench/proxybench:
// payload.go): four events of 16 KiB, each an id line and one data line,
// three notifications/message and the tools/call result, all without a
// server request.
func watchBenchStream() [][]byte {
	const per = 16 << 10
	var evs [][]byte
	for i := 1; i <= 4; i++ {
		head := "id: ev-" + strconv.Itoa(i) + "\ndata: "
		var pre, post string
		if i < 4 {
			pre = `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"event ` + strconv.Itoa(i) + ` `
			post = `","level":"info","logger":"proxybench"}}`
		} else {
			pre = `{"id":1,"jsonrpc":"2.0","result":{"content":[{"text":"result: `
			post = `","type":"text"}],"isError":false,"resultType":"complete"}}`
		}
		pad := per - len(head) - len(pre) - len(post) - 2
		evs = append(evs, []byte(head+pre+strings.Repeat("x", pad)+post+"\n\n"))
	}
	return evs
}

// BenchmarkRequestWatch64KiB is the request watch's cost per 64 KiB stream of
// watchBenchStream, as the writer feeds it: each event in one write
// ("event"); each in the two writes mcpdiag proxy makes of it, its first
// 4 KiB (what the upstream connection's 4 KiB read buffer held) and the
// rest ("proxy", as strace showed in proxybench's sse/8); or the stream cut
// into 4 KiB writes ("4KiB").
func BenchmarkRequestWatch64KiB(b *testing.B) {
	poison := poisonRecycled
	poisonRecycled = false
	defer func() { poisonRecycled = poison }()
	evs := watchBenchStream()
	whole := bytes.Join(evs, nil)
	var cut [][]byte
	for i := 0; i < len(whole); i += 4 << 10 {
		cut = append(cut, whole[i:min(i+4<<10, len(whole))])
	}
	var proxied [][]byte
	for _, ev := range evs {
		proxied = append(proxied, ev[:4<<10], ev[4<<10:])
	}
	for _, c := range []struct {
		name   string
		writes [][]byte
	}{{"event", evs}, {"proxy", proxied}, {"4KiB", cut}} {
		b.Run(c.name, func(b *testing.B) {
			var s serverRequests
			b.SetBytes(int64(len(whole)))
			b.ReportAllocs()
			for b.Loop() {
				w := newRequestWatch()
				for _, p := range c.writes {
					w.feed(p, &s, "s")
				}
				w.release()
			}
			if len(s.order) != 0 {
				b.Fatalf("noted %q in a stream of no server request", s.order)
			}
		})
	}
}
