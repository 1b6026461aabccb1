package kernel

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/closer-lab/closer/internal/triplet"
)

// Kind selects one of the two triplet kernels of Kleindessner & von Luxburg
// (2017).
type Kind int

const (
	// K1 compares two items by how they rank the other items as anchors
	// (eq. 2-3): the feature of item a, indexed by the unordered pairs
	// {i, j}, holds the answers to "is i or j closer to a?".
	K1 Kind = iota + 1
	// K2 compares two items by how often they are the closer option for the
	// same anchor (eq. 5): the feature of item a, indexed by the ordered
	// pairs (i, j), holds the answers to "is a or j closer to i?".
	K2
)

// String returns "k1" or "k2".
func (k Kind) String() string {
	switch k {
	case K1:
		return "k1"
	case K2:
		return "k2"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ParseKind reads "k1" or "k2".
func ParseKind(s string) (Kind, error) {
	switch s {
	case "k1", "K1":
		return K1, nil
	case "k2", "K2":
		return K2, nil
	}
	return 0, fmt.Errorf("kernel: unknown kind %q (want k1 or k2)", s)
}

// Features is the feature matrix Φ(D) of k1 or k2, one sparse unit-norm row
// per item (a zero row for an item the triplets say nothing about), stored
// in compressed sparse rows with columns sorted within each row.
//
// The kernel is k(x_a, x_b) = Φ(x_a)ᵀ Φ(x_b) (eq. 3 and 5).
type Features struct {
	Kind Kind
	// N is the number of items (rows).
	N int
	// Dim is the number of columns: C(n, 2) (k1) or n² (k2) in general,
	// C(|L|, 2) (k1) or |L|² (k2) for a landmark design (section 2.4).
	Dim int
	// Landmarks are the landmark items of a landmark design, or nil.
	Landmarks []int

	rowPtr []int // len N+1; row a holds entries rowPtr[a]:rowPtr[a+1]
	col    []int
	val    []float64

	compactOnce sync.Once
	ccol        []int32 // column numbers among the columns in use
	ncol        int     // number of columns in use
}

// DesignError reports a triplet that does not fit the landmark design of
// section 2.3 given to NewFeatures.
type DesignError struct {
	Kind    Kind
	Index   int // position in the triplet slice
	Triplet triplet.Triplet
}

func (e *DesignError) Error() string {
	t := e.Triplet
	return fmt.Sprintf("kernel: features: triplet %d (%d, %d, %d) %s", e.Index, t.Anchor, t.Closer, t.Farther, e.Rule())
}

// Rule states what the landmark design requires of a triplet.
func (e *DesignError) Rule() string {
	if e.Kind == K1 {
		return "is not a k1 landmark triplet: both options must be landmarks"
	}
	return "is not a k2 landmark triplet: the anchor and at least one option must be landmarks"
}

// NewFeatures builds the contradiction-aware feature map of kind k1 or k2
// (Kleindessner & von Luxburg 2017, section 2, "Contradicting similarity
// triplets") from the triplets ts over items 0..n-1.
//
// k1 (eq. 2): for anchor a and options i < j,
//
//	Φ̃(x_a)_{ij} = (#(a,i,j) − #(a,j,i)) / (#(a,i,j) + #(a,j,i)),
//
// k2 (eq. 5, "revised in an analogous way"): for anchor i and option j,
//
//	Φ̃(x_a)_{(i,j)} = (#(i,a,j) − #(i,j,a)) / (#(i,a,j) + #(i,j,a)),
//
// with 0/0 = 0 for pairs never asked; then Φ(x_a) = Φ̃(x_a)/‖Φ̃(x_a)‖ (unit
// norm rows, the zero vector staying zero). Repeated answers count, and a
// question answered both ways as often gives 0.
//
// landmarks nil selects the general sparse path. Otherwise the triplets must
// come from the landmark design of section 2.3 and the compressed feature
// space of section 2.4 is used: for k1 every triplet's two options must be
// landmarks and the columns are the C(|L|, 2) landmark pairs (the kernel is
// then exactly the general one); for k2 every triplet's anchor and at least
// one option must be landmarks and the columns are the |L|² (anchor landmark,
// other landmark) pairs. For k2 this drops, for a landmark item only, the
// coordinates whose other option is not a landmark, so k2 between two
// non-landmark items is exact and rows of landmark items are the paper's
// restriction to the |L|² columns (renormalised).
//
// NewFeatures returns an error for a triplet that repeats an item or names an
// item outside 0..n-1, for bad landmarks, and for a triplet that does not fit
// the landmark design.
func NewFeatures(kind Kind, n int, ts []triplet.Triplet, landmarks []int) (*Features, error) {
	if kind != K1 && kind != K2 {
		return nil, fmt.Errorf("kernel: features: unknown kind %d", int(kind))
	}
	if n < 0 {
		return nil, fmt.Errorf("kernel: features: negative item count %d", n)
	}
	f := &Features{Kind: kind, N: n}
	// pos[i] is the position of item i among the landmarks, or -1.
	var pos []int
	nl := 0
	if landmarks != nil {
		if len(landmarks) < 2 {
			return nil, fmt.Errorf("kernel: features: a landmark design needs at least 2 landmarks, got %d", len(landmarks))
		}
		pos = make([]int, n)
		for i := range pos {
			pos[i] = -1
		}
		for p, l := range landmarks {
			if l < 0 || l >= n {
				return nil, fmt.Errorf("kernel: features: landmark %d outside 0..%d", l, n-1)
			}
			if pos[l] >= 0 {
				return nil, fmt.Errorf("kernel: features: landmark %d named twice", l)
			}
			pos[l] = p
		}
		nl = len(landmarks)
		f.Landmarks = slices.Clone(landmarks)
	}
	switch {
	case kind == K1 && pos == nil:
		f.Dim = n * (n - 1) / 2
	case kind == K2 && pos == nil:
		f.Dim = n * n
	case kind == K1:
		f.Dim = nl * (nl - 1) / 2
	default:
		f.Dim = nl * nl
	}

	// First pass: validate and count the entries of each row, so that a
	// counting sort places them without maps.
	count := make([]int, n+1)
	for t, tr := range ts {
		if err := tr.Valid(n); err != nil {
			return nil, fmt.Errorf("kernel: features: triplet %d: %w", t, err)
		}
		switch {
		case kind == K1 && pos != nil:
			if pos[tr.Closer] < 0 || pos[tr.Farther] < 0 {
				return nil, &DesignError{Kind: kind, Index: t, Triplet: tr}
			}
			count[tr.Anchor]++
		case kind == K1:
			count[tr.Anchor]++
		case pos != nil:
			if pos[tr.Anchor] < 0 || (pos[tr.Closer] < 0 && pos[tr.Farther] < 0) {
				return nil, &DesignError{Kind: kind, Index: t, Triplet: tr}
			}
			if pos[tr.Farther] >= 0 {
				count[tr.Closer]++
			}
			if pos[tr.Closer] >= 0 {
				count[tr.Farther]++
			}
		default:
			count[tr.Closer]++
			count[tr.Farther]++
		}
	}
	start := make([]int, n+1)
	for a := 0; a < n; a++ {
		start[a+1] = start[a] + count[a]
	}
	// Each answer's contribution to one coordinate is packed as
	// col<<1 | neg, so that sorting plain ints groups a row's columns.
	ent := make([]int, start[n])
	next := slices.Clone(start[:n])
	put := func(row, col int, neg int) {
		ent[next[row]] = col<<1 | neg
		next[row]++
	}
	m := n
	if pos != nil {
		m = nl
	}
	for _, tr := range ts {
		switch {
		case kind == K1:
			i, j, neg := tr.Closer, tr.Farther, 0
			if pos != nil {
				i, j = pos[i], pos[j]
			}
			if i > j {
				i, j, neg = j, i, 1
			}
			put(tr.Anchor, pairIndex(m, i, j), neg)
		case pos != nil:
			an := pos[tr.Anchor]
			if pc := pos[tr.Farther]; pc >= 0 {
				put(tr.Closer, an*nl+pc, 0)
			}
			if pc := pos[tr.Closer]; pc >= 0 {
				put(tr.Farther, an*nl+pc, 1)
			}
		default:
			// Row closer, column (anchor, farther): +1{(x_i, x_a, x_j) ∈ S}.
			put(tr.Closer, tr.Anchor*n+tr.Farther, 0)
			// Row farther, column (anchor, closer): −1{(x_i, x_j, x_a) ∈ S}.
			put(tr.Farther, tr.Anchor*n+tr.Closer, 1)
		}
	}

	// Second pass, in parallel over rows: sort each row's entries, turn the
	// counts of each column into (plus − minus)/(plus + minus), normalise.
	// The values are written at the front of the row's slot in col/val.
	col := make([]int, len(ent))
	val := make([]float64, len(ent))
	rowLen := make([]int, n)
	parallelRange(n, func(lo, hi int) {
		for a := lo; a < hi; a++ {
			e := ent[start[a]:start[a+1]]
			slices.Sort(e)
			c, v := col[start[a]:start[a+1]], val[start[a]:start[a+1]]
			k := 0
			var norm2 float64
			for i := 0; i < len(e); {
				cc := e[i] >> 1
				var plus, minus int
				for ; i < len(e) && e[i]>>1 == cc; i++ {
					if e[i]&1 == 0 {
						plus++
					} else {
						minus++
					}
				}
				if plus != minus {
					x := float64(plus-minus) / float64(plus+minus)
					c[k], v[k] = cc, x
					norm2 += x * x
					k++
				}
			}
			if k > 0 {
				s := 1 / math.Sqrt(norm2)
				for i := range v[:k] {
					v[i] *= s
				}
			}
			rowLen[a] = k
		}
	})
	ent = nil
	// Compact the rows.
	f.rowPtr = make([]int, n+1)
	for a := 0; a < n; a++ {
		f.rowPtr[a+1] = f.rowPtr[a] + rowLen[a]
	}
	f.col = make([]int, f.rowPtr[n])
	f.val = make([]float64, f.rowPtr[n])
	for a := 0; a < n; a++ {
		copy(f.col[f.rowPtr[a]:f.rowPtr[a+1]], col[start[a]:])
		copy(f.val[f.rowPtr[a]:f.rowPtr[a+1]], val[start[a]:])
	}
	return f, nil
}

// Row returns the nonzero columns of item a's feature vector (ascending)
// and their values. The slices alias f and must not be modified.
func (f *Features) Row(a int) (cols []int, vals []float64) {
	lo, hi := f.rowPtr[a], f.rowPtr[a+1]
	return f.col[lo:hi:hi], f.val[lo:hi:hi]
}

// NNZ returns the number of nonzero feature coordinates.
func (f *Features) NNZ() int { return len(f.col) }

// At returns k(x_a, x_b) = Φ(x_a)ᵀ Φ(x_b), merging the two sorted rows.
func (f *Features) At(a, b int) float64 {
	ca, va := f.Row(a)
	cb, vb := f.Row(b)
	var s float64
	i, j := 0, 0
	for i < len(ca) && j < len(cb) {
		switch {
		case ca[i] < cb[j]:
			i++
		case ca[i] > cb[j]:
			j++
		default:
			s += va[i] * vb[j]
			i++
			j++
		}
	}
	return s
}

// pairIndex numbers the unordered pairs i < j of 0..m-1 row by row.
func pairIndex(m, i, j int) int {
	return i*(2*m-i-1)/2 + (j - i - 1)
}

// parallelRange splits 0..n-1 into runtime.GOMAXPROCS(0) contiguous blocks
// and runs body on each in its own goroutine.
func parallelRange(n int, body func(lo, hi int)) {
	p := runtime.GOMAXPROCS(0)
	if p > n {
		p = n
	}
	if p <= 1 {
		if n > 0 {
			body(0, n)
		}
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < p; w++ {
		lo, hi := w*n/p, (w+1)*n/p
		wg.Add(1)
		go func() {
			defer wg.Done()
			body(lo, hi)
		}()
	}
	wg.Wait()
}
