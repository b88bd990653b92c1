// Package generated holds the Ginkgo specs hwtest writes from models.yaml and
// hardware.yaml: hardware.yaml's targets (targets/), one package per pipeline
// family with one file per model, and the one suite that runs them all (suite/).
// Everything here but this file is generated; `go generate ./...` refreshes it.
package generated

//go:generate go run github.com/hwtest/hwtest/cmd/hwtest generate
