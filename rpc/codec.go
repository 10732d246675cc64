package rpc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/proto" // registers the proto codec
	"google.golang.org/grpc/mem"
)

// codec is gRPC's proto codec, except that a *rawMessage receives the wire
// bytes of a message as gRPC read them, without a copy: a payload chunk is
// decoded straight from gRPC's receive buffers into its float64s (the
// proto codec would copy the bytes twice, into one contiguous buffer and
// then into a fresh Chunk.Data). The wire format is unchanged.
type codec struct{}

var protoCodec = encoding.GetCodecV2("proto")

func (codec) Name() string { return "proto" }

func (codec) Marshal(v any) (mem.BufferSlice, error) { return protoCodec.Marshal(v) }

func (codec) Unmarshal(data mem.BufferSlice, v any) error {
	if r, ok := v.(*rawMessage); ok {
		data.Ref() // released by rawMessage.free
		r.data = data
		return nil
	}
	return protoCodec.Unmarshal(data, v)
}

// rawMessage is a received message's wire bytes (gRPC's buffers).
type rawMessage struct{ data mem.BufferSlice }

// free returns the buffers to gRPC.
func (r *rawMessage) free() {
	r.data.Free()
	r.data = nil
}

// Field numbers of the chunk in the oneofs of ServerMessage and
// ClientMessage (federation.proto).
const (
	serverChunkField = 4
	clientChunkField = 3
)

var (
	errNotChunk       = errors.New("expected a payload chunk")
	errMalformedChunk = errors.New("malformed payload chunk")
)

// rawChunk locates the payload bytes of a message that must be a Chunk in
// field field of its oneof: the message is exactly the field's tag, its
// length, and the Chunk (the tag of data, its length, the bytes). It
// returns the offset and length of the bytes in the message.
func rawChunk(data mem.BufferSlice, field uint64) (off, n int, err error) {
	var head [32]byte
	h := head[:0]
	for _, b := range data {
		h = append(h, b.ReadOnlyData()[:min(b.Len(), cap(h)-len(h))]...)
		if len(h) == cap(h) {
			break
		}
	}
	total := data.Len()
	tag, k := binary.Uvarint(h)
	if k <= 0 || tag != field<<3|2 {
		return 0, 0, errNotChunk
	}
	outer, k2 := binary.Uvarint(h[k:])
	if k2 <= 0 || uint64(total-k-k2) != outer {
		return 0, 0, errMalformedChunk
	}
	p := k + k2
	if outer == 0 {
		return p, 0, nil // an empty Chunk: no data
	}
	if p >= len(h) || h[p] != 1<<3|2 { // Chunk.data, length-delimited
		return 0, 0, errMalformedChunk
	}
	inner, k3 := binary.Uvarint(h[p+1:])
	if k3 <= 0 || uint64(total-p-1-k3) != inner {
		return 0, 0, errMalformedChunk
	}
	return p + 1 + k3, int(inner), nil
}

// addRaw is add for a message received as raw bytes: the chunk's bytes are
// checked and decoded from gRPC's buffers.
func (r *chunkReader) addRaw(m *rawMessage, field uint64) (bool, error) {
	off, size, err := rawChunk(m.data, field)
	if err != nil {
		return false, err
	}
	n := uint64(size)
	if n == 0 || n > ChunkSize || n%8 != 0 {
		return false, fmt.Errorf("chunk of %d bytes (want a multiple of 8 from 8 to %d)", n, ChunkSize)
	}
	if r.off+n > r.want {
		return false, fmt.Errorf("payload chunks exceed the announced %d bytes", r.want)
	}
	var dst []byte
	if littleEndian {
		dst = floatBytes(r.dst[r.off/8 : (r.off+n)/8])
	} else {
		if cap(r.scratch) < size {
			r.scratch = make([]byte, ChunkSize)
		}
		dst = r.scratch[:size]
	}
	w := 0
	for _, b := range m.data {
		d := b.ReadOnlyData()
		if off >= len(d) {
			off -= len(d)
			continue
		}
		w += copy(dst[w:], d[off:])
		off = 0
	}
	r.sum = crc32.Update(r.sum, castagnoli, dst)
	if !littleEndian {
		getFloats(r.dst[r.off/8:(r.off+n)/8], dst)
	}
	return r.complete(n)
}
