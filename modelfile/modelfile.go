// Package modelfile is the file format of a trained pacpfl model (pacpfl
// train --save, read by pacpfl predict and pacpfl plot): what the model is
// (GP or BNN clients, its configuration), the k particles of the
// hyper-posterior, the standardisation of the data, the feature, target,
// client-column and class names, every existing client's personalisation
// data, so that the model predicts for its clients without the training
// file, and for GP clients the inference (exact or sparse GP) they were
// trained with.
//
// # Layout (version 2)
//
//	offset  size  content
//	0       8     signature "PACPFLMD"
//	8       4     format version, uint32 little-endian
//	12      8     body length L, uint64 little-endian
//	20      L     body
//	20+L    32    SHA-256 of bytes [0, 20+L)
//
// The body is a uint32 length and that many bytes of JSON (Meta), then the
// float64 arrays in little-endian IEEE 754, their lengths given by Meta:
// XMean and XStd (D each), YMean and YStd, the particles (K·Dim), and for
// every client its inputs (Rows·D) and targets (Rows). Floats are stored
// bit for bit, so a model read back predicts bit-identically to the one
// written.
//
// # Versions
//
// Version 2 (this package writes it) adds the GP inference ("inference" in
// the GP configuration: mode, inducing inputs M, seed). Version 1 files,
// written before pacpfl had sparse GP inference, are read as they are: they
// have no inference, which means the exact GP (GPConfig.Inference nil), as
// it did when they were written. (Not auto: auto is the same as exact only
// for conditioning sets of up to 4,096 rows, and predict conditions a
// client on its stored rows plus any context rows, so an old model could
// silently change its predictions for a large client.) A version 1 file
// with an inference is malformed. The older pacpfl that reads only
// version 1 refuses a version 2 file with ErrVersion ("written by a newer
// pacpfl") rather than with an unknown field.
//
// # Errors
//
// Decode checks, in this order, the signature (ErrNotModel), the version
// (ErrVersion), the length (ErrTruncated, also for trailing bytes), the
// checksum (ErrCorrupt) and the body's consistency (ErrMalformed: lengths,
// shapes, non-finite values, empty or repeated names). It allocates no more
// than the bytes given and never panics (FuzzDecode).
package modelfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
)

// Signature starts every model file.
const Signature = "PACPFLMD"

// Version is the format version this package writes; it reads
// MinVersion to Version.
const Version = 2

// MinVersion is the oldest format version this package reads.
const MinVersion = 1

// Kinds of client model.
const (
	KindGP  = "gp"
	KindBNN = "bnn"
)

// Tasks.
const (
	TaskRegression     = "regression"
	TaskClassification = "classification"
)

// Errors of Decode, matched with errors.Is.
var (
	ErrNotModel  = errors.New("not a pacpfl model file")
	ErrVersion   = errors.New("unsupported model file version")
	ErrTruncated = errors.New("model file truncated")
	ErrCorrupt   = errors.New("model file corrupted")
	ErrMalformed = errors.New("malformed model file")
)

const (
	headerSize   = 8 + 4 + 8
	checksumSize = sha256.Size
)

// GPConfig is the GP client model: lml.Model's networks and the client
// temperature.
type GPConfig struct {
	D            int    `json:"d"`
	DF           int    `json:"df"`
	MeanHidden   []int  `json:"mean_hidden"`
	KernelHidden []int  `json:"kernel_hidden"`
	Beta         string `json:"beta"` // fl.ParseTemperature syntax: m, sqrt or a number
	// Inference is how the clients' GP was evaluated in training and how
	// predict evaluates it (fl.GPInference); nil (version 1 files,
	// written before sparse inference) means the exact GP.
	Inference *GPInference `json:"inference,omitempty"`
}

// GP inference modes (GPInference.Mode), as fl's.
const (
	InferenceExact  = "exact"
	InferenceSparse = "sparse"
	InferenceAuto   = "auto"
)

// GPInference is fl.GPInference as recorded: the exact GP, the sparse
// (Titsias) bound with Inducing inducing inputs per client chosen by
// fl.GPInference.InducingFor, or auto (exact up to fl.AutoExactMaxRows
// rows, sparse above).
type GPInference struct {
	Mode string `json:"mode"` // InferenceExact, InferenceSparse or InferenceAuto
	// Inducing is M as given to training: 0 means fl.DefaultInducing,
	// lowered to a client's rows when it has fewer.
	Inducing int `json:"inducing"`
	// Seed, with a hash of a client's inputs, seeds the choice of its
	// inducing inputs.
	Seed uint64 `json:"seed"`
}

// BNNConfig is the BNN client model (lml.BNN) and its posterior inference
// (lml.BNNPosteriorOptions).
type BNNConfig struct {
	Arch         string  `json:"arch"`
	InC          int     `json:"in_c"`
	InH          int     `json:"in_h"`
	InW          int     `json:"in_w"`
	Hidden       int     `json:"hidden"`
	Classes      int     `json:"classes"`
	Particles    int     `json:"posterior_particles"`
	Steps        int     `json:"posterior_steps"`
	LR           float64 `json:"posterior_lr"`
	AlphaSamples int     `json:"alpha_samples"`
}

// Client is one existing client: its ID and its personalisation data,
// standardised (Rows×D inputs, Rows targets).
type Client struct {
	ID   string
	X, Y []float64
}

// Model is a trained model.
type Model struct {
	Kind         string // KindGP or KindBNN
	Task         string // TaskRegression or TaskClassification
	Features     []string
	Target       string
	ClientColumn string
	Classes      []string // classification: the label of each class index
	// Standardisation: x ← (x − XMean)/XStd, y ← (y − YMean)/YStd.
	XMean, XStd []float64
	YMean, YStd float64
	GP          *GPConfig  // KindGP
	BNN         *BNNConfig // KindBNN
	K, Dim      int        // particles k×dφ
	Particles   []float64
	// Seed selects the random streams of prediction (BNN posterior
	// inference), so that predictions are reproducible.
	Seed    uint64
	Clients []Client
	// Training describes how the model was trained (flags, data file),
	// for people: nothing reads it back.
	Training map[string]string
}

// meta is the JSON part of the body.
type meta struct {
	Kind         string            `json:"kind"`
	Task         string            `json:"task"`
	Features     []string          `json:"features"`
	Target       string            `json:"target"`
	ClientColumn string            `json:"client_column"`
	Classes      []string          `json:"classes,omitempty"`
	GP           *GPConfig         `json:"gp,omitempty"`
	BNN          *BNNConfig        `json:"bnn,omitempty"`
	K            int               `json:"k"`
	Dim          int               `json:"dim"`
	Seed         uint64            `json:"seed"`
	Clients      []clientMeta      `json:"clients"`
	Training     map[string]string `json:"training,omitempty"`
}

type clientMeta struct {
	ID   string `json:"id"`
	Rows int    `json:"rows"`
}

// Validate reports the first inconsistency of m (the checks Decode applies
// to what it reads).
func (m *Model) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, a...))
	}
	d := len(m.Features)
	switch {
	case m.Kind != KindGP && m.Kind != KindBNN:
		return bad("unknown model kind %q", m.Kind)
	case m.Task != TaskRegression && m.Task != TaskClassification:
		return bad("unknown task %q", m.Task)
	case d == 0:
		return bad("no features")
	case m.ClientColumn == "":
		return bad("no client column")
	case m.Target == "":
		return bad("no target column")
	case m.K < 1 || m.Dim < 1 || m.K > math.MaxInt32/m.Dim:
		return bad("%d particles of dimension %d", m.K, m.Dim)
	case len(m.Particles) != m.K*m.Dim:
		return bad("%d particle values for k×dφ = %d×%d", len(m.Particles), m.K, m.Dim)
	case len(m.XMean) != d || len(m.XStd) != d:
		return bad("standardisation of %d and %d features for %d features", len(m.XMean), len(m.XStd), d)
	case (m.Kind == KindGP) != (m.GP != nil) || (m.Kind == KindBNN) != (m.BNN != nil):
		return bad("the configuration does not match the kind %q", m.Kind)
	case m.Kind == KindGP && m.Task != TaskRegression:
		return bad("GP clients do regression, not %s", m.Task)
	case m.Kind == KindBNN && m.Task != TaskClassification:
		return bad("BNN clients do classification, not %s", m.Task)
	}
	if err := names("feature", m.Features, 0); err != nil {
		return err
	}
	if m.Task == TaskClassification {
		if err := names("class", m.Classes, 2); err != nil {
			return err
		}
	} else if len(m.Classes) != 0 {
		return bad("classes in a regression model")
	}
	if m.GP != nil {
		g := m.GP
		if g.D != d || g.DF < 1 || g.Beta == "" {
			return bad("GP model with D = %d (%d features), DF = %d, β %q", g.D, d, g.DF, g.Beta)
		}
		for _, h := range append(slices.Clone(g.MeanHidden), g.KernelHidden...) {
			if h < 1 {
				return bad("GP hidden width %d", h)
			}
		}
		if gi := g.Inference; gi != nil {
			switch gi.Mode {
			case InferenceExact, InferenceSparse, InferenceAuto:
			default:
				return bad("GP inference %q: want exact, sparse or auto", gi.Mode)
			}
			if gi.Inducing < 0 {
				return bad("GP inference with %d inducing inputs", gi.Inducing)
			}
		}
	}
	if b := m.BNN; b != nil {
		switch {
		case b.Arch == "" || b.InC < 1 || b.InH < 1 || b.InW < 1 || b.InC > d || b.InC*b.InH*b.InW != d:
			return bad("BNN %q input %d×%d×%d for %d features", b.Arch, b.InC, b.InH, b.InW, d)
		case b.Hidden < 1 || b.Classes != len(m.Classes):
			return bad("BNN hidden width %d, %d classes for %d class names", b.Hidden, b.Classes, len(m.Classes))
		case b.Particles < 1 || b.Steps < 0 || b.AlphaSamples < 1 || !(b.LR > 0) || math.IsInf(b.LR, 0):
			return bad("BNN posterior options M = %d, steps %d, α samples %d, learning rate %v", b.Particles, b.Steps,
				b.AlphaSamples, b.LR)
		}
	}
	finite := func(what string, xs ...float64) error {
		for i, v := range xs {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return bad("%s: value %d is %v", what, i, v)
			}
		}
		return nil
	}
	for j := range d {
		if !(m.XStd[j] > 0) {
			return bad("feature %q has standard deviation %v", m.Features[j], m.XStd[j])
		}
	}
	if !(m.YStd > 0) {
		return bad("target standard deviation %v", m.YStd)
	}
	if err := finite("standardisation",
		append(append([]float64{m.YMean, m.YStd}, m.XMean...), m.XStd...)...); err != nil {
		return err
	}
	if err := finite("particles", m.Particles...); err != nil {
		return err
	}
	ids := make([]string, len(m.Clients))
	for i, c := range m.Clients {
		ids[i] = c.ID
		if len(c.X) != len(c.Y)*d {
			return bad("client %q: %d inputs for %d rows of %d features", c.ID, len(c.X), len(c.Y), d)
		}
		if err := finite(fmt.Sprintf("client %q", c.ID), c.X...); err != nil {
			return err
		}
		if err := finite(fmt.Sprintf("client %q", c.ID), c.Y...); err != nil {
			return err
		}
		if m.Task == TaskClassification {
			for _, y := range c.Y {
				if y < 0 || y >= float64(len(m.Classes)) || y != math.Trunc(y) {
					return bad("client %q: label %v is not a class 0..%d", c.ID, y, len(m.Classes)-1)
				}
			}
		}
	}
	return names("client", ids, 0)
}

// names checks that a list of names has at least min entries, none empty,
// none repeated.
func names(what string, list []string, min int) error {
	if len(list) < min {
		return fmt.Errorf("%w: %d %s names, need at least %d", ErrMalformed, len(list), what, min)
	}
	seen := make(map[string]bool, len(list))
	for _, n := range list {
		if n == "" {
			return fmt.Errorf("%w: an empty %s name", ErrMalformed, what)
		}
		if seen[n] {
			return fmt.Errorf("%w: %s %q appears twice", ErrMalformed, what, n)
		}
		seen[n] = true
	}
	return nil
}

// Encode returns m in the file format.
func Encode(m *Model) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	mt := meta{Kind: m.Kind, Task: m.Task, Features: m.Features, Target: m.Target, ClientColumn: m.ClientColumn,
		Classes: m.Classes, GP: m.GP, BNN: m.BNN, K: m.K, Dim: m.Dim, Seed: m.Seed, Training: m.Training,
		Clients: make([]clientMeta, len(m.Clients))}
	for i, c := range m.Clients {
		mt.Clients[i] = clientMeta{ID: c.ID, Rows: len(c.Y)}
	}
	js, err := json.Marshal(mt)
	if err != nil {
		return nil, err
	}
	if len(js) > math.MaxUint32 {
		return nil, errors.New("model description too long")
	}
	var buf bytes.Buffer
	buf.WriteString(Signature)
	binary.Write(&buf, binary.LittleEndian, uint32(Version))
	binary.Write(&buf, binary.LittleEndian, uint64(0)) // body length, below
	binary.Write(&buf, binary.LittleEndian, uint32(len(js)))
	buf.Write(js)
	floats := func(xs ...float64) {
		var b [8]byte
		for _, x := range xs {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
			buf.Write(b[:])
		}
	}
	floats(m.XMean...)
	floats(m.XStd...)
	floats(m.YMean, m.YStd)
	floats(m.Particles...)
	for _, c := range m.Clients {
		floats(c.X...)
		floats(c.Y...)
	}
	out := buf.Bytes()
	binary.LittleEndian.PutUint64(out[12:20], uint64(len(out)-headerSize))
	sum := sha256.Sum256(out)
	return append(out, sum[:]...), nil
}

// MaxLoad bounds the size of a file Load reads, since the whole file is
// held in memory while it is decoded.
const MaxLoad = 16 << 30

// Load reads and decodes the model file at path (at most MaxLoad bytes).
// A file that cannot be opened gives the error of os.Open, which names the
// path; the other errors are prefixed with it.
func Load(path string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := Read(f, MaxLoad)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Read reads a model file from r (at most limit bytes; 0: no limit) and
// decodes it.
func Read(r io.Reader, limit int64) (*Model, error) {
	if limit > 0 {
		r = io.LimitReader(r, limit+1)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if limit > 0 && int64(len(b)) > limit {
		return nil, fmt.Errorf("model file larger than %d bytes", limit)
	}
	return Decode(b)
}

// Decode parses a model file (see the package comment for the checks).
func Decode(b []byte) (*Model, error) {
	if len(b) < len(Signature) || string(b[:len(Signature)]) != Signature {
		if len(b) < len(Signature) && string(b) == Signature[:len(b)] {
			return nil, fmt.Errorf("%w: %d bytes, shorter than the header", ErrTruncated, len(b))
		}
		return nil, fmt.Errorf("%w (it does not start with %q)", ErrNotModel, Signature)
	}
	if len(b) < 12 {
		return nil, fmt.Errorf("%w: %d bytes, shorter than the header", ErrTruncated, len(b))
	}
	v := binary.LittleEndian.Uint32(b[8:12])
	if v < MinVersion || v > Version {
		newer := "an older"
		if v > Version {
			newer = "a newer"
		}
		return nil, fmt.Errorf("%w: the file is format version %d, this pacpfl reads versions %d to %d (written by "+
			"%s pacpfl; retrain, or use the pacpfl that wrote it)", ErrVersion, v, MinVersion, Version, newer)
	}
	if len(b) < headerSize {
		return nil, fmt.Errorf("%w: %d bytes, shorter than the header", ErrTruncated, len(b))
	}
	bodyLen := binary.LittleEndian.Uint64(b[12:20])
	have := uint64(len(b) - headerSize)
	switch want := bodyLen + checksumSize; {
	case bodyLen > have || want > have:
		return nil, fmt.Errorf("%w: the header announces %d bytes, the file has %d", ErrTruncated,
			bodyLen+headerSize+checksumSize, len(b))
	case want < have:
		return nil, fmt.Errorf("%w: %d bytes after the end of the model", ErrCorrupt, have-want)
	}
	end := headerSize + int(bodyLen)
	sum := sha256.Sum256(b[:end])
	if !bytes.Equal(sum[:], b[end:]) {
		return nil,
			fmt.Errorf("%w: checksum mismatch (the file was changed or damaged after it was written)", ErrCorrupt)
	}
	return decodeBody(b[headerSize:end], v)
}

// decodeBody parses a body of format version v whose checksum matched.
func decodeBody(body []byte, v uint32) (*Model, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, a...))
	}
	if len(body) < 4 {
		return nil, bad("body of %d bytes", len(body))
	}
	n := uint64(binary.LittleEndian.Uint32(body))
	if n > uint64(len(body)-4) {
		return nil, bad("description of %d bytes in a body of %d", n, len(body))
	}
	var mt meta
	dec := json.NewDecoder(bytes.NewReader(body[4 : 4+n]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&mt); err != nil {
		return nil, bad("description: %v", err)
	}
	if dec.More() {
		return nil, bad("description: data after the JSON object")
	}
	if v < 2 && mt.GP != nil && mt.GP.Inference != nil {
		return nil, bad("a version %d file with a GP inference (recorded from version 2 on)", v)
	}
	rest := body[4+n:]
	d := len(mt.Features)
	// Count the floats the description announces, in float64 so that no
	// product overflows, and compare with the bytes present before
	// allocating anything.
	want := 2*float64(d) + 2 + float64(mt.K)*float64(mt.Dim)
	for _, c := range mt.Clients {
		if c.Rows < 0 {
			return nil, bad("client %q has %d rows", c.ID, c.Rows)
		}
		want += float64(c.Rows) * float64(d+1)
	}
	if mt.K < 0 || mt.Dim < 0 || want != float64(len(rest))/8 || len(rest)%8 != 0 {
		return nil, bad("the description announces %.0f numbers, the body holds %d bytes of them", want, len(rest))
	}
	floats := func(k int) []float64 {
		out := make([]float64, k)
		for i := range out {
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(rest[8*i:]))
		}
		rest = rest[8*k:]
		return out
	}
	m := &Model{Kind: mt.Kind, Task: mt.Task, Features: mt.Features, Target: mt.Target, ClientColumn: mt.ClientColumn,
		Classes: mt.Classes, GP: mt.GP, BNN: mt.BNN, K: mt.K, Dim: mt.Dim, Seed: mt.Seed, Training: mt.Training}
	m.XMean = floats(d)
	m.XStd = floats(d)
	ys := floats(2)
	m.YMean, m.YStd = ys[0], ys[1]
	m.Particles = floats(mt.K * mt.Dim)
	m.Clients = make([]Client, len(mt.Clients))
	for i, c := range mt.Clients {
		m.Clients[i] = Client{ID: c.ID, X: floats(c.Rows * d), Y: floats(c.Rows)}
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}
