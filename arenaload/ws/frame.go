package ws

import (
	"bufio"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
)

// WebSocket opcodes (RFC 6455 section 5.2).
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xa
)

// maxControlPayload is the largest payload a control frame may carry (RFC 6455 5.5).
const maxControlPayload = 125

// acceptGUID is the GUID RFC 6455 appends to Sec-WebSocket-Key to derive the Accept.
const acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// Errors of the frame parser.
var (
	errLength      = errors.New("websocket: 64-bit payload length has its most significant bit set")
	errTooLarge    = errors.New("websocket: frame payload exceeds the limit")
	errControl     = errors.New("websocket: control frame fragmented or longer than 125 bytes")
	errFrameHeader = errors.New("websocket: truncated frame header")
)

// header is a parsed frame header.
type header struct {
	fin    bool
	rsv    byte // RSV1..RSV3 as the low three bits
	op     byte
	masked bool
	mask   [4]byte
	length int
}

// acceptKey is the Sec-WebSocket-Accept a server must answer to Sec-WebSocket-Key key.
func acceptKey(key string) string {
	h := sha1.New()
	h.Write([]byte(key))
	h.Write([]byte(acceptGUID))
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// appendFrame appends one frame carrying payload to dst: FIN as given, the opcode op, and,
// with a mask, the payload masked (a client's frame); without, unmasked (a server's).
// payload itself is not modified.
func appendFrame(dst []byte, fin bool, op byte, mask *[4]byte, payload []byte) []byte {
	b0 := op & 0x0f
	if fin {
		b0 |= 0x80
	}
	var m byte
	if mask != nil {
		m = 0x80
	}
	n := len(payload)
	switch {
	case n <= 125:
		dst = append(dst, b0, m|byte(n))
	case n <= 0xffff:
		dst = append(dst, b0, m|126)
		dst = binary.BigEndian.AppendUint16(dst, uint16(n))
	default:
		dst = append(dst, b0, m|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	}
	if mask == nil {
		return append(dst, payload...)
	}
	dst = append(dst, mask[:]...)
	start := len(dst)
	dst = append(dst, payload...)
	maskBytes(dst[start:], *mask, 0)
	return dst
}

// maskBytes XORs b with the mask, b's first byte being byte pos of the payload; masking
// twice unmasks.
func maskBytes(b []byte, mask [4]byte, pos int) {
	for i := range b {
		b[i] ^= mask[(pos+i)&3]
	}
}

// headerLen is the length of the header starting with bytes b0 b1.
func headerLen(b1 byte) int {
	n := 2
	switch b1 & 0x7f {
	case 126:
		n += 2
	case 127:
		n += 8
	}
	if b1&0x80 != 0 {
		n += 4
	}
	return n
}

// readFrame reads one frame from r and returns its header, its payload (unmasked when the
// frame was masked) and the frame's size on the wire. A payload no longer than r's buffer
// is r's own buffer, valid until the next read from r; a longer one is read into *scratch,
// which grows as needed. A payload longer than limit is an error, and so is a control
// frame that is fragmented or longer than 125 bytes; reserved bits and opcodes are
// returned for the caller to judge.
func readFrame(r *bufio.Reader, scratch *[]byte, limit int) (h header, payload []byte, wire int, err error) {
	b, err := r.Peek(2)
	if err != nil {
		if len(b) > 0 && err == io.EOF {
			err = errFrameHeader
		}
		return h, nil, 0, err
	}
	hl := headerLen(b[1])
	if b, err = r.Peek(hl); err != nil {
		if err == io.EOF {
			err = errFrameHeader
		}
		return h, nil, 0, err
	}
	h.fin = b[0]&0x80 != 0
	h.rsv = (b[0] >> 4) & 0x7
	h.op = b[0] & 0x0f
	h.masked = b[1]&0x80 != 0
	var n uint64
	i := 2
	switch b[1] & 0x7f {
	case 126:
		n = uint64(binary.BigEndian.Uint16(b[2:4]))
		i = 4
	case 127:
		n = binary.BigEndian.Uint64(b[2:10])
		i = 10
		if n>>63 != 0 {
			return h, nil, 0, errLength
		}
	default:
		n = uint64(b[1] & 0x7f)
	}
	if h.masked {
		copy(h.mask[:], b[i:i+4])
	}
	if n > uint64(limit) {
		return h, nil, 0, errTooLarge
	}
	h.length = int(n)
	if h.op >= 0x8 && (!h.fin || h.length > maxControlPayload) {
		return h, nil, 0, errControl
	}
	if _, err = r.Discard(hl); err != nil {
		return h, nil, 0, err
	}
	if h.length <= r.Size() {
		payload, err = r.Peek(h.length)
		if err == nil {
			_, err = r.Discard(h.length)
		}
	} else {
		if cap(*scratch) < h.length {
			*scratch = make([]byte, h.length)
		}
		payload = (*scratch)[:h.length]
		_, err = io.ReadFull(r, payload)
	}
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return h, nil, 0, err
	}
	if h.masked {
		maskBytes(payload, h.mask, 0)
	}
	return h, payload, hl + h.length, nil
}

// frameBuffered reports whether r holds a whole frame, so that readFrame would not block.
func frameBuffered(r *bufio.Reader) bool {
	avail := r.Buffered()
	if avail < 2 {
		return false
	}
	b, _ := r.Peek(2)
	hl := headerLen(b[1])
	if avail < hl {
		return false
	}
	b, _ = r.Peek(hl)
	var n uint64
	switch b[1] & 0x7f {
	case 126:
		n = uint64(binary.BigEndian.Uint16(b[2:4]))
	case 127:
		n = binary.BigEndian.Uint64(b[2:10])
	default:
		n = uint64(b[1] & 0x7f)
	}
	return n <= uint64(avail-hl)
}
