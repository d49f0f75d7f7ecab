package ws

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// TestAcceptKey checks the example of RFC 6455 section 1.3.
func TestAcceptKey(t *testing.T) {
	if got, want := acceptKey("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="; got != want {
		t.Errorf("acceptKey = %q, want %q", got, want)
	}
}

// TestFrameBytes checks encodings against RFC 6455 section 5.7's examples.
func TestFrameBytes(t *testing.T) {
	mask := [4]byte{0x37, 0xfa, 0x21, 0x3d}
	for _, tc := range []struct {
		name string
		got  []byte
		want []byte
	}{
		{"unmasked hello", appendFrame(nil, true, opText, nil, []byte("Hello")), []byte{0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f}},
		{"masked hello", appendFrame(nil, true, opText, &mask, []byte("Hello")), []byte{0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58}},
		{"first fragment", appendFrame(nil, false, opText, nil, []byte("Hel")), []byte{0x01, 0x03, 0x48, 0x65, 0x6c}},
		{"last fragment", appendFrame(nil, true, opContinuation, nil, []byte("lo")), []byte{0x80, 0x02, 0x6c, 0x6f}},
		{"ping", appendFrame(nil, true, opPing, nil, []byte("Hello")), []byte{0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f}},
		{"256 bytes", appendFrame(nil, true, opBinary, nil, make([]byte, 256))[:4], []byte{0x82, 0x7e, 0x01, 0x00}},
		{"64 KiB", appendFrame(nil, true, opBinary, nil, make([]byte, 65536))[:10], []byte{0x82, 0x7f, 0, 0, 0, 0, 0, 1, 0, 0}},
	} {
		if !bytes.Equal(tc.got, tc.want) {
			t.Errorf("%s: % x, want % x", tc.name, tc.got, tc.want)
		}
	}
}

// TestFrameRoundTrip reads back frames of the lengths at the edges of the length encodings,
// masked and unmasked, through readers smaller and larger than the payload.
func TestFrameRoundTrip(t *testing.T) {
	mask := [4]byte{0xde, 0xad, 0xbe, 0xef}
	for _, n := range []int{0, 1, 125, 126, 127, 65535, 65536, 70000} {
		payload := make([]byte, n)
		for i := range payload {
			payload[i] = byte(i * 7)
		}
		orig := bytes.Clone(payload)
		for _, m := range []*[4]byte{nil, &mask} {
			wire := appendFrame(nil, n%2 == 0, opBinary, m, payload)
			wire = appendFrame(wire, true, opPong, m, []byte("after"))
			if !bytes.Equal(payload, orig) {
				t.Fatalf("appendFrame changed its payload")
			}
			wantHeader := 2 + map[bool]int{true: 4}[m != nil]
			switch {
			case n > 65535:
				wantHeader += 8
			case n > 125:
				wantHeader += 2
			}
			for _, size := range []int{16, 4096, 1 << 17} {
				r := bufio.NewReaderSize(bytes.NewReader(wire), size)
				var scratch []byte
				h, pl, w, err := readFrame(r, &scratch, 1<<20)
				if err != nil {
					t.Fatalf("n=%d mask=%v size=%d: %v", n, m != nil, size, err)
				}
				if h.op != opBinary || h.fin != (n%2 == 0) || h.masked != (m != nil) || h.length != n || h.rsv != 0 {
					t.Errorf("n=%d: header %+v", n, h)
				}
				if m != nil && h.mask != mask {
					t.Errorf("n=%d: mask % x", n, h.mask)
				}
				if !bytes.Equal(pl, orig) {
					t.Errorf("n=%d mask=%v size=%d: payload differs", n, m != nil, size)
				}
				if w != wantHeader+n {
					t.Errorf("n=%d: wire size %d, want %d", n, w, wantHeader+n)
				}
				h, pl, _, err = readFrame(r, &scratch, 1<<20)
				if err != nil || h.op != opPong || string(pl) != "after" {
					t.Errorf("n=%d: next frame %+v %q %v", n, h, pl, err)
				}
				if _, _, _, err = readFrame(r, &scratch, 1<<20); err != io.EOF {
					t.Errorf("n=%d: after the last frame: %v, want EOF", n, err)
				}
			}
		}
	}
}

func TestFrameErrors(t *testing.T) {
	long := binary.BigEndian.AppendUint64([]byte{0x82, 0x7f}, 1<<63)
	for _, tc := range []struct {
		name string
		wire []byte
		want error
	}{
		{"empty", nil, io.EOF},
		{"one byte", []byte{0x81}, errFrameHeader},
		{"short extended length", []byte{0x81, 0x7e, 0x01}, errFrameHeader},
		{"short payload", []byte{0x81, 0x05, 'h', 'i'}, io.ErrUnexpectedEOF},
		{"short long payload", append([]byte{0x82, 0x7e, 0x10, 0x00}, make([]byte, 100)...), io.ErrUnexpectedEOF},
		{"64-bit msb", long, errLength},
		{"over the limit", []byte{0x82, 0x7e, 0x10, 0x01}, errTooLarge},
		{"fragmented ping", []byte{0x09, 0x00}, errControl},
		{"long close", append([]byte{0x88, 0x7e, 0x00, 0x7e}, make([]byte, 126)...), errControl},
	} {
		var scratch []byte
		_, _, _, err := readFrame(bufio.NewReaderSize(bytes.NewReader(tc.wire), 16), &scratch, 4096)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

// TestFrameBuffered: a frame counts as buffered only when all of it is.
func TestFrameBuffered(t *testing.T) {
	wire := appendFrame(nil, true, opText, nil, make([]byte, 300))
	for cut := 0; cut <= len(wire); cut++ {
		r := bufio.NewReaderSize(bytes.NewReader(wire[:cut]), 1024)
		_, _ = r.Peek(cut)
		if got := frameBuffered(r); got != (cut == len(wire)) {
			t.Errorf("%d of %d bytes buffered: frameBuffered = %v", cut, len(wire), got)
		}
	}
}

// FuzzReadFrame feeds the parser arbitrary bytes: it never panics, never returns more
// than the limit, and what it parses re-encodes to a frame it parses the same way.
func FuzzReadFrame(f *testing.F) {
	mask := [4]byte{1, 2, 3, 4}
	for _, n := range []int{0, 5, 125, 126, 65535, 65536} {
		f.Add(appendFrame(nil, true, opText, nil, make([]byte, n)))
		f.Add(appendFrame(nil, false, opContinuation, &mask, make([]byte, n)))
	}
	f.Add([]byte{0x89, 0x80, 1, 2, 3, 4})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		const limit = 1 << 17
		r := bufio.NewReaderSize(bytes.NewReader(data), 16)
		var scratch []byte
		for range 8 {
			buffered := frameBuffered(r)
			h, pl, wire, err := readFrame(r, &scratch, limit)
			if err != nil {
				if buffered && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, errFrameHeader)) {
					t.Fatalf("frameBuffered said a whole frame was there, then %v", err)
				}
				return
			}
			if len(pl) != h.length || h.length > limit || wire < h.length+2 {
				t.Fatalf("header %+v, payload %d bytes, wire %d", h, len(pl), wire)
			}
			var m *[4]byte
			if h.masked {
				m = &h.mask
			}
			again := appendFrame(nil, h.fin, h.op, m, pl)
			if len(again) != wire {
				// a non-minimal length encoding is read but re-encoded minimally
				if len(again) > wire {
					t.Fatalf("re-encoding is %d bytes, longer than the %d read", len(again), wire)
				}
			}
			var s2 []byte
			h2, pl2, _, err := readFrame(bufio.NewReader(bytes.NewReader(again)), &s2, limit)
			want := h
			want.rsv = 0 // appendFrame writes no reserved bits
			if err != nil || h2 != want || !bytes.Equal(pl2, pl) {
				t.Fatalf("re-encoded frame reads as %+v %v (want %+v)", h2, err, want)
			}
		}
	})
}
