package hardware

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/hwtest/hwtest/result"
)

// Table renders the report for humans: the CPU, one aligned line per probe, then one
// per execution provider. Reasons are printed whole: they are the exact errors.
func (r Report) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "host: %s/%s", r.Host.OS, r.Host.Arch)
	if r.Host.Kernel != "" {
		fmt.Fprintf(&b, ", kernel %s", r.Host.Kernel)
	}
	if r.Host.Hostname != "" {
		fmt.Fprintf(&b, ", %s", r.Host.Hostname)
	}
	b.WriteString("\n")
	c := r.CPU
	fmt.Fprintf(&b, "cpu:  %s (%s, family %d model %d stepping %d", orUnknown(c.Brand), orNone(c.Vendor), c.Family, c.Model, c.Stepping)
	if c.Hypervisor != "" {
		fmt.Fprintf(&b, ", under %s", c.Hypervisor)
	}
	fmt.Fprintf(&b, ")\n      %d physical / %d logical cores, %s memory\n", c.PhysicalCores, c.LogicalCores, result.HumanBytes(c.MemoryTotal))
	fmt.Fprintf(&b, "      has:     %s\n", listOrNone(c.Features))
	fmt.Fprintf(&b, "      lacks:   %s\n", listOrNone(c.Missing))
	b.WriteString("\n")

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROBE\tFOUND\tDETAIL / REASON")
	row := func(p Probe) {
		text := p.Detail
		if !p.Found {
			text = p.Reason
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, yesNo(p.Found), text)
	}
	for _, p := range []Probe{r.CPU.Probe, r.NVIDIA.Probe, r.AMD.Probe, r.AMD.KFD, r.Intel.Probe, r.Apple.Probe} {
		row(p)
	}
	for _, l := range r.Libraries {
		row(l.Probe)
	}
	row(r.Runtime)
	if r.Web != nil {
		row(r.Web.WebGPU)
		row(r.Web.WebNN)
	}
	tw.Flush()

	if len(r.Providers) > 0 {
		b.WriteString("\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "TARGET\tPROVIDER\tAVAILABLE\tREASON")
		for _, p := range r.Providers {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Target, p.Provider, yesNo(p.Found), p.Reason)
		}
		tw.Flush()
	}
	return b.String()
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "(none)"
	}
	return strings.Join(xs, " ")
}
