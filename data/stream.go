package data

// StreamID mixes a tag and indices into one 64-bit PCG stream selector
// (splitmix64 finaliser), so that streams for different purposes never
// coincide.
func StreamID(tag uint64, idx ...uint64) uint64 {
	h := tag ^ 0x9e3779b97f4a7c15
	for _, v := range idx {
		h ^= v + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2)
		h ^= h >> 30
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 27
		h *= 0x94d049bb133111eb
		h ^= h >> 31
	}
	return h
}
