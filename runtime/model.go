package runtime

import "github.com/hwtest/hwtest/spec"

// The plain data a generated suite is built from lives in package spec, where the
// generator can reach it without linking ONNX Runtime; generated code and the rest
// of runtime name it here.
type (
	Model     = spec.Model
	Input     = spec.Input
	Outputs   = spec.Outputs
	Tolerance = spec.Tolerance
	Expected  = spec.Expected
	Target    = spec.Target
)

// CPUProvider is ONNX Runtime's name for the default execution provider.
const CPUProvider = spec.CPUProvider
