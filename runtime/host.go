package runtime

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/klauspost/cpuid/v2"
)

var hostCPU = sync.OnceValue(func() string {
	return fmt.Sprintf("%s (%d cores, %s/%s)", cpuid.CPU.BrandName, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
})

// HostCPU names the machine's CPU for provenance.
func HostCPU() string { return hostCPU() }
