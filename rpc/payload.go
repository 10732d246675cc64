package rpc

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/pacpfl/pacpfl/rpc/pb"
)

// ChunkSize is the largest chunk of a payload on the wire: well under
// grpc-go's default 4 MiB message limit.
const ChunkSize = 1 << 20

// maxMessage is the gRPC message limit both sides set: a chunk and its
// framing, or a header.
const maxMessage = ChunkSize + 64<<10

// DefaultMaxPayload is the default limit on one payload (k×dφ float64s):
// 256 MiB, ten times a BCNN prior's k = 3 particles (≈ 25 MB).
const DefaultMaxPayload = 256 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// encodeFloats writes xs as little-endian float64s into buf (grown as
// needed) and returns the bytes and their CRC-32C.
func encodeFloats(buf []byte, xs []float64) ([]byte, uint32) {
	n := 8 * len(xs)
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	for i, x := range xs {
		binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(x))
	}
	return buf, crc32.Checksum(buf, castagnoli)
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

// chunkReader assembles a payload from chunks.
type chunkReader struct {
	buf  []byte
	want uint64
	crc  uint32
}

// start prepares for a payload announced by p (already checked).
func (r *chunkReader) start(p *pb.Payload) {
	if uint64(cap(r.buf)) < p.Size {
		r.buf = make([]byte, 0, p.Size)
	}
	r.buf = r.buf[:0]
	r.want, r.crc = p.Size, p.Crc32C
}

// add appends one chunk; it reports whether the payload is complete.
func (r *chunkReader) add(c *pb.Chunk) (bool, error) {
	if c == nil {
		return false, fmt.Errorf("expected a payload chunk")
	}
	if len(c.Data) == 0 || len(c.Data) > ChunkSize {
		return false, fmt.Errorf("chunk of %d bytes (want 1 to %d)", len(c.Data), ChunkSize)
	}
	if uint64(len(r.buf))+uint64(len(c.Data)) > r.want {
		return false, fmt.Errorf("payload chunks exceed the announced %d bytes", r.want)
	}
	r.buf = append(r.buf, c.Data...)
	return uint64(len(r.buf)) == r.want, nil
}

// decode checks the checksum and writes the float64s into dst.
func (r *chunkReader) decode(dst []float64) error {
	if got := crc32.Checksum(r.buf, castagnoli); got != r.crc {
		return fmt.Errorf("payload checksum mismatch (CRC-32C %08x, announced %08x)", got, r.crc)
	}
	if len(r.buf) != 8*len(dst) {
		return fmt.Errorf("payload of %d bytes for %d float64s", len(r.buf), len(dst))
	}
	for i := range dst {
		dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(r.buf[8*i:]))
	}
	return nil
}

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
