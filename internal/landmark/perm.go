package landmark

// feistel is a keyed bijection on [0, 2^(2·half)): a four-round balanced
// Feistel network. It gives the seeded random order in which ties (the
// comparisons with the least answers) are served without storing a
// permutation of millions of indices: position p of the order holds
// comparison at(p), and positions whose image lies outside the comparison
// index space (or on an index that is not a valid comparison) are skipped.
type feistel struct {
	half uint
	mask uint64
	keys [4]uint64
}

// newFeistel returns the permutation for one answer level: domain at least
// size, keys derived from seed and level so every level has its own order.
func newFeistel(size uint64, seed uint64, level int) feistel {
	bits := uint(0)
	for (uint64(1) << bits) < size {
		bits++
	}
	half := (bits + 1) / 2
	if half == 0 {
		half = 1
	}
	f := feistel{half: half, mask: (uint64(1) << half) - 1}
	k := mix64(seed ^ 0x6c616e646d61726b) // "landmark"
	k = mix64(k ^ uint64(level+1)*0x9e3779b97f4a7c15)
	for i := range f.keys {
		k = mix64(k + 0x9e3779b97f4a7c15)
		f.keys[i] = k
	}
	return f
}

// domain returns the number of positions, 2^(2·half).
func (f feistel) domain() uint64 { return uint64(1) << (2 * f.half) }

// at returns the image of position p < domain().
func (f feistel) at(p uint64) uint64 {
	l, r := p>>f.half, p&f.mask
	for _, k := range f.keys {
		l, r = r, l^(mix64(r^k)&f.mask)
	}
	return l<<f.half | r
}

// mix64 is the SplitMix64 finaliser (Steele, Lea & Flood 2014), a fast
// avalanche hash used as the Feistel round function.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
