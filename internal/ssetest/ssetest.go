// Package ssetest holds the test doubles that feed an event stream to
// wire's readers in chunks: the same chunks as a wire.SSEChunkSource (each
// lent chunk poisoned once the next is taken) and as an io.Reader, so a
// test can compare the chunk-fed and the pull reader on equal input.
package ssetest

import "io"

// Source is a wire.SSEChunkSource over a stream cut into Chunks. Each chunk
// is lent in a buffer of its own, overwritten with 0xff once the next is
// taken, so that a use after the release shows. Ends records the event
// ends the reader reports.
type Source struct {
	Chunks [][]byte
	Err    error // returned at the end; io.EOF when nil
	Ends   []int64
	lent   []byte
}

// NextChunk poisons the chunk lent before and lends the next one.
func (c *Source) NextChunk() ([]byte, error) {
	for i := range c.lent {
		c.lent[i] = 0xff
	}
	c.lent = nil
	if len(c.Chunks) == 0 {
		if c.Err != nil {
			return nil, c.Err
		}
		return nil, io.EOF
	}
	c.lent = append([]byte(nil), c.Chunks[0]...)
	c.Chunks = c.Chunks[1:]
	return c.lent, nil
}

// Lent returns the chunk lent last.
func (c *Source) Lent() []byte { return c.lent }

// EventEnd records an event's end.
func (c *Source) EventEnd(end int64) { c.Ends = append(c.Ends, end) }

// Pieces is an io.Reader that returns the same Chunks, at most one per
// Read: what a reader of the recorder's pipe gets.
type Pieces struct {
	Chunks [][]byte
	Err    error // returned at the end; io.EOF when nil
}

// Read copies from the current chunk.
func (c *Pieces) Read(p []byte) (int, error) {
	if len(c.Chunks) == 0 {
		if c.Err != nil {
			return 0, c.Err
		}
		return 0, io.EOF
	}
	n := copy(p, c.Chunks[0])
	if n == len(c.Chunks[0]) {
		c.Chunks = c.Chunks[1:]
	} else {
		c.Chunks[0] = c.Chunks[0][n:]
	}
	return n, nil
}
