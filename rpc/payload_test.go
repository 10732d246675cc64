package rpc

import (
	"bytes"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"github.com/pacpfl/pacpfl/rpc/pb"
)

// wireChunk is a ServerMessage carrying data as a chunk, as gRPC hands it
// to the codec: its wire bytes cut into buffers, the first ones of head
// bytes each (so that the header straddles buffers), the rest of 16 KiB.
func wireChunk(t *testing.T, data []byte, head int) *rawMessage {
	t.Helper()
	b, err := proto.Marshal(&pb.ServerMessage{Msg: &pb.ServerMessage_Chunk{Chunk: &pb.Chunk{Data: data}}})
	if err != nil {
		t.Fatal(err)
	}
	return splitWire(b, head)
}

func splitWire(b []byte, head int) *rawMessage {
	var s mem.BufferSlice
	for i := 0; len(b) > 0; i++ {
		n := min(len(b), 16<<10)
		if i < 6 {
			n = min(len(b), head)
		}
		s = append(s, mem.SliceBuffer(b[:n]))
		b = b[n:]
	}
	return &rawMessage{data: s}
}

// Messages that are not exactly a chunk of the expected oneof field are
// refused, whatever the buffers' cut.
func TestRawChunkRefusals(t *testing.T) {
	marshal := func(m proto.Message) []byte {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	good := marshal(&pb.ServerMessage{Msg: &pb.ServerMessage_Chunk{Chunk: &pb.Chunk{Data: make([]byte, 64)}}})
	work := marshal(&pb.ServerMessage{Msg: &pb.ServerMessage_Work{Work: &pb.Work{Seq: 1, K: 2}}})
	extra := append(append([]byte{}, good...), 0x08, 0x01) // an unknown field after the chunk
	cases := []struct {
		name  string
		b     []byte
		field uint64
		want  string
	}{
		{"work", work, serverChunkField, "expected a payload chunk"},
		{"client field", good, clientChunkField, "expected a payload chunk"},
		{"truncated", good[:len(good)-3], serverChunkField, "malformed"},
		{"trailing field", extra, serverChunkField, "malformed"},
		{"empty", nil, serverChunkField, "expected a payload chunk"},
		{"empty chunk", marshal(&pb.ServerMessage{Msg: &pb.ServerMessage_Chunk{Chunk: &pb.Chunk{}}}), serverChunkField,
			"chunk of 0 bytes"},
		{"odd size", marshal(&pb.ServerMessage{Msg: &pb.ServerMessage_Chunk{Chunk: &pb.Chunk{Data: make([]byte, 12)}}}),
			serverChunkField, "chunk of 12 bytes"},
	}
	for _, c := range cases {
		for _, head := range []int{1, 2, 3, 64} {
			var rd chunkReader
			rd.start(&pb.Payload{Size: 800}, make([]float64, 100))
			_, err := rd.addRaw(splitWire(c.b, head), c.field)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s (head %d): %v; want an error with %q", c.name, head, err, c.want)
			}
		}
	}
	var rd chunkReader
	rd.start(&pb.Payload{Size: 800}, make([]float64, 100))
	if done, err := rd.addRaw(splitWire(good, 1), serverChunkField); done || err != nil {
		t.Errorf("good chunk: done %v, %v", done, err)
	}
}

// The payload encoding (the floats' memory on little-endian machines) is
// the one-number-at-a-time little-endian encoding, both ways, for special
// values and every length up to a few chunks' worth of odd sizes.
func TestPayloadEncodingMatchesPortable(t *testing.T) {
	native := littleEndian
	defer func() { littleEndian = native }()
	for _, le := range []bool{native, false} { // false: the big-endian path
		littleEndian = le
		testPayloadEncoding(t)
	}
}

func testPayloadEncoding(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 1000, ChunkSize/8 + 3} {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = r.NormFloat64() * math.Exp(20*r.NormFloat64())
		}
		if n >= 4 {
			xs[0], xs[1], xs[2], xs[3] = math.Inf(-1), math.Copysign(0, -1), math.NaN(), math.SmallestNonzeroFloat64
		}
		want := make([]byte, 8*n)
		putFloats(want, xs)
		got, crc := encodeFloats(nil, xs)
		if !bytes.Equal(got, want) {
			t.Fatalf("n=%d: encodeFloats differs from the portable encoding", n)
		}
		p, _, crc2 := payloadOf(nil, xs)
		if !bytes.Equal(p, want) || crc2 != crc {
			t.Fatalf("n=%d: payloadOf differs from encodeFloats", n)
		}
		if n == 0 {
			continue
		}
		back := make([]float64, n)
		var rd chunkReader
		rd.start(&pb.Payload{Size: uint64(8 * n), Crc32C: crc}, back)
		var done bool
		if err := chunks(want, func(b []byte) error {
			var err error
			done, err = rd.addRaw(wireChunk(t, b, 1+len(b)%5), serverChunkField)
			return err
		}); err != nil || !done {
			t.Fatalf("n=%d: decode: done %v, %v", n, done, err)
		}
		ref := make([]float64, n)
		getFloats(ref, want)
		for i := range back {
			if math.Float64bits(back[i]) != math.Float64bits(ref[i]) ||
				math.Float64bits(back[i]) != math.Float64bits(xs[i]) {
				t.Fatalf("n=%d: float %d decodes to %v, want %v", n, i, back[i], xs[i])
			}
		}
	}
}

// Decoding a chunk allocates nothing.
func TestAddRawDoesNotAllocate(t *testing.T) {
	const n = 4096
	data := make([]byte, 8*n)
	data[5] = 7
	msg := wireChunk(t, data, 3)
	dst := make([]float64, n)
	hdr := &pb.Payload{Size: 8 * n, Crc32C: crc32.Checksum(data, castagnoli)}
	var rd chunkReader
	allocs := testing.AllocsPerRun(20, func() {
		rd.start(hdr, dst)
		if done, err := rd.addRaw(msg, serverChunkField); !done || err != nil {
			t.Fatalf("done %v, %v", done, err)
		}
	})
	if allocs != 0 {
		t.Errorf("addRaw: %v allocations per chunk, want 0", allocs)
	}
}
