package classify

import (
	"unsafe"
)

// The input requests of a verdict are kept packed (input19): one run of
// bytes that extra.input points at, in the verdict's own allocation when it
// fits (Classify's fast path), so that an input_required verdict is the
// Result, its extra and a few bytes (160 bytes for the article's response,
// 256 when they were an InputDetails, its request and a copy of the key).
// Input builds the InputDetails from them on each call; NumInputRequests,
// InputRequest and HasRequestState read them without an allocation.
//
// The layout: uvarint(len(rest)), then rest:
//
//	flags     1 byte: packHasState, packNilRequests
//	n         uvarint: how many requests
//	n times:  kind   1 byte: the method's index in inputMethodNames (or
//	                 packCopied) | the mode (modeNone, modeForm, modeURL,
//	                 modeCopy) << 2
//	          key    uvarint length, bytes
//	          method uvarint length, bytes (only when kind's method is packCopied)
//	          mode   uvarint length, bytes (only when kind's mode is modeCopy)
//
// The bytes are written once, before extra.input points at them, and never
// again while it does (ClassifyInto's next verdict may write a room again:
// its contract), so the strings read from them are views, not copies.
const (
	packHasState    = 1 << 0
	packNilRequests = 1 << 1

	packCopied    = 3 // a method in no table: its bytes follow the key
	packModeShift = 2
)

// inputRoom is the room of packed input requests that ClassifyInto reuses
// from one verdict to the next (extra.room).
type inputRoom struct {
	buf []byte
}

// uvarintLen returns the length of v as a uvarint.
func uvarintLen(v int) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// appendUvarint appends v as a uvarint.
func appendUvarint(b []byte, v int) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// packedLen returns the size of a whole packing, its length prefix
// included, whose part after the prefix is rest bytes.
func packedLen(rest int) int { return uvarintLen(rest) + rest }

// packedReqLen returns the bytes one request takes after its kind byte.
func packedReqLen(key, method, mode int, methodCopied, modeCopied bool) int {
	n := 1 + uvarintLen(key) + key
	if methodCopied {
		n += uvarintLen(method) + method
	}
	if modeCopied {
		n += uvarintLen(mode) + mode
	}
	return n
}

// appendPackedReq appends one request: its kind, key, and the method's and
// mode's bytes when they are copied.
func appendPackedReq[S ~string | ~[]byte](b []byte, method, mode byte, key, methodText, modeText S) []byte {
	b = append(b, method|mode<<packModeShift)
	b = appendUvarint(b, len(key))
	b = append(b, key...)
	if method == packCopied {
		b = appendUvarint(b, len(methodText))
		b = append(b, methodText...)
	}
	if mode == modeCopy {
		b = appendUvarint(b, len(modeText))
		b = append(b, modeText...)
	}
	return b
}

// packedRest returns the bytes the requests fastScan read take packed,
// after the length prefix (packedLen adds it).
func (in *fastInputs) packedRest() int {
	rest := 1 + uvarintLen(in.n)
	for _, q := range in.reqs[:in.n] {
		rest += packedReqLen(int(q.keyEnd-q.keyStart), 0, int(q.modeEnd-q.modeStart), false, q.mode == modeCopy)
	}
	return rest
}

// pack writes the requests fastScan read from data into buf (at least
// packedLen(packedRest()) bytes) and returns what extra.input points at.
func (in *fastInputs) pack(buf []byte, data []byte, hasState bool) *byte {
	b := appendUvarint(buf[:0], in.packedRest())
	b = append(b, packFlags(hasState, false))
	b = appendUvarint(b, in.n)
	for _, q := range in.reqs[:in.n] {
		var mode []byte
		if q.mode == modeCopy {
			mode = data[q.modeStart:q.modeEnd]
		}
		b = appendPackedReq(b, q.method, q.mode, data[q.keyStart:q.keyEnd], nil, mode)
	}
	return &b[0]
}

// packFlags returns the flags byte.
func packFlags(hasState, nilRequests bool) byte {
	var f byte
	if hasState {
		f |= packHasState
	}
	if nilRequests {
		f |= packNilRequests
	}
	return f
}

// packedKind returns the method's and mode's codes of q, and whether each
// is copied as bytes.
func packedKind(q *InputRequest) (method, mode byte) {
	method = packCopied
	for i, m := range inputMethodNames {
		if q.Method == m {
			method = byte(i)
			break
		}
	}
	switch q.Mode {
	case "":
		mode = modeNone
	case "form":
		mode = modeForm
	case "url":
		mode = modeURL
	default:
		mode = modeCopy
	}
	return method, mode
}

// packedDetailsRest returns the bytes d takes packed, after the length
// prefix (packedLen adds it).
func packedDetailsRest(d *InputDetails) int {
	rest := 1 + uvarintLen(len(d.Requests))
	for i := range d.Requests {
		q := &d.Requests[i]
		method, mode := packedKind(q)
		rest += packedReqLen(len(q.Key), len(q.Method), len(q.Mode), method == packCopied, mode == modeCopy)
	}
	return rest
}

// packDetails writes d into buf (at least packedLen(packedDetailsRest(d))
// bytes) and returns what extra.input points at.
func packDetails(buf []byte, d *InputDetails) *byte {
	b := appendUvarint(buf[:0], packedDetailsRest(d))
	b = append(b, packFlags(d.HasRequestState, d.Requests == nil))
	b = appendUvarint(b, len(d.Requests))
	for i := range d.Requests {
		q := &d.Requests[i]
		method, mode := packedKind(q)
		b = appendPackedReq(b, method, mode, q.Key, q.Method, q.Mode)
	}
	return &b[0]
}

// packed returns the bytes after the length prefix of the packing p points
// at (see above). They lie in the allocation p points into: the prefix says
// how many were written there.
func packed(p *byte) []byte {
	n, shift, k := 0, 0, 0
	for {
		c := *(*byte)(unsafe.Add(unsafe.Pointer(p), k))
		k++
		n |= int(c&0x7f) << shift
		if c < 0x80 {
			break
		}
		shift += 7
	}
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(p), k)), n)
}

// packReader reads a packing's requests in order.
type packReader struct {
	b []byte
	i int
}

// uvarint reads a uvarint.
func (p *packReader) uvarint() int {
	n, shift := 0, 0
	for {
		c := p.b[p.i]
		p.i++
		n |= int(c&0x7f) << shift
		if c < 0x80 {
			return n
		}
		shift += 7
	}
}

// text reads a length and that many bytes, as a string that shares them.
func (p *packReader) text() string {
	n := p.uvarint()
	if n == 0 {
		return ""
	}
	s := unsafe.String(&p.b[p.i], n)
	p.i += n
	return s
}

// open starts reading the packing p points at and returns its flags and
// count.
func openPacked(p *byte) (r packReader, flags byte, n int) {
	r.b = packed(p)
	flags = r.b[0]
	r.i = 1
	n = r.uvarint()
	return r, flags, n
}

// next reads the next request.
func (p *packReader) next() InputRequest {
	kind := p.b[p.i]
	p.i++
	q := InputRequest{Key: p.text()}
	method, mode := kind&3, kind>>packModeShift
	if method == packCopied {
		q.Method = p.text()
	} else {
		q.Method = inputMethodNames[method]
	}
	switch mode {
	case modeForm:
		q.Mode = "form"
	case modeURL:
		q.Mode = "url"
	case modeCopy:
		q.Mode = p.text()
	}
	return q
}

// unpack builds the InputDetails of the packing p points at: one
// allocation for one or two requests (the usual counts), two for more.
func unpack(p *byte) *InputDetails {
	r, flags, n := openPacked(p)
	var d *InputDetails
	switch {
	case flags&packNilRequests != 0:
		d = new(InputDetails)
	case n <= 1:
		s := new(struct {
			d    InputDetails
			reqs [1]InputRequest
		})
		d = &s.d
		d.Requests = s.reqs[:0:n]
	case n == 2:
		s := new(struct {
			d    InputDetails
			reqs [2]InputRequest
		})
		d = &s.d
		d.Requests = s.reqs[:0:2]
	default:
		d = &InputDetails{Requests: make([]InputRequest, 0, n)}
	}
	d.HasRequestState = flags&packHasState != 0
	for range n {
		d.Requests = append(d.Requests, r.next())
	}
	return d
}

// inputBuf returns size bytes of room for the packed input requests of the
// verdict the classifier is writing into r: r's room, kept for
// ClassifyInto's next verdict, made or grown when it has too few.
func (r *Result) inputBuf(size int) []byte {
	e := r.more()
	if e.room == nil || cap(e.room.buf) < size {
		if size <= 48 {
			s := new(struct {
				room inputRoom
				b    [48]byte
			})
			s.room.buf = s.b[:]
			e.room = &s.room
		} else {
			e.room = &inputRoom{buf: make([]byte, size)}
		}
	}
	return e.room.buf[:size]
}

// keepInput packs d as the input requests of the verdict the classifier is
// writing into r (the general path's).
func (r *Result) keepInput(d *InputDetails) {
	p := packDetails(r.inputBuf(packedLen(packedDetailsRest(d))), d)
	r.extra.input = p
}

// newInputVerdict allocates the Result of an input_required verdict of the
// fast path whose requests take size bytes packed, with its extra and,
// when they fit, the room for them (nil otherwise): one object at the
// size class the bytes need.
func newInputVerdict(size int) (*Result, []byte) {
	switch {
	case size <= 16:
		s := new(struct {
			r Result
			e extra
			p [16]byte
		})
		s.r.extra = &s.e
		return &s.r, s.p[:]
	case size <= 32:
		s := new(struct {
			r Result
			e extra
			p [32]byte
		})
		s.r.extra = &s.e
		return &s.r, s.p[:]
	case size <= 64:
		s := new(struct {
			r Result
			e extra
			p [64]byte
		})
		s.r.extra = &s.e
		return &s.r, s.p[:]
	case size <= 112:
		s := new(struct {
			r Result
			e extra
			p [112]byte
		})
		s.r.extra = &s.e
		return &s.r, s.p[:]
	}
	s := new(struct {
		r Result
		e extra
	})
	s.r.extra = &s.e
	return &s.r, nil
}

// NumInputRequests returns how many input requests Input has (0 when it
// is nil), without an allocation.
func (r *Result) NumInputRequests() int {
	if r.extra == nil || r.extra.input == nil {
		return 0
	}
	_, _, n := openPacked(r.extra.input)
	return n
}

// InputRequest returns Input's request i (0 ≤ i < NumInputRequests) by
// value, allocating nothing: the way to read a verdict's input requests
// on a hot path. It panics when i is out of range, as indexing a slice
// does.
func (r *Result) InputRequest(i int) InputRequest {
	if r.extra == nil || r.extra.input == nil {
		panic("classify: Result.InputRequest: index out of range")
	}
	p, _, n := openPacked(r.extra.input)
	if i < 0 || i >= n {
		panic("classify: Result.InputRequest: index out of range")
	}
	for range i {
		p.next()
	}
	return p.next()
}

// HasRequestState returns Input's HasRequestState, and ok whether Input is
// not nil, without an allocation.
func (r *Result) HasRequestState() (has, ok bool) {
	if r.extra == nil || r.extra.input == nil {
		return false, false
	}
	_, flags, _ := openPacked(r.extra.input)
	return flags&packHasState != 0, true
}
