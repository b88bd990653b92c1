package runtime

import "os"

// ModelEnv names the one model a suite process declares specs for; `hwtest run`
// sets it for each model's process. Unset (ginkgo by hand, go test), every model's
// are declared and Ginkgo's label filters choose.
const ModelEnv = "HWTEST_MODEL"

// Selected reports whether this process declares model id's specs: every generated
// model file reads `var _ = runtime.Selected(id) && Describe(id, …)`. A process of
// `hwtest run` runs one model, and Ginkgo builds, filters and reports every spec it
// was given: with 300 models in the suite each process spent 2.5 s and 260 MB on
// the 16,800 specs of the other models and wrote a 26 MB report of them skipped.
func Selected(id string) bool {
	only := os.Getenv(ModelEnv)
	return only == "" || only == id
}
