package data

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// IDX is a parsed IDX file (the MNIST format) of unsigned bytes: the
// dimensions, outermost first, and the elements in row-major order.
type IDX struct {
	Dims []int
	Data []uint8
}

// Limits of the IDX reader. A header is refused before anything is
// allocated for it when it declares more dimensions or elements than these,
// so a hostile or corrupt header cannot cause an unbounded allocation; the
// payload is read incrementally, so memory follows the bytes actually
// present, never the size the header claims.
const (
	MaxIDXDims     = 8
	MaxIDXElements = 1 << 30 // 1 GiB of uint8 elements
)

// Errors of the IDX reader, wrapped with the file name and details; test
// with errors.Is.
var (
	ErrIDXMagic     = errors.New("not an IDX file of unsigned bytes")
	ErrIDXDims      = errors.New("bad IDX dimensions")
	ErrIDXTruncated = errors.New("truncated IDX file")
	ErrIDXTrailing  = errors.New("trailing data after the IDX payload")
	ErrIDXGzip      = errors.New("corrupt gzip stream")
)

// idxTypeUint8 is the element-type byte of unsigned bytes; the other IDX
// types (0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64) are
// refused with their name.
const idxTypeUint8 = 0x08

var idxTypeNames = map[byte]string{0x09: "int8", 0x0B: "int16", 0x0C: "int32", 0x0D: "float32", 0x0E: "float64"}

// ReadIDXFile reads an IDX file, gzip-compressed or raw (see ReadIDX).
func ReadIDXFile(path string) (*IDX, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadIDX(f, path)
}

// ReadIDX reads one IDX file of unsigned bytes from r; name is used in the
// errors. The stream is gunzipped when it starts with the gzip magic 1f 8b.
// The header is validated (magic 00 00 08 n, 1 ≤ n ≤ MaxIDXDims dimensions,
// each ≥ 1, at most MaxIDXElements elements in total) and the payload must be
// exactly the declared size: a short file, trailing bytes or a corrupt gzip
// stream (bad header, checksum or length) is an error naming the file.
func ReadIDX(r io.Reader, name string) (*IDX, error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(2)
	if len(head) < 2 {
		if err != io.EOF {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return nil,
			fmt.Errorf("%s: %w: %d bytes, shorter than the 4-byte magic number", name, ErrIDXTruncated, len(head))
	}
	var src io.Reader = br
	if head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, readErr(err, "the gzip header ends early"))
		}
		src = zr
	}
	idx, err := readIDX(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return idx, nil
}

// readIDX parses the (decompressed) stream.
func readIDX(r io.Reader) (*IDX, error) {
	var magic [4]byte
	if n, err := io.ReadFull(r, magic[:]); err != nil {
		return nil, readErr(err, fmt.Sprintf("%d bytes, shorter than the 4-byte magic number", n))
	}
	if magic[0] != 0 || magic[1] != 0 {
		return nil, fmt.Errorf("%w: magic number 0x%08x does not start with two zero bytes", ErrIDXMagic,
			binary.BigEndian.Uint32(magic[:]))
	}
	if magic[2] != idxTypeUint8 {
		if t, ok := idxTypeNames[magic[2]]; ok {
			return nil, fmt.Errorf("%w: element type 0x%02x (%s) is not supported, only unsigned bytes (0x08)",
				ErrIDXMagic, magic[2], t)
		}
		return nil, fmt.Errorf("%w: unknown element type 0x%02x in magic number 0x%08x", ErrIDXMagic, magic[2],
			binary.BigEndian.Uint32(magic[:]))
	}
	nd := int(magic[3])
	if nd < 1 || nd > MaxIDXDims {
		return nil, fmt.Errorf("%w: %d dimensions, want 1..%d", ErrIDXDims, nd, MaxIDXDims)
	}
	raw := make([]byte, 4*nd)
	if n, err := io.ReadFull(r, raw); err != nil {
		return nil, readErr(err,
			fmt.Sprintf("header declares %d dimensions but holds only %d of their %d bytes", nd, n, len(raw)))
	}
	dims := make([]int, nd)
	total := 1
	for i := range dims {
		d := binary.BigEndian.Uint32(raw[4*i:])
		if d == 0 {
			return nil, fmt.Errorf("%w: dimension %d is 0 (dims %v)", ErrIDXDims, i, headerDims(raw))
		}
		if uint64(total)*uint64(d) > MaxIDXElements {
			return nil,
				fmt.Errorf("%w: dims %v hold more than %d elements", ErrIDXDims, headerDims(raw), MaxIDXElements)
		}
		dims[i] = int(d)
		total *= int(d)
	}
	// Read one byte more than declared to detect trailing data; the buffer
	// grows with the bytes present, not with the declared size.
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(r, int64(total)+1))
	if err != nil {
		return nil, readErr(err, "")
	}
	switch {
	case n < int64(total):
		return nil,
			fmt.Errorf("%w: dims %v declare %d bytes of data, the file holds %d", ErrIDXTruncated, dims, total, n)
	case n > int64(total):
		return nil, fmt.Errorf("%w: dims %v declare %d bytes of data, the file holds more", ErrIDXTrailing, dims, total)
	}
	// n == total means the stream reached its end, where gzip verifies its
	// checksum and length (a mismatch came back as err above).
	return &IDX{Dims: dims, Data: buf.Bytes()}, nil
}

// readErr classifies an error of the underlying stream: a premature end is
// truncation (with what was missing), anything from gzip is corruption.
func readErr(err error, what string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		if what == "" {
			return fmt.Errorf("%w: the compressed stream ends early", ErrIDXTruncated)
		}
		return fmt.Errorf("%w: %s", ErrIDXTruncated, what)
	}
	if errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) || isFlateError(err) {
		return fmt.Errorf("%w: %v", ErrIDXGzip, err)
	}
	return err
}

func isFlateError(err error) bool {
	var c flate.CorruptInputError
	var i flate.InternalError
	return errors.As(err, &c) || errors.As(err, &i)
}

// headerDims formats the raw dimension words for an error message.
func headerDims(raw []byte) []uint32 {
	d := make([]uint32, len(raw)/4)
	for i := range d {
		d[i] = binary.BigEndian.Uint32(raw[4*i:])
	}
	return d
}
