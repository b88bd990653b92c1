// Package generated holds the Ginkgo suites hwtest writes from models.yaml and
// hardware.yaml: one package per pipeline family, holding its suite, its targets
// (targets_test.go) and one file per model. Everything here but this file is
// generated; `go generate ./...` refreshes it.
package generated

//go:generate go run github.com/hwtest/hwtest/cmd/hwtest generate
