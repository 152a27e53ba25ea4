package resp

import (
	"math"
	"strconv"

	"github.com/tidwall/redcon"
)

// Writer encodes replies into an in-memory buffer that the connection
// flushes once per batch. Commands write through it and never test the
// protocol version: each method picks the RESP2 or RESP3 form itself.
// The encoders for the shared RESP2 forms are redcon's Append* helpers,
// which are sound; redcon has no RESP3 writers, so those are ours.
//
// A large value can be written by reference (BulkRef): the replies are
// then the buffer's bytes with the referenced values spliced in at their
// places, and the connection writes them with TakeBuffers.
type Writer struct {
	buf      []byte
	refs     []ref // in order of at
	refBytes int   // the bytes of refs
	proto    int   // 2 or 3
}

// ref is a value written by reference, spliced into the replies at
// buf[at].
type ref struct {
	at int
	b  []byte
}

// NewWriter returns a RESP2 writer. Its buffer grows with the first
// replies, to what the client's batches need: a connection that sends a
// PING and waits holds 8 bytes, not a page (with 4 KiB up front, 10,000
// idle connections held 40 MB of reply buffers).
func NewWriter() *Writer { return &Writer{proto: 2} }

// Proto is the protocol version of the connection (2 or 3).
func (w *Writer) Proto() int { return w.proto }

// SetProto switches the reply protocol (HELLO).
func (w *Writer) SetProto(p int) { w.proto = p }

// Bytes returns the encoded replies not yet taken, in one slice: values
// written by reference are copied into the buffer first. The connection
// takes large replies with TakeBuffers instead.
func (w *Writer) Bytes() []byte {
	if len(w.refs) > 0 {
		flat := make([]byte, 0, w.Len())
		for _, b := range w.TakeBuffers(nil) {
			flat = append(flat, b...)
		}
		w.buf = flat
	}
	return w.buf
}

// Len is the number of bytes waiting to be flushed.
func (w *Writer) Len() int { return len(w.buf) + w.refBytes }

// HasRefs reports whether replies hold values written by reference.
func (w *Writer) HasRefs() bool { return len(w.refs) > 0 }

// TakeBuffers appends the replies to dst as buffers to write in order
// (the buffer's bytes between the values written by reference, and those
// values) and hands them over: the writer starts a new buffer and never
// changes these bytes again, so they may be kept until written.
func (w *Writer) TakeBuffers(dst [][]byte) [][]byte {
	prev := 0
	for _, r := range w.refs {
		if r.at > prev {
			dst = append(dst, w.buf[prev:r.at:r.at])
		}
		dst = append(dst, r.b)
		prev = r.at
	}
	if len(w.buf) > prev {
		dst = append(dst, w.buf[prev:])
	}
	clear(w.refs)
	w.refs, w.refBytes = w.refs[:0], 0
	w.buf = make([]byte, 0, 4096)
	return dst
}

// Reset drops the buffered replies, keeping a modest buffer for reuse:
// one very large reply must not pin its memory to an idle connection.
func (w *Writer) Reset() {
	if len(w.refs) > 0 {
		clear(w.refs)
		w.refs, w.refBytes = w.refs[:0], 0
	}
	if cap(w.buf) > 1<<20 {
		w.buf = nil
		return
	}
	w.buf = w.buf[:0]
}

// Truncate drops replies written after mark (see Mark).
func (w *Writer) Truncate(mark int) {
	// A value written by reference lies before mark or wholly after it.
	for len(w.refs) > 0 {
		r := w.refs[len(w.refs)-1]
		if r.at+w.refBytes-len(r.b) < mark {
			break
		}
		w.refBytes -= len(r.b)
		w.refs[len(w.refs)-1] = ref{}
		w.refs = w.refs[:len(w.refs)-1]
	}
	w.buf = w.buf[:mark-w.refBytes]
}

// Mark returns the current length, for Truncate.
func (w *Writer) Mark() int { return w.Len() }

// Raw appends bytes already RESP-encoded.
func (w *Writer) Raw(b []byte) { w.buf = append(w.buf, b...) }

// Simple writes a status reply: +OK.
func (w *Writer) Simple(s string) { w.buf = redcon.AppendString(w.buf, s) }

// OK writes +OK.
func (w *Writer) OK() { w.buf = append(w.buf, "+OK\r\n"...) }

// Error writes an error reply. msg carries its own prefix ("ERR ...",
// "WRONGTYPE ..."); newlines are replaced by spaces as Redis does, since
// an error reply is a single line.
func (w *Writer) Error(msg string) {
	w.buf = append(w.buf, '-')
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		w.buf = append(w.buf, c)
	}
	w.buf = append(w.buf, '\r', '\n')
}

// Int writes an integer reply.
func (w *Writer) Int(n int64) { w.buf = redcon.AppendInt(w.buf, n) }

// Bulk writes a bulk string.
func (w *Writer) Bulk(b []byte) { w.buf = redcon.AppendBulk(w.buf, b) }

// BulkRef writes a bulk string whose bytes stay where they are until the
// connection writes them (Redis's reply that references a big string
// object instead of copying it): b must not change until then (see
// keyspace.DB.PinStr). Worth it for large values only.
func (w *Writer) BulkRef(b []byte) {
	w.buf = append(w.buf, '$')
	w.buf = strconv.AppendInt(w.buf, int64(len(b)), 10)
	w.buf = append(w.buf, '\r', '\n')
	if len(b) > 0 {
		w.refs = append(w.refs, ref{at: len(w.buf), b: b})
		w.refBytes += len(b)
	}
	w.buf = append(w.buf, '\r', '\n')
}

// BulkString writes a bulk string.
func (w *Writer) BulkString(s string) { w.buf = redcon.AppendBulkString(w.buf, s) }

// BulkInt writes an integer as a bulk string.
func (w *Writer) BulkInt(n int64) {
	var tmp [24]byte
	w.Bulk(strconv.AppendInt(tmp[:0], n, 10))
}

// BulkUint writes an unsigned integer as a bulk string (SCAN cursors).
func (w *Writer) BulkUint(n uint64) {
	var tmp [24]byte
	w.Bulk(strconv.AppendUint(tmp[:0], n, 10))
}

// Null writes the null reply: $-1 in RESP2, _ in RESP3.
func (w *Writer) Null() {
	if w.proto == 3 {
		w.buf = append(w.buf, "_\r\n"...)
		return
	}
	w.buf = append(w.buf, "$-1\r\n"...)
}

// NullArray writes the null multi-bulk: *-1 in RESP2, _ in RESP3.
func (w *Writer) NullArray() {
	if w.proto == 3 {
		w.buf = append(w.buf, "_\r\n"...)
		return
	}
	w.buf = append(w.buf, "*-1\r\n"...)
}

// Array writes the header of an array of n elements.
func (w *Writer) Array(n int) { w.buf = redcon.AppendArray(w.buf, n) }

// Map writes the header of a map of n pairs: *2n in RESP2, %n in RESP3.
func (w *Writer) Map(n int) {
	if w.proto == 3 {
		w.buf = aggregateHeader(w.buf, '%', n)
		return
	}
	w.Array(2 * n)
}

// Set writes the header of a set of n elements: *n in RESP2, ~n in RESP3.
func (w *Writer) Set(n int) {
	if w.proto == 3 {
		w.buf = aggregateHeader(w.buf, '~', n)
		return
	}
	w.Array(n)
}

// Bool writes a boolean: :1/:0 in RESP2, #t/#f in RESP3.
func (w *Writer) Bool(b bool) {
	if w.proto == 3 {
		if b {
			w.buf = append(w.buf, "#t\r\n"...)
		} else {
			w.buf = append(w.buf, "#f\r\n"...)
		}
		return
	}
	if b {
		w.Int(1)
	} else {
		w.Int(0)
	}
}

// Double writes a floating point number: a bulk string in RESP2 (formatted
// as Redis's %.17g), a RESP3 double otherwise.
func (w *Writer) Double(f float64) {
	var tmp [32]byte
	s := AppendDouble(tmp[:0], f)
	if w.proto == 3 {
		w.buf = append(w.buf, ',')
		w.buf = append(w.buf, s...)
		w.buf = append(w.buf, '\r', '\n')
		return
	}
	w.Bulk(s)
}

// DoubleText writes a double already formatted (addReplyHumanLongDouble:
// GEOPOS's coordinates): a RESP3 double, a bulk string in RESP2.
func (w *Writer) DoubleText(text []byte) {
	if w.proto == 3 {
		w.buf = append(w.buf, ',')
		w.buf = append(w.buf, text...)
		w.buf = append(w.buf, '\r', '\n')
		return
	}
	w.Bulk(text)
}

// Verbatim writes a verbatim string (txt) in RESP3, a bulk string in RESP2.
func (w *Writer) Verbatim(s string) { w.VerbatimFormat("txt", s) }

// VerbatimFormat writes a verbatim string of the given three-letter
// format in RESP3, a bulk string in RESP2 (addReplyVerbatim).
func (w *Writer) VerbatimFormat(format, s string) {
	if w.proto == 3 {
		w.buf = append(w.buf, '=')
		w.buf = strconv.AppendInt(w.buf, int64(len(s)+4), 10)
		w.buf = append(w.buf, '\r', '\n')
		// Exactly three bytes, as Redis copies them from a C string.
		var f [3]byte
		copy(f[:], format)
		w.buf = append(w.buf, f[:]...)
		w.buf = append(w.buf, ':')
		w.buf = append(w.buf, s...)
		w.buf = append(w.buf, '\r', '\n')
		return
	}
	w.BulkString(s)
}

// BigNumber writes a big number, given as its decimal digits: ( in
// RESP3, a bulk string in RESP2 (addReplyBigNum).
func (w *Writer) BigNumber(digits string) {
	if w.proto == 3 {
		w.buf = append(w.buf, '(')
		w.buf = append(w.buf, digits...)
		w.buf = append(w.buf, '\r', '\n')
		return
	}
	w.BulkString(digits)
}

// Attribute writes the header of an attribute of n pairs, the RESP3 map
// that comes before the reply it describes ("|"). RESP2 has no
// attributes: the caller writes one only to a RESP3 connection (Redis
// asserts it), and nothing is written in RESP2.
func (w *Writer) Attribute(n int) {
	if w.proto != 3 {
		return
	}
	w.buf = aggregateHeader(w.buf, '|', n)
}

// Push writes the header of an out-of-band message of n elements
// (pub/sub messages and confirmations, invalidations): >n in RESP3, an
// array in RESP2 (addReplyPushLen).
func (w *Writer) Push(n int) {
	if w.proto == 3 {
		w.buf = aggregateHeader(w.buf, '>', n)
		return
	}
	w.Array(n)
}

// DeferArray reserves room for an array header whose length is not known
// yet; FillArray writes it once the elements are written.
func (w *Writer) DeferArray() int {
	mark := len(w.buf)
	// "*" + up to 20 digits + "\r\n": reserved, then moved into place.
	w.buf = append(w.buf, "                       "...)
	return mark
}

// FillArray completes a header reserved by DeferArray with n elements.
func (w *Writer) FillArray(mark, n int) {
	var tmp [24]byte
	w.fill(mark, redcon.AppendArray(tmp[:0], n))
}

// FillMap is FillArray for a map of n pairs (a header DeferArray
// reserved): %n in RESP3, *2n in RESP2.
func (w *Writer) FillMap(mark, n int) {
	if w.proto != 3 {
		w.FillArray(mark, 2*n)
		return
	}
	var tmp [24]byte
	w.fill(mark, aggregateHeader(tmp[:0], '%', n))
}

// FillSet is FillArray for a set of n elements: ~n in RESP3, *n in RESP2.
func (w *Writer) FillSet(mark, n int) {
	if w.proto != 3 {
		w.FillArray(mark, n)
		return
	}
	var tmp [24]byte
	w.fill(mark, aggregateHeader(tmp[:0], '~', n))
}

// aggregateHeader appends a RESP3 aggregate's header: kind, then n.
func aggregateHeader(b []byte, kind byte, n int) []byte {
	b = append(b, kind)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

// fill moves hdr into the room DeferArray reserved at mark.
func (w *Writer) fill(mark int, hdr []byte) {
	const reserved = 23
	body := len(w.buf) - mark - reserved
	copy(w.buf[mark:], hdr)
	copy(w.buf[mark+len(hdr):], w.buf[mark+reserved:])
	w.buf = w.buf[:mark+len(hdr)+body]
	for i := len(w.refs) - 1; i >= 0 && w.refs[i].at >= mark+reserved; i-- {
		w.refs[i].at -= reserved - len(hdr)
	}
}

// AppendDouble formats f as Redis formats doubles in replies (%.17g, with
// "inf"/"-inf"/"nan").
func AppendDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case math.IsNaN(f):
		return append(dst, "nan"...)
	}
	return strconv.AppendFloat(dst, f, 'g', 17, 64)
}
