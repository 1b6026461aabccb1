package landmark

import "github.com/closer-lab/closer/internal/triplet"

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
	k := triplet.Mix64(seed ^ 0x6c616e646d61726b) // "landmark"
	k = triplet.Mix64(k ^ uint64(level+1)*triplet.Golden)
	for i := range f.keys {
		k = triplet.Mix64(k + triplet.Golden)
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
		l, r = r, l^(triplet.Mix64(r^k)&f.mask)
	}
	return l<<f.half | r
}
