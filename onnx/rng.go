package onnx

// RNG is a small deterministic pseudo-random generator (splitmix64) used to
// fill weights. It is written out here rather than taken from math/rand so
// that the bytes of a model are fixed by this file alone: the same seed
// gives the same weights on every Go version and every architecture.
type RNG struct{ state uint64 }

// NewRNG returns a generator seeded with seed.
func NewRNG(seed uint64) *RNG { return &RNG{state: seed} }

// Uint64 returns the next 64 random bits (splitmix64, Steele et al. 2014).
func (r *RNG) Uint64() uint64 {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Float64 returns a uniform value in [0, 1) with 53 random bits. The scale
// by 2^-53 is exact, so the result does not depend on whether the compiler
// fuses it with a following addition.
func (r *RNG) Float64() float64 {
	return float64(r.Uint64()>>11) * 0x1p-53
}

// Normal returns an approximately standard-normal value: the Irwin–Hall sum
// of twelve uniforms minus six (mean 0, variance 1, support [-6, 6]). It uses
// only exact-enough additions, no log/sin/cos whose last bit may differ
// between platforms, which keeps weights byte-identical everywhere. The
// tails are lighter than a true Gaussian, which is fine for tiny-random
// weights whose only job is to be non-degenerate.
func (r *RNG) Normal() float64 {
	s := 0.0
	for range 12 {
		s += r.Float64()
	}
	return s - 6
}

// NormalFloat32s returns n values drawn from Normal scaled by std, the
// initialisation Hugging Face's tiny-random models use (std 0.02).
func (r *RNG) NormalFloat32s(n int, std float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.Normal()) * std
	}
	return out
}
