package data

import (
	"fmt"
	"testing"
)

// StreamID selects the PCG streams of every seeded result in pacpfl: its
// values are pinned so that a refactoring cannot silently change every data
// set and training run.
func TestStreamIDPinned(t *testing.T) {
	for _, c := range []struct {
		tag  uint64
		idx  []uint64
		want uint64
	}{
		{0x706f6c79, []uint64{0}, 0x0eeb6d8ee849acfe},
		{0x706f6c79, []uint64{1}, 0xb99b46b82b5cb916},
		{0x626f756e64, nil, 0x9e3779db103f1271},
		{3, []uint64{4, 5}, 0x66995d13e3eb4139},
	} {
		if got := StreamID(c.tag, c.idx...); got != c.want {
			t.Errorf("StreamID(%#x, %v) = %#x, want %#x", c.tag, c.idx, got, c.want)
		}
	}
}

// The purpose tags in use (ASCII words, as in the code) select distinct
// streams for the index ranges a run uses. StreamID is not collision-free in
// general: for tags that differ only in low bits an index can make up the
// difference (StreamID(0, 63) = StreamID(3, 0)), which is why tags are long
// ASCII words.
func TestStreamIDDistinct(t *testing.T) {
	tags := []uint64{
		0x706f6c79,       // "poly": Polynomial clients
		0x626f756e64,     // "bound": fl bounds
		0x76616e696c6c61, // "vanilla": fl.RunVanilla
		0x706f6f6c,       // "pool": fl.RunPooled
		0x696e6974,       // "init": fl server particles
		0x726f756e64,     // "round": fl client subsets
		0x636c69656e74,   // "client": fl mini-batches
		tagLabels5, tagRows, tagDirichlet, tagDirLabel, tagDirClient, tagSubset,
	}
	seen := map[uint64]string{}
	add := func(v uint64, tag uint64, idx ...uint64) {
		name := fmt.Sprintf("StreamID(%#x, %v)", tag, idx)
		if prev, ok := seen[v]; ok {
			t.Fatalf("%s = %s = %#x", prev, name, v)
		}
		seen[v] = name
	}
	for _, tag := range tags {
		add(StreamID(tag), tag)
		for i := uint64(0); i < 4096; i++ {
			add(StreamID(tag, i), tag, i)
		}
		for i := uint64(0); i < 128; i++ {
			for j := uint64(0); j < 128; j++ {
				add(StreamID(tag, i, j), tag, i, j)
			}
		}
	}
	if StreamID(1, 2, 3) == StreamID(1, 3, 2) {
		t.Fatal("index order ignored")
	}
}
