package uncertainty

import (
	"gonum.org/v1/gonum/mat"
)

// Rotation returns the orthogonal d×d matrix Q (a rotation, or a rotation
// and a reflection) that minimises ‖b·Q − a‖_F for two n×d configurations
// of the same items: the orthogonal Procrustes problem, solved by
// Schönemann (1966, "A generalized solution of the orthogonal Procrustes
// problem", Psychometrika 31(1), 1–10) as Q = U·Vᵀ where bᵀ·a = U·Σ·Vᵀ is
// the singular value decomposition. There is no translation and no
// scaling: the callers compare embeddings already centred and scaled by
// embed.Normalize, whose scale is part of what they measure. It panics
// when the shapes differ and returns the identity if the SVD fails.
func Rotation(a, b *mat.Dense) *mat.Dense {
	n, d := a.Dims()
	if r, c := b.Dims(); r != n || c != d {
		panic(mat.ErrShape)
	}
	var m mat.Dense
	m.Mul(b.T(), a)
	var svd mat.SVD
	q := mat.NewDense(d, d, nil)
	if !svd.Factorize(&m, mat.SVDFull) {
		for i := range d {
			q.Set(i, i, 1)
		}
		return q
	}
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	q.Mul(&u, v.T())
	return q
}

// Align stores in dst the configuration b rotated (and reflected if that
// fits better) onto a by Rotation(a, b). dst may be b.
func Align(dst, a, b *mat.Dense) {
	q := Rotation(a, b)
	var out mat.Dense
	out.Mul(b, q)
	if dst.IsEmpty() {
		n, d := b.Dims()
		dst.ReuseAs(n, d)
	}
	dst.Copy(&out)
}
