package recorder

import (
	"io"
	"sync"
)

// pipeBudget bounds the bytes a pipe holds that its reader has not taken yet.
// The forwarding path only waits for the classifier when it lags this far
// behind, which on a working machine does not happen: classifying is far
// faster than any network.
const pipeBudget = 256 << 10

// pipe hands the bytes the client received to the classifier's goroutine.
// Unlike io.Pipe, a write does not wait for the reader unless the reader is
// pipeBudget bytes behind, and once the reader is done (the classifier
// returned) further writes are discarded, so the forwarding path never
// blocks on a reader that stopped.
type pipe struct {
	mu     sync.Mutex
	cond   sync.Cond
	chunks [][]byte
	queued int
	err    error // set by closeWithError; io.EOF for a clean end
	done   bool  // the reader stopped reading

	capt *capture // keeps the first bytes read, for the record (nil: none)
	off  int      // bytes of the head chunk read already
	held bool     // the capture holds the head chunk: it recycles it
}

func newPipe() *pipe {
	p := &pipe{}
	p.cond.L = &p.mu
	return p
}

// write queues b, which the pipe then owns (and recycles, see putChunk).
func (p *pipe) write(b []byte) {
	if len(b) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.queued >= pipeBudget && !p.done && p.err == nil {
		p.cond.Wait()
	}
	if p.done || p.err != nil {
		putChunk(b)
		return
	}
	p.chunks = append(p.chunks, b)
	p.queued += len(b)
	p.cond.Broadcast()
}

// buffered returns the bytes queued and not read yet.
func (p *pipe) buffered() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.queued
}

// closeWithError ends the stream: the reader gets err (io.EOF when nil)
// after the queued bytes.
func (p *pipe) closeWithError(err error) {
	if err == nil {
		err = io.EOF
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
	p.cond.Broadcast()
}

// stop tells writers that nobody reads any more and drops what is queued.
func (p *pipe) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	for i, c := range p.chunks {
		if i > 0 || !p.held {
			putChunk(c)
		}
	}
	p.chunks, p.queued, p.off, p.held = nil, 0, 0, false
	p.cond.Broadcast()
}

// keep makes the pipe note the bytes it hands to the reader in c (before
// the first Read).
func (p *pipe) keep(c *capture) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.capt = c
}

// Read implements io.Reader for the classifier.
func (p *pipe) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.chunks) == 0 && p.err == nil {
		p.cond.Wait()
	}
	if len(p.chunks) == 0 {
		return 0, p.err
	}
	head := p.chunks[0][p.off:]
	n := copy(b, head)
	if p.capt != nil && p.capt.add(head[:n], len(head), p.off > 0) {
		p.held = true
	}
	if n == len(head) {
		if !p.held {
			putChunk(p.chunks[0])
		}
		p.chunks[0] = nil
		p.chunks = p.chunks[1:]
		p.off, p.held = 0, false
	} else {
		p.off += n
	}
	p.queued -= n
	p.cond.Broadcast()
	return n, nil
}
