package hardware

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Apple is Apple silicon: what CoreML's Neural Engine and GPU run on.
type Apple struct {
	Probe
	Chip string `json:"chip,omitempty"` // sysctl machdep.cpu.brand_string: "Apple M2 Max"
}

func runSysctl(ctx context.Context, name string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "sysctl", "-n", name).Output()
	return strings.TrimSpace(string(out)), err
}

func detectApple(ctx context.Context, e env) Apple {
	if e.goos != "darwin" {
		return Apple{Probe: missing("apple-silicon", fmt.Sprintf("not present: not macOS (GOOS=%s)", e.goos))}
	}
	if e.goarch != "arm64" {
		return Apple{Probe: missing("apple-silicon", fmt.Sprintf("not present: an Intel Mac (GOARCH=%s) has no Apple Neural Engine; CoreML runs on its CPU/GPU only", e.goarch))}
	}
	chip, err := e.sysctl(ctx, "machdep.cpu.brand_string")
	if err != nil {
		return Apple{Probe: missing("apple-silicon", fmt.Sprintf("not readable: sysctl machdep.cpu.brand_string: %v", err))}
	}
	if !strings.HasPrefix(chip, "Apple") {
		return Apple{Probe: missing("apple-silicon", fmt.Sprintf("not present: machdep.cpu.brand_string is %q (running under Rosetta?)", chip))}
	}
	return Apple{Probe: found("apple-silicon", chip), Chip: chip}
}
