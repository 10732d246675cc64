package data

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/pacpfl/pacpfl/option"
)

// An ImageSplit's Validate names the field at fault with its value.
func TestImageSplitValidate(t *testing.T) {
	l5 := ImageSplit{Partition: PartitionLabels5, Split: "small", Dirichlet: DirichletConfig{Alpha: 0.4}}
	dir := ImageSplit{Partition: PartitionDirichlet, Dirichlet: DirichletConfig{Alpha: 0.4, Clients: 3}}
	with := func(s ImageSplit, f func(*ImageSplit)) ImageSplit { f(&s); return s }
	for _, c := range []struct {
		s     ImageSplit
		field string
		value any
	}{
		{l5, "", nil},
		{dir, "", nil},
		{with(l5, func(s *ImageSplit) { s.Split = "huge" }), "Split", "huge"},
		{with(l5, func(s *ImageSplit) { s.Partition = "iid" }), "Partition", "iid"},
		{with(dir, func(s *ImageSplit) { s.Split = "huge" }), "", nil}, // labels5's alone
		{with(dir, func(s *ImageSplit) { s.Dirichlet.Alpha = 0 }), "Dirichlet.Alpha", 0.0},
		{with(dir, func(s *ImageSplit) { s.Dirichlet.Alpha = math.Inf(1) }), "Dirichlet.Alpha", math.Inf(1)},
		{with(dir, func(s *ImageSplit) { s.Dirichlet.Clients = 0 }), "Dirichlet.Clients", 0},
		{with(l5, func(s *ImageSplit) { s.Dirichlet.Alpha = -1 }), "", nil}, // dirichlet's alone
		{with(l5, func(s *ImageSplit) { s.Dirichlet.New = -1 }), "Dirichlet.New", -1},
		{with(dir, func(s *ImageSplit) { s.Dirichlet.MaxImages = -2 }), "Dirichlet.MaxImages", -2},
		{with(l5, func(s *ImageSplit) { s.Dirichlet.Pixels = "raw" }), "Dirichlet.Pixels", "raw"},
		{with(l5, func(s *ImageSplit) { s.Dirichlet.Pixels = PixelsSymmetric }), "", nil},
	} {
		err := c.s.Validate()
		var fe *option.FieldError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%+v: %v", c.s, err)
		case c.field == "":
		case !errors.As(err, &fe):
			t.Errorf("%+v: %v, want a FieldError", c.s, err)
		case !slices.Equal(fe.Fields, []string{c.field}) || !slices.Equal(fe.Values, []any{c.value}):
			t.Errorf("%+v: fields %v values %v, want %s %v", c.s, fe.Fields, fe.Values, c.field, c.value)
		}
		if _, err := c.s.Dataset(synthImages(uniform(6, 60)), 1); c.field != "" && err == nil {
			t.Errorf("%+v: Dataset accepts it", c.s)
		}
	}
}

// Dataset and Client are Labels5 or Dirichlet, and their clients, with
// the split's settings and the seed.
func TestImageSplitDataset(t *testing.T) {
	im := synthImages(uniform(6, 60))
	d := DirichletConfig{Clients: 4, New: 1, Alpha: 0.5, MinSamples: 4, MaxImages: 300, Seed: 77}
	for _, s := range []ImageSplit{{Partition: PartitionLabels5, Split: "small", Dirichlet: d},
		{Partition: PartitionDirichlet, Split: "small", Dirichlet: d}} {
		got, err := s.Dataset(im, 5)
		if err != nil {
			t.Fatal(err)
		}
		var want *Dataset
		if s.Partition == PartitionLabels5 {
			want, err = Labels5(im, Labels5Config{Split: "small", New: 1, MaxImages: 300, Seed: 5})
		} else {
			dc := d
			dc.Seed = 5
			want, err = Dirichlet(im, dc)
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Existing) != s.Existing(im.Classes) || len(got.Existing) != len(want.Existing) ||
			len(got.New) != 1 || len(want.New) != 1 {
			t.Fatalf("%s: %d+%d clients, want %d+1 (Existing %d)", s.Partition, len(got.Existing), len(got.New),
				len(want.Existing), s.Existing(im.Classes))
		}
		for i := range want.Existing {
			c, err := s.Client(im, 5, i)
			if err != nil {
				t.Fatal(err)
			}
			w := &want.Existing[i]
			if !slices.Equal(got.Existing[i].X, w.X) || !slices.Equal(got.Existing[i].YTest, w.YTest) ||
				!slices.Equal(c.X, w.X) || !slices.Equal(c.Y, w.Y) || len(w.Y) == 0 {
				t.Errorf("%s client %d differs from the partition's", s.Partition, i)
			}
		}
	}
}

// String names the partition and its own settings.
func TestImageSplitString(t *testing.T) {
	d := DirichletConfig{Alpha: 0.4, Clients: 30}
	for _, c := range []struct {
		s    ImageSplit
		want string
	}{
		{ImageSplit{Partition: PartitionLabels5, Split: "medium", Dirichlet: d}, "labels5 medium"},
		{ImageSplit{Partition: PartitionDirichlet, Split: "medium", Dirichlet: d}, "dirichlet α=0.4 n=30"},
		{ImageSplit{Partition: PartitionDirichlet, Dirichlet: DirichletConfig{Alpha: 0.1, Clients: 3, MaxImages: 900}},
			"dirichlet α=0.1 n=3 (at most 900 images)"},
	} {
		if got := c.s.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.s, got, c.want)
		}
	}
}
