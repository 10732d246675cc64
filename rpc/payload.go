package rpc

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"unsafe"

	"github.com/pacpfl/pacpfl/rpc/pb"
)

// ChunkSize is the largest chunk of a payload on the wire: well under
// grpc-go's default 4 MiB message limit.
const ChunkSize = 1 << 20

// maxMessage is the gRPC message limit both sides set: a chunk and its
// framing, or a header.
const maxMessage = ChunkSize + 64<<10

// HTTP/2 flow-control windows and socket buffers of both sides: a fixed
// window of a few chunks lets a 25 MB payload stream without waiting for
// window updates (grpc's default starts at 64 KiB and grows by probing).
const (
	windowSize = 8 << 20
	ioBuffer   = 256 << 10
)

// DefaultMaxPayload is the default limit on one payload (k×dφ float64s):
// 256 MiB, ten times a BCNN prior's k = 3 particles (≈ 25 MB).
const DefaultMaxPayload = 256 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// littleEndian: the machine stores float64s as the wire does, so a
// payload is the floats' memory (a copy, not a conversion per number).
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// floatBytes is the memory of xs as bytes (little-endian machines only).
func floatBytes(xs []float64) []byte {
	if len(xs) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&xs[0])), 8*len(xs))
}

// encodeFloats writes xs as little-endian float64s into buf (grown as
// needed) and returns the bytes and their CRC-32C.
func encodeFloats(buf []byte, xs []float64) ([]byte, uint32) {
	n := 8 * len(xs)
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if littleEndian {
		copy(buf, floatBytes(xs))
	} else {
		putFloats(buf, xs)
	}
	return buf, crc32.Checksum(buf, castagnoli)
}

// payloadOf returns xs as a payload and its CRC-32C: on a little-endian
// machine the floats' own memory (no copy: xs must not change until the
// payload is sent), otherwise encoded into buf. buf is returned for reuse.
func payloadOf(buf []byte, xs []float64) (payload, keep []byte, crc uint32) {
	if littleEndian {
		b := floatBytes(xs)
		return b, buf, crc32.Checksum(b, castagnoli)
	}
	buf, crc = encodeFloats(buf, xs)
	return buf, buf, crc
}

// putFloats and getFloats convert between float64s and their
// little-endian bytes one number at a time (any machine).
func putFloats(buf []byte, xs []float64) {
	for i, x := range xs {
		binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(x))
	}
}

func getFloats(dst []float64, buf []byte) {
	for i := range dst {
		dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(buf[8*i:]))
	}
}

// checkHeader validates a payload header announcing want float64s against
// the receiver's limit.
func checkHeader(p *pb.Payload, want int, limit int64) error {
	if p == nil {
		return fmt.Errorf("payload header missing")
	}
	if p.Size > uint64(limit) {
		return fmt.Errorf("payload of %d bytes above the limit of %d bytes", p.Size, limit)
	}
	if p.Size != 8*uint64(want) {
		return fmt.Errorf("payload of %d bytes, want %d (%d float64s)", p.Size, 8*want, want)
	}
	return nil
}

// chunkReader decodes a payload into float64s as its chunks arrive,
// checking size and CRC-32C on the way.
type chunkReader struct {
	dst       []float64
	off, want uint64 // bytes
	crc, sum  uint32
	scratch   []byte // addRaw on big-endian machines
}

// start prepares for a payload announced by p (already checked against
// len(dst)).
func (r *chunkReader) start(p *pb.Payload, dst []float64) {
	r.dst, r.off, r.want, r.crc, r.sum = dst, 0, p.Size, p.Crc32C, 0
}

// complete accounts for n more bytes and reports whether the payload is
// complete (and its checksum right).
func (r *chunkReader) complete(n uint64) (bool, error) {
	r.off += n
	if r.off < r.want {
		return false, nil
	}
	if r.sum != r.crc {
		return false,
			checksumError{fmt.Errorf("payload checksum mismatch (CRC-32C %08x, announced %08x)", r.sum, r.crc)}
	}
	return true, nil
}

// checksumError is a payload that arrived whole but corrupted.
type checksumError struct{ error }

// chunks calls send with consecutive pieces of b of at most ChunkSize bytes.
func chunks(b []byte, send func([]byte) error) error {
	for len(b) > 0 {
		n := min(len(b), ChunkSize)
		if err := send(b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
