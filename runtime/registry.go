package runtime

import (
	"fmt"
	"os"
	"path/filepath"
)

// Invariants indexes every invariant by its Go identifier, the name family templates
// use, so a template naming one that does not exist is caught by a test, not by a
// generated suite that fails to compile.
var Invariants = map[string]Invariant{
	"OutputsAgree":             OutputsAgree,
	"ProbabilitiesInUnitRange": ProbabilitiesInUnitRange,
	"StreamingStateAgrees":     StreamingStateAgrees,
	"HiddenStateShape":         HiddenStateShape,
	"PooledEmbeddingCosine":    PooledEmbeddingCosine,
	"PaddingIgnored":           PaddingIgnored,
	"ArgmaxAgrees":             ArgmaxAgrees,
	"Causality":                Causality,
	"TopKAgrees":               TopKAgrees,
	"DistributionSumsToOne":    DistributionSumsToOne,
	"RankingAgrees":            RankingAgrees,
	"RouterTopKAgrees":         RouterTopKAgrees,
	"SameInputsSameOutputs":    SameInputsSameOutputs,
	"ChunkedScanEqualsWhole":   ChunkedScanEqualsWhole,
	"MatchesExpectedOutputs":   MatchesExpectedOutputs,
}

// OpenRun computes the CPU reference of the model at refPath and runs the model at
// targetPath on target t with the same inputs: a Run ready for invariants. Tests
// pass a deliberately broken model as targetPath to see each family's checks fail.
// A model with a fixture is taken to be running it.
func OpenRun(m Model, refPath, targetPath string, t Target) (*Run, func(), error) {
	if _, err := Init(); err != nil {
		return nil, nil, err
	}
	sum, err := fileSHA256(refPath)
	if err != nil {
		return nil, nil, err
	}
	rm := ResolvedModel{Path: refPath, SHA256: sum}
	if m.Fixture != "" {
		rm.Fixture = "tiny-random"
	}
	ref, err := computeReference(m, rm)
	if err != nil {
		return nil, nil, err
	}
	s, err := OpenSession(targetPath, t, false)
	if err != nil {
		return nil, nil, err
	}
	got, err := s.Run(ref.Inputs)
	if err != nil {
		s.Close()
		return nil, nil, fmt.Errorf("%s on %s: %w", filepath.Base(targetPath), t.ID, err)
	}
	tol := t.Tolerance
	if m.Tolerance != nil {
		tol = *m.Tolerance
	}
	return &Run{Model: m, Target: t, Session: s, Reference: ref, Got: got, Tolerance: tol}, func() { s.Close() }, nil
}

// writeTemp is a helper for tests that build models in memory.
func writeTemp(dir, name string, data []byte) (string, error) {
	p := filepath.Join(dir, name)
	return p, os.WriteFile(p, data, 0o644)
}
